/* leaks: three functions allocate device memory; two free all of it, one
 * (leaky_cache) never frees its allocations; and one pinned host buffer
 * is never freed. Called in this order:
 *
 *   leaky_cache        3 x cudaMalloc(1000000) (charged 1000448 each),
 *                      never freed
 *   build_index        5 x cudaMalloc(1048576), all freed
 *   run_scratch        3 x cudaMalloc(3000) (charged 3072 each), all freed
 *   stage_host_buffer  2 x cudaMallocHost(65536); the first is freed with
 *                      cudaFreeHost, the second never
 *
 * Expected numbers:
 *   Device: 11 cudaMalloc, 8 cudaFree. Requested bytes: leaky_cache
 *   3000000, build_index 5242880, run_scratch 9000.
 *   Pinned host: 2 cudaMallocHost (131072 bytes), 1 cudaFreeHost.
 *   Live at exit (leaks): device 3 allocations, 3000000 bytes (3001344
 *   charged), all from leaky_cache; pinned 1 allocation, 65536 bytes, from
 *   stage_host_buffer.
 *   Peak device: 8 allocations, 8242880 bytes (leaky_cache 3000000 +
 *   build_index 5242880), when build_index's fifth allocation succeeds.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"

#define CACHE_ENTRIES 3
#define CACHE_BYTES ((size_t)1000000)
#define INDEX_PARTS 5
#define INDEX_BYTES ((size_t)1 << 20)
#define SCRATCH_BUFFERS 3
#define SCRATCH_BYTES ((size_t)3000)
#define HOST_BUFFERS 2
#define HOST_BYTES ((size_t)65536)

static void *cache[CACHE_ENTRIES];
static void *pinned[HOST_BUFFERS];

static __attribute__((noinline)) void
leaky_cache(void)
{
	for (int i = 0; i < CACHE_ENTRIES; i++)
		must(cudaMalloc(&cache[i], CACHE_BYTES), "leaky_cache: cudaMalloc");
	printf("leaky_cache: kept %d x %zu bytes\n", CACHE_ENTRIES, CACHE_BYTES);
}

static __attribute__((noinline)) void
build_index(void)
{
	void *parts[INDEX_PARTS];

	for (int i = 0; i < INDEX_PARTS; i++)
		must(cudaMalloc(&parts[i], INDEX_BYTES), "build_index: cudaMalloc");
	for (int i = 0; i < INDEX_PARTS; i++)
		must(cudaFree(parts[i]), "build_index: cudaFree");
	printf("build_index: %d x %zu bytes, freed\n", INDEX_PARTS, INDEX_BYTES);
}

static __attribute__((noinline)) void
run_scratch(void)
{
	void *scratch[SCRATCH_BUFFERS];

	for (int i = 0; i < SCRATCH_BUFFERS; i++)
		must(cudaMalloc(&scratch[i], SCRATCH_BYTES), "run_scratch: cudaMalloc");
	for (int i = 0; i < SCRATCH_BUFFERS; i++)
		must(cudaFree(scratch[i]), "run_scratch: cudaFree");
	printf("run_scratch: %d x %zu bytes, freed\n", SCRATCH_BUFFERS, SCRATCH_BYTES);
}

static __attribute__((noinline)) void
stage_host_buffer(void)
{
	for (int i = 0; i < HOST_BUFFERS; i++)
		must(cudaMallocHost(&pinned[i], HOST_BYTES), "stage_host_buffer: cudaMallocHost");
	must(cudaFreeHost(pinned[0]), "stage_host_buffer: cudaFreeHost");
	printf("stage_host_buffer: %d x %zu pinned bytes, 1 freed\n", HOST_BUFFERS,
	       HOST_BYTES);
}

int
main(void)
{
	leaky_cache();
	build_index();
	run_scratch();
	stage_host_buffer();
	return 0;
}
