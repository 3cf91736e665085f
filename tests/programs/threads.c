/* threads: 8 threads x 20000 cudaMalloc/cudaFree pairs, started after a
 * first cudaMalloc/cudaFree in main, with nothing live at the end.
 *
 *   warmup      (main thread) cudaMalloc(4096), then cudaFree
 *   churn_once  (each worker, i = 0..19999) cudaMalloc(512 * (1 + i % 8)),
 *               fills the block with a byte of its own and reads it back
 *               (so overlapping blocks would be caught), then cudaFree
 *
 * Expected numbers:
 *   cudaMalloc 160001, cudaFree 160001 (warmup 1 + churn_once 160000).
 *   Requested bytes: warmup 4096; churn_once 46080000 per thread
 *   (2500 x (512 + 1024 + ... + 4096)), 368640000 in all; total 368644096.
 *   Live at exit: nothing (the device reports all its memory free).
 *   Peak: not deterministic (it depends on the interleaving), at most
 *   8 x 4096 = 32768 bytes and at least 4096.
 *   Exit status 0; 2 if a CUDA call fails, 3 if a block's contents change.
 */
#include "cuda-check.h"

#include <pthread.h>
#include <string.h>

#define THREADS 8
#define PAIRS 20000
#define MAX_BYTES ((size_t)4096)

static __attribute__((noinline)) void
warmup(void)
{
	void *p;

	must(cudaMalloc(&p, 4096), "warmup: cudaMalloc");
	must(cudaFree(p), "warmup: cudaFree");
}

static __attribute__((noinline)) void
churn_once(int id, size_t bytes)
{
	unsigned char back[MAX_BYTES];
	void *p;

	must(cudaMalloc(&p, bytes), "churn_once: cudaMalloc");
	must(cudaMemset(p, id, bytes), "churn_once: cudaMemset");
	must(cudaMemcpy(back, p, bytes, cudaMemcpyDeviceToHost), "churn_once: cudaMemcpy");
	for (size_t i = 0; i < bytes; i++) {
		if (back[i] != (unsigned char)id) {
			fprintf(stderr, "thread %d: block changed under it\n", id);
			exit(3);
		}
	}
	must(cudaFree(p), "churn_once: cudaFree");
}

static void *
worker(void *arg)
{
	int id = (int)(size_t)arg;

	for (int i = 0; i < PAIRS; i++)
		churn_once(id, 512 * (size_t)(1 + i % 8));
	return NULL;
}

int
main(void)
{
	pthread_t t[THREADS];
	size_t free_bytes, total;

	warmup();
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1)) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return PROGRAM_CUDA_FAILED;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("threads: %d x %d cudaMalloc/cudaFree pairs ok\n", THREADS, PAIRS);
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
