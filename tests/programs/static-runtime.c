/* static-runtime: CuPy's (>= 13) and nvcc's default way: the runtime is
 * linked into the program, not loaded from libcudart.so. This program is
 * linked against no CUDA library; its own tiny runtime
 * (static-runtime-rt.c, functions srt_*) reaches the driver the way
 * NVIDIA's static runtime does: dlopen("libcuda.so.1"), dlsym of
 * cuGetProcAddress_v2 only, then cuInit, cuDevicePrimaryCtxRetain,
 * cuCtxSetCurrent, cuStreamCreate, cuMemAlloc, cuMemAllocAsync and
 * cuMemFreeAsync by base name for CUDA 12.0, and cuMemFree for CUDA 13.0.
 * So every allocation is a driver call made through a pointer the driver
 * handed out: cuMemAlloc_v2, cuMemFree_v2, cuMemAllocAsync, cuMemFreeAsync.
 * On the simulated 1 GiB device, in this order:
 *
 *   main         srt_init, then one stream (cuStreamCreate, non-blocking,
 *                never destroyed)
 *   load_model   4 x cuMemAlloc_v2(16777216), never freed
 *   run_batch    called twice (batch 0, batch 1); each time 3 x
 *                cuMemAllocAsync(4194304) on the stream, then 3 x
 *                cuMemFreeAsync on the stream
 *   scratch      cuMemAlloc_v2(5000) (charged 5120), freed with
 *                cuMemFree_v2
 *
 * Expected numbers:
 *   cuMemAlloc_v2 calls 5 (load_model 4, 67108864 bytes; scratch 1, 5000
 *   bytes); cuMemFree_v2 calls 1 (scratch).
 *   cuMemAllocAsync calls 6 (run_batch, 25165824 bytes, 3 per batch),
 *   cuMemFreeAsync calls 6 (run_batch); all on the one stream.
 *   Live at exit: 4 allocations, 67108864 bytes, all from load_model.
 *   Peak: 79691776 bytes (load_model 67108864 + one batch's 3 x 4194304),
 *   reached in each run_batch call.
 *   Exit status 0; 2 if a driver call fails.
 */
#include "cuda-check.h"
#include "static-runtime-rt.h"

#define MODEL_PARTS 4
#define MODEL_BYTES ((size_t)16 << 20)
#define BATCHES 2
#define BATCH_BUFFERS 3
#define BATCH_BYTES ((size_t)4 << 20)
#define SCRATCH_BYTES ((size_t)5000)

static void *model[MODEL_PARTS];

static __attribute__((noinline)) void
load_model(void)
{
	for (int i = 0; i < MODEL_PARTS; i++)
		must_drv(srt_malloc(&model[i], MODEL_BYTES), "load_model: srt_malloc");
	printf("load_model: kept %d x %zu bytes\n", MODEL_PARTS, MODEL_BYTES);
}

static __attribute__((noinline)) void
run_batch(int batch, srt_stream stream)
{
	void *buf[BATCH_BUFFERS];

	for (int i = 0; i < BATCH_BUFFERS; i++)
		must_drv(srt_malloc_async(&buf[i], BATCH_BYTES, stream),
			 "run_batch: srt_malloc_async");
	for (int i = 0; i < BATCH_BUFFERS; i++)
		must_drv(srt_free_async(buf[i], stream), "run_batch: srt_free_async");
	printf("run_batch %d: %d x %zu bytes, stream-ordered, freed\n", batch, BATCH_BUFFERS,
	       BATCH_BYTES);
}

static __attribute__((noinline)) void
scratch(void)
{
	void *p;

	must_drv(srt_malloc(&p, SCRATCH_BYTES), "scratch: srt_malloc");
	must_drv(srt_free(p), "scratch: srt_free");
	printf("scratch: %zu bytes, freed\n", SCRATCH_BYTES);
}

int
main(void)
{
	srt_stream stream;

	must_drv(srt_init(), "srt_init");
	must_drv(srt_stream_create(&stream), "srt_stream_create");
	printf("static runtime: driver reached through cuGetProcAddress_v2\n");
	load_model();
	for (int b = 0; b < BATCHES; b++)
		run_batch(b, stream);
	scratch();
	return 0;
}
