/* Self-test of the simulated driver, called directly (no runtime): the
 * semantics the end-to-end tests rely on. The device shape is set here,
 * before cuInit: 2 devices of 64 MiB, 1 MiB of it reserved. Run with
 * --import HANDLE, it is the importing process of test_ipc. */
#include "sim-config.h"
#include "test-sim-driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int failures;

size_t
used_bytes(void)
{
	size_t free_bytes = 0, total = 0;

	EXPECT_RC(cuMemGetInfo(&free_bytes, &total), CUDA_SUCCESS);
	EXPECT(total == CAPACITY);
	return total - free_bytes - RESERVED;
}

static void
test_config_parse(void)
{
	size_t v = 0;

	EXPECT(sim_config_parse_size("1G", &v) && v == ((size_t)1 << 30));
	EXPECT(sim_config_parse_size("1024M", &v) && v == ((size_t)1 << 30));
	EXPECT(sim_config_parse_size("3k", &v) && v == 3072);
	EXPECT(sim_config_parse_size("1073741824", &v) && v == ((size_t)1 << 30));
	EXPECT(sim_config_parse_size("0", &v) && v == 0);
	EXPECT(!sim_config_parse_size("", &v));
	EXPECT(!sim_config_parse_size("-1", &v));
	EXPECT(!sim_config_parse_size("1GB", &v));
	EXPECT(!sim_config_parse_size("1X", &v));
	EXPECT(!sim_config_parse_size(" 1", &v));
	EXPECT(!sim_config_parse_size("99999999999T", &v));
}

/* Only cuInit, cuDriverGetVersion, cuGetProcAddress and the error strings
 * work before cuInit. */
static void
test_before_init(void)
{
	CUdeviceptr p = 0;
	int version = 0;
	void *fn = NULL;
	const char *s = NULL;

	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT_RC(cuDeviceGetCount(&version), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT_RC(cuDriverGetVersion(&version), CUDA_SUCCESS);
	EXPECT(version == 13000);
	EXPECT_RC(cuGetProcAddress("cuInit", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL),
		  CUDA_SUCCESS);
	EXPECT(fn == (void *)cuInit);
	EXPECT_RC(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
	EXPECT(s && strcmp(s, "out of memory") == 0);
	EXPECT_RC(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
	EXPECT(s && strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY") == 0);
	EXPECT_RC(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

static int
attribute(CUdevice_attribute attrib, CUdevice dev)
{
	int value = -7;

	EXPECT_RC(cuDeviceGetAttribute(&value, attrib, dev), CUDA_SUCCESS);
	return value;
}

static void
test_devices(void)
{
	char name[64];
	size_t total = 0;
	int count = 0, value = 0;
	CUdevice dev = -1;

	EXPECT_RC(cuDeviceGetCount(&count), CUDA_SUCCESS);
	EXPECT(count == 2);
	EXPECT_RC(cuDeviceGet(&dev, 1), CUDA_SUCCESS);
	EXPECT(dev == 1);
	EXPECT_RC(cuDeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RC(cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
	EXPECT(strcmp(name, "cudasim device 0") == 0);
	EXPECT_RC(cuDeviceTotalMem(&total, 0), CUDA_SUCCESS);
	EXPECT(total == CAPACITY);
	EXPECT_RC(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0),
		  CUDA_SUCCESS);
	EXPECT(value == 1);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1) == 9);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == 132);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 0) == 64);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 0) == 2147483647);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 0) == 49152);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0) == 1);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1) == 2);
	EXPECT(attribute(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 0) == 0);
	EXPECT_RC(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 2),
		  CUDA_ERROR_INVALID_DEVICE);
}

/* No current context: memory calls fail until one is made current. */
/* Push and pop over the current context, and the primary context's state. */
static void
test_context_stack(CUcontext primary)
{
	CUcontext other = NULL, popped = NULL, ctx = NULL;
	unsigned int flags = 1;
	int active = 0;

	EXPECT_RC(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
	EXPECT(flags == 0 && active == 1);
	EXPECT_RC(cuDevicePrimaryCtxGetState(1, &flags, &active), CUDA_SUCCESS);
	EXPECT(active == 0);
	EXPECT_RC(cuCtxCreate(&other, NULL, 0, 1), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT_RC(cuCtxPushCurrent(other), CUDA_SUCCESS);
	EXPECT_RC(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
	EXPECT(ctx == other);
	EXPECT_RC(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
	EXPECT(popped == other);
	EXPECT_RC(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
	EXPECT(ctx == primary);
	EXPECT_RC(cuCtxDestroy(other), CUDA_SUCCESS);
	EXPECT_RC(cuCtxPushCurrent(other), CUDA_ERROR_INVALID_CONTEXT);
}

static void
test_contexts(CUcontext *primary)
{
	CUcontext ctx = (CUcontext)1;
	CUdeviceptr p = 0;
	CUdevice dev = -1;

	EXPECT_RC(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
	EXPECT(ctx == NULL);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RC(cuDevicePrimaryCtxRetain(primary, 0), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(*primary), CUDA_SUCCESS);
	EXPECT_RC(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
	EXPECT(ctx == *primary);
	EXPECT_RC(cuCtxGetDevice(&dev), CUDA_SUCCESS);
	EXPECT(dev == 0);
	EXPECT_RC(cuCtxSynchronize(), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSynchronize_v2(NULL), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent((CUcontext)&dev), CUDA_ERROR_INVALID_CONTEXT);
	test_context_stack(*primary);
}

/* First fit with 512-byte granules: the addresses follow from the calls. */
static void
test_first_fit(void)
{
	CUdeviceptr a, b, c, d;

	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemAlloc(&a, 1000), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&b, 512), CUDA_SUCCESS);
	EXPECT(b == a + 1024);
	EXPECT(used_bytes() == 1536);
	EXPECT_RC(cuMemFree(a), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&c, 1), CUDA_SUCCESS);
	EXPECT(c == a);
	EXPECT_RC(cuMemAlloc(&d, 600), CUDA_SUCCESS);
	EXPECT(d == b + 512);
	EXPECT(used_bytes() == 512 + 512 + 1024);
	EXPECT_RC(cuMemFree(b), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(c), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(d), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	/* Coalesced again: the whole device fits in one block. */
	EXPECT_RC(cuMemAlloc(&a, CAPACITY - RESERVED), CUDA_SUCCESS);
	EXPECT(used_bytes() == CAPACITY - RESERVED);
	EXPECT_RC(cuMemFree(a), CUDA_SUCCESS);
}

static void
test_errors(void)
{
	CUdeviceptr p = 0xdead, q;

	EXPECT_RC(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAlloc(&p, CAPACITY - RESERVED + 1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuMemAlloc(&p, (size_t)-1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(p == 0xdead);
	EXPECT_RC(cuMemFree(0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(0xdead), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAlloc(&q, 4096), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(q + 512), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(q), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(q), CUDA_ERROR_INVALID_VALUE);
}

/* Fill the device with 1 MiB blocks: exactly capacity - reserved fits. */
static void
test_oom_boundary(void)
{
	enum { N = 63 };
	CUdeviceptr p[N], extra = 7;

	for (int i = 0; i < N; i++)
		EXPECT_RC(cuMemAlloc(&p[i], MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == CAPACITY - RESERVED);
	EXPECT_RC(cuMemAlloc(&extra, 1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(extra == 7);
	EXPECT_RC(cuMemFree(p[10]), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&extra, MiB + 1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuMemAlloc(&extra, MiB), CUDA_SUCCESS);
	EXPECT(extra == p[10]);
	p[10] = extra;
	for (int i = 0; i < N; i++)
		EXPECT_RC(cuMemFree(p[i]), CUDA_SUCCESS);
}

/* Memory free in pieces is free: with every other 1 MiB block freed, a
 * request for all that is free succeeds (placed past the live blocks, as
 * the real driver maps pages behind a larger virtual range), and one byte
 * more than is free fails. */
static void
test_free_in_pieces(void)
{
	enum { N = 63 };
	CUdeviceptr p[N], all, extra = 7;
	size_t freed = 0;

	for (int i = 0; i < N; i++)
		EXPECT_RC(cuMemAlloc(&p[i], MiB), CUDA_SUCCESS);
	for (int i = 0; i < N; i += 2, freed += MiB)
		EXPECT_RC(cuMemFree(p[i]), CUDA_SUCCESS);
	EXPECT(used_bytes() == CAPACITY - RESERVED - freed);
	EXPECT_RC(cuMemAlloc(&extra, freed + 1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(extra == 7);
	EXPECT_RC(cuMemAlloc(&all, freed), CUDA_SUCCESS);
	EXPECT(all >= p[N - 2] + MiB);	/* past the last live block */
	EXPECT(used_bytes() == CAPACITY - RESERVED);
	EXPECT_RC(cuMemAlloc(&extra, 1), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuMemFree(all), CUDA_SUCCESS);
	for (int i = 1; i < N; i += 2)
		EXPECT_RC(cuMemFree(p[i]), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

static void
test_kinds(void)
{
	CUdeviceptr m, pitched;
	size_t pitch = 0;
	void *host = NULL;

	EXPECT_RC(cuMemAllocManaged(&m, 1000, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 1024);
	EXPECT_RC(cuMemAllocManaged(&m, 1000, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(m), CUDA_SUCCESS);
	{
		/* Managed memory oversubscribes a full device; device memory
		 * does not, and the device's free memory stays its own. */
		CUdeviceptr full, over, dev;
		size_t free_b = 0, total = 0;

		EXPECT_RC(cuMemGetInfo(&free_b, &total), CUDA_SUCCESS);
		EXPECT_RC(cuMemAlloc(&full, free_b), CUDA_SUCCESS);
		EXPECT_RC(cuMemAllocManaged(&over, 8 * MiB, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
		EXPECT_RC(cuMemAlloc(&dev, 512), CUDA_ERROR_OUT_OF_MEMORY);
		EXPECT_RC(cuMemGetInfo(&free_b, &total), CUDA_SUCCESS);
		EXPECT(free_b == 0);
		EXPECT_RC(cuMemFree(over), CUDA_SUCCESS);
		EXPECT_RC(cuMemAlloc(&dev, 512), CUDA_ERROR_OUT_OF_MEMORY);
		EXPECT_RC(cuMemFree(full), CUDA_SUCCESS);
		EXPECT(used_bytes() == 0);
	}
	EXPECT_RC(cuMemAllocPitch(&pitched, &pitch, 1000, 16, 4), CUDA_SUCCESS);
	EXPECT(pitch == 1024);
	EXPECT(used_bytes() == 16 * 1024);
	EXPECT_RC(cuMemAllocPitch(&pitched, &pitch, 1000, 16, 3), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(pitched), CUDA_SUCCESS);
	/* Pinned host memory is not device memory. */
	EXPECT_RC(cuMemAllocHost(&host, 5 * MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	memset(host, 1, 5 * MiB);
	EXPECT_RC(cuMemFreeHost(host), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemHostAlloc(&host, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeHost(host), CUDA_SUCCESS);
	EXPECT_RC(cuMemHostAlloc(&host, 4096, 0x80), CUDA_ERROR_INVALID_VALUE);
}

/* Stream-ordered allocation comes from the device's pool, which reserves
 * 2 MiB at a time and gives free memory back at a synchronisation
 * (test_pools has the details). */
static void
test_streams(void)
{
	CUstream s = NULL;
	CUdeviceptr p;

	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync(&p, 4096, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemFreeAsync(p, s), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync(&p, 512, CU_STREAM_PER_THREAD), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(p, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuStreamSynchronize(s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuStreamDestroy(s), CUDA_SUCCESS);
	EXPECT_RC(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuMemAllocAsync(&p, 512, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuStreamDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(used_bytes() == 0);
}

static void
test_copies(void)
{
	unsigned char in[3000], out[3000];
	CUdeviceptr p;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7);
	EXPECT_RC(cuMemAlloc(&p, sizeof(in)), CUDA_SUCCESS);
	EXPECT_RC(cuMemcpyHtoD(p, in, sizeof(in)), CUDA_SUCCESS);
	EXPECT_RC(cuMemcpyDtoH(out, p, sizeof(out)), CUDA_SUCCESS);
	EXPECT(memcmp(in, out, sizeof(in)) == 0);
	EXPECT_RC(cuMemsetD8(p + 100, 0xab, 10), CUDA_SUCCESS);
	EXPECT_RC(cuMemcpy((CUdeviceptr)out, p, sizeof(out)), CUDA_SUCCESS);
	EXPECT(out[99] == in[99] && out[100] == 0xab && out[109] == 0xab && out[110] == in[110]);
	EXPECT_RC(cuMemcpyHtoD(0, in, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemcpyHtoD((CUdeviceptr)out, in, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
}

static void
expect_proc(const char *name, int version, cuuint64_t flags, void *want,
	    CUdriverProcAddressQueryResult want_status)
{
	CUdriverProcAddressQueryResult status = (CUdriverProcAddressQueryResult)-1;
	void *fn = (void *)1;
	CUresult rc = cuGetProcAddress(name, &fn, version, flags, &status);

	if (fn != want || status != want_status ||
	    rc != (want ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND)) {
		fprintf(stderr, "cuGetProcAddress(%s, %d, %llu): rc %d status %d fn %p\n",
			name, version, (unsigned long long)flags, (int)rc, (int)status, fn);
		failures++;
	}
}

/* The driver answers with the newest ABI of a base name that the
 * caller's CUDA version knows, and the per-thread twin when asked. */
static void
test_proc_address(void)
{
	const cuuint64_t legacy = CU_GET_PROC_ADDRESS_DEFAULT;
	const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const CUdriverProcAddressQueryResult ok = CU_GET_PROC_ADDRESS_SUCCESS;
	void *fn;

	expect_proc("cuMemAlloc", 13000, legacy, (void *)cuMemAlloc_v2, ok);
	expect_proc("cuMemAlloc", 3020, legacy, (void *)cuMemAlloc_v2, ok);
	expect_proc("cuMemAlloc", 3000, legacy, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	expect_proc("cuMemAlloc", 13000, ptds, (void *)cuMemAlloc_v2, ok);
	expect_proc("cuMemAlloc_v2", 13000, legacy, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	expect_proc("cuNoSuchThing", 13000, legacy, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	expect_proc("cuMemFree", 12000, legacy, (void *)cuMemFree_v2, ok);
	expect_proc("cuMemGetInfo", 12000, legacy, (void *)cuMemGetInfo_v2, ok);
	expect_proc("cuCtxSynchronize", 12080, legacy, (void *)cuCtxSynchronize, ok);
	expect_proc("cuCtxSynchronize", 13000, legacy, (void *)cuCtxSynchronize_v2, ok);
	expect_proc("cuGetProcAddress", 12000, legacy, (void *)cuGetProcAddress_v2, ok);
	/* cuda.h names only the _v2 ABI; the CUDA 11.3 one is another function. */
	EXPECT_RC(cuGetProcAddress("cuGetProcAddress", &fn, 11080, legacy, NULL), CUDA_SUCCESS);
	EXPECT(fn != NULL && fn != (void *)cuGetProcAddress_v2);
	expect_proc("cuMemAllocAsync", 12000, legacy, (void *)cuMemAllocAsync, ok);
	expect_proc("cuMemAllocAsync", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
		    (void *)cuMemAllocAsync, ok);
	EXPECT_RC(cuGetProcAddress("cuMemAlloc", &fn, 13000, ptds | CU_GET_PROC_ADDRESS_LEGACY_STREAM,
				   NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGetProcAddress("cuMemAllocAsync", &fn, 13000, ptds, NULL), CUDA_SUCCESS);
	EXPECT(fn != NULL && fn != (void *)cuMemAllocAsync);
}

/* Destroying a context frees what was made in it. */
static void
test_context_teardown(CUcontext primary)
{
	const CUmemPoolProps props = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
				       .location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
	const CUDA_ARRAY_DESCRIPTOR desc = { .Width = 512, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
					     .NumChannels = 1 };
	static char registered[4096];
	CUmemoryPool pool;
	CUcontext ctx = NULL;
	CUarray array;
	CUdeviceptr p;
	CUstream s;
	void *host;

	EXPECT_RC(cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&p, 8 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuStreamCreate(&s, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocHost(&host, 4096), CUDA_SUCCESS);
	EXPECT(used_bytes() == 8 * MiB);
	/* Pool blocks, the pools it made, arrays and registrations go too. */
	EXPECT_RC(cuMemAllocAsync(&p, 512, s), CUDA_SUCCESS);
	EXPECT_RC(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocFromPoolAsync(&p, 512, pool, s), CUDA_SUCCESS);
	EXPECT_RC(cuArrayCreate(&array, &desc), CUDA_SUCCESS);
	EXPECT_RC(cuMemHostRegister(registered, sizeof(registered), 0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 12 * MiB + 512);
	EXPECT_RC(cuCtxDestroy(ctx), CUDA_SUCCESS);
	EXPECT_RC(cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuMemHostRegister(registered, sizeof(registered), 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemHostUnregister(registered), CUDA_SUCCESS);

	/* The last release of a primary context does the same. */
	EXPECT_RC(cuMemAlloc(&p, 2 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RC(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RC(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	EXPECT(ctx == primary);
	EXPECT(used_bytes() == 0);
}

/* The second device has its own memory and accounting. */
static void
test_second_device(CUcontext primary)
{
	CUcontext ctx1;
	CUdeviceptr p0, p1;
	CUdevice dev = -1;

	EXPECT_RC(cuMemAlloc(&p0, MiB), CUDA_SUCCESS);
	EXPECT_RC(cuDevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
	EXPECT_RC(cuCtxGetDevice(&dev), CUDA_SUCCESS);
	EXPECT(dev == 1);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemAlloc(&p1, CAPACITY - RESERVED), CUDA_SUCCESS);
	EXPECT(p1 >= p0 + (CAPACITY - RESERVED) || p0 >= p1 + (CAPACITY - RESERVED));
	/* Memory of another device can be freed from here (unified addressing). */
	EXPECT_RC(cuMemFree(p0), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(p1), CUDA_SUCCESS);
	EXPECT_RC(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

#define THREADS 8
#define PAIRS 20000

static void *
churn(void *arg)
{
	CUcontext primary = arg;

	if (cuCtxSetCurrent(primary) != CUDA_SUCCESS)
		return (void *)1;
	for (int i = 0; i < PAIRS; i++) {
		CUdeviceptr p;
		if (cuMemAlloc(&p, 512 * (size_t)(1 + i % 8)) != CUDA_SUCCESS ||
		    cuMemFree(p) != CUDA_SUCCESS)
			return (void *)1;
	}
	return NULL;
}

static void
test_threads(CUcontext primary)
{
	pthread_t t[THREADS];
	void *result;

	for (int i = 0; i < THREADS; i++)
		EXPECT(pthread_create(&t[i], NULL, churn, primary) == 0);
	for (int i = 0; i < THREADS; i++) {
		EXPECT(pthread_join(t[i], &result) == 0);
		EXPECT(result == NULL);
	}
	EXPECT(used_bytes() == 0);
}

int
main(int argc, char **argv)
{
	CUcontext primary = NULL;

	setenv(SIM_ENV_DEVICE_MEMORY, "64M", 1);
	setenv(SIM_ENV_RESERVED_MEMORY, "1024K", 1);
	setenv(SIM_ENV_DEVICE_COUNT, "2", 1);
	if (argc == 3 && strcmp(argv[1], "--import") == 0)
		return ipc_import_child(argv[2]);

	test_config_parse();
	test_before_init();
	EXPECT_RC(cuInit(0), CUDA_SUCCESS);
	test_devices();
	test_contexts(&primary);
	test_first_fit();
	test_errors();
	test_oom_boundary();
	test_free_in_pieces();
	test_kinds();
	test_streams();
	test_copies();
	test_proc_address();
	test_proc_routes();
	test_pools();
	test_vmm();
	test_arrays();
	test_host_register();
	test_ipc();
	test_graphs(primary);
	test_events(primary);
	test_kernels(primary);
	test_fork();
	test_context_teardown(primary);
	test_second_device(primary);
	test_threads(primary);

	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
