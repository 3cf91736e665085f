/* stream-ordered: stream-ordered allocation with kernels in between, in
 * the manner of the public streamOrderedAllocation sample: a vector sum
 * whose device buffers are allocated and freed on the stream in every
 * iteration, first with the default pool as it comes (release threshold
 * 0: memory goes back at each synchronisation), then with the threshold
 * raised so that the pool keeps its memory across synchronisations.
 *
 *   main            cudaSetDevice(0); cudaGetDeviceProperties and
 *                   cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported);
 *                   cudaMallocHost 3 x 1048576 (the host vectors, pinned);
 *                   one non-blocking stream; cudaDeviceGetDefaultMemPool.
 *   basic           memtrace_mark("basic"); 4 x iterate, each followed by
 *                   cudaStreamSynchronize.
 *   post_sync       memtrace_mark("post-sync"); cudaMemPoolSetAttribute
 *                   (release threshold UINT64_MAX), the high-water marks
 *                   reset (set to 0); 4 x iterate, each followed by
 *                   cudaStreamSynchronize; cudaMemPoolTrimTo(pool, 0).
 *   iterate         cudaMallocAsync a, b, c (1048576 bytes each: 262144
 *                   floats), cudaMemcpyAsync a and b from the host,
 *                   vector_add<float> (1024 blocks of 256 threads),
 *                   cudaMemcpyAsync c to the host, cudaFreeAsync a, b, c.
 *   Then the host vectors are freed (cudaFreeHost 3) and the stream
 *   destroyed.
 *
 * Expected numbers:
 *   cudaMallocAsync 24 (12 per phase, 1048576 bytes each, from the default
 *   pool), cudaFreeAsync 24, all outside any capture; never more than 3
 *   live at once (3145728 bytes); kernel launches 8, cudaMemcpyAsync 24
 *   (16 to the device, 8 to the host), cudaStreamSynchronize 8,
 *   cudaMallocHost 3 (1048576 bytes each, pinned host memory, not device
 *   memory), cudaFreeHost 3, memtrace_mark 2. No cudaMalloc, no graph.
 *   Every iteration gets the same three addresses.
 *   The pool on the simulated device: it reserves 2 MiB chunks; a and b
 *   share the first, c takes a second: reserved 4194304, used 3145728 at
 *   the peak of each iteration. basic: after each synchronisation the
 *   pool has given everything back (reserved 0); high-water marks used
 *   3145728, reserved 4194304. post-sync: reserved stays 4194304 after
 *   each synchronisation (used 0), high-water marks the same as in basic;
 *   cudaMemPoolTrimTo gives the 4194304 bytes back.
 *   Live at exit: nothing; the device shows 0 bytes in use. Exit status 0;
 *   2 if a CUDA call fails.
 */
#include <cstdint>
#include <cstdio>
#include <initializer_list>

#include <cuda_runtime.h>

#include "cuda-check.h"
#include "cuda-kernels.cuh"
#include "mark.h"

constexpr size_t kElements = size_t(1) << 18;
constexpr size_t kBytes = kElements * sizeof(float);
constexpr int kIterations = 4;

struct host_vectors {
	float *a, *b, *c;
};

static cudaStream_t stream;
static cudaMemPool_t pool;

static unsigned long long
pool_attr(cudaMemPoolAttr attr)
{
	cuuint64_t v = 0;

	must(cudaMemPoolGetAttribute(pool, attr, &v), "cudaMemPoolGetAttribute");
	return static_cast<unsigned long long>(v);
}

static size_t
device_in_use()
{
	size_t free_bytes, total;

	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	return total - free_bytes;
}

static void
print_device()
{
	cudaDeviceProp prop;
	int pools = 0;

	must(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	must(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0),
	     "cudaDeviceGetAttribute");
	printf("device: %s, compute capability %d.%d, %d multiprocessors, memory pools %s\n",
	       prop.name, prop.major, prop.minor, prop.multiProcessorCount,
	       pools ? "supported" : "not supported");
}

static __attribute__((noinline)) void
iterate(const host_vectors &h)
{
	float *a, *b, *c;

	must(cudaMallocAsync(&a, kBytes, stream), "iterate: cudaMallocAsync a");
	must(cudaMallocAsync(&b, kBytes, stream), "iterate: cudaMallocAsync b");
	must(cudaMallocAsync(&c, kBytes, stream), "iterate: cudaMallocAsync c");
	must(cudaMemcpyAsync(a, h.a, kBytes, cudaMemcpyHostToDevice, stream), "iterate: copy a");
	must(cudaMemcpyAsync(b, h.b, kBytes, cudaMemcpyHostToDevice, stream), "iterate: copy b");
	vector_add<float><<<blocks_for(kElements), kThreads, 0, stream>>>(a, b, c, kElements);
	must(cudaGetLastError(), "iterate: vector_add");
	must(cudaMemcpyAsync(h.c, c, kBytes, cudaMemcpyDeviceToHost, stream), "iterate: copy c");
	must(cudaFreeAsync(a, stream), "iterate: cudaFreeAsync a");
	must(cudaFreeAsync(b, stream), "iterate: cudaFreeAsync b");
	must(cudaFreeAsync(c, stream), "iterate: cudaFreeAsync c");
}

/* The iterations of one phase, and what the pool holds after each
 * synchronisation. */
static void
run_phase(const char *name, const host_vectors &h)
{
	printf("%s: pool reserved after each synchronisation:", name);
	for (int i = 0; i < kIterations; i++) {
		iterate(h);
		must(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
		printf(" %llu", pool_attr(cudaMemPoolAttrReservedMemCurrent));
	}
	printf("\n%s: pool used high %llu, reserved high %llu\n", name,
	       pool_attr(cudaMemPoolAttrUsedMemHigh), pool_attr(cudaMemPoolAttrReservedMemHigh));
}

static __attribute__((noinline)) void
basic(const host_vectors &h)
{
	program_mark("basic");
	run_phase("basic", h);
}

static __attribute__((noinline)) void
post_sync(const host_vectors &h)
{
	cuuint64_t threshold = UINT64_MAX, zero = 0;

	program_mark("post-sync");
	must(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
	     "cudaMemPoolSetAttribute threshold");
	must(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero),
	     "cudaMemPoolSetAttribute used high");
	must(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero),
	     "cudaMemPoolSetAttribute reserved high");
	printf("post-sync: release threshold %llu\n",
	       pool_attr(cudaMemPoolAttrReleaseThreshold));
	run_phase("post-sync", h);
	must(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
	printf("after trim: pool reserved %llu; device memory in use %zu\n",
	       pool_attr(cudaMemPoolAttrReservedMemCurrent), device_in_use());
}

static host_vectors
host_alloc()
{
	host_vectors h;

	must(cudaMallocHost(&h.a, kBytes), "cudaMallocHost a");
	must(cudaMallocHost(&h.b, kBytes), "cudaMallocHost b");
	must(cudaMallocHost(&h.c, kBytes), "cudaMallocHost c");
	for (size_t i = 0; i < kElements; i++) {
		h.a[i] = static_cast<float>(i);
		h.b[i] = 1.0f;
	}
	return h;
}

int
main()
{
	host_vectors h;

	must(cudaSetDevice(0), "cudaSetDevice");
	print_device();
	h = host_alloc();
	must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
	must(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
	basic(h);
	post_sync(h);
	for (float *p : { h.a, h.b, h.c })
		must(cudaFreeHost(p), "cudaFreeHost");
	must(cudaStreamDestroy(stream), "cudaStreamDestroy");
	return 0;
}
