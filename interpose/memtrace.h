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

#ifdef __cplusplus
}
#endif
