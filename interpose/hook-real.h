/* The real CUDA functions behind the hooks: a typedef and an inline getter
 * for each line of hooks.def. The first call resolves the pointer
 * (hook-real.c); later calls are one atomic load. */
#pragma once

#include <cuda_runtime_api.h>
#include <stdatomic.h>

#include "internal.h"

/* Declared by cuda_runtime_api.h only for per-thread default stream
 * builds, but exported by every runtime. */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);

extern void *_Atomic mt_real_ptrs[MT_API_COUNT];
void *mt_real_resolve(unsigned api);

#define MT_HOOK(lib, ret, name, params, args)                                                  \
	typedef ret(*mt_##name##_fn) params;                                                   \
	static inline mt_##name##_fn mt_real_##name(void)                                      \
	{                                                                                      \
		void *p = atomic_load_explicit(&mt_real_ptrs[MT_API_##name],                   \
					       memory_order_acquire);                          \
		return (mt_##name##_fn)(p ? p : mt_real_resolve(MT_API_##name));               \
	}
#define MT_REAL MT_HOOK
#include "hooks.def"
