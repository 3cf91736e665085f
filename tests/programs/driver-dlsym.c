/* driver-dlsym: TensorFlow's (and XLA's, JAX's) way to the driver. Not
 * linked against CUDA at all: it dlopens libcuda.so.1 with RTLD_LOCAL and
 * takes each driver function with dlsym on that handle, by its exported
 * (versioned) name, so that no preloaded definition can take its place.
 * On the simulated 1 GiB device, in this order:
 *
 *   init_context     cuInit, cuDeviceGet(0), cuDevicePrimaryCtxRetain,
 *                    cuCtxSetCurrent
 *   alloc_weights    3 x cuMemAlloc_v2(8388608), never freed
 *   alloc_workspace  2 x cuMemAlloc_v2(1000000) (charged 1000448 each),
 *                    both freed with cuMemFree_v2
 *   alloc_managed    cuMemAllocManaged(1048576, CU_MEM_ATTACH_GLOBAL),
 *                    freed with cuMemFree_v2
 *   alloc_pitched    cuMemAllocPitch_v2(width 1000, height 64, element 4):
 *                    pitch 1024, 65536 bytes (64000 asked), never freed
 *   alloc_pinned     cuMemAllocHost_v2(65536), freed with cuMemFreeHost;
 *                    cuMemHostAlloc(131072, CU_MEMHOSTALLOC_PORTABLE),
 *                    never freed
 *   register_host    cuMemHostRegister_v2 of a 1048576-byte malloc'd
 *                    buffer, then cuMemHostUnregister (pins host memory
 *                    the program already has; no device memory)
 *   try_huge         cuMemAlloc_v2(2147483648): CUDA_ERROR_OUT_OF_MEMORY,
 *                    with 1048510464 of 1073741824 bytes free
 *   main             cuMemGetInfo_v2, printed
 *
 * Expected numbers:
 *   cuMemAlloc_v2 calls 6: 5 succeed (alloc_weights 3, 25165824 bytes;
 *   alloc_workspace 2, 2000000 bytes), 1 fails for lack of memory
 *   (try_huge, 2147483648 bytes; device free 1048510464, total
 *   1073741824). cuMemFree_v2 calls 3 (alloc_workspace 2, alloc_managed 1).
 *   cuMemAllocManaged 1 (1048576, freed). cuMemAllocPitch_v2 1 (65536).
 *   Pinned host: cuMemAllocHost_v2 1 (65536, freed), cuMemHostAlloc 1
 *   (131072, kept), cuMemFreeHost 1. Registered host memory: 1 register
 *   and 1 unregister of 1048576 bytes, nothing registered at exit.
 *   Live at exit: device 4 allocations, 25231360 bytes (alloc_weights
 *   3 x 8388608 and alloc_pitched 65536; charged the same); pinned 1,
 *   131072 bytes (alloc_pinned).
 *   Peak device: 27165824 bytes (alloc_weights 25165824 + both
 *   alloc_workspace blocks; charged 27166720); managed memory alone never
 *   takes it higher (26214400).
 *   Exit status 0; 2 if a CUDA call fails unexpectedly, 3 if libcuda.so.1
 *   or one of its functions cannot be found.
 */
#include "cuda-check.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdint.h>

#define WEIGHTS 3
#define WEIGHT_BYTES ((size_t)8 << 20)
#define WORKSPACES 2
#define WORKSPACE_BYTES ((size_t)1000000)
#define MANAGED_BYTES ((size_t)1 << 20)
#define PINNED_BYTES ((size_t)65536)
#define HOSTALLOC_BYTES ((size_t)131072)
#define REGISTERED_BYTES ((size_t)1 << 20)
#define HUGE_BYTES ((size_t)2 << 30)

/* X(field, exported name, type): each found with dlsym on the handle. */
#define DRIVER_FUNCTIONS(X) \
	X(init, "cuInit", PFN_cuInit_v2000) \
	X(device_get, "cuDeviceGet", PFN_cuDeviceGet_v2000) \
	X(primary_retain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000) \
	X(ctx_set_current, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000) \
	X(mem_alloc, "cuMemAlloc_v2", PFN_cuMemAlloc_v3020) \
	X(mem_free, "cuMemFree_v2", PFN_cuMemFree_v3020) \
	X(mem_alloc_managed, "cuMemAllocManaged", PFN_cuMemAllocManaged_v6000) \
	X(mem_alloc_host, "cuMemAllocHost_v2", PFN_cuMemAllocHost_v3020) \
	X(mem_host_alloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020) \
	X(mem_free_host, "cuMemFreeHost", PFN_cuMemFreeHost_v2000) \
	X(mem_alloc_pitch, "cuMemAllocPitch_v2", PFN_cuMemAllocPitch_v3020) \
	X(mem_host_register, "cuMemHostRegister_v2", PFN_cuMemHostRegister_v6050) \
	X(mem_host_unregister, "cuMemHostUnregister", PFN_cuMemHostUnregister_v4000) \
	X(mem_get_info, "cuMemGetInfo_v2", PFN_cuMemGetInfo_v3020)

static struct {
#define FIELD(field, name, type) type field;
	DRIVER_FUNCTIONS(FIELD)
#undef FIELD
} drv;

static void *weights[WEIGHTS];
static CUdeviceptr pitched;
static void *host_kept;

static __attribute__((noinline)) void
load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int n = 0;

	if (!h) {
		fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
		exit(3);
	}
#define LOOKUP(field, name, type)                                            \
	if (!(drv.field = (type)dlsym(h, name))) {                           \
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());          \
		exit(3);                                                     \
	}                                                                    \
	n++;
	DRIVER_FUNCTIONS(LOOKUP)
#undef LOOKUP
	printf("load_driver: %d functions from libcuda.so.1\n", n);
}

static __attribute__((noinline)) void
init_context(void)
{
	CUdevice dev;
	CUcontext ctx;

	must_drv(drv.init(0), "cuInit");
	must_drv(drv.device_get(&dev, 0), "cuDeviceGet");
	must_drv(drv.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	must_drv(drv.ctx_set_current(ctx), "cuCtxSetCurrent");
}

static __attribute__((noinline)) void
alloc_weights(void)
{
	for (int i = 0; i < WEIGHTS; i++) {
		CUdeviceptr p;
		must_drv(drv.mem_alloc(&p, WEIGHT_BYTES), "alloc_weights: cuMemAlloc_v2");
		weights[i] = (void *)(uintptr_t)p;
	}
	printf("alloc_weights: kept %d x %zu bytes\n", WEIGHTS, WEIGHT_BYTES);
}

static __attribute__((noinline)) void
alloc_workspace(void)
{
	CUdeviceptr p[WORKSPACES];

	for (int i = 0; i < WORKSPACES; i++)
		must_drv(drv.mem_alloc(&p[i], WORKSPACE_BYTES), "alloc_workspace: cuMemAlloc_v2");
	for (int i = 0; i < WORKSPACES; i++)
		must_drv(drv.mem_free(p[i]), "alloc_workspace: cuMemFree_v2");
	printf("alloc_workspace: %d x %zu bytes, freed\n", WORKSPACES, WORKSPACE_BYTES);
}

static __attribute__((noinline)) void
alloc_managed(void)
{
	CUdeviceptr p;

	must_drv(drv.mem_alloc_managed(&p, MANAGED_BYTES, CU_MEM_ATTACH_GLOBAL),
		 "alloc_managed: cuMemAllocManaged");
	must_drv(drv.mem_free(p), "alloc_managed: cuMemFree_v2");
	printf("alloc_managed: %zu managed bytes, freed\n", MANAGED_BYTES);
}

static __attribute__((noinline)) void
alloc_pitched(void)
{
	size_t pitch = 0;

	must_drv(drv.mem_alloc_pitch(&pitched, &pitch, 1000, 64, 4),
		 "alloc_pitched: cuMemAllocPitch_v2");
	printf("alloc_pitched: 1000 x 64, pitch %zu, kept\n", pitch);
}

static __attribute__((noinline)) void
alloc_pinned(void)
{
	void *p;

	must_drv(drv.mem_alloc_host(&p, PINNED_BYTES), "alloc_pinned: cuMemAllocHost_v2");
	must_drv(drv.mem_host_alloc(&host_kept, HOSTALLOC_BYTES, CU_MEMHOSTALLOC_PORTABLE),
		 "alloc_pinned: cuMemHostAlloc");
	must_drv(drv.mem_free_host(p), "alloc_pinned: cuMemFreeHost");
	printf("alloc_pinned: %zu pinned bytes freed, %zu kept\n", PINNED_BYTES,
	       HOSTALLOC_BYTES);
}

static __attribute__((noinline)) void
register_host(void)
{
	void *buf = malloc(REGISTERED_BYTES);

	if (!buf)
		exit(PROGRAM_CUDA_FAILED);
	must_drv(drv.mem_host_register(buf, REGISTERED_BYTES, 0),
		 "register_host: cuMemHostRegister_v2");
	must_drv(drv.mem_host_unregister(buf), "register_host: cuMemHostUnregister");
	free(buf);
	printf("register_host: %zu host bytes registered, then unregistered\n",
	       REGISTERED_BYTES);
}

static __attribute__((noinline)) void
try_huge(void)
{
	CUdeviceptr p;
	CUresult rc = drv.mem_alloc(&p, HUGE_BYTES);

	if (rc != CUDA_ERROR_OUT_OF_MEMORY) {
		fprintf(stderr, "try_huge: cuMemAlloc_v2 returned %d\n", (int)rc);
		exit(PROGRAM_CUDA_FAILED);
	}
	printf("try_huge: cuMemAlloc_v2(%zu) failed: CUDA_ERROR_OUT_OF_MEMORY\n", HUGE_BYTES);
}

int
main(void)
{
	size_t free_bytes, total;

	load_driver();
	init_context();
	alloc_weights();
	alloc_workspace();
	alloc_managed();
	alloc_pitched();
	alloc_pinned();
	register_host();
	try_huge();
	must_drv(drv.mem_get_info(&free_bytes, &total), "cuMemGetInfo_v2");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
