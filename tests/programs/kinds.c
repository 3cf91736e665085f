/* kinds: one allocation of each kind the runtime offers besides plain
 * cudaMalloc, in this order:
 *
 *   alloc_managed    cudaMallocManaged(1048576, cudaMemAttachGlobal),
 *                    never freed (counts as device memory on the simulator)
 *   alloc_pinned     cudaMallocHost(8192), freed with cudaFreeHost
 *   alloc_hostalloc  cudaHostAlloc(12288, cudaHostAllocPortable), freed
 *                    with cudaFreeHost
 *   alloc_pitched    cudaMallocPitch(width 1000, height 16): pitch 1024,
 *                    16384 bytes, freed with cudaFree
 *   alloc_async      two streams; cudaMallocAsync(4096) on the first and
 *                    cudaMallocAsync(8192) on the second; the 4096 bytes
 *                    freed with cudaFreeAsync on the first stream, the 8192
 *                    bytes never freed; both streams synchronised and
 *                    destroyed
 *
 * Expected numbers:
 *   Device (managed, pitched, async): 4 allocations, 1077248 bytes; 2 frees.
 *   Pinned host: 2 allocations, 20480 bytes; 2 frees.
 *   Live at exit: managed 1048576 (alloc_managed) and async 8192
 *   (alloc_async, second stream): 2 allocations, 1056768 bytes.
 *   Peak device: 1064960 bytes (managed 1048576 + pitched 16384), while
 *   the pitched allocation is live; the async pair only reaches 1060864.
 *   All sizes are multiples of 512, so charged = requested.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"

#define MANAGED_BYTES ((size_t)1 << 20)
#define PINNED_BYTES ((size_t)8192)
#define HOSTALLOC_BYTES ((size_t)12288)
#define PITCH_WIDTH ((size_t)1000)
#define PITCH_HEIGHT ((size_t)16)
#define ASYNC_FREED_BYTES ((size_t)4096)
#define ASYNC_KEPT_BYTES ((size_t)8192)

static void *managed;
static void *async_kept;

static __attribute__((noinline)) void
alloc_managed(void)
{
	must(cudaMallocManaged(&managed, MANAGED_BYTES, cudaMemAttachGlobal),
	     "alloc_managed: cudaMallocManaged");
	printf("managed: %zu bytes, kept\n", MANAGED_BYTES);
}

static __attribute__((noinline)) void
alloc_pinned(void)
{
	void *p;

	must(cudaMallocHost(&p, PINNED_BYTES), "alloc_pinned: cudaMallocHost");
	must(cudaFreeHost(p), "alloc_pinned: cudaFreeHost");
	printf("pinned: %zu bytes, freed\n", PINNED_BYTES);
}

static __attribute__((noinline)) void
alloc_hostalloc(void)
{
	void *p;

	must(cudaHostAlloc(&p, HOSTALLOC_BYTES, cudaHostAllocPortable),
	     "alloc_hostalloc: cudaHostAlloc");
	must(cudaFreeHost(p), "alloc_hostalloc: cudaFreeHost");
	printf("hostalloc: %zu bytes, freed\n", HOSTALLOC_BYTES);
}

static __attribute__((noinline)) void
alloc_pitched(void)
{
	size_t pitch = 0;
	void *p;

	must(cudaMallocPitch(&p, &pitch, PITCH_WIDTH, PITCH_HEIGHT),
	     "alloc_pitched: cudaMallocPitch");
	must(cudaFree(p), "alloc_pitched: cudaFree");
	printf("pitched: %zu x %zu, pitch %zu, freed\n", PITCH_WIDTH, PITCH_HEIGHT, pitch);
}

static __attribute__((noinline)) void
alloc_async(void)
{
	cudaStream_t s1, s2;
	void *p;

	must(cudaStreamCreate(&s1), "cudaStreamCreate");
	must(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking),
	     "cudaStreamCreateWithFlags");
	must(cudaMallocAsync(&p, ASYNC_FREED_BYTES, s1), "alloc_async: cudaMallocAsync");
	must(cudaMallocAsync(&async_kept, ASYNC_KEPT_BYTES, s2), "alloc_async: cudaMallocAsync");
	must(cudaFreeAsync(p, s1), "alloc_async: cudaFreeAsync");
	must(cudaStreamSynchronize(s1), "cudaStreamSynchronize");
	must(cudaStreamSynchronize(s2), "cudaStreamSynchronize");
	must(cudaStreamDestroy(s1), "cudaStreamDestroy");
	must(cudaStreamDestroy(s2), "cudaStreamDestroy");
	printf("async: %zu on stream 1 freed, %zu on stream 2 kept\n", ASYNC_FREED_BYTES,
	       ASYNC_KEPT_BYTES);
}

int
main(void)
{
	alloc_managed();
	alloc_pinned();
	alloc_hostalloc();
	alloc_pitched();
	alloc_async();
	return 0;
}
