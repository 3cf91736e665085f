/* Driver self-test, part two: the allocation routes beyond cuMemAlloc
 * (pools, virtual memory, arrays, IPC, host registration), what fork does,
 * and the exact exported function cuGetProcAddress hands out for each
 * base name and version. Runs on device 0 with its primary context
 * current and nothing allocated. */
#include "test-sim-driver.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const CUmemPoolProps pool_props = {
	.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static const CUmemAllocationProp vmm_prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static cuuint64_t
pool_attr(CUmemoryPool pool, CUmemPool_attribute attr)
{
	cuuint64_t v = 0;

	EXPECT_RC(cuMemPoolGetAttribute(pool, attr, &v), CUDA_SUCCESS);
	return v;
}

static void
set_threshold(CUmemoryPool pool, cuuint64_t bytes)
{
	EXPECT_RC(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &bytes),
		  CUDA_SUCCESS);
}

#define RESERVED_NOW(pool) pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
#define USED_NOW(pool) pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)

/* cuMemGetAddressRange of a pointer into an allocation. */
static void
expect_range(CUdeviceptr p, CUdeviceptr want_base, size_t want_size)
{
	CUdeviceptr base = 0;
	size_t size = 0;

	EXPECT_RC(cuMemGetAddressRange(&base, &size, p), CUDA_SUCCESS);
	EXPECT(base == want_base && size == want_size);
}

/* Blocks come from 2 MiB chunks; freed blocks stay reserved until a
 * synchronisation finds the pool over its release threshold. */
static void
test_default_pool(CUmemoryPool def)
{
	CUdeviceptr a, b, c;
	cuuint64_t zero = 0, one = 1;
	int reuse = 0;

	EXPECT_RC(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse),
		  CUDA_SUCCESS);
	EXPECT(reuse == 1);
	EXPECT(pool_attr(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0);
	EXPECT_RC(cuMemAllocAsync(&a, 1000, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && RESERVED_NOW(def) == 2 * MiB && USED_NOW(def) == 1024);
	EXPECT_RC(cuMemAllocAsync(&b, 4096, NULL), CUDA_SUCCESS);
	EXPECT(b == a + 1024 && used_bytes() == 2 * MiB && USED_NOW(def) == 5120);
	/* Larger than a chunk: a chunk of its own, rounded up to 2 MiB. */
	EXPECT_RC(cuMemAllocAsync(&c, 3 * MiB, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 6 * MiB && RESERVED_NOW(def) == 6 * MiB);
	EXPECT_RC(cuMemFreeAsync(a, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(c, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 6 * MiB && RESERVED_NOW(def) == 6 * MiB && USED_NOW(def) == 4096);
	/* Free pool memory is reused without touching the device. */
	EXPECT_RC(cuMemAllocAsync(&c, 2 * MiB, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 6 * MiB);
	EXPECT_RC(cuMemFreeAsync(c, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamSynchronize(NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && RESERVED_NOW(def) == 2 * MiB);
	/* Under the threshold, free memory stays in the pool until trimmed. */
	set_threshold(def, 4 * MiB);
	EXPECT_RC(cuMemAllocAsync(&c, 2 * MiB, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(c, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSynchronize(), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB && RESERVED_NOW(def) == 4 * MiB);
	EXPECT_RC(cuMemPoolTrimTo(def, 0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && RESERVED_NOW(def) == 2 * MiB);
	/* High-water marks: reset (to the current value) by setting 0. */
	EXPECT(pool_attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 6 * MiB);
	EXPECT(pool_attr(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 5120 + 3 * MiB);
	EXPECT_RC(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &one),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero),
		  CUDA_SUCCESS);
	EXPECT(pool_attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 2 * MiB);
	EXPECT_RC(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero),
		  CUDA_ERROR_INVALID_VALUE);
	set_threshold(def, 0);
	EXPECT_RC(cuMemFreeAsync(b, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSynchronize_v2(NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0 && RESERVED_NOW(def) == 0);
}

/* A pool that holds free memory starves cuMemAlloc, as on a real device,
 * but gives its own free memory back before it fails to grow. */
static void
test_pool_pressure(CUmemoryPool def)
{
	CUdeviceptr a, b = 7;

	set_threshold(def, UINT64_MAX);
	EXPECT_RC(cuMemAllocAsync(&a, 32 * MiB, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(a, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamSynchronize(NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 32 * MiB);
	EXPECT_RC(cuMemAlloc(&b, 40 * MiB), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(b == 7);
	EXPECT_RC(cuMemAllocAsync(&a, 40 * MiB, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 40 * MiB && RESERVED_NOW(def) == 40 * MiB);
	EXPECT_RC(cuMemAllocAsync(&b, 40 * MiB, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuMemFreeAsync(a, NULL), CUDA_SUCCESS);
	set_threshold(def, 0);
	EXPECT_RC(cuStreamSynchronize(NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* Explicit pools: their own chunks, a size limit, destruction deferred
 * while a block is live; either free call frees either kind of memory. */
static void
test_explicit_pool(CUmemoryPool def)
{
	CUmemPoolProps props = pool_props;
	CUmemoryPool pool = NULL, limited = NULL, cur = NULL;
	CUdeviceptr a, b;

	EXPECT_RC(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
	EXPECT(pool && pool != def);
	EXPECT_RC(cuMemAllocFromPoolAsync(&a, 512, pool, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && RESERVED_NOW(def) == 0 && USED_NOW(pool) == 512);
	expect_range(a + 100, a, 512);
	EXPECT_RC(cuMemFree(a), CUDA_SUCCESS);
	EXPECT(USED_NOW(pool) == 0 && RESERVED_NOW(pool) == 2 * MiB);
	EXPECT_RC(cuMemAlloc(&b, 512), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(b, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocFromPoolAsync(&a, 512, pool, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemPoolDestroy(pool), CUDA_SUCCESS);
	EXPECT_RC(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &b),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAllocFromPoolAsync(&b, 512, pool, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemFreeAsync(a, NULL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAllocFromPoolAsync(&a, 512, NULL, NULL), CUDA_ERROR_INVALID_VALUE);

	props.maxSize = 4 * MiB;
	EXPECT_RC(cuMemPoolCreate(&limited, &props), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocFromPoolAsync(&a, 3 * MiB, limited, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocFromPoolAsync(&b, 2 * MiB, limited, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	/* The current pool serves cuMemAllocAsync. */
	EXPECT_RC(cuDeviceSetMemPool(1, limited), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuDeviceSetMemPool(0, limited), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGetMemPool(&cur, 0), CUDA_SUCCESS);
	EXPECT(cur == limited);
	EXPECT_RC(cuMemAllocAsync(&b, 512, NULL), CUDA_SUCCESS);
	EXPECT(USED_NOW(limited) == 3 * MiB + 512 && RESERVED_NOW(def) == 0);
	/* Destroying the current pool makes the default one current again. */
	EXPECT_RC(cuMemPoolDestroy(limited), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGetMemPool(&cur, 0), CUDA_SUCCESS);
	EXPECT(cur == def);
	EXPECT_RC(cuMemFree(a), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(b), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

void
test_pools(void)
{
	CUmemoryPool def = NULL, cur = NULL;
	CUmemPoolProps bad = pool_props;

	EXPECT_RC(cuDeviceGetDefaultMemPool(&def, 0), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGetMemPool(&cur, 0), CUDA_SUCCESS);
	EXPECT(def != NULL && cur == def);
	EXPECT_RC(cuDeviceGetDefaultMemPool(&cur, 2), CUDA_ERROR_INVALID_DEVICE);
	bad.location.id = 2;
	EXPECT_RC(cuMemPoolCreate(&cur, &bad), CUDA_ERROR_INVALID_VALUE);
	test_default_pool(def);
	test_pool_pressure(def);
	test_explicit_pool(def);
}

static void
test_vmm_mappings(CUdeviceptr va)
{
	const CUmemAccessDesc rw = { .location = vmm_prop.location,
				     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h = 0;
	unsigned char out[16] = { 0 };

	EXPECT_RC(cuMemCreate(&h, 4 * MiB, &vmm_prop, 0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB);
	/* One handle mapped twice: both ranges show the same memory. */
	EXPECT_RC(cuMemMap(va, 4 * MiB, 0, h, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemMap(va + 8 * MiB, 4 * MiB, 0, h, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemMap(va + 2 * MiB, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemMap(va + 14 * MiB, 4 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemMap(va + 4 * MiB, 2 * MiB, 4 * MiB, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemSetAccess(va, 4 * MiB, &rw, 1), CUDA_SUCCESS);
	EXPECT_RC(cuMemSetAccess(va, 6 * MiB, &rw, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemsetD8(va + 100, 0x5a, 10), CUDA_SUCCESS);
	expect_range(va + 8 * MiB + 5, va + 8 * MiB, 4 * MiB);
	EXPECT_RC(cuMemGetAddressRange(NULL, NULL, va + 4 * MiB), CUDA_ERROR_NOT_FOUND);
	EXPECT_RC(cuMemcpyDtoH(out, va + 8 * MiB + 96, sizeof(out)), CUDA_SUCCESS);
	EXPECT(out[3] == 0 && out[4] == 0x5a && out[13] == 0x5a && out[14] == 0);
	/* Released while mapped: the memory stays until the last unmap. */
	EXPECT_RC(cuMemRelease(h), CUDA_SUCCESS);
	EXPECT_RC(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemMap(va + 4 * MiB, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 4 * MiB);
	EXPECT_RC(cuMemAddressFree(va, 16 * MiB), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemUnmap(va, 2 * MiB), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemUnmap(va, 4 * MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB);
	EXPECT_RC(cuMemsetD8(va, 1, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemUnmap(va + 8 * MiB, 4 * MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemUnmap(va + 8 * MiB, 4 * MiB), CUDA_ERROR_INVALID_VALUE);
}

/* What expandable segments add: the handle behind an address, handles
 * shared as file descriptors (imported in the same process here: the
 * same bytes, charged once), 32-bit sets and stream writes. */
static void
test_vmm_sharing(CUdeviceptr va)
{
	CUmemAllocationProp prop = vmm_prop;
	CUmemGenericAllocationHandle h = 0, again = 0, imported = 0;
	unsigned int words[4] = { 0 };
	int fd = -1;

	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT_RC(cuMemCreate(&h, 2 * MiB, &prop, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemMap(va, 2 * MiB, 0, h, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(va + 4096)),
		  CUDA_SUCCESS);
	EXPECT(again == h);
	EXPECT_RC(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(va + 2 * MiB)),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		  CUDA_SUCCESS);
	EXPECT(fd >= 0);
	EXPECT_RC(cuMemImportFromShareableHandle(&imported, (void *)(intptr_t)fd,
						 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		  CUDA_SUCCESS);
	close(fd);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemMap(va + 4 * MiB, 2 * MiB, 0, imported, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD32Async(va + 16, 0xdeadbeef, 2, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWriteValue32(NULL, va + 24, 7, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD32Async(va + 2, 1, 1, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemcpyDtoH(words, va + 4 * MiB + 12, sizeof(words)), CUDA_SUCCESS);
	EXPECT(words[0] == 0 && words[1] == 0xdeadbeef && words[2] == 0xdeadbeef && words[3] == 7);
	/* Two references to h: both go before its memory does. */
	EXPECT_RC(cuMemRelease(h), CUDA_SUCCESS);
	EXPECT_RC(cuMemRelease(h), CUDA_SUCCESS);
	EXPECT_RC(cuMemRelease(imported), CUDA_SUCCESS);
	EXPECT_RC(cuMemUnmap(va + 4 * MiB, 2 * MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemUnmap(va, 2 * MiB), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
		  CUDA_ERROR_INVALID_VALUE);
}

void
test_vmm(void)
{
	CUmemAllocationProp prop = vmm_prop;
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr va = 0, big = 0;
	size_t granularity = 0;
	int supported = 0;

	EXPECT_RC(cuDeviceGetAttribute(&supported,
				       CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0),
		  CUDA_SUCCESS);
	EXPECT(supported == 1);
	EXPECT_RC(cuMemGetAllocationGranularity(&granularity, &prop,
						CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
		  CUDA_SUCCESS);
	EXPECT(granularity == 2 * MiB);
	/* Address space is not memory: far more than the device can be had. */
	EXPECT_RC(cuMemAddressReserve(&big, 1024 * MiB, 0, 0, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemAddressReserve(&va, 16 * MiB, 64 * MiB, 0, 0), CUDA_SUCCESS);
	EXPECT(va % (64 * MiB) == 0 && big % (2 * MiB) == 0 && used_bytes() == 0);
	EXPECT(va >= big + 1024 * MiB || va + 16 * MiB <= big);
	EXPECT_RC(cuMemAddressReserve(&va, 3 * MiB / 2, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(big), CUDA_ERROR_INVALID_VALUE);
	test_vmm_mappings(va);
	test_vmm_sharing(va);
	/* Physical memory is device memory: it runs out. */
	EXPECT_RC(cuMemCreate(&h, 3 * MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemCreate(&h, 64 * MiB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuMemCreate(&h, 2 * MiB, &prop, 0), CUDA_SUCCESS);
	prop.location.id = -1;
	EXPECT_RC(cuMemGetAllocationPropertiesFromHandle(&prop, h), CUDA_SUCCESS);
	EXPECT(prop.location.id == 0 && prop.type == CU_MEM_ALLOCATION_TYPE_PINNED);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemRelease(h), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemAddressFree(va, 8 * MiB), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAddressFree(va, 16 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuMemAddressFree(big, 1024 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuMemAddressFree(big, 1024 * MiB), CUDA_ERROR_INVALID_VALUE);
}

void
test_arrays(void)
{
	const CUDA_ARRAY_DESCRIPTOR d2 = { .Width = 100, .Height = 10,
					   .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
	const CUDA_ARRAY3D_DESCRIPTOR d3 = { .Width = 64, .Height = 64, .Depth = 8,
					     .Format = CU_AD_FORMAT_UNSIGNED_INT8,
					     .NumChannels = 1 };
	CUDA_ARRAY_DESCRIPTOR o2 = { 0 }, bad = d2;
	CUDA_ARRAY3D_DESCRIPTOR o3 = { 0 }, bad3 = d3;
	CUarray a2 = NULL, a3 = NULL, a1 = NULL;

	EXPECT_RC(cuArrayCreate(&a2, &d2), CUDA_SUCCESS);
	EXPECT(used_bytes() == 16384);  /* 100 x 10 x 4 x 4 = 16000, rounded */
	EXPECT_RC(cuArray3DCreate(&a3, &d3), CUDA_SUCCESS);
	EXPECT(used_bytes() == 16384 + 32768);
	bad3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 1000, .Format = CU_AD_FORMAT_HALF,
					  .NumChannels = 2 };
	EXPECT_RC(cuArray3DCreate(&a1, &bad3), CUDA_SUCCESS);
	EXPECT(used_bytes() == 16384 + 32768 + 4096);
	/* A handle, not a device address. */
	EXPECT_RC(cuMemFree((CUdeviceptr)(uintptr_t)a2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemGetAddressRange(NULL, NULL, (CUdeviceptr)(uintptr_t)a2),
		  CUDA_ERROR_NOT_FOUND);
	EXPECT_RC(cuArrayGetDescriptor(&o2, a2), CUDA_SUCCESS);
	EXPECT(o2.Width == 100 && o2.Height == 10 && o2.Format == CU_AD_FORMAT_FLOAT &&
	       o2.NumChannels == 4);
	EXPECT_RC(cuArray3DGetDescriptor(&o3, a3), CUDA_SUCCESS);
	EXPECT(o3.Depth == 8 && o3.Format == CU_AD_FORMAT_UNSIGNED_INT8);
	bad.NumChannels = 3;
	EXPECT_RC(cuArrayCreate(&a2, &bad), CUDA_ERROR_INVALID_VALUE);
	bad3 = d3;
	bad3.Height = 0;
	EXPECT_RC(cuArray3DCreate(&a3, &bad3), CUDA_ERROR_INVALID_VALUE);
	bad3 = (CUDA_ARRAY3D_DESCRIPTOR){ .Width = 64 * MiB, .Format = CU_AD_FORMAT_FLOAT,
					  .NumChannels = 1 };
	EXPECT_RC(cuArray3DCreate(&a3, &bad3), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuArrayDestroy(a2), CUDA_SUCCESS);
	EXPECT_RC(cuArrayDestroy(a2), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuArrayDestroy(a3), CUDA_SUCCESS);
	EXPECT_RC(cuArrayDestroy(a1), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

void
test_host_register(void)
{
	PFN_cuMemHostRegister_v6050 legacy = NULL;  /* the v4000 ABI has the same signature */
	char *buf = malloc(4 * 4096);
	void *pinned = NULL;

	EXPECT(buf != NULL);
	EXPECT_RC(cuMemHostRegister(buf, 8192, CU_MEMHOSTREGISTER_PORTABLE), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	EXPECT_RC(cuMemHostRegister(buf + 4096, 8192, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	EXPECT_RC(cuMemHostRegister(buf + 8192, 100, 0x40), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemHostUnregister(buf + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	EXPECT_RC(cuMemHostUnregister(buf), CUDA_SUCCESS);
	EXPECT_RC(cuMemHostUnregister(buf), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	/* The CUDA 4.0 ABI, as an old caller gets it. */
	EXPECT_RC(cuGetProcAddress("cuMemHostRegister", (void **)&legacy, 6000,
				   CU_GET_PROC_ADDRESS_DEFAULT, NULL), CUDA_SUCCESS);
	if (legacy) {
		EXPECT_RC(legacy(buf, 4096, 0), CUDA_SUCCESS);
		EXPECT_RC(cuMemHostUnregister(buf), CUDA_SUCCESS);
	}
	/* Pinned memory is registered already. */
	EXPECT_RC(cuMemAllocHost(&pinned, 4096), CUDA_SUCCESS);
	EXPECT_RC(cuMemHostRegister(pinned, 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	EXPECT_RC(cuMemFreeHost(pinned), CUDA_SUCCESS);
	free(buf);
}

static void
to_hex(const CUipcMemHandle *h, char *hex)
{
	const unsigned char *b = (const unsigned char *)h;

	for (size_t i = 0; i < sizeof(*h); i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
}

static bool
from_hex(const char *hex, CUipcMemHandle *h)
{
	unsigned char *b = (unsigned char *)h;

	if (strlen(hex) != 2 * sizeof(*h))
		return false;
	for (size_t i = 0; i < sizeof(*h); i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		b[i] = (unsigned char)v;
	}
	return true;
}

static int
run_importer(const CUipcMemHandle *h)
{
	char hex[2 * sizeof(*h) + 1];
	int status = -1;
	pid_t pid;

	to_hex(h, hex);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "test-sim-driver", "--import", hex, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The exporter's half; the importer is this program run again. */
void
test_ipc(void)
{
	CUipcMemHandle h, other;
	CUdeviceptr p, q = 0, m;

	EXPECT_RC(cuMemAlloc(&p, 3 * MiB), CUDA_SUCCESS);
	expect_range(p + MiB, p, 3 * MiB);
	EXPECT_RC(cuIpcGetMemHandle(&h, p), CUDA_SUCCESS);
	EXPECT_RC(cuIpcGetMemHandle(&other, p), CUDA_SUCCESS);
	EXPECT(memcmp(&h, &other, sizeof(h)) == 0);
	EXPECT_RC(cuIpcOpenMemHandle(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
		  CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(q == 0);
	EXPECT_RC(cuIpcGetMemHandle(&other, p + 512), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAllocManaged(&m, 512, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuIpcGetMemHandle(&other, m), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(m), CUDA_SUCCESS);
	EXPECT(run_importer(&h) == 0);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
}

/* The importer: a process of its own, with its own device. */
int
ipc_import_child(const char *hex)
{
	CUipcMemHandle h, bad;
	CUdeviceptr p = 0, again = 0;
	CUcontext ctx;

	EXPECT(from_hex(hex, &h));
	EXPECT_RC(cuInit(0), CUDA_SUCCESS);
	EXPECT_RC(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	EXPECT_RC(cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
	/* The exporter pays for the memory; the importer can use its range. */
	EXPECT(p != 0 && used_bytes() == 0);
	expect_range(p + 1000, p, 3 * MiB);
	EXPECT_RC(cuMemsetD8(p, 7, 3 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD8(p, 7, 3 * MiB + 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuIpcOpenMemHandle(&again, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
	EXPECT(again == p);
	EXPECT_RC(cuIpcCloseMemHandle(p), CUDA_SUCCESS);
	EXPECT_RC(cuIpcCloseMemHandle(p), CUDA_SUCCESS);
	EXPECT_RC(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);
	memset(&bad, 0, sizeof(bad));
	EXPECT_RC(cuIpcOpenMemHandle(&p, bad, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuIpcOpenMemHandle(&p, h, 2), CUDA_ERROR_INVALID_VALUE);
	if (failures)
		fprintf(stderr, "importer: %d failures\n", failures);
	return failures ? 1 : 0;
}

/* A child forked after cuInit cannot use the driver; the parent can. */
void
test_fork(void)
{
	int status = -1;
	pid_t pid = fork();
	CUdeviceptr p;

	if (pid == 0) {
		int version = 0, code = 0;
		CUcontext ctx;
		if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED)
			code |= 1;
		if (cuMemAlloc(&p, 512) != CUDA_ERROR_NOT_INITIALIZED)
			code |= 2;
		if (cuCtxGetCurrent(&ctx) != CUDA_ERROR_NOT_INITIALIZED)
			code |= 4;
		if (cuDriverGetVersion(&version) != CUDA_SUCCESS || version != 13000)
			code |= 8;
		_exit(code);
	}
	EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
}

struct proc_route {
	const char *name;    /* base name asked for */
	int version;
	bool per_thread;
	const char *symbol;  /* the exported function that must come back, or NULL */
};

/* Every ABI the simulator implements, as cuGetProcAddress must hand it
 * out: the address of exactly that exported function. */
static const struct proc_route proc_routes[] = {
	{ "cuMemAlloc", 3020, false, "cuMemAlloc_v2" },
	{ "cuMemFree", 13000, false, "cuMemFree_v2" },
	{ "cuMemGetInfo", 13000, false, "cuMemGetInfo_v2" },
	{ "cuMemGetAddressRange", 12000, false, "cuMemGetAddressRange_v2" },
	{ "cuMemAllocPitch", 12000, false, "cuMemAllocPitch_v2" },
	{ "cuMemAllocManaged", 12000, false, "cuMemAllocManaged" },
	{ "cuMemAllocHost", 12000, false, "cuMemAllocHost_v2" },
	{ "cuMemHostAlloc", 12000, false, "cuMemHostAlloc" },
	{ "cuMemFreeHost", 12000, false, "cuMemFreeHost" },
	{ "cuDeviceTotalMem", 12000, false, "cuDeviceTotalMem_v2" },
	{ "cuDevicePrimaryCtxRelease", 12000, false, "cuDevicePrimaryCtxRelease_v2" },
	{ "cuCtxCreate", 13000, false, "cuCtxCreate_v4" },
	{ "cuCtxDestroy", 12000, false, "cuCtxDestroy_v2" },
	{ "cuStreamDestroy", 12000, false, "cuStreamDestroy_v2" },
	{ "cuStreamSynchronize", 12000, true, "cuStreamSynchronize_ptsz" },
	{ "cuStreamQuery", 2000, false, "cuStreamQuery" },
	{ "cuStreamQuery", 13000, true, "cuStreamQuery_ptsz" },
	{ "cuStreamWaitEvent", 3020, false, "cuStreamWaitEvent" },
	{ "cuStreamWaitEvent", 3010, false, NULL },
	{ "cuStreamWaitEvent", 13000, true, "cuStreamWaitEvent_ptsz" },
	{ "cuEventCreate", 13000, false, "cuEventCreate" },
	{ "cuEventDestroy", 2000, false, "cuEventDestroy" },
	{ "cuEventDestroy", 4000, false, "cuEventDestroy_v2" },
	{ "cuEventDestroy", 13000, true, "cuEventDestroy_v2" },
	{ "cuEventRecord", 2000, false, "cuEventRecord" },
	{ "cuEventRecord", 13000, true, "cuEventRecord_ptsz" },
	{ "cuEventRecordWithFlags", 11010, false, "cuEventRecordWithFlags" },
	{ "cuEventRecordWithFlags", 11000, false, NULL },
	{ "cuEventRecordWithFlags", 13000, true, "cuEventRecordWithFlags_ptsz" },
	{ "cuEventQuery", 13000, false, "cuEventQuery" },
	{ "cuEventSynchronize", 13000, false, "cuEventSynchronize" },
	{ "cuEventElapsedTime", 12070, false, "cuEventElapsedTime" },
	{ "cuEventElapsedTime", 12080, false, "cuEventElapsedTime_v2" },
	{ "cuEventElapsedTime", 13000, false, "cuEventElapsedTime_v2" },
	{ "cuMemAllocAsync", 11020, false, "cuMemAllocAsync" },
	{ "cuMemAllocAsync", 12000, true, "cuMemAllocAsync_ptsz" },
	{ "cuMemFreeAsync", 13000, false, "cuMemFreeAsync" },
	{ "cuMemFreeAsync", 13000, true, "cuMemFreeAsync_ptsz" },
	{ "cuMemAllocFromPoolAsync", 11020, false, "cuMemAllocFromPoolAsync" },
	{ "cuMemAllocFromPoolAsync", 13000, true, "cuMemAllocFromPoolAsync_ptsz" },
	{ "cuMemAllocFromPoolAsync", 11010, false, NULL },
	{ "cuDeviceGetDefaultMemPool", 11020, false, "cuDeviceGetDefaultMemPool" },
	{ "cuDeviceGetMemPool", 12000, false, "cuDeviceGetMemPool" },
	{ "cuDeviceSetMemPool", 12000, false, "cuDeviceSetMemPool" },
	{ "cuMemPoolCreate", 12000, false, "cuMemPoolCreate" },
	{ "cuMemPoolDestroy", 12000, false, "cuMemPoolDestroy" },
	{ "cuMemPoolTrimTo", 12000, false, "cuMemPoolTrimTo" },
	{ "cuMemPoolGetAttribute", 12000, false, "cuMemPoolGetAttribute" },
	{ "cuMemPoolSetAttribute", 12000, true, "cuMemPoolSetAttribute" },
	{ "cuMemGetAllocationGranularity", 10020, false, "cuMemGetAllocationGranularity" },
	{ "cuMemAddressReserve", 12000, false, "cuMemAddressReserve" },
	{ "cuMemAddressFree", 12000, false, "cuMemAddressFree" },
	{ "cuMemCreate", 12000, false, "cuMemCreate" },
	{ "cuMemCreate", 10010, false, NULL },
	{ "cuMemRelease", 12000, false, "cuMemRelease" },
	{ "cuMemMap", 12000, false, "cuMemMap" },
	{ "cuMemUnmap", 12000, false, "cuMemUnmap" },
	{ "cuMemSetAccess", 12000, false, "cuMemSetAccess" },
	{ "cuMemGetAllocationPropertiesFromHandle", 12000, false,
	  "cuMemGetAllocationPropertiesFromHandle" },
	{ "cuArrayCreate", 3020, false, "cuArrayCreate_v2" },
	{ "cuArrayCreate", 13000, false, "cuArrayCreate_v2" },
	{ "cuArray3DCreate", 12000, false, "cuArray3DCreate_v2" },
	{ "cuArrayGetDescriptor", 12000, false, "cuArrayGetDescriptor_v2" },
	{ "cuArray3DGetDescriptor", 12000, false, "cuArray3DGetDescriptor_v2" },
	{ "cuArrayDestroy", 12000, false, "cuArrayDestroy" },
	{ "cuIpcGetMemHandle", 12000, false, "cuIpcGetMemHandle" },
	{ "cuIpcOpenMemHandle", 4010, false, "cuIpcOpenMemHandle" },
	{ "cuIpcOpenMemHandle", 10020, false, "cuIpcOpenMemHandle" },
	{ "cuIpcOpenMemHandle", 11000, false, "cuIpcOpenMemHandle_v2" },
	{ "cuIpcOpenMemHandle", 13000, true, "cuIpcOpenMemHandle_v2" },
	{ "cuIpcCloseMemHandle", 12000, false, "cuIpcCloseMemHandle" },
	{ "cuMemHostRegister", 4000, false, "cuMemHostRegister" },
	{ "cuMemHostRegister", 6040, false, "cuMemHostRegister" },
	{ "cuMemHostRegister", 6050, false, "cuMemHostRegister_v2" },
	{ "cuMemHostRegister", 13000, false, "cuMemHostRegister_v2" },
	{ "cuMemHostUnregister", 12000, false, "cuMemHostUnregister" },
	{ "cuMemsetD8Async", 13000, false, "cuMemsetD8Async" },
	{ "cuMemsetD8Async", 13000, true, "cuMemsetD8Async_ptsz" },
	{ "cuModuleLoadData", 13000, false, "cuModuleLoadData" },
	{ "cuModuleUnload", 13000, false, "cuModuleUnload" },
	{ "cuModuleGetFunction", 2000, false, "cuModuleGetFunction" },
	{ "cuLibraryLoadData", 12000, false, "cuLibraryLoadData" },
	{ "cuLibraryLoadData", 11080, false, NULL },
	{ "cuLibraryUnload", 13000, false, "cuLibraryUnload" },
	{ "cuLibraryGetKernel", 13000, true, "cuLibraryGetKernel" },
	{ "cuKernelGetFunction", 12000, false, "cuKernelGetFunction" },
	{ "cuLaunchKernel", 4000, false, "cuLaunchKernel" },
	{ "cuLaunchKernel", 3020, false, NULL },
	{ "cuLaunchKernel", 13000, false, "cuLaunchKernel" },
	{ "cuLaunchKernel", 13000, true, "cuLaunchKernel_ptsz" },
	{ "cuStreamBeginCapture", 10010, false, "cuStreamBeginCapture_v2" },
	{ "cuStreamBeginCapture", 13000, true, "cuStreamBeginCapture_v2_ptsz" },
	{ "cuStreamBeginCapture", 10000, false, NULL },
	{ "cuStreamBeginCaptureToGraph", 12030, false, "cuStreamBeginCaptureToGraph" },
	{ "cuStreamBeginCaptureToGraph", 13000, true, "cuStreamBeginCaptureToGraph_ptsz" },
	{ "cuStreamBeginCaptureToGraph", 12020, false, NULL },
	{ "cuStreamEndCapture", 10000, false, "cuStreamEndCapture" },
	{ "cuStreamEndCapture", 13000, true, "cuStreamEndCapture_ptsz" },
	{ "cuStreamIsCapturing", 13000, false, "cuStreamIsCapturing" },
	{ "cuStreamIsCapturing", 13000, true, "cuStreamIsCapturing_ptsz" },
	{ "cuStreamGetCaptureInfo", 10010, false, "cuStreamGetCaptureInfo" },
	{ "cuStreamGetCaptureInfo", 11020, true, "cuStreamGetCaptureInfo_ptsz" },
	{ "cuStreamGetCaptureInfo", 11030, false, "cuStreamGetCaptureInfo_v2" },
	{ "cuStreamGetCaptureInfo", 12020, true, "cuStreamGetCaptureInfo_v2_ptsz" },
	{ "cuStreamGetCaptureInfo", 12030, false, "cuStreamGetCaptureInfo_v3" },
	{ "cuStreamGetCaptureInfo", 13000, true, "cuStreamGetCaptureInfo_v3_ptsz" },
	{ "cuThreadExchangeStreamCaptureMode", 13000, false, "cuThreadExchangeStreamCaptureMode" },
	{ "cuGraphCreate", 13000, false, "cuGraphCreate" },
	{ "cuGraphClone", 13000, false, "cuGraphClone" },
	{ "cuGraphDestroy", 13000, false, "cuGraphDestroy" },
	{ "cuGraphAddEmptyNode", 13000, false, "cuGraphAddEmptyNode" },
	{ "cuGraphGetNodes", 13000, false, "cuGraphGetNodes" },
	{ "cuGraphNodeGetType", 13000, false, "cuGraphNodeGetType" },
	{ "cuGraphAddMemAllocNode", 11040, false, "cuGraphAddMemAllocNode" },
	{ "cuGraphAddMemAllocNode", 11030, false, NULL },
	{ "cuGraphAddMemFreeNode", 13000, false, "cuGraphAddMemFreeNode" },
	{ "cuGraphMemAllocNodeGetParams", 13000, false, "cuGraphMemAllocNodeGetParams" },
	{ "cuGraphMemFreeNodeGetParams", 13000, false, "cuGraphMemFreeNodeGetParams" },
	{ "cuGraphInstantiateWithFlags", 11040, false, "cuGraphInstantiateWithFlags" },
	{ "cuGraphInstantiate", 12000, false, "cuGraphInstantiateWithFlags" },
	{ "cuGraphInstantiate", 13000, true, "cuGraphInstantiateWithFlags" },
	{ "cuGraphInstantiate", 11080, false, NULL },
	{ "cuGraphInstantiateWithParams", 12000, false, "cuGraphInstantiateWithParams" },
	{ "cuGraphInstantiateWithParams", 13000, true, "cuGraphInstantiateWithParams_ptsz" },
	{ "cuGraphExecGetFlags", 13000, false, "cuGraphExecGetFlags" },
	{ "cuGraphExecDestroy", 13000, false, "cuGraphExecDestroy" },
	{ "cuGraphLaunch", 13000, false, "cuGraphLaunch" },
	{ "cuGraphLaunch", 13000, true, "cuGraphLaunch_ptsz" },
	{ "cuGraphUpload", 11010, false, "cuGraphUpload" },
	{ "cuGraphUpload", 13000, true, "cuGraphUpload_ptsz" },
	{ "cuGraphUpload", 11000, false, NULL },
	{ "cuDeviceGraphMemTrim", 13000, false, "cuDeviceGraphMemTrim" },
	{ "cuDeviceGetGraphMemAttribute", 13000, false, "cuDeviceGetGraphMemAttribute" },
	{ "cuDeviceSetGraphMemAttribute", 13000, false, "cuDeviceSetGraphMemAttribute" },
	{ "cuGetExportTable", 13000, false, "cuGetExportTable" },
	{ "cuDeviceGetUuid", 11030, false, "cuDeviceGetUuid" },
	{ "cuDeviceGetUuid", 13000, false, "cuDeviceGetUuid_v2" },
	{ "cuCtxPushCurrent", 13000, false, "cuCtxPushCurrent_v2" },
	{ "cuCtxPopCurrent", 13000, false, "cuCtxPopCurrent_v2" },
	{ "cuMemRetainAllocationHandle", 13000, false, "cuMemRetainAllocationHandle" },
	{ "cuMemExportToShareableHandle", 13000, false, "cuMemExportToShareableHandle" },
	{ "cuMemImportFromShareableHandle", 13000, false, "cuMemImportFromShareableHandle" },
	{ "cuMemsetD32Async", 13000, true, "cuMemsetD32Async_ptsz" },
	{ "cuStreamWriteValue32", 13000, false, "cuStreamWriteValue32_v2" },
	{ "cuStreamWriteValue32", 11060, false, NULL },
	{ "cuDevicePrimaryCtxGetState", 13000, false, "cuDevicePrimaryCtxGetState" },
	{ "cuDeviceCanAccessPeer", 13000, false, "cuDeviceCanAccessPeer" },
	{ "cuDeviceGetPCIBusId", 13000, false, "cuDeviceGetPCIBusId" },
	{ "cuCtxEnablePeerAccess", 13000, false, "cuCtxEnablePeerAccess" },
	{ "cuCtxGetStreamPriorityRange", 13000, false, "cuCtxGetStreamPriorityRange" },
	{ "cuStreamCreateWithPriority", 13000, false, "cuStreamCreateWithPriority" },
	{ "cuStreamGetPriority", 13000, false, "cuStreamGetPriority" },
	{ "cuStreamGetPriority", 13000, true, "cuStreamGetPriority_ptsz" },
	{ "cuLaunchHostFunc", 13000, false, "cuLaunchHostFunc" },
	{ "cuLaunchHostFunc", 13000, true, "cuLaunchHostFunc_ptsz" },
	{ "cuStreamAddCallback", 13000, true, "cuStreamAddCallback_ptsz" },
	{ "cuPointerGetAttributes", 13000, false, "cuPointerGetAttributes" },
	{ "cuMemPoolSetAccess", 13000, false, "cuMemPoolSetAccess" },
	{ "cuIpcGetEventHandle", 13000, false, "cuIpcGetEventHandle" },
	{ "cuMemcpy2DAsync", 13000, false, "cuMemcpy2DAsync_v2" },
	{ "cuMemcpy2DAsync", 13000, true, "cuMemcpy2DAsync_v2_ptsz" },
	{ "cuMemcpyPeerAsync", 13000, true, "cuMemcpyPeerAsync_ptsz" },
	{ "cuModuleLoadDataEx", 13000, false, "cuModuleLoadDataEx" },
	{ "cuLaunchCooperativeKernel", 13000, true, "cuLaunchCooperativeKernel_ptsz" },
	{ "cuLaunchKernelEx", 13000, false, "cuLaunchKernelEx" },
	{ "cuLaunchKernelEx", 11050, false, NULL },
	{ "cuFuncGetAttribute", 13000, false, "cuFuncGetAttribute" },
	{ "cuKernelSetAttribute", 13000, false, "cuKernelSetAttribute" },
	{ "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 13000, false, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags" },
	{ "cuGraphNodeGetDependencies", 13000, false, "cuGraphNodeGetDependencies_v2" },
};

void
test_proc_routes(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	EXPECT(lib != NULL);
	if (!lib)
		return;
	for (size_t i = 0; i < sizeof(proc_routes) / sizeof(proc_routes[0]); i++) {
		const struct proc_route *r = &proc_routes[i];
		void *want = r->symbol ? dlsym(lib, r->symbol) : NULL;
		void *fn = (void *)1;
		CUresult rc = cuGetProcAddress(r->name, &fn, r->version,
					       r->per_thread ?
					       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM :
					       CU_GET_PROC_ADDRESS_DEFAULT, NULL);
		if ((r->symbol && !want) || fn != want ||
		    rc != (r->symbol ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND)) {
			fprintf(stderr, "cuGetProcAddress(%s, %d%s) = %p (rc %d), want %s = %p\n",
				r->name, r->version, r->per_thread ? ", per-thread" : "", fn,
				(int)rc, r->symbol ? r->symbol : "nothing", want);
			failures++;
		}
	}
	dlclose(lib);
}
