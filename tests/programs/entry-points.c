/* entry-points: PyTorch's expandable segments. Linked against the
 * runtime like the other programs, it gets the virtual memory functions of
 * the driver from the runtime, as PyTorch does: cuMemAddressReserve,
 * cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease and
 * cuMemAddressFree with cudaGetDriverEntryPointByVersion(name, 12000,
 * cudaEnableDefault), cuMemGetAllocationGranularity with
 * cudaGetDriverEntryPoint. The runtime hands out the driver's own exported
 * functions (cuMemCreate, ...), found by its cuGetProcAddress. On the
 * simulated 1 GiB device, in this order:
 *
 *   plain_alloc        cudaMalloc(4194304), never freed (for contrast)
 *   load_entry_points  the 8 entry points
 *   query_granularity  cuMemGetAllocationGranularity: 2097152
 *   reserve_segment    cuMemAddressReserve(1073741824): address space
 *                      only, never freed
 *   grow_segment       3 times: cuMemCreate(20971520) (physical memory),
 *                      cuMemMap at the next 20 MiB of the segment,
 *                      cuMemSetAccess (read-write, device 0), then
 *                      cuMemRelease of the handle right away, as PyTorch
 *                      does: the mapping keeps the memory
 *   touch_segment      cudaMemset of the 3 chunks, cudaMemcpy of one byte
 *                      back
 *   shrink_segment     cuMemUnmap of the third chunk (segment offset
 *                      41943040, 20971520 bytes): its memory goes back
 *   churn              with an argument N only: N times cudaMalloc(4096)
 *                      and its cudaFree (for flight mode: the segment's
 *                      events leave the ring)
 *   main               cudaMemGetInfo, printed
 *
 * Expected numbers:
 *   cudaMalloc 1 (4194304, plain_alloc), never freed.
 *   cuMemAddressReserve 1 (1073741824 bytes of address space,
 *   reserve_segment; not device memory), no cuMemAddressFree.
 *   cuMemCreate 3 (grow_segment, 3 x 20971520 = 62914560 bytes of device
 *   memory); cuMemMap 3, cuMemSetAccess 3, cuMemRelease 3 (grow_segment);
 *   cuMemUnmap 1 (shrink_segment, 20971520 bytes), which frees the third
 *   chunk's memory (its handle was released).
 *   Live at exit: physical 2 chunks, 41943040 bytes (grow_segment, mapped,
 *   handles released); cudaMalloc 4194304 (plain_alloc). The device shows
 *   46137344 bytes in use.
 *   Peak device: 67108864 bytes (plain_alloc + 3 chunks), after the third
 *   cuMemCreate (the churn stays below it: 46137344 + 4096).
 *   Exit status 0; 2 if a CUDA call fails, 3 if an entry point is missing.
 */
#include "cuda-check.h"

#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdlib.h>

#define PLAIN_BYTES ((size_t)4 << 20)
#define SEGMENT_BYTES ((size_t)1 << 30)
#define CHUNKS 3
#define CHUNK_BYTES ((size_t)20 << 20)

static struct {
	PFN_cuMemGetAllocationGranularity_v10020 granularity;
	PFN_cuMemAddressReserve_v10020 reserve;
	PFN_cuMemCreate_v10020 create;
	PFN_cuMemMap_v10020 map;
	PFN_cuMemSetAccess_v10020 set_access;
	PFN_cuMemUnmap_v10020 unmap;
	PFN_cuMemRelease_v10020 release;
	PFN_cuMemAddressFree_v10020 address_free;
} vmm;

static const CUmemAllocationProp prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static void *plain;
static CUdeviceptr segment;

static void *
by_version(const char *name)
{
	enum cudaDriverEntryPointQueryResult status;
	void *fn = NULL;

	must(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status),
	     "cudaGetDriverEntryPointByVersion");
	if (!fn || status != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point %s\n", name);
		exit(3);
	}
	return fn;
}

static __attribute__((noinline)) void
plain_alloc(void)
{
	must(cudaMalloc(&plain, PLAIN_BYTES), "plain_alloc: cudaMalloc");
	printf("plain_alloc: %zu bytes, kept\n", PLAIN_BYTES);
}

static __attribute__((noinline)) void
load_entry_points(void)
{
	enum cudaDriverEntryPointQueryResult status;
	void *fn = NULL;

	vmm.reserve = (PFN_cuMemAddressReserve_v10020)by_version("cuMemAddressReserve");
	vmm.create = (PFN_cuMemCreate_v10020)by_version("cuMemCreate");
	vmm.map = (PFN_cuMemMap_v10020)by_version("cuMemMap");
	vmm.set_access = (PFN_cuMemSetAccess_v10020)by_version("cuMemSetAccess");
	vmm.unmap = (PFN_cuMemUnmap_v10020)by_version("cuMemUnmap");
	vmm.release = (PFN_cuMemRelease_v10020)by_version("cuMemRelease");
	vmm.address_free = (PFN_cuMemAddressFree_v10020)by_version("cuMemAddressFree");
	/* Deprecated in CUDA 13, and still what older code calls. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	must(cudaGetDriverEntryPoint("cuMemGetAllocationGranularity", &fn, cudaEnableDefault,
				     &status), "cudaGetDriverEntryPoint");
#pragma GCC diagnostic pop
	if (!fn || status != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point cuMemGetAllocationGranularity\n");
		exit(3);
	}
	vmm.granularity = (PFN_cuMemGetAllocationGranularity_v10020)fn;
	printf("load_entry_points: 8 driver functions from the runtime\n");
}

static __attribute__((noinline)) void
query_granularity(void)
{
	size_t granularity = 0;

	must_drv(vmm.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
		 "query_granularity: cuMemGetAllocationGranularity");
	printf("query_granularity: %zu bytes\n", granularity);
}

static __attribute__((noinline)) void
reserve_segment(void)
{
	must_drv(vmm.reserve(&segment, SEGMENT_BYTES, 0, 0, 0),
		 "reserve_segment: cuMemAddressReserve");
	printf("reserve_segment: %zu bytes of address space\n", SEGMENT_BYTES);
}

static __attribute__((noinline)) void
grow_segment(void)
{
	const CUmemAccessDesc rw = { .location = prop.location,
				     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };

	for (size_t i = 0; i < CHUNKS; i++) {
		CUdeviceptr at = segment + i * CHUNK_BYTES;
		CUmemGenericAllocationHandle h;
		must_drv(vmm.create(&h, CHUNK_BYTES, &prop, 0), "grow_segment: cuMemCreate");
		must_drv(vmm.map(at, CHUNK_BYTES, 0, h, 0), "grow_segment: cuMemMap");
		must_drv(vmm.set_access(at, CHUNK_BYTES, &rw, 1), "grow_segment: cuMemSetAccess");
		must_drv(vmm.release(h), "grow_segment: cuMemRelease");
	}
	printf("grow_segment: %d x %zu bytes mapped, handles released\n", CHUNKS, CHUNK_BYTES);
}

static __attribute__((noinline)) void
touch_segment(void)
{
	void *base = (void *)(uintptr_t)segment;
	unsigned char last = 0;

	must(cudaMemset(base, 0xab, CHUNKS * CHUNK_BYTES), "touch_segment: cudaMemset");
	must(cudaMemcpy(&last, (char *)base + CHUNKS * CHUNK_BYTES - 1, 1,
			cudaMemcpyDeviceToHost), "touch_segment: cudaMemcpy");
	printf("touch_segment: last byte 0x%02x\n", last);
}

static __attribute__((noinline)) void
shrink_segment(void)
{
	must_drv(vmm.unmap(segment + 2 * CHUNK_BYTES, CHUNK_BYTES), "shrink_segment: cuMemUnmap");
	printf("shrink_segment: unmapped chunk 2, %zu bytes\n", CHUNK_BYTES);
}

static __attribute__((noinline)) void
churn(long pairs)
{
	void *p;

	for (long i = 0; i < pairs; i++) {
		must(cudaMalloc(&p, 4096), "cudaMalloc");
		must(cudaFree(p), "cudaFree");
	}
}

int
main(int argc, char **argv)
{
	size_t free_bytes, total;

	plain_alloc();
	load_entry_points();
	query_granularity();
	reserve_segment();
	grow_segment();
	touch_segment();
	shrink_segment();
	if (argc > 1)
		churn(atol(argv[1]));
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
