/* race-order: threads that act on what the device shows, not on what the
 * allocating thread has seen returned. A thread's allocation is on the
 * device the moment the driver serves it; the thread itself is still
 * inside cudaMalloc then (under memtrace: unwinding its stack), while the
 * next thread, watching cudaMemGetInfo, already frees. The device's order
 * is fixed by the scheme; the trace must have the same one.
 *
 *   race-order ring THREADS ROUNDS
 *     Step k = r * THREADS + t belongs to thread t in round r. A thread
 *     starts its step when the device shows step k-1 done: step k-1 has
 *     begun (a flag) and the device's used bytes are what step k-1
 *     leaves. A step frees the thread's buffer of the round before (none
 *     in round 0), then allocates size(t, r), at a stack depth that
 *     changes from step to step, through a function of the thread's own
 *     (alloc_by_0 .. alloc_by_7: one site per thread), 100 to 250 frames
 *     down. After the last
 *     round, thread 0 asks for more than the device has (an OOM, while
 *     every thread holds its last buffer); then main frees them all.
 *
 *   race-order handoff ROUNDS
 *     Each round: main allocates 256 MiB (alloc_by_0); a worker allocates
 *     256 MiB + round * 512 B (alloc_by_1); main frees its block as soon
 *     as the device shows the worker's; the worker frees its own once
 *     main's free has returned. Both blocks are live at once on the
 *     device in every round.
 *
 * Prints "done" and exits 0; 2 if a CUDA call fails unexpectedly, 3 if
 * the OOM does not happen. */
#include "cuda-check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_THREADS 8
#define MiB ((size_t)1 << 20)

static int nthreads, nrounds;
static void *held[MAX_THREADS];
static size_t capacity;
static _Atomic long begun = -1; /* the last step begun */
static size_t *expect; /* device bytes used after step k */

typedef void (*alloc_fn)(void **p, size_t bytes, int depth);

/* Distinct functions, so that each thread's allocations have a site of
 * their own; each reaches cudaMalloc depth frames down. */
#define ALLOC_BY(n)                                                      \
	static __attribute__((noinline)) void alloc_by_##n(void **p, size_t bytes, int depth) \
	{                                                                \
		if (depth > 0) {                                         \
			alloc_by_##n(p, bytes, depth - 1);               \
			__asm__ volatile("" ::: "memory");               \
			return;                                          \
		}                                                        \
		must(cudaMalloc(p, bytes), "alloc_by_" #n ": cudaMalloc"); \
	}
ALLOC_BY(0)
ALLOC_BY(1)
ALLOC_BY(2)
ALLOC_BY(3)
ALLOC_BY(4)
ALLOC_BY(5)
ALLOC_BY(6)
ALLOC_BY(7)
static const alloc_fn alloc_by[MAX_THREADS] = { alloc_by_0, alloc_by_1, alloc_by_2, alloc_by_3,
						alloc_by_4, alloc_by_5, alloc_by_6, alloc_by_7 };

static size_t used_now(void)
{
	size_t free_b, total;
	must(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
	return total - free_b;
}

/* Never the same as the round before, so that a step always changes what
 * the device shows. */
static size_t size_of(int t, int r)
{
	return ((size_t)((t * 7 + r * 5) % 11) + 1) * MiB;
}

/* Deep, and new most steps: an unwind and an intern that take a while
 * (with MEMTRACE_DEPTH=256), the window the other threads act in. */
static int deep(long k)
{
	return 100 + (int)((k * 13) % 150);
}

static void wait_for_step(long k)
{
	while (atomic_load(&begun) != k || used_now() != expect[k])
		sched_yield();
}

static void *ring_thread(void *arg)
{
	int t = (int)(size_t)arg;
	for (int r = 0; r < nrounds; r++) {
		long k = (long)r * nthreads + t;
		if (k > 0)
			wait_for_step(k - 1);
		atomic_store(&begun, k);
		if (held[t])
			must(cudaFree(held[t]), "ring: cudaFree");
		alloc_by[t](&held[t], size_of(t, r), deep(k));
	}
	if (t == 0) {
		void *p = NULL;
		wait_for_step((long)nrounds * nthreads - 1);
		if (cudaMalloc(&p, capacity) != cudaErrorMemoryAllocation) {
			fprintf(stderr, "race-order: asking for the whole device did not fail\n");
			exit(3);
		}
		(void)cudaGetLastError();
	}
	return NULL;
}

static int ring(void)
{
	pthread_t th[MAX_THREADS];
	long steps = (long)nrounds * nthreads;
	size_t used = used_now();

	expect = calloc((size_t)steps, sizeof(*expect));
	if (!expect)
		return 2;
	for (long k = 0; k < steps; k++) {
		int t = (int)(k % nthreads), r = (int)(k / nthreads);
		used += size_of(t, r) - (r ? size_of(t, r - 1) : 0);
		expect[k] = used;
	}
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, ring_thread, (void *)(size_t)t);
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < nthreads; t++)
		must(cudaFree(held[t]), "ring: cudaFree at the end");
	free(expect);
	return 0;
}

static _Atomic int round_go = -1, main_freed = -1, worker_done = -1;
static size_t worker_bytes(int r)
{
	return 256 * MiB + (size_t)r * 512;
}

static void *handoff_worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < nrounds; r++) {
		void *w = NULL;
		while (atomic_load(&round_go) != r)
			sched_yield();
		alloc_by_1(&w, worker_bytes(r), deep(r));
		while (atomic_load(&main_freed) != r)
			sched_yield();
		must(cudaFree(w), "handoff: worker cudaFree");
		atomic_store(&worker_done, r);
	}
	return NULL;
}

static int handoff(void)
{
	pthread_t th;
	pthread_create(&th, NULL, handoff_worker, NULL);
	for (int r = 0; r < nrounds; r++) {
		void *m = NULL;
		alloc_by_0(&m, 256 * MiB, 0);
		size_t base = used_now();
		atomic_store(&round_go, r);
		/* the worker's block is on the device: free ours at once */
		while (used_now() < base + worker_bytes(r))
			sched_yield();
		must(cudaFree(m), "handoff: main cudaFree");
		atomic_store(&main_freed, r);
		while (atomic_load(&worker_done) != r)
			sched_yield();
	}
	pthread_join(th, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	size_t free_b;
	int rc;

	if (argc == 4 && !strcmp(argv[1], "ring")) {
		nthreads = atoi(argv[2]);
		nrounds = atoi(argv[3]);
	} else if (argc == 3 && !strcmp(argv[1], "handoff")) {
		nrounds = atoi(argv[2]);
	} else {
		fprintf(stderr, "usage: race-order ring THREADS ROUNDS | handoff ROUNDS\n");
		return 2;
	}
	if ((argv[1][0] == 'r' && (nthreads < 1 || nthreads > MAX_THREADS)) || nrounds < 1) {
		fprintf(stderr, "race-order: 1..%d threads, at least one round\n", MAX_THREADS);
		return 2;
	}
	must(cudaMemGetInfo(&free_b, &capacity), "cudaMemGetInfo");
	rc = argv[1][0] == 'r' ? ring() : handoff();
	if (rc == 0)
		printf("done\n");
	return rc;
}
