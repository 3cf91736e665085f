/* nocfi.c: code built without unwind tables (-fno-asynchronous-unwind-tables),
 * as hand-written assembly, JIT code and some libraries are. */
#pragma once

#include <cuda_runtime_api.h>

cudaError_t nocfi_cuda_malloc(void **p, size_t bytes);
