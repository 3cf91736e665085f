/* Simulated driver: CUDA arrays (cuArrayCreate, cuArray3DCreate). An
 * array is device memory the program cannot address: the CUarray handle
 * is an opaque pointer to a host structure, never a device address, and
 * the memory it holds is charged to the device as
 *     width x max(height, 1) x max(depth, 1) x channels x element size,
 * rounded up to 512 bytes like every other device allocation. Arrays
 * belong to the context that made them. */
#include "sim-driver.h"

#include <stdlib.h>

struct CUarray_st {
	CUDA_ARRAY3D_DESCRIPTOR desc;
	CUdevice device;
	uintptr_t charge;   /* its block in the device arena */
};

/* Live arrays, keyed by handle, owner = context id; under the driver lock. */
static struct sim_blockmap sim_arrays;

/* Bytes per channel, 0 for the formats the simulator does not know. */
static size_t
format_bytes(CUarray_format format)
{
	switch (format) {
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
		return 0;
	}
}

static size_t
at_least_one(size_t v)
{
	return v ? v : 1;
}

/* The bytes an array of this shape holds; 0 for a shape that is not one
 * (a zero width, a depth without a height, an unknown format or channel
 * count) or whose size overflows. */
static size_t
array_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	const unsigned known = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST |
			       CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER;
	size_t f[4] = { d->Width, at_least_one(d->Height), at_least_one(d->Depth),
			(size_t)d->NumChannels * format_bytes(d->Format) };
	size_t bytes = 1;

	if (d->Width == 0 || (d->Height == 0 && d->Depth != 0) || (d->Flags & ~known) ||
	    (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
		return 0;
	for (int i = 0; i < 4; i++) {
		if (f[i] == 0 || bytes > SIZE_MAX / f[i])
			return 0;
		bytes *= f[i];
	}
	return bytes;
}

/* Lock held. */
static CUresult
array_create(CUarray *handle, const CUDA_ARRAY3D_DESCRIPTOR *desc, CUcontext ctx)
{
	struct sim_arena *arena = &sim_drv.dev[ctx->device].arena;
	size_t bytes = array_bytes(desc);
	struct sim_block b = { .owner = ctx->id, .kind = SIM_KIND_ARRAY };
	CUarray a;

	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!sim_arena_alloc(arena, bytes, ctx->id, SIM_KIND_ARRAY, &a->charge)) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->desc = *desc;
	a->device = ctx->device;
	b.addr = (uintptr_t)a;
	b.size = bytes;
	if (!sim_blockmap_insert(&sim_arrays, &b)) {
		sim_arena_free(arena, a->charge);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*handle = a;
	return CUDA_SUCCESS;
}

static CUresult
create(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!pHandle || !desc))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = array_create(pHandle, desc, ctx);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
	CUDA_ARRAY3D_DESCRIPTOR d = { 0 };

	if (pAllocateArray)
		d = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = pAllocateArray->Width,
					       .Height = pAllocateArray->Height,
					       .Format = pAllocateArray->Format,
					       .NumChannels = pAllocateArray->NumChannels };
	return create(pHandle, pAllocateArray ? &d : NULL);
}

CUresult CUDAAPI
cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
	return create(pHandle, pAllocateArray);
}

/* Lock held. */
static void
array_destroy(CUarray a)
{
	sim_blockmap_remove(&sim_arrays, (uintptr_t)a, NULL);
	sim_arena_free(&sim_drv.dev[a->device].arena, a->charge);
	free(a);
}

static bool
alive(CUarray a)
{
	return a && sim_blockmap_find(&sim_arrays, (uintptr_t)a);
}

CUresult CUDAAPI
cuArrayDestroy(CUarray hArray)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !alive(hArray))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS)
		array_destroy(hArray);
	sim_unlock();
	return rc;
}

static CUresult
descriptor(CUDA_ARRAY3D_DESCRIPTOR *out, CUarray hArray)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !out)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !alive(hArray))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS)
		*out = hArray->desc;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
	return descriptor(pArrayDescriptor, hArray);
}

CUresult CUDAAPI
cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
	CUDA_ARRAY3D_DESCRIPTOR d;
	CUresult rc = descriptor(pArrayDescriptor ? &d : NULL, hArray);

	if (rc == CUDA_SUCCESS)
		*pArrayDescriptor = (CUDA_ARRAY_DESCRIPTOR){ .Width = d.Width, .Height = d.Height,
							     .Format = d.Format,
							     .NumChannels = d.NumChannels };
	return rc;
}

/* Lock held: the arrays of a context that is being destroyed. */
void
sim_arrays_release_owner(uint32_t owner)
{
	uintptr_t *handles;
	size_t n = sim_blockmap_owned(&sim_arrays, owner, &handles);

	for (size_t i = 0; i < n; i++)
		array_destroy((CUarray)handles[i]);
	free(handles);
}
