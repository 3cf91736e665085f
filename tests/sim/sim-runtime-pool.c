/* Simulated runtime: memory pools and allocation from them. The runtime's
 * cudaMemPool_t is the driver's CUmemoryPool, and the pool attributes
 * have the driver's values, so most calls pass straight through; the
 * model itself is the driver's (sim-driver-pool.c). */
#include "sim-runtime.h"

#include <stdint.h>

cudaError_t CUDARTAPI
cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
	CUdeviceptr dptr = 0;
	CUresult rc;

	SIM_RT_ENTER();
	if (!ptr)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.mem_alloc_from_pool(&dptr, size, memPool, stream);
	if (rc == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)dptr;
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
	CUdeviceptr dptr = 0;
	CUresult rc;

	SIM_RT_ENTER();
	if (!ptr)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.mem_alloc_from_pool_ptsz(&dptr, size, memPool, stream);
	if (rc == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)dptr;
	return sim_rt_check(rc);
}

/* Field by field: the two structures are alike, but nothing promises it. */
static CUmemPoolProps
driver_props(const struct cudaMemPoolProps *p)
{
	return (CUmemPoolProps){
		.allocType = (CUmemAllocationType)p->allocType,
		.handleTypes = (CUmemAllocationHandleType)p->handleTypes,
		.location = { .type = (CUmemLocationType)p->location.type, .id = p->location.id },
		.win32SecurityAttributes = p->win32SecurityAttributes,
		.maxSize = p->maxSize,
		.usage = p->usage,
	};
}

cudaError_t CUDARTAPI
cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
	CUmemPoolProps props;

	SIM_RT_ENTER();
	if (!memPool || !poolProps)
		return sim_rt_fail(cudaErrorInvalidValue);
	props = driver_props(poolProps);
	return sim_rt_check(sim_rt_drv.mem_pool_create(memPool, &props));
}

cudaError_t CUDARTAPI
cudaMemPoolDestroy(cudaMemPool_t memPool)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_pool_destroy(memPool));
}

cudaError_t CUDARTAPI
cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_pool_trim_to(memPool, minBytesToKeep));
}

cudaError_t CUDARTAPI
cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_pool_get_attribute(memPool, (CUmemPool_attribute)attr,
							       value));
}

cudaError_t CUDARTAPI
cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.mem_pool_set_attribute(memPool, (CUmemPool_attribute)attr,
							       value));
}

cudaError_t CUDARTAPI
cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_get_default_mem_pool(memPool, device));
}

cudaError_t CUDARTAPI
cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_get_mem_pool(memPool, device));
}

cudaError_t CUDARTAPI
cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_set_mem_pool(device, memPool));
}

/* Field by field, as for the pool's properties. */
cudaError_t CUDARTAPI
cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList,
		     size_t count)
{
	CUmemAccessDesc desc[64];

	SIM_RT_ENTER();
	if ((count && !descList) || count > sizeof(desc) / sizeof(desc[0]))
		return sim_rt_fail(cudaErrorInvalidValue);
	for (size_t i = 0; i < count; i++)
		desc[i] = (CUmemAccessDesc){
			.location = { .type = (CUmemLocationType)descList[i].location.type,
				      .id = descList[i].location.id },
			.flags = (CUmemAccess_flags)descList[i].flags,
		};
	return sim_rt_check(sim_rt_drv.mem_pool_set_access(memPool, desc, count));
}
