/* Wrappers for the CUDA runtime's allocation family (hooks.def, lib RT).
 * Runtime functions that are not wrapped still reach the driver, where
 * hook-driver.c sees them; those that are wrapped reach it inside the
 * guard and count once. */
#include "hook-common.h"

/* Deprecated functions are still called by programs: hooked all the same. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define RT_ALLOC(name, params, args, PTR, BYTES, MEM, STREAM, HANDLE)                     \
	MT_ALLOC_WRAPPER(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation,              \
			 cudaErrorInitializationError, name, params, args, PTR, BYTES, MEM, \
			 STREAM, HANDLE)
#define RT_FREE(name, params, args, ADDR, STREAM)                                        \
	MT_FREE_WRAPPER(cudaError_t, cudaSuccess, cudaErrorInitializationError, name, params, \
			args, ADDR, STREAM)

/* --what-fits: managed memory in place of the device's, and the error
 * the refusal left for cudaGetLastError taken back (the caller got
 * success). */
static cudaError_t beyond_device(void **devPtr, size_t size)
{
	MT_REAL_OR(cudaMallocManaged, cudaErrorInitializationError);
	mt_cudaGetLastError_fn last = mt_real_cudaGetLastError();
	cudaError_t rc = devPtr ? real(devPtr, size, cudaMemAttachGlobal) : cudaErrorInvalidValue;

	if (rc == cudaSuccess && last)
		(void)last();
	return rc;
}

MT_DEVICE_ALLOC_WRAPPER(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation,
			cudaErrorInitializationError, cudaMalloc, (void **devPtr, size_t size),
			(devPtr, size), MT_OUT(devPtr), size, beyond_device(devPtr, size),
			cudaMallocManaged)
MT_WITH_PTSZ(RT_ALLOC, cudaMallocAsync, (void **devPtr, size_t size, cudaStream_t stream),
	     (devPtr, size, stream), MT_OUT(devPtr), size, MT_MEM_DEVICE, stream, 0)
MT_WITH_PTSZ(RT_ALLOC, cudaMallocFromPoolAsync,
	     (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream),
	     (ptr, size, pool, stream), MT_OUT(ptr), size, MT_MEM_POOL, stream, pool)
RT_ALLOC(cudaMallocManaged, (void **devPtr, size_t size, unsigned int flags),
	 (devPtr, size, flags), MT_OUT(devPtr), size, MT_MEM_MANAGED, 0, 0)
RT_ALLOC(cudaMallocHost, (void **ptr, size_t size), (ptr, size), MT_OUT(ptr), size,
	 MT_MEM_HOST_PINNED, 0, 0)
RT_ALLOC(cudaHostAlloc, (void **pHost, size_t size, unsigned int flags), (pHost, size, flags),
	 MT_OUT(pHost), size, MT_MEM_HOST_PINNED, 0, 0)
/* What the device gives is pitch x height, not width x height. */
RT_ALLOC(cudaMallocPitch, (void **devPtr, size_t *pitch, size_t width, size_t height),
	 (devPtr, pitch, width, height), MT_OUT(devPtr),
	 rc == cudaSuccess && pitch ? (uint64_t)*pitch * height : (uint64_t)width * height,
	 MT_MEM_DEVICE, 0, 0)

static uint64_t extent_bytes(uint64_t row, const struct cudaExtent *e)
{
	return row * (e->height ? e->height : 1) * (e->depth ? e->depth : 1);
}

RT_ALLOC(cudaMalloc3D, (struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent),
	 (pitchedDevPtr, extent), pitchedDevPtr ? MT_U64(pitchedDevPtr->ptr) : 0,
	 extent_bytes(rc == cudaSuccess && pitchedDevPtr ? pitchedDevPtr->pitch : extent.width,
		      &extent),
	 MT_MEM_DEVICE, 0, 0)

static uint64_t element_bytes(const struct cudaChannelFormatDesc *d)
{
	if (!d)
		return 0;
	int bits = d->x + d->y + d->z + d->w;
	return bits > 0 ? (uint64_t)(bits + 7) / 8 : 0;
}

RT_ALLOC(cudaMallocArray,
	 (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
	  size_t height, unsigned int flags),
	 (array, desc, width, height, flags), MT_OUT(array),
	 element_bytes(desc) * width * (height ? height : 1), MT_MEM_ARRAY, 0, 0)
RT_ALLOC(cudaMalloc3DArray,
	 (cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
	  unsigned int flags),
	 (array, desc, extent, flags), MT_OUT(array),
	 extent_bytes(element_bytes(desc) * extent.width, &extent), MT_MEM_ARRAY, 0, 0)

RT_FREE(cudaFree, (void *devPtr), (devPtr), devPtr, 0)
RT_FREE(cudaFreeHost, (void *ptr), (ptr), ptr, 0)
MT_WITH_PTSZ(RT_FREE, cudaFreeAsync, (void *devPtr, cudaStream_t stream), (devPtr, stream),
	     devPtr, stream)
RT_FREE(cudaFreeArray, (cudaArray_t array), (array), array, 0)

MT_POOL_WRAPPERS(cudaError_t, cudaSuccess, cudaErrorInitializationError, cuda, cudaMemPool_t,
		 struct cudaMemPoolProps)

/* Driver entry points (PyTorch's expandable segments take cuMemCreate and
 * cuMemMap this way): hand back our wrapper of the pointer's ABI. */
#define RT_ENTRY_POINT(name, params, args)                                     \
	MT_EXPORT cudaError_t name params                                      \
	{                                                                      \
		MT_REAL_OR(name, cudaErrorInitializationError);                \
		cudaError_t rc = real args;                                    \
		if (rc == cudaSuccess && funcPtr)                              \
			*funcPtr = mt_wrap_driver_proc(symbol, *funcPtr);      \
		return rc;                                                     \
	}

MT_WITH_PTSZ(RT_ENTRY_POINT, cudaGetDriverEntryPoint,
	     (const char *symbol, void **funcPtr, unsigned long long flags,
	      enum cudaDriverEntryPointQueryResult *driverStatus),
	     (symbol, funcPtr, flags, driverStatus))
MT_WITH_PTSZ(RT_ENTRY_POINT, cudaGetDriverEntryPointByVersion,
	     (const char *symbol, void **funcPtr, unsigned int cudaVersion,
	      unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus),
	     (symbol, funcPtr, cudaVersion, flags, driverStatus))
