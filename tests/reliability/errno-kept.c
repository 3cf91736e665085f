/* errno-kept: every hooked call that the simulated device implements, each
 * called with errno set to a sentinel first; prints the call, its result
 * and errno afterwards. Run with and without the preload: the output must
 * be the same (memtrace restores errno after its own work, including the
 * first call, which creates the trace, and the calls after it failed to).
 *
 * Runtime functions are called directly; driver functions through
 * dlopen("libcuda.so.1") and dlsym, then cuGetProcAddress, so dlopen, dlsym
 * and cuGetProcAddress are checked as well. The order is fixed and
 * the first call of all is cudaMalloc. Run it without CUDASIM_* variables:
 * the simulator's parsing of them (at its first call) sets errno too.
 * Exit status 0. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cudaGetDriverEntryPoint is deprecated, and still called by programs */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define SENTINEL 4242

#define CHECK(name, call)                                                         \
	do {                                                                      \
		errno = SENTINEL;                                                 \
		long rc_ = (long)(call);                                          \
		int errno_ = errno;                                               \
		printf("%-28s rc %-4ld errno %d\n", name, rc_, errno_);          \
	} while (0)

/* For calls that return a pointer: 1 if not NULL. */
#define CHECK_PTR(name, call) CHECK(name, (call) != NULL)

static void *libcuda;

static void *driver(const char *name)
{
	errno = SENTINEL;
	void *fn = dlsym(libcuda, name);
	printf("%-28s %s errno %d\n", "dlsym", fn ? "found" : "missing", errno);
	if (!fn) {
		fprintf(stderr, "errno-kept: %s not in libcuda.so.1\n", name);
		exit(2);
	}
	return fn;
}

#define DRV(name) ((__typeof__(&name))driver(#name))

static void runtime_calls(void)
{
	void *p = NULL, *q = NULL;
	size_t pitch;
	cudaMemPool_t pool;
	cudaArray_t array;
	struct cudaChannelFormatDesc desc = { 32, 0, 0, 0, cudaChannelFormatKindFloat };
	struct cudaPitchedPtr pitched;
	struct cudaMemPoolProps props = {
		.allocType = cudaMemAllocationTypePinned,
		.location = { .type = cudaMemLocationTypeDevice, .id = 0 },
	};

	CHECK("cudaMalloc (first call)", cudaMalloc(&p, 4096));
	CHECK("cudaMalloc", cudaMalloc(&q, 4096));
	CHECK("cudaMalloc (out of memory)", cudaMalloc(&q, (size_t)2 << 40));
	cudaGetLastError();
	CHECK("cudaMalloc (size 0)", cudaMalloc(&q, 0));
	cudaGetLastError();
	CHECK("cudaFree", cudaFree(p));
	CHECK("cudaFree (not allocated)", cudaFree((void *)0x1234));
	cudaGetLastError();
	CHECK("cudaFree (NULL)", cudaFree(NULL));
	CHECK("cudaMallocHost", cudaMallocHost(&p, 4096));
	CHECK("cudaFreeHost", cudaFreeHost(p));
	CHECK("cudaHostAlloc", cudaHostAlloc(&p, 4096, cudaHostAllocDefault));
	CHECK("cudaFreeHost", cudaFreeHost(p));
	CHECK("cudaMallocManaged", cudaMallocManaged(&p, 4096, cudaMemAttachGlobal));
	CHECK("cudaFree", cudaFree(p));
	CHECK("cudaMallocPitch", cudaMallocPitch(&p, &pitch, 100, 10));
	CHECK("cudaFree", cudaFree(p));
	CHECK("cudaMalloc3D", cudaMalloc3D(&pitched, (struct cudaExtent){ 64, 4, 2 }));
	CHECK("cudaFree", cudaFree(pitched.ptr));
	CHECK("cudaMallocAsync", cudaMallocAsync(&p, 4096, 0));
	CHECK("cudaFreeAsync", cudaFreeAsync(p, 0));
	CHECK("cudaMemPoolCreate", cudaMemPoolCreate(&pool, &props));
	CHECK("cudaMallocFromPoolAsync", cudaMallocFromPoolAsync(&p, 4096, pool, 0));
	CHECK("cudaFreeAsync", cudaFreeAsync(p, 0));
	CHECK("cudaMemPoolTrimTo", cudaMemPoolTrimTo(pool, 0));
	CHECK("cudaMemPoolDestroy", cudaMemPoolDestroy(pool));
	CHECK("cudaMallocArray", cudaMallocArray(&array, &desc, 16, 16, 0));
	CHECK("cudaFreeArray", cudaFreeArray(array));
	CHECK("cudaMalloc3DArray", cudaMalloc3DArray(&array, &desc, (struct cudaExtent){ 8, 8, 8 }, 0));
	CHECK("cudaFreeArray", cudaFreeArray(array));
	CHECK("cudaFree", cudaFree(q));
}

static void driver_calls(void)
{
	CUdeviceptr d, va;
	void *h;
	size_t pitch, gran = 0;
	CUmemoryPool pool;
	CUarray array;
	CUmemGenericAllocationHandle handle;
	CUDA_ARRAY_DESCRIPTOR ad = { 16, 16, CU_AD_FORMAT_FLOAT, 1 };
	CUDA_ARRAY3D_DESCRIPTOR ad3 = { 8, 8, 8, CU_AD_FORMAT_FLOAT, 1, 0 };
	CUmemPoolProps pool_props = {
		.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	static char host[1 << 16] __attribute__((aligned(4096)));
	void *got = NULL;
	CUdriverProcAddressQueryResult status;

	errno = SENTINEL;
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	printf("%-28s %s errno %d\n", "dlopen", libcuda ? "found" : "missing", errno);
	if (!libcuda)
		exit(2);
	CHECK("cuMemAlloc_v2", DRV(cuMemAlloc_v2)(&d, 4096));
	CHECK("cuMemAlloc_v2 (out of memory)", DRV(cuMemAlloc_v2)(&d, (size_t)2 << 40));
	CHECK("cuMemFree_v2", DRV(cuMemFree_v2)(d));
	CHECK("cuMemFree_v2 (not allocated)", DRV(cuMemFree_v2)((CUdeviceptr)0x1234));
	CHECK("cuMemAllocPitch_v2", DRV(cuMemAllocPitch_v2)(&d, &pitch, 100, 10, 4));
	CHECK("cuMemFree_v2", DRV(cuMemFree_v2)(d));
	CHECK("cuMemAllocManaged", DRV(cuMemAllocManaged)(&d, 4096, CU_MEM_ATTACH_GLOBAL));
	CHECK("cuMemFree_v2", DRV(cuMemFree_v2)(d));
	CHECK("cuMemAllocAsync", DRV(cuMemAllocAsync)(&d, 4096, NULL));
	CHECK("cuMemFreeAsync", DRV(cuMemFreeAsync)(d, NULL));
	CHECK("cuMemAllocHost_v2", DRV(cuMemAllocHost_v2)(&h, 4096));
	CHECK("cuMemFreeHost", DRV(cuMemFreeHost)(h));
	CHECK("cuMemHostAlloc", DRV(cuMemHostAlloc)(&h, 4096, 0));
	CHECK("cuMemFreeHost", DRV(cuMemFreeHost)(h));
	CHECK("cuMemHostRegister_v2", DRV(cuMemHostRegister_v2)(host, sizeof(host), 0));
	CHECK("cuMemHostUnregister", DRV(cuMemHostUnregister)(host));
	CHECK("cuArrayCreate_v2", DRV(cuArrayCreate_v2)(&array, &ad));
	CHECK("cuArrayDestroy", DRV(cuArrayDestroy)(array));
	CHECK("cuArray3DCreate_v2", DRV(cuArray3DCreate_v2)(&array, &ad3));
	CHECK("cuArrayDestroy", DRV(cuArrayDestroy)(array));
	CHECK("cuMemPoolCreate", DRV(cuMemPoolCreate)(&pool, &pool_props));
	CHECK("cuMemAllocFromPoolAsync", DRV(cuMemAllocFromPoolAsync)(&d, 4096, pool, NULL));
	CHECK("cuMemFreeAsync", DRV(cuMemFreeAsync)(d, NULL));
	CHECK("cuMemPoolTrimTo", DRV(cuMemPoolTrimTo)(pool, 0));
	CHECK("cuMemPoolDestroy", DRV(cuMemPoolDestroy)(pool));
	CHECK("cuMemGetAllocationGranularity",
	      DRV(cuMemGetAllocationGranularity)(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	if (!gran)
		gran = 2 << 20;
	CHECK("cuMemAddressReserve", DRV(cuMemAddressReserve)(&va, 2 * gran, 0, 0, 0));
	CHECK("cuMemCreate", DRV(cuMemCreate)(&handle, gran, &prop, 0));
	CHECK("cuMemMap", DRV(cuMemMap)(va, gran, 0, handle, 0));
	CHECK("cuMemUnmap", DRV(cuMemUnmap)(va, gran));
	CHECK("cuMemRelease", DRV(cuMemRelease)(handle));
	CHECK("cuMemAddressFree", DRV(cuMemAddressFree)(va, 2 * gran));
	CHECK("cuGetProcAddress_v2",
	      DRV(cuGetProcAddress_v2)("cuMemAlloc", &got, 13000, 0, &status));
	CHECK("cuMemAlloc (cuGetProcAddress)", ((__typeof__(&cuMemAlloc_v2))got)(&d, 4096));
	CHECK("cuMemFree_v2", DRV(cuMemFree_v2)(d));
	CHECK("cudaGetDriverEntryPoint",
	      cudaGetDriverEntryPoint("cuMemAlloc", &got, cudaEnableDefault, NULL));
	CHECK("cuMemAlloc (entry point)", ((__typeof__(&cuMemAlloc_v2))got)(&d, 4096));
	CHECK("cuMemFree_v2", DRV(cuMemFree_v2)(d));
	CHECK_PTR("dlsym (RTLD_DEFAULT)", dlsym(RTLD_DEFAULT, "cudaMalloc"));
	CHECK_PTR("dlsym (RTLD_NEXT, missing)", dlsym(RTLD_NEXT, "no_such_function_here"));
	CHECK_PTR("dlsym (handle, missing)", dlsym(libcuda, "no_such_function_here"));
}

int main(void)
{
	runtime_calls();
	driver_calls();
	return 0;
}
