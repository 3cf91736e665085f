/* Whose frame is it: the rule that picks the user's frame of a stack,
 * shared by the reporter's sites (report/model-site.c) and the capture
 * library's out-of-memory summary (interpose/trace-flight.c), so the two
 * name the same holder. Pure functions of names; the lists of libraries
 * and packages are docs/report-json.md's: keep the two in step. */
#pragma once

#include <stdbool.h>

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
