/* Wrappers for the CUDA runtime allocation family (hooks.def, lib RT).
 * Each one calls the real function with the caller's arguments and
 * returns its result untouched; recording happens around it, following the
 * rules in preload.c. */
#include "hook-real.h"
#include "trace-schema.h"

/* The real function is missing only if the process has no CUDA runtime at
 * all, which cannot happen for a caller linked against it. */
#define REAL_OR_FAIL(name)                     \
	mt_##name##_fn real = mt_real_##name(); \
	if (MT_UNLIKELY(!real))                 \
		return cudaErrorInitializationError

static void record(unsigned api, cudaError_t rc, void *const *ptr, uint64_t bytes, unsigned mem,
		   cudaStream_t stream)
{
	const void *p = rc == cudaSuccess && ptr ? *ptr : NULL;
	mt_record_alloc(api, rc, rc == cudaErrorMemoryAllocation, p, bytes, mem,
			(uint64_t)(uintptr_t)stream);
}

#define ALLOC_WRAPPER(name, params, args, ptrarg, bytes, mem, stream) \
	MT_EXPORT cudaError_t name params                            \
	{                                                            \
		REAL_OR_FAIL(name);                                  \
		if (!mt_enter())                                     \
			return real args;                            \
		cudaError_t rc = real args;                          \
		record(MT_API_##name, rc, ptrarg, bytes, mem, stream); \
		mt_leave();                                          \
		return rc;                                           \
	}

ALLOC_WRAPPER(cudaMalloc, (void **devPtr, size_t size), (devPtr, size), devPtr, size,
	      MT_MEM_DEVICE, 0)
ALLOC_WRAPPER(cudaMallocAsync, (void **devPtr, size_t size, cudaStream_t stream),
	      (devPtr, size, stream), devPtr, size, MT_MEM_DEVICE, stream)
ALLOC_WRAPPER(cudaMallocAsync_ptsz, (void **devPtr, size_t size, cudaStream_t stream),
	      (devPtr, size, stream), devPtr, size, MT_MEM_DEVICE, stream)
ALLOC_WRAPPER(cudaMallocManaged, (void **devPtr, size_t size, unsigned int flags),
	      (devPtr, size, flags), devPtr, size, MT_MEM_MANAGED, 0)
ALLOC_WRAPPER(cudaMallocHost, (void **ptr, size_t size), (ptr, size), ptr, size,
	      MT_MEM_HOST_PINNED, 0)
ALLOC_WRAPPER(cudaHostAlloc, (void **pHost, size_t size, unsigned int flags),
	      (pHost, size, flags), pHost, size, MT_MEM_HOST_PINNED, 0)

MT_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	REAL_OR_FAIL(cudaMallocPitch);
	if (!mt_enter())
		return real(devPtr, pitch, width, height);
	cudaError_t rc = real(devPtr, pitch, width, height);
	/* What the device gave is pitch x height, not width x height. */
	uint64_t bytes = rc == cudaSuccess && pitch ? (uint64_t)*pitch * height
						    : (uint64_t)width * height;
	record(MT_API_cudaMallocPitch, rc, devPtr, bytes, MT_MEM_DEVICE, 0);
	mt_leave();
	return rc;
}

/* The free is recorded before the real free runs: once it returns, another
 * thread may get the same address from a new allocation. A free that then
 * fails is recorded as free_error, which puts the allocation back. */
#define FREE_WRAPPER(name, params, args, ptrarg, stream)                            \
	MT_EXPORT cudaError_t name params                                            \
	{                                                                            \
		REAL_OR_FAIL(name);                                                  \
		if (!ptrarg || !mt_enter())                                          \
			return real args;                                            \
		uint64_t s_ = (uint64_t)(uintptr_t)(stream);                         \
		mt_record_free(MT_API_##name, ptrarg, s_);                           \
		cudaError_t rc = real args;                                          \
		if (rc != cudaSuccess)                                               \
			mt_record_free_error(MT_API_##name, rc, ptrarg, s_);         \
		mt_leave();                                                          \
		return rc;                                                           \
	}

FREE_WRAPPER(cudaFree, (void *devPtr), (devPtr), devPtr, 0)
FREE_WRAPPER(cudaFreeHost, (void *ptr), (ptr), ptr, 0)
FREE_WRAPPER(cudaFreeAsync, (void *devPtr, cudaStream_t stream), (devPtr, stream), devPtr, stream)
FREE_WRAPPER(cudaFreeAsync_ptsz, (void *devPtr, cudaStream_t stream), (devPtr, stream), devPtr,
	     stream)
