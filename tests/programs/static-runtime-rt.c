/* The runtime half of static-runtime: what NVIDIA's static runtime does
 * to reach the driver, and nothing else. No libcuda link, no dlsym of any
 * driver function but one: dlopen("libcuda.so.1"), dlsym of
 * cuGetProcAddress_v2, and every other function through it by base name,
 * for CUDA 12.0 (cuMemFree for 13.0), legacy default stream. The driver
 * answers with the exported function of the newest ABI that version knows
 * (cuMemAlloc -> cuMemAlloc_v2). Its frames sit in the program itself, as
 * a static runtime's do. */
#include "static-runtime-rt.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* X(field, base name, CUDA version asked for, type of the ABI answered). */
#define SRT_FUNCTIONS(X) \
	X(init, "cuInit", 12000, PFN_cuInit_v2000) \
	X(primary_retain, "cuDevicePrimaryCtxRetain", 12000, PFN_cuDevicePrimaryCtxRetain_v7000) \
	X(ctx_set_current, "cuCtxSetCurrent", 12000, PFN_cuCtxSetCurrent_v4000) \
	X(stream_create, "cuStreamCreate", 12000, PFN_cuStreamCreate_v2000) \
	X(mem_alloc, "cuMemAlloc", 12000, PFN_cuMemAlloc_v3020) \
	X(mem_free, "cuMemFree", 13000, PFN_cuMemFree_v3020) \
	X(mem_alloc_async, "cuMemAllocAsync", 12000, PFN_cuMemAllocAsync_v11020) \
	X(mem_free_async, "cuMemFreeAsync", 12000, PFN_cuMemFreeAsync_v11020)

static struct {
	PFN_cuGetProcAddress_v12000 get_proc_address;
#define SRT_FIELD(field, name, version, type) type field;
	SRT_FUNCTIONS(SRT_FIELD)
#undef SRT_FIELD
} srt;

static void *
driver_function(const char *name, int version)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	if (srt.get_proc_address(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
	    CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) {
		fprintf(stderr, "static runtime: no %s for CUDA %d\n", name, version);
		return NULL;
	}
	return fn;
}

static int
load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int missing = 0;

	if (!h)
		return CUDA_ERROR_NOT_FOUND;
	srt.get_proc_address = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	if (!srt.get_proc_address)
		return CUDA_ERROR_NOT_FOUND;
#define SRT_LOOKUP(field, name, version, type) \
	missing |= !(srt.field = (type)driver_function(name, version));
	SRT_FUNCTIONS(SRT_LOOKUP)
#undef SRT_LOOKUP
	return missing ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

/* Load the driver, initialise it and make device 0's primary context
 * current, as the runtime does on its first call. */
int
srt_init(void)
{
	CUcontext ctx;
	int rc = load();

	if (rc == CUDA_SUCCESS)
		rc = srt.init(0);
	if (rc == CUDA_SUCCESS)
		rc = srt.primary_retain(&ctx, 0);
	if (rc == CUDA_SUCCESS)
		rc = srt.ctx_set_current(ctx);
	return rc;
}

int
srt_stream_create(srt_stream *stream)
{
	return srt.stream_create(stream, CU_STREAM_NON_BLOCKING);
}

int
srt_malloc(void **ptr, size_t size)
{
	CUdeviceptr p;
	CUresult rc = srt.mem_alloc(&p, size);

	if (rc == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)p;
	return rc;
}

int
srt_free(void *ptr)
{
	return srt.mem_free((CUdeviceptr)(uintptr_t)ptr);
}

int
srt_malloc_async(void **ptr, size_t size, srt_stream stream)
{
	CUdeviceptr p;
	CUresult rc = srt.mem_alloc_async(&p, size, stream);

	if (rc == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)p;
	return rc;
}

int
srt_free_async(void *ptr, srt_stream stream)
{
	return srt.mem_free_async((CUdeviceptr)(uintptr_t)ptr, stream);
}
