/* Whose frame is it: the rule that picks the user's frame of a stack,
 * shared by the reporter (its sites, headlines, holders, evidence and
 * exports: report/model/model-site.c, render-common.c) and the capture
 * library's out-of-memory summary (interpose/writer/trace-live.c), so all of
 * them name the same frame (docs/report.md, "The user's frame"). Pure functions of names; the lists of libraries
 * and packages are docs/report-json.md's: keep the two in step. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A Python file of the user's: not the standard library (a path with
 * "/lib/python3." and no "site-packages"/"dist-packages", or "<frozen ")
 * and not a framework's package (torch, tensorflow, keras, jax, jaxlib,
 * cupy, cupyx under site-packages or dist-packages). NULL counts as the
 * user's. */
bool trace_python_frame_is_user(const char *file);

/* A native frame of the user's: its module is known and is none of CUDA's
 * libraries, the C and C++ runtimes, the Python interpreter, memtrace, a
 * framework's allocator (libc10_cuda, CUDACachingAllocator in
 * libtorch_cuda, the allocators of TensorFlow and XLA, libjax*, CuPy's
 * memory module). */
bool trace_native_frame_is_user(const char *module_path, const char *function);

/* A module of the language runtime between the user's code and the call:
 * the Python interpreter (libpython, the python executable, its
 * lib-dynload and _ctypes modules), libffi, the C runtime and the loader.
 * What a report may fold out of a path by default. */
bool trace_module_is_runtime(const char *module_path);

/* One frame of a stack as the rule reads it. */
struct trace_frame_view {
	bool python;		 /* a Python frame; else native */
	const char *function;	 /* NULL when unknown */
	const char *file;	 /* Python: the file; native: the source, or NULL */
	const char *module_path; /* native: the module's path, NULL when unknown */
	bool cuda_header;	 /* native: in a CUDA toolkit header (cudaMalloc<T>) */
};

/* Frame i (0 innermost) of the stack into *out; false when it cannot be
 * read (skipped). */
typedef bool (*trace_frame_at_fn)(void *ctx, uint32_t i, struct trace_frame_view *out);

#define TRACE_USER_NONE UINT32_MAX

/* The user's frames of a stack of depth frames, as depths (TRACE_USER_NONE
 * when none): the innermost Python frame of the user's, and the Python
 * frame of the user's that called it; the innermost native frame of the
 * user's with a name (else the innermost without one), and the next
 * named one out. */
struct trace_user_frames {
	uint32_t python, python_caller;
	uint32_t native, native_caller;
};

/* The rule: the user's frame of a stack is its innermost Python frame of
 * the user's (trace_python_frame_is_user) if any, else its innermost
 * native frame of the user's (trace_native_frame_is_user, not in a CUDA
 * header), one with a name before one without. frame_at is asked for
 * every frame, innermost first. */
void trace_user_frames(uint32_t depth, trace_frame_at_fn frame_at, void *ctx,
		       struct trace_user_frames *out);

/* The depth of the user's frame by that rule (Python, else native), or
 * TRACE_USER_NONE; *caller its caller's, or TRACE_USER_NONE. */
uint32_t trace_user_frame(const struct trace_user_frames *u, uint32_t *caller);
