/* The real CUDA functions behind the hooks: a typedef and an inline getter
 * for each line of hooks.def. The first call resolves the pointer
 * (hook-real.c); later calls are one atomic load. */
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdatomic.h>

#include "internal.h"

/* Declared by the CUDA headers only for per-thread default stream builds,
 * but exported by every runtime and driver. */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t pool,
					 cudaStream_t stream);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
					 unsigned long long flags,
					 enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
						  unsigned int cudaVersion,
						  unsigned long long flags,
						  enum cudaDriverEntryPointQueryResult *driverStatus);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				      CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

/* cuda.h maps the old name to the current ABI; the old ABI is hooked too. */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

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

/* hook-real.c: the routes by which a caller gets a function pointer. */

/* symbol is a base name as cuGetProcAddress takes it ("cuMemAlloc"); p the
 * real driver's answer. Returns our wrapper of exactly the ABI p has, or p
 * when we do not hook that function. */
void *mt_wrap_driver_proc(const char *symbol, void *p);
/* name is an exact symbol name from a dlsym on a library handle. */
void *mt_wrap_symbol(const char *name, void *p);

/* hook-dl.c: the real dlsym, for memtrace's own lookups (our exported dlsym
 * would hand back our own wrappers). */
void *mt_real_dlsym(void *handle, const char *name);
