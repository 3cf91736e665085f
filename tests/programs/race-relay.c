/* race-relay: a second racing program, written apart from race-order the
 * same way (threads act on what the device shows), but with the shapes a
 * training job has that race-order lacks: threads that live for one
 * allocation and are gone before the trace names them, memory freed by
 * another thread than the one that allocated it, and three routes to the
 * device (cudaMalloc, cudaMallocPitch, and cuMemAlloc/cuMemFree reached
 * through cudaGetDriverEntryPointByVersion).
 *
 *   race-relay ROUNDS
 *     Round r: main starts a new thread, named "relay" by itself, which
 *     allocates size_of(r) MiB through route r % 3 (get_plain,
 *     get_pitched, get_driver: one site each), 100 to 250 frames down,
 *     and ends. A long-lived thread, "reaper", watches cudaMemGetInfo:
 *     as soon as the device shows the new block (the relay thread may
 *     still be inside its call), it frees the block of round r - 1,
 *     through cudaFree on even rounds and cuMemFree on odd ones, unless
 *     round r - 1 is one it keeps (r - 1 divisible by 5). Both blocks are
 *     live at once on the device in every round. Main waits for the
 *     reaper, joins the relay thread and starts the next round.
 *     After the last round a new relay thread asks for the whole device
 *     (an OOM), while the kept blocks and the last one are live; then the
 *     reaper frees them all.
 *
 * Prints "done" and exits 0; 2 if a CUDA call fails unexpectedly, 3 if
 * the OOM does not happen. */
#include "cuda-check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define MiB ((size_t)1 << 20)
#define MAX_ROUNDS 1000

typedef CUresult (*mem_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*mem_free_fn)(CUdeviceptr);

static mem_alloc_fn drv_alloc;
static mem_free_fn drv_free;
static void *block[MAX_ROUNDS];
static int nrounds;
static size_t capacity;

static _Atomic int watch = -1;  /* the round the reaper is to act on */
static _Atomic int reaped = -1; /* the last round it acted on */
static _Atomic size_t base;     /* the device's used bytes before the round */

static void *entry_point(const char *name)
{
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult status;
	must(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status),
	     "cudaGetDriverEntryPointByVersion");
	if (!fn || status != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "race-relay: no entry point for %s\n", name);
		exit(PROGRAM_CUDA_FAILED);
	}
	return fn;
}

static size_t used_now(void)
{
	size_t free_b, total;
	must(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
	return total - free_b;
}

/* 1 to 9 MiB, never the same two rounds running. */
static size_t size_of(int r)
{
	return ((size_t)((r * 4) % 9) + 1) * MiB;
}

static int deep(int r)
{
	return 100 + (r * 37) % 150;
}

/* One function per route, each reaching its call depth frames down. */
static __attribute__((noinline)) void get_plain(void **p, size_t bytes, int depth)
{
	if (depth > 0) {
		get_plain(p, bytes, depth - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	must(cudaMalloc(p, bytes), "get_plain: cudaMalloc");
}

static __attribute__((noinline)) void get_pitched(void **p, size_t bytes, int depth)
{
	if (depth > 0) {
		get_pitched(p, bytes, depth - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	size_t pitch = 0;
	/* rows of 1 MiB: the pitch is the width, the block bytes/MiB rows */
	must(cudaMallocPitch(p, &pitch, MiB, bytes / MiB), "get_pitched: cudaMallocPitch");
	if (pitch != MiB) {
		fprintf(stderr, "race-relay: pitch %zu for rows of 1 MiB\n", pitch);
		exit(PROGRAM_CUDA_FAILED);
	}
}

static __attribute__((noinline)) void get_driver(void **p, size_t bytes, int depth)
{
	if (depth > 0) {
		get_driver(p, bytes, depth - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	CUdeviceptr d = 0;
	CUresult rc = drv_alloc(&d, bytes);
	if (rc != CUDA_SUCCESS) {
		fprintf(stderr, "get_driver: cuMemAlloc failed: %d\n", (int)rc);
		exit(PROGRAM_CUDA_FAILED);
	}
	*p = (void *)d;
}

static void (*const route[3])(void **, size_t, int) = { get_plain, get_pitched, get_driver };

static void *relay(void *arg)
{
	int r = (int)(size_t)arg;
	pthread_setname_np(pthread_self(), "relay");
	/* the driver's calls need the thread's context current */
	must(cudaSetDevice(0), "relay: cudaSetDevice");
	if (r < nrounds) {
		route[r % 3](&block[r], size_of(r), deep(r));
		return NULL;
	}
	void *p = NULL;
	if (cudaMalloc(&p, capacity) != cudaErrorMemoryAllocation) {
		fprintf(stderr, "race-relay: asking for the whole device did not fail\n");
		exit(3);
	}
	(void)cudaGetLastError();
	return NULL;
}

static bool kept(int r)
{
	return r % 5 == 0;
}

static void release(int r)
{
	if (r % 2 == 0) {
		must(cudaFree(block[r]), "reaper: cudaFree");
	} else {
		CUresult rc = drv_free((CUdeviceptr)block[r]);
		if (rc != CUDA_SUCCESS) {
			fprintf(stderr, "reaper: cuMemFree failed: %d\n", (int)rc);
			exit(PROGRAM_CUDA_FAILED);
		}
	}
	block[r] = NULL;
}

static void *reaper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reaper");
	for (int r = 0; r < nrounds; r++) {
		while (atomic_load(&watch) != r)
			sched_yield();
		/* the new block is on the device: let the old one go at once */
		while (used_now() <= atomic_load(&base))
			sched_yield();
		if (r > 0 && !kept(r - 1))
			release(r - 1);
		atomic_store(&reaped, r);
	}
	while (atomic_load(&watch) != nrounds)
		sched_yield();
	for (int r = 0; r < nrounds; r++)
		if (block[r])
			release(r);
	atomic_store(&reaped, nrounds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t reaper_th, th;
	size_t free_b;

	if (argc != 2 || (nrounds = atoi(argv[1])) < 1 || nrounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: race-relay ROUNDS (1..%d)\n", MAX_ROUNDS);
		return 2;
	}
	must(cudaMemGetInfo(&free_b, &capacity), "cudaMemGetInfo");
	drv_alloc = (mem_alloc_fn)entry_point("cuMemAlloc");
	drv_free = (mem_free_fn)entry_point("cuMemFree");
	pthread_create(&reaper_th, NULL, reaper, NULL);
	for (int r = 0; r < nrounds; r++) {
		atomic_store(&base, used_now());
		atomic_store(&watch, r);
		pthread_create(&th, NULL, relay, (void *)(size_t)r);
		while (atomic_load(&reaped) != r)
			sched_yield();
		pthread_join(th, NULL);
	}
	pthread_create(&th, NULL, relay, (void *)(size_t)nrounds);
	pthread_join(th, NULL);
	atomic_store(&watch, nrounds);
	pthread_join(reaper_th, NULL);
	printf("done\n");
	return 0;
}
