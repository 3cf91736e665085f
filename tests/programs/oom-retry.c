/* oom-retry: an allocation fails for lack of memory, the program empties
 * its cache and retries, as frameworks do, and then frees everything. On
 * the simulated 1 GiB device (CUDASIM_DEVICE_MEMORY=1G, the default):
 *
 *   fill_cache      6 x cudaMalloc(134217728) (128 MiB), 805306368 bytes
 *   allocate_batch  cudaMalloc(402653184) (384 MiB): fails with
 *                   cudaErrorMemoryAllocation, 268435456 bytes being free;
 *                   the program clears the error with cudaGetLastError
 *   empty_cache     6 x cudaFree
 *   allocate_batch  the same cudaMalloc(402653184) again: succeeds
 *   main            cudaFree of the batch
 *
 * Expected numbers:
 *   cudaMalloc calls 8: 7 succeed (fill_cache 6, allocate_batch 1), 1 fails
 *   (allocate_batch, 402653184 bytes); cudaFree calls 7.
 *   One OOM episode: one failed attempt, then a successful retry of the
 *   same size from the same function.
 *   Live at exit: nothing.
 *   Peak: 805306368 bytes (the 6 cache entries), before the retry; the
 *   batch alone is 402653184.
 *   Exit status 0; 2 if a CUDA call fails unexpectedly.
 */
#include "cuda-check.h"

#define CACHE_ENTRIES 6
#define CACHE_BYTES ((size_t)128 << 20)
#define BATCH_BYTES ((size_t)384 << 20)

static void *cache[CACHE_ENTRIES];

static __attribute__((noinline)) void
fill_cache(void)
{
	for (int i = 0; i < CACHE_ENTRIES; i++)
		must(cudaMalloc(&cache[i], CACHE_BYTES), "fill_cache: cudaMalloc");
	printf("fill_cache: %d x %zu bytes\n", CACHE_ENTRIES, CACHE_BYTES);
}

static __attribute__((noinline)) void
empty_cache(void)
{
	for (int i = 0; i < CACHE_ENTRIES; i++)
		must(cudaFree(cache[i]), "empty_cache: cudaFree");
	printf("empty_cache: freed %d\n", CACHE_ENTRIES);
}

static __attribute__((noinline)) cudaError_t
allocate_batch(void **batch)
{
	return cudaMalloc(batch, BATCH_BYTES);
}

int
main(void)
{
	void *batch = NULL;
	cudaError_t err;

	fill_cache();
	err = allocate_batch(&batch);
	if (err != cudaErrorMemoryAllocation) {
		fprintf(stderr, "allocate_batch: expected cudaErrorMemoryAllocation, got %s\n",
			cudaGetErrorName(err));
		return PROGRAM_CUDA_FAILED;
	}
	printf("allocate_batch: cudaMalloc(%zu) failed: %s\n", BATCH_BYTES,
	       cudaGetErrorName(cudaGetLastError()));
	empty_cache();
	must(allocate_batch(&batch), "allocate_batch (retry): cudaMalloc");
	printf("allocate_batch: retry ok\n");
	must(cudaFree(batch), "cudaFree");
	must(cudaGetLastError(), "cudaGetLastError");
	printf("done\n");
	return 0;
}
