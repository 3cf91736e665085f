/* Wrappers for the CUDA driver API (hooks.def, lib DRV): what TensorFlow,
 * XLA, JAX and statically linked runtimes call, and what every runtime
 * call ends in. Reached through the dynamic linker, through dlsym on a
 * libcuda handle (hook-dl.c) and through cuGetProcAddress or the runtime's
 * entry points (hook-real.c). */
#include "hook-common.h"

#define DRV_ALLOC(name, params, args, PTR, BYTES, MEM, STREAM, HANDLE)                     \
	MT_ALLOC_WRAPPER(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY,                  \
			 CUDA_ERROR_NOT_INITIALIZED, name, params, args, PTR, BYTES, MEM,    \
			 STREAM, HANDLE)
#define DRV_FREE(name, params, args, ADDR, STREAM)                                        \
	MT_FREE_WRAPPER(CUresult, CUDA_SUCCESS, CUDA_ERROR_NOT_INITIALIZED, name, params, \
			args, ADDR, STREAM)

/* --what-fits: managed memory in place of the device's (hook-common.h). */
static CUresult beyond_device(CUdeviceptr *dptr, size_t bytesize)
{
	MT_REAL_OR(cuMemAllocManaged, CUDA_ERROR_NOT_INITIALIZED);
	return real(dptr, bytesize, CU_MEM_ATTACH_GLOBAL);
}

MT_DEVICE_ALLOC_WRAPPER(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY,
			CUDA_ERROR_NOT_INITIALIZED, cuMemAlloc_v2,
			(CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize), MT_OUT(dptr),
			bytesize, beyond_device(dptr, bytesize), cuMemAllocManaged)
DRV_ALLOC(cuMemAllocPitch_v2,
	  (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
	   unsigned int ElementSizeBytes),
	  (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes), MT_OUT(dptr),
	  rc == CUDA_SUCCESS && pPitch ? (uint64_t)*pPitch * Height
				       : (uint64_t)WidthInBytes * Height,
	  MT_MEM_DEVICE, 0, 0)
DRV_ALLOC(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags),
	  (dptr, bytesize, flags), MT_OUT(dptr), bytesize, MT_MEM_MANAGED, 0, 0)
MT_WITH_PTSZ(DRV_ALLOC, cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream),
	     (dptr, bytesize, hStream), MT_OUT(dptr), bytesize, MT_MEM_DEVICE, hStream, 0)
MT_WITH_PTSZ(DRV_ALLOC, cuMemAllocFromPoolAsync,
	     (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
	     (dptr, bytesize, pool, hStream), MT_OUT(dptr), bytesize, MT_MEM_POOL, hStream, pool)
DRV_ALLOC(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags),
	  (pp, bytesize, Flags), MT_OUT(pp), bytesize, MT_MEM_HOST_PINNED, 0, 0)
DRV_ALLOC(cuMemAllocHost_v2, (void **pp, size_t bytesize), (pp, bytesize), MT_OUT(pp),
	  bytesize, MT_MEM_HOST_PINNED, 0, 0)
/* Registration pins memory the program already has: shown, not allocated. */
DRV_ALLOC(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags),
	  (p, bytesize, Flags), MT_U64(p), bytesize, MT_MEM_HOST_REGISTERED, 0, 0)
/* Address space only: no memory until something is mapped into it. */
DRV_ALLOC(cuMemAddressReserve,
	  (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
	   unsigned long long flags),
	  (ptr, size, alignment, addr, flags), MT_OUT(ptr), size, MT_MEM_VMM_RESERVED, 0, 0)
/* Physical memory, known by its handle until it is mapped. */
DRV_ALLOC(cuMemCreate,
	  (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
	   unsigned long long flags),
	  (handle, size, prop, flags), MT_OUT(handle), size, MT_MEM_VMM_PHYSICAL, 0, 0)

static size_t format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8:
		return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF:
		return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT:
		return 4;
	default:
		return 1; /* block-compressed and video formats: a lower bound */
	}
}

static uint64_t array_bytes(CUarray_format f, unsigned channels, size_t w, size_t h, size_t d)
{
	return (uint64_t)format_bytes(f) * channels * w * (h ? h : 1) * (d ? d : 1);
}

DRV_ALLOC(cuArrayCreate_v2, (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *desc),
	  (pHandle, desc), MT_OUT(pHandle),
	  desc ? array_bytes(desc->Format, desc->NumChannels, desc->Width, desc->Height, 1) : 0,
	  MT_MEM_ARRAY, 0, 0)
DRV_ALLOC(cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc),
	  (pHandle, desc), MT_OUT(pHandle),
	  desc ? array_bytes(desc->Format, desc->NumChannels, desc->Width, desc->Height,
			     desc->Depth)
	       : 0,
	  MT_MEM_ARRAY, 0, 0)

DRV_FREE(cuMemFree_v2, (CUdeviceptr dptr), (dptr), dptr, 0)
MT_WITH_PTSZ(DRV_FREE, cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream),
	     dptr, hStream)
DRV_FREE(cuMemFreeHost, (void *p), (p), p, 0)
DRV_FREE(cuMemHostUnregister, (void *p), (p), p, 0)
DRV_FREE(cuArrayDestroy, (CUarray hArray), (hArray), hArray, 0)
DRV_FREE(cuIpcCloseMemHandle, (CUdeviceptr dptr), (dptr), dptr, 0)
DRV_FREE(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size), ptr, 0)
/* The physical memory goes back only once it is also unmapped: the
 * reporter keeps a released handle alive while a mapping holds it. */
DRV_FREE(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle), handle, 0)

/* Another process's memory: shown as imported, not counted as ours. The
 * size is not an argument; the driver tells it for the mapped range. */
static uint64_t imported_bytes(CUdeviceptr p)
{
	CUdeviceptr base = 0;
	size_t size = 0;
	mt_cuMemGetAddressRange_v2_fn get = mt_real_cuMemGetAddressRange_v2();
	return get && get(&base, &size, p) == CUDA_SUCCESS ? size : 0;
}

DRV_ALLOC(cuIpcOpenMemHandle_v2, (CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags),
	  (pdptr, handle, Flags), MT_OUT(pdptr),
	  rc == CUDA_SUCCESS && pdptr ? imported_bytes(*pdptr) : 0, MT_MEM_IMPORTED, 0, 0)

/* Mapping makes physical memory usable: the report gives a mapped chunk
 * to the stack that mapped it. */
MT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	MT_REAL_OR(cuMemMap, CUDA_ERROR_NOT_INITIALIZED);
	if (!mt_enter())
		return real(ptr, size, offset, handle, flags);
	CUresult rc = real(ptr, size, offset, handle, flags);
	if (rc == CUDA_SUCCESS)
		mt_record_event(&(struct mt_rec){ .api = MT_API_cuMemMap,
						  .kind = MT_EV_MAP,
						  .address = ptr,
						  .bytes = size,
						  .handle = handle });
	mt_leave();
	return rc;
}

/* Recorded once the call returned, like a free: the memory counts until
 * then. The range may be mapped again by another thread before our record
 * is made, so the unmap is announced as running first (record.c). */
MT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	MT_REAL_OR(cuMemUnmap, CUDA_ERROR_NOT_INITIALIZED);
	if (!ptr || !mt_enter())
		return real(ptr, size);
	struct mt_rec r = { .api = MT_API_cuMemUnmap, .kind = MT_EV_UNMAP, .address = ptr,
			    .bytes = size };
	unsigned release = mt_record_release_begin(ptr);
	CUresult rc = real(ptr, size);
	mt_record_event(&r);
	if (rc != CUDA_SUCCESS) {
		r.kind = MT_EV_UNMAP_ERROR;
		r.status = rc;
		mt_record_event(&r);
	}
	mt_record_release_done(release);
	mt_leave();
	return rc;
}

MT_POOL_WRAPPERS(CUresult, CUDA_SUCCESS, CUDA_ERROR_NOT_INITIALIZED, cu, CUmemoryPool,
		 CUmemPoolProps)

/* Every runtime, dynamic or static, gets its driver functions here. Call
 * the real one with the caller's symbol, version and flags, then hand back
 * our wrapper of exactly the ABI it returned. Wrapping is not recording:
 * it happens inside the guard too (the runtime's cudaGetDriverEntryPoint
 * lands here). */
MT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				       cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	MT_REAL_OR(cuGetProcAddress_v2, CUDA_ERROR_NOT_INITIALIZED);
	CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (rc == CUDA_SUCCESS && pfn)
		*pfn = mt_wrap_driver_proc(symbol, *pfn);
	return rc;
}

MT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				    cuuint64_t flags)
{
	MT_REAL_OR(cuGetProcAddress, CUDA_ERROR_NOT_INITIALIZED);
	CUresult rc = real(symbol, pfn, cudaVersion, flags);
	if (rc == CUDA_SUCCESS && pfn)
		*pfn = mt_wrap_driver_proc(symbol, *pfn);
	return rc;
}
