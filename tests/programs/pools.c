/* pools: stream-ordered allocation from the device's default pool and
 * from a pool of the program's own, on two streams, with what the pools
 * hold printed as they see it (cudaMemPoolGetAttribute: reserved and used
 * bytes). On the simulated device a pool reserves device memory in 2 MiB
 * chunks (a larger request gets a chunk of its own, rounded up to 2 MiB),
 * keeps what is freed until cudaMemPoolTrimTo or a synchronisation over
 * its release threshold (0 here), and the device counts what pools
 * reserve as used. On the simulated 1 GiB device, in this order:
 *
 *   alloc_default_pool  cudaMallocAsync(1048576) on stream A,
 *                       cudaMallocAsync(3145728) on stream B
 *                       (default pool: reserved 6291456, used 4194304)
 *   create_pool         cudaMemPoolCreate (pinned, device 0)
 *   alloc_from_pool     cudaMallocFromPoolAsync: 524288 on A, 1572864 on
 *                       B, 5242880 on A (pool: reserved 8388608, used
 *                       7340032)
 *   free_some           cudaFreeAsync of the 1048576 (A) and the 5242880
 *                       (A): default pool used 3145728, pool used 2097152;
 *                       reserved unchanged
 *   trim_pool           cudaMemPoolTrimTo(pool, 0): pool reserved 2097152
 *   sync_streams        cudaStreamSynchronize A and B: the default pool
 *                       gives its free chunk back (reserved 4194304)
 *   destroy_pool        cudaFreeAsync of the 524288 and the 1572864 (B),
 *                       cudaMemPoolDestroy
 *   main                streams destroyed; the 3145728 from stream B is
 *                       never freed
 *
 * Expected numbers:
 *   cudaMallocAsync 2 (alloc_default_pool: 1048576 on stream A, 3145728
 *   on stream B). cudaMallocFromPoolAsync 3 (alloc_from_pool: 524288 and
 *   5242880 on A, 1572864 on B; 7340032 bytes). cudaFreeAsync 4
 *   (free_some: 1048576, 5242880; destroy_pool: 524288, 1572864).
 *   cudaMemPoolCreate 1, cudaMemPoolTrimTo 1, cudaMemPoolDestroy 1.
 *   Live at exit: 1 allocation, 3145728 bytes (alloc_default_pool, stream
 *   B, default pool). The device shows 4194304 bytes in use at exit (the
 *   default pool's chunk that holds it).
 *   Peak: 11534336 bytes, all five blocks live, after alloc_from_pool.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"

#define MiB ((size_t)1 << 20)

static cudaStream_t stream_a, stream_b;
static cudaMemPool_t default_pool, pool;
static void *a1, *b1, *p1, *p2, *p3;

static void
show(const char *when)
{
	cuuint64_t dr = 0, du = 0, pr = 0, pu = 0;

	must(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrReservedMemCurrent, &dr),
	     "cudaMemPoolGetAttribute");
	must(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrUsedMemCurrent, &du),
	     "cudaMemPoolGetAttribute");
	printf("%s: default pool reserved %llu used %llu", when, (unsigned long long)dr,
	       (unsigned long long)du);
	if (pool) {
		must(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &pr),
		     "cudaMemPoolGetAttribute");
		must(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &pu),
		     "cudaMemPoolGetAttribute");
		printf("; pool reserved %llu used %llu", (unsigned long long)pr,
		       (unsigned long long)pu);
	}
	printf("\n");
}

static __attribute__((noinline)) void
alloc_default_pool(void)
{
	must(cudaMallocAsync(&a1, 1 * MiB, stream_a), "alloc_default_pool: cudaMallocAsync");
	must(cudaMallocAsync(&b1, 3 * MiB, stream_b), "alloc_default_pool: cudaMallocAsync");
	show("alloc_default_pool");
}

static __attribute__((noinline)) void
create_pool(void)
{
	struct cudaMemPoolProps props = {
		.allocType = cudaMemAllocationTypePinned,
		.handleTypes = cudaMemHandleTypeNone,
		.location = { .type = cudaMemLocationTypeDevice, .id = 0 },
	};

	must(cudaMemPoolCreate(&pool, &props), "create_pool: cudaMemPoolCreate");
}

static __attribute__((noinline)) void
alloc_from_pool(void)
{
	must(cudaMallocFromPoolAsync(&p1, MiB / 2, pool, stream_a),
	     "alloc_from_pool: cudaMallocFromPoolAsync");
	must(cudaMallocFromPoolAsync(&p2, 3 * MiB / 2, pool, stream_b),
	     "alloc_from_pool: cudaMallocFromPoolAsync");
	must(cudaMallocFromPoolAsync(&p3, 5 * MiB, pool, stream_a),
	     "alloc_from_pool: cudaMallocFromPoolAsync");
	show("alloc_from_pool");
}

static __attribute__((noinline)) void
free_some(void)
{
	must(cudaFreeAsync(a1, stream_a), "free_some: cudaFreeAsync");
	must(cudaFreeAsync(p3, stream_a), "free_some: cudaFreeAsync");
	show("free_some");
}

static __attribute__((noinline)) void
trim_pool(void)
{
	must(cudaMemPoolTrimTo(pool, 0), "trim_pool: cudaMemPoolTrimTo");
	show("trim_pool");
}

static __attribute__((noinline)) void
sync_streams(void)
{
	must(cudaStreamSynchronize(stream_a), "sync_streams: cudaStreamSynchronize");
	must(cudaStreamSynchronize(stream_b), "sync_streams: cudaStreamSynchronize");
	show("sync_streams");
}

static __attribute__((noinline)) void
destroy_pool(void)
{
	must(cudaFreeAsync(p1, stream_b), "destroy_pool: cudaFreeAsync");
	must(cudaFreeAsync(p2, stream_b), "destroy_pool: cudaFreeAsync");
	must(cudaMemPoolDestroy(pool), "destroy_pool: cudaMemPoolDestroy");
	pool = NULL;
	show("destroy_pool");
}

int
main(void)
{
	size_t free_bytes, total;

	must(cudaDeviceGetDefaultMemPool(&default_pool, 0), "cudaDeviceGetDefaultMemPool");
	must(cudaStreamCreateWithFlags(&stream_a, cudaStreamNonBlocking), "cudaStreamCreate");
	must(cudaStreamCreateWithFlags(&stream_b, cudaStreamNonBlocking), "cudaStreamCreate");
	alloc_default_pool();
	create_pool();
	alloc_from_pool();
	free_some();
	trim_pool();
	sync_streams();
	destroy_pool();
	must(cudaStreamDestroy(stream_a), "cudaStreamDestroy");
	must(cudaStreamDestroy(stream_b), "cudaStreamDestroy");
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
