/* flight-churn: a long run with an OOM in the middle, for flight mode
 * (MEMTRACE_FLIGHT): enough churn before the OOM that it leaves the ring,
 * and after it, so that its live set must come from what the writer kept.
 * On the simulated 1 GiB device (CUDASIM_DEVICE_MEMORY=1G).
 *
 *   flight-churn [PAIRS] [--wait]   (PAIRS: 1000 by default)
 *
 *   load_weights   4 x cudaMalloc(64 MiB), never freed
 *   churn          PAIRS / 2 times: cudaMalloc(4096 * (1 + i % 16)) and
 *                  its cudaFree at once (i counts on from the first churn
 *                  to the second)
 *   mark "activations"
 *   activations    6 x cudaMalloc(100 MiB), live
 *   huge           cudaMalloc(512 MiB): out of memory, 1024 - 256 - 600
 *                  = 168 MiB free (--wait: prints "waiting" and sleeps
 *                  until killed)
 *   release        cudaFree of the 6 activations
 *   churn          the other PAIRS - PAIRS / 2 pairs
 *   leak_buffers   3 x cudaMalloc(1 MiB), never freed
 *
 * Sizes are multiples of 512 bytes: the simulator charges what is asked.
 * Expected numbers (P = PAIRS): allocations 4 + P + 6 + 3 = P + 13;
 * frees P + 6; bytes allocated 256 MiB + 600 MiB + 3 MiB + the churn's
 * sum of 4096 * (1 + i % 16) for i < P; one OOM of 512 MiB with 856 MiB
 * live in 10 allocations (activations 600 MiB in 6, load_weights 256 MiB
 * in 4), 168 MiB free of 1 GiB; peak 856 MiB, first reached by the 6th
 * activation; at the end 259 MiB live in 7 allocations (load_weights 4 x
 * 64 MiB, leak_buffers 3 x 1 MiB). Events: 2 * P + 4 + 6 + 1 + 6 + 3 + 1
 * (the mark), and the device's first use. Exit status 0; 2 if a CUDA
 * call fails otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda-check.h"
#include "mark.h"

#define MiB ((size_t)1 << 20)

static void *weights[4], *acts[6], *leaked[3];

static __attribute__((noinline)) void load_weights(void)
{
	for (int i = 0; i < 4; i++)
		must(cudaMalloc(&weights[i], 64 * MiB), "load_weights: cudaMalloc");
}

static __attribute__((noinline)) void churn(long from, long to)
{
	for (long i = from; i < to; i++) {
		void *p;
		must(cudaMalloc(&p, 4096 * (size_t)(1 + i % 16)), "churn: cudaMalloc");
		must(cudaFree(p), "churn: cudaFree");
	}
}

static __attribute__((noinline)) void activations(void)
{
	for (int i = 0; i < 6; i++)
		must(cudaMalloc(&acts[i], 100 * MiB), "activations: cudaMalloc");
}

static __attribute__((noinline)) cudaError_t huge(void)
{
	void *p;
	return cudaMalloc(&p, 512 * MiB);
}

static __attribute__((noinline)) void leak_buffers(void)
{
	for (int i = 0; i < 3; i++)
		must(cudaMalloc(&leaked[i], MiB), "leak_buffers: cudaMalloc");
}

int main(int argc, char **argv)
{
	long pairs = 1000;
	int wait = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else
			pairs = atol(argv[i]);
	}
	load_weights();
	churn(0, pairs / 2);
	program_mark("activations");
	activations();
	cudaError_t err = huge();
	printf("huge: %s\n", cudaGetErrorName(err));
	fflush(stdout);
	if (err != cudaErrorMemoryAllocation)
		return PROGRAM_CUDA_FAILED;
	if (wait) {
		printf("waiting\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	for (int i = 0; i < 6; i++)
		must(cudaFree(acts[i]), "release: cudaFree");
	churn(pairs / 2, pairs);
	leak_buffers();
	printf("%ld pairs; 4 weights and 3 buffers left live\n", pairs);
	return 0;
}
