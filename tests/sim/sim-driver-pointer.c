/* Simulated driver: what a pointer is (cuPointerGetAttribute,
 * cuPointerGetAttributes). With unified addressing, as on the real
 * device, every address names one thing: device memory of a device
 * (cuMemAlloc, pools, mapped physical memory, imported IPC memory,
 * graph allocations), managed memory, pinned or registered host memory,
 * or memory CUDA does not know. Device and host pointers are the same
 * address. */
#include "sim-driver.h"

#include <string.h>

struct sim_pointer {
	CUmemorytype type;       /* 0: not CUDA's */
	bool managed;
	CUdevice device;
};

/* Lock held. */
static void
classify(uintptr_t addr, CUcontext ctx, struct sim_pointer *p)
{
	struct sim_device *d = sim_device_of(addr, 1);
	const struct sim_block *b;
	uintptr_t base;
	size_t size;

	*p = (struct sim_pointer){ .device = ctx->device };
	if (d) {
		b = sim_blockmap_overlap(&d->arena.live, addr, 1);
		if (!b)
			return;
		p->device = (CUdevice)(d - sim_drv.dev);
		p->managed = b->kind == SIM_KIND_MANAGED;
		p->type = CU_MEMORYTYPE_DEVICE;
	} else if (sim_vmm_mapped(addr, 1) || sim_ipc_imported(addr, 1) ||
		   sim_graph_mem_range(addr, &base, &size)) {
		p->type = CU_MEMORYTYPE_DEVICE;
	} else if ((b = sim_blockmap_overlap(&sim_drv.pinned, addr, 1)) ||
		   (b = sim_blockmap_overlap(&sim_drv.registered, addr, 1))) {
		p->type = CU_MEMORYTYPE_HOST;
	}
}

/* Lock held: one attribute of a pointer CUDA knows. */
static CUresult
attribute(void *data, CUpointer_attribute attribute, uintptr_t addr, const struct sim_pointer *p)
{
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = p->managed ? CU_MEMORYTYPE_DEVICE : p->type;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = (CUdeviceptr)addr;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (p->type == CU_MEMORYTYPE_DEVICE && !p->managed)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)addr;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(int *)data = p->managed;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = p->device;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = 1;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = NULL;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static size_t
attribute_size(CUpointer_attribute attribute)
{
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return sizeof(void *);
	default:
		return sizeof(int);
	}
}

CUresult CUDAAPI
cuPointerGetAttribute(void *data, CUpointer_attribute attrib, CUdeviceptr ptr)
{
	struct sim_pointer p;
	CUcontext ctx;
	CUresult rc;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		classify((uintptr_t)ptr, ctx, &p);
	if (rc == CUDA_SUCCESS)
		rc = p.type ? attribute(data, attrib, (uintptr_t)ptr, &p) : CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Unlike the single query, memory CUDA does not know is no error: its
 * memory type is 0 and its other attributes zeros (cuda.h); so is the
 * host pointer of device memory, which has none. */
CUresult CUDAAPI
cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
		       CUdeviceptr ptr)
{
	struct sim_pointer p;
	CUcontext ctx;
	CUresult rc;

	if (numAttributes && (!attributes || !data))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		classify((uintptr_t)ptr, ctx, &p);
	for (unsigned int i = 0; rc == CUDA_SUCCESS && i < numAttributes; i++) {
		if (!data[i])
			rc = CUDA_ERROR_INVALID_VALUE;
		else if (!p.type || (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER &&
				     p.type == CU_MEMORYTYPE_DEVICE && !p.managed))
			memset(data[i], 0, attribute_size(attributes[i]));
		else
			rc = attribute(data[i], attributes[i], (uintptr_t)ptr, &p);
	}
	sim_unlock();
	return rc;
}
