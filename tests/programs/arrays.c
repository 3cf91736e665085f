/* arrays: CUDA arrays and pitched memory, through the runtime and through
 * driver functions the runtime hands out. A CUDA array is device memory
 * the program cannot address: its handle is not a device pointer. The
 * simulator charges an array width x max(height, 1) x max(depth, 1) x
 * channels x channel bytes, rounded up to 512. On the simulated 1 GiB
 * device, in this order:
 *
 *   alloc_2d_array    cudaMallocArray(float4: 4 x 32-bit float channels,
 *                     width 256, height 64): 262144 bytes; freed last
 *   alloc_3d_array    cudaMalloc3DArray(uchar: 1 x 8-bit channel,
 *                     100 x 100 x 10): 100000 bytes (charged 100352),
 *                     never freed
 *   alloc_3d_linear   cudaMalloc3D(width 1000 bytes, height 32, depth 4):
 *                     pitch 1024, 131072 bytes (128000 asked), freed with
 *                     cudaFree at once
 *   alloc_pitched     cudaMallocPitch(width 3000, height 20): pitch 3072,
 *                     61440 bytes (60000 asked), never freed
 *   driver_arrays     cuArrayCreate, cuArray3DCreate and cuArrayDestroy
 *                     from cudaGetDriverEntryPoint (the runtime answers
 *                     with the driver's cuArrayCreate_v2,
 *                     cuArray3DCreate_v2, cuArrayDestroy);
 *                     cuArrayCreate_v2(512 x 512, 1 x uint8): 262144
 *                     bytes, destroyed; cuArray3DCreate_v2(64 x 64 x 64,
 *                     2 x half): 1048576 bytes, never destroyed
 *   free_2d_array     cudaFreeArray of alloc_2d_array's array
 *   main              cudaMemGetInfo, printed
 *
 * Expected numbers:
 *   cudaMallocArray 1 (262144), cudaMalloc3DArray 1 (100000),
 *   cudaFreeArray 1 (free_2d_array, 262144). cudaMalloc3D 1 (131072),
 *   cudaFree 1 (alloc_3d_linear). cudaMallocPitch 1 (61440).
 *   cuArrayCreate_v2 1 (262144), cuArrayDestroy 1 (262144),
 *   cuArray3DCreate_v2 1 (1048576).
 *   Live at exit: 3 allocations, 1210016 bytes (alloc_3d_array 100000,
 *   alloc_pitched 61440, driver_arrays 1048576); charged 1210368, which is
 *   what the device shows in use.
 *   Peak: 1734304 bytes (1734656 charged), after driver_arrays'
 *   cuArray3DCreate_v2: both 2D arrays, both 3D arrays and the pitched
 *   block live.
 *   Exit status 0; 2 if a CUDA call fails, 3 if an entry point is missing.
 */
#include "cuda-check.h"

#include <cudaTypedefs.h>

static cudaArray_t array_2d, array_3d;
static void *pitched;
static CUarray driver_3d;

static __attribute__((noinline)) void
alloc_2d_array(void)
{
	struct cudaChannelFormatDesc rgba = { 32, 32, 32, 32, cudaChannelFormatKindFloat };

	must(cudaMallocArray(&array_2d, &rgba, 256, 64, cudaArrayDefault),
	     "alloc_2d_array: cudaMallocArray");
	printf("alloc_2d_array: 256 x 64 float4\n");
}

static __attribute__((noinline)) void
alloc_3d_array(void)
{
	struct cudaChannelFormatDesc gray = { 8, 0, 0, 0, cudaChannelFormatKindUnsigned };

	must(cudaMalloc3DArray(&array_3d, &gray, (struct cudaExtent){ 100, 100, 10 }, 0),
	     "alloc_3d_array: cudaMalloc3DArray");
	printf("alloc_3d_array: 100 x 100 x 10 uchar, kept\n");
}

static __attribute__((noinline)) void
alloc_3d_linear(void)
{
	struct cudaPitchedPtr p;

	must(cudaMalloc3D(&p, (struct cudaExtent){ 1000, 32, 4 }), "alloc_3d_linear: cudaMalloc3D");
	must(cudaFree(p.ptr), "alloc_3d_linear: cudaFree");
	printf("alloc_3d_linear: 1000 x 32 x 4, pitch %zu, freed\n", p.pitch);
}

static __attribute__((noinline)) void
alloc_pitched(void)
{
	size_t pitch = 0;

	must(cudaMallocPitch(&pitched, &pitch, 3000, 20), "alloc_pitched: cudaMallocPitch");
	printf("alloc_pitched: 3000 x 20, pitch %zu, kept\n", pitch);
}

static void *
entry_point(const char *name)
{
	enum cudaDriverEntryPointQueryResult status;
	void *fn = NULL;

	/* Deprecated in CUDA 13, still exported and still called. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	must(cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &status),
	     "cudaGetDriverEntryPoint");
#pragma GCC diagnostic pop
	if (!fn || status != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point %s\n", name);
		exit(3);
	}
	return fn;
}

static __attribute__((noinline)) void
driver_arrays(void)
{
	PFN_cuArrayCreate_v3020 create = (PFN_cuArrayCreate_v3020)entry_point("cuArrayCreate");
	PFN_cuArray3DCreate_v3020 create_3d =
		(PFN_cuArray3DCreate_v3020)entry_point("cuArray3DCreate");
	PFN_cuArrayDestroy_v2000 destroy = (PFN_cuArrayDestroy_v2000)entry_point("cuArrayDestroy");
	const CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 512, .Height = 512,
					   .Format = CU_AD_FORMAT_UNSIGNED_INT8, .NumChannels = 1 };
	const CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 64, .Height = 64, .Depth = 64,
					     .Format = CU_AD_FORMAT_HALF, .NumChannels = 2 };
	CUarray a2;

	must_drv(create(&a2, &d2), "driver_arrays: cuArrayCreate_v2");
	must_drv(create_3d(&driver_3d, &d3), "driver_arrays: cuArray3DCreate_v2");
	must_drv(destroy(a2), "driver_arrays: cuArrayDestroy");
	printf("driver_arrays: 512 x 512 uint8 destroyed, 64 x 64 x 64 half2 kept\n");
}

static __attribute__((noinline)) void
free_2d_array(void)
{
	must(cudaFreeArray(array_2d), "free_2d_array: cudaFreeArray");
	printf("free_2d_array: freed\n");
}

int
main(void)
{
	size_t free_bytes, total;

	alloc_2d_array();
	alloc_3d_array();
	alloc_3d_linear();
	alloc_pitched();
	driver_arrays();
	free_2d_array();
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
