/* demo-oom: the demo job, a mini training loop that runs out of device
 * memory the way a real job does, on the simulated 1 GiB device
 * (CUDASIM_DEVICE_MEMORY=1G, the default; no CUDASIM_RESERVED_MEMORY).
 *
 *   load_weights  4 x cudaMalloc(67108864)  (64 MiB)   never freed
 *   forward       3 x cudaMalloc(100663552) per step   (96 MiB + 256;
 *                 charged 100663808 after the 512-byte rounding)
 *   backward      cudaFree of the first two activations of the step; the
 *                 third is kept, saved for later, so memory grows by one
 *                 activation per step
 *
 * Step s starts with the 4 weights and s - 1 kept activations live; its
 * forward fits while 268435456 + (s + 2) * 100663808 <= 1073741824, that
 * is for s <= 5. In step 6 the third cudaMalloc of forward fails with
 * cudaErrorMemoryAllocation: 7 activations are live and the device has
 * 1073741824 - 268435456 - 7 * 100663808 = 100659712 bytes free.
 *
 * Expected numbers:
 *   cudaMalloc calls 22: 21 succeed (load_weights 4, forward 17), 1 fails
 *   (forward, 100663552 bytes, step 6); cudaFree calls 10 (backward).
 *   Requested bytes: load_weights 268435456, forward 17 x 100663552 =
 *   1711280384 (plus the failed 100663552).
 *   Live at exit: 11 allocations, 973080320 bytes requested (973082112
 *   charged): load_weights 4 x 67108864 = 268435456, forward 7 x 100663552
 *   = 704644864.
 *   Peak: the same 11 allocations, 973080320 bytes, first reached by the
 *   third forward allocation of step 5, and again just before the failure.
 *   Exit status 1 after the OOM, like a crashed job; 2 if any other CUDA
 *   call fails.
 */
#include "cuda-check.h"

#define WEIGHTS 4
#define WEIGHT_BYTES ((size_t)64 << 20)
#define ACTIVATIONS 3
#define ACTIVATION_BYTES (((size_t)96 << 20) + 256)
#define MAX_STEPS 100

static void *weights[WEIGHTS];
static void *saved[MAX_STEPS];

static __attribute__((noinline)) void
load_weights(void)
{
	for (int i = 0; i < WEIGHTS; i++)
		must(cudaMalloc(&weights[i], WEIGHT_BYTES), "load_weights: cudaMalloc");
	printf("load_weights: %d x %zu bytes\n", WEIGHTS, WEIGHT_BYTES);
}

/* Returns the error of the first allocation that fails. */
static __attribute__((noinline)) cudaError_t
forward(void *act[ACTIVATIONS])
{
	for (int i = 0; i < ACTIVATIONS; i++) {
		cudaError_t err = cudaMalloc(&act[i], ACTIVATION_BYTES);
		if (err != cudaSuccess)
			return err;
	}
	return cudaSuccess;
}

static __attribute__((noinline)) void
backward(void *act[ACTIVATIONS], int step)
{
	must(cudaFree(act[0]), "backward: cudaFree");
	must(cudaFree(act[1]), "backward: cudaFree");
	saved[step] = act[2];
}

static void
report_oom(int step, cudaError_t err)
{
	size_t free_bytes = 0, total = 0;

	printf("step %d: forward: cudaMalloc(%zu) failed: %s (%s)\n", step,
	       ACTIVATION_BYTES, cudaGetErrorName(err), cudaGetErrorString(err));
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device: %zu of %zu bytes free\n", free_bytes, total);
}

int
main(void)
{
	load_weights();
	for (int step = 1; step < MAX_STEPS; step++) {
		void *act[ACTIVATIONS];
		cudaError_t err = forward(act);

		if (err == cudaErrorMemoryAllocation) {
			report_oom(step, err);
			return 1;
		}
		must(err, "forward: cudaMalloc");
		backward(act, step);
		printf("step %d: ok\n", step);
	}
	printf("never ran out of memory\n");
	return PROGRAM_CUDA_FAILED;
}
