/**
 * @file memtrace.h
 * The public API of libmemtrace.so, for programs that want to steer the
 * trace. Every function is also safe to call through ctypes/dlsym, and
 * a program should look them up with dlsym(RTLD_DEFAULT, ...) so that it runs
 * unchanged when memtrace is not preloaded.
 */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Commit every event recorded so far to the trace file before returning.
 *
 * @return 0 when the events are committed, -1 when tracing is off in this
 * process (not started, disabled after an error) or the writer did not
 * answer within two seconds.
 */
int memtrace_flush(void);

/**
 * Put a named mark in the trace, e.g. "build 3" or "epoch 2": the report
 * shows what was live at each mark and which sites grow from mark to mark.
 * A mark made before the program's first CUDA call is kept (without its
 * stack) and written when the trace starts.
 *
 * @param label the mark's name (UTF-8; at most 200 bytes are kept).
 */
void memtrace_mark(const char *label);

#ifdef __cplusplus
}
#endif
