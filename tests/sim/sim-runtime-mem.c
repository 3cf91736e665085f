/* Simulated runtime: memory. Each entry point makes the thread's context
 * current, then calls the driver function it fetched at initialisation. */
#include "sim-runtime.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Stores a device pointer only on success, so a failed call leaves the
 * caller's variable as it was, as the driver does. */
static cudaError_t
store_pointer(void **out, CUdeviceptr dptr, CUresult rc)
{
	if (rc == CUDA_SUCCESS)
		*out = (void *)(uintptr_t)dptr;
	return sim_rt_check(rc);
}

/* A zero-byte cudaMalloc succeeds with a NULL pointer and reaches no
 * driver function, as on the real runtime. */
cudaError_t CUDARTAPI
cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr dptr = 0;

	SIM_RT_ENTER();
	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	if (size == 0) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	return store_pointer(devPtr, dptr, sim_rt_drv.mem_alloc(&dptr, size));
}

/* cudaFree(NULL) is the classic way to create the context: it does that
 * and frees nothing. */
cudaError_t CUDARTAPI
cudaFree(void *devPtr)
{
	SIM_RT_ENTER();
	if (!devPtr)
		return cudaSuccess;
	return sim_rt_check(sim_rt_drv.mem_free((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t CUDARTAPI
cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	CUdeviceptr dptr = 0;

	SIM_RT_ENTER();
	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	return store_pointer(devPtr, dptr, sim_rt_drv.mem_alloc_async(&dptr, size, hStream));
}

cudaError_t CUDARTAPI
cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	CUdeviceptr dptr = 0;

	SIM_RT_ENTER();
	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	return store_pointer(devPtr, dptr,
			     sim_rt_drv.mem_alloc_async_ptsz(&dptr, size, hStream));
}

cudaError_t CUDARTAPI
cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	SIM_RT_ENTER();
	if (!devPtr)
		return cudaSuccess;
	return sim_rt_check(sim_rt_drv.mem_free_async((CUdeviceptr)(uintptr_t)devPtr, hStream));
}

cudaError_t CUDARTAPI
cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	SIM_RT_ENTER();
	if (!devPtr)
		return cudaSuccess;
	return sim_rt_check(
		sim_rt_drv.mem_free_async_ptsz((CUdeviceptr)(uintptr_t)devPtr, hStream));
}

cudaError_t CUDARTAPI
cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr dptr = 0;

	SIM_RT_ENTER();
	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	return store_pointer(devPtr, dptr, sim_rt_drv.mem_alloc_managed(&dptr, size, flags));
}

/* Rows are padded by the driver; the runtime asks for 4-byte elements. */
cudaError_t CUDARTAPI
cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	CUdeviceptr dptr = 0;

	SIM_RT_ENTER();
	if (!devPtr || !pitch)
		return sim_rt_fail(cudaErrorInvalidValue);
	return store_pointer(devPtr, dptr,
			     sim_rt_drv.mem_alloc_pitch(&dptr, pitch, width, height, 4));
}

cudaError_t CUDARTAPI
cudaMallocHost(void **ptr, size_t size)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_alloc_host(ptr, size));
}

/* cudaHostAlloc* flags have the values of the driver's CU_MEMHOSTALLOC_*. */
cudaError_t CUDARTAPI
cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_host_alloc(pHost, size, flags));
}

cudaError_t CUDARTAPI
cudaFreeHost(void *ptr)
{
	SIM_RT_ENTER();
	if (!ptr)
		return cudaSuccess;
	return sim_rt_check(sim_rt_drv.mem_free_host(ptr));
}

cudaError_t CUDARTAPI
cudaMemGetInfo(size_t *free, size_t *total)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_get_info(free, total));
}

static CUresult
copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst;
	CUdeviceptr s = (CUdeviceptr)(uintptr_t)src;

	switch (kind) {
	case cudaMemcpyHostToDevice:
		return sim_rt_drv.memcpy_htod(d, src, count);
	case cudaMemcpyDeviceToHost:
		return sim_rt_drv.memcpy_dtoh(dst, s, count);
	default:
		return sim_rt_drv.memcpy(d, s, count);
	}
}

static bool
valid_kind(enum cudaMemcpyKind kind)
{
	return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault;
}

cudaError_t CUDARTAPI
cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	SIM_RT_ENTER();
	if (!valid_kind(kind))
		return sim_rt_fail(cudaErrorInvalidMemcpyDirection);
	return sim_rt_check(copy(dst, src, count, kind));
}

cudaError_t CUDARTAPI
cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
		cudaStream_t stream)
{
	SIM_RT_ENTER();
	if (!valid_kind(kind))
		return sim_rt_fail(cudaErrorInvalidMemcpyDirection);
	return sim_rt_check(sim_rt_drv.memcpy_async((CUdeviceptr)(uintptr_t)dst,
						    (CUdeviceptr)(uintptr_t)src, count, stream));
}

cudaError_t CUDARTAPI
cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
		     cudaStream_t stream)
{
	SIM_RT_ENTER();
	if (!valid_kind(kind))
		return sim_rt_fail(cudaErrorInvalidMemcpyDirection);
	return sim_rt_check(sim_rt_drv.memcpy_async_ptsz(
		(CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count, stream));
}

cudaError_t CUDARTAPI
cudaMemset(void *devPtr, int value, size_t count)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.memset_d8((CUdeviceptr)(uintptr_t)devPtr,
						 (unsigned char)value, count));
}

/* On a stream being captured, a node that does nothing (the driver's). */
cudaError_t CUDARTAPI
cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.memset_d8_async((CUdeviceptr)(uintptr_t)devPtr,
						       (unsigned char)value, count, stream));
}

cudaError_t CUDARTAPI
cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.memset_d8_async_ptsz((CUdeviceptr)(uintptr_t)devPtr,
							    (unsigned char)value, count, stream));
}

/* cudaHostRegister* flags have the values of the driver's CU_MEMHOSTREGISTER_*. */
cudaError_t CUDARTAPI
cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_host_register(ptr, size, flags));
}

cudaError_t CUDARTAPI
cudaHostUnregister(void *ptr)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_host_unregister(ptr));
}

/* The runtime's and the driver's IPC handles are the same 64 bytes. */
cudaError_t CUDARTAPI
cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
	CUipcMemHandle h;
	CUresult rc;

	SIM_RT_ENTER();
	if (!handle)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.ipc_get_mem_handle(&h, (CUdeviceptr)(uintptr_t)devPtr);
	if (rc == CUDA_SUCCESS)
		memcpy(handle, &h, sizeof(h));
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
	CUdeviceptr dptr = 0;
	CUipcMemHandle h;

	SIM_RT_ENTER();
	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	memcpy(&h, &handle, sizeof(h));
	return store_pointer(devPtr, dptr, sim_rt_drv.ipc_open_mem_handle(&dptr, h, flags));
}

cudaError_t CUDARTAPI
cudaIpcCloseMemHandle(void *devPtr)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.ipc_close_mem_handle((CUdeviceptr)(uintptr_t)devPtr));
}

/* What the driver says of a pointer, in the runtime's words: memory CUDA
 * does not know is cudaMemoryTypeUnregistered, and no error (CUDA 11+). */
cudaError_t CUDARTAPI
cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	CUpointer_attribute which[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					CU_POINTER_ATTRIBUTE_IS_MANAGED,
					CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
					CU_POINTER_ATTRIBUTE_HOST_POINTER };
	unsigned int type = 0;
	int managed = 0, device = 0;
	CUdeviceptr dptr = 0;
	void *hptr = NULL;
	void *data[] = { &type, &managed, &device, &dptr, &hptr };
	CUresult rc;

	SIM_RT_ENTER();
	if (!attributes)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.pointer_get_attributes(5, which, data, (CUdeviceptr)(uintptr_t)ptr);
	if (rc != CUDA_SUCCESS)
		return sim_rt_check(rc);
	*attributes = (struct cudaPointerAttributes){
		.type = managed ? cudaMemoryTypeManaged :
			type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice :
			type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost :
						     cudaMemoryTypeUnregistered,
		.device = type ? device : cudaInvalidDeviceId,
		.devicePointer = (void *)(uintptr_t)dptr,
		.hostPointer = hptr,
	};
	return cudaSuccess;
}

/* Each side is unified memory: the address says what it is. */
cudaError_t CUDARTAPI
cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
		  size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	CUDA_MEMCPY2D c = {
		.srcMemoryType = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost ?
					 CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED,
		.srcHost = src, .srcDevice = (CUdeviceptr)(uintptr_t)src, .srcPitch = spitch,
		.dstMemoryType = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost ?
					 CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_UNIFIED,
		.dstHost = dst, .dstDevice = (CUdeviceptr)(uintptr_t)dst, .dstPitch = dpitch,
		.WidthInBytes = width, .Height = height,
	};

	SIM_RT_ENTER();
	if (!valid_kind(kind))
		return sim_rt_fail(cudaErrorInvalidMemcpyDirection);
	if (height > 1 && (dpitch < width || spitch < width))
		return sim_rt_fail(cudaErrorInvalidPitchValue);
	return sim_rt_check(sim_rt_drv.memcpy_2d_async(&c, stream));
}
