/* bench-churn: alloc/free pairs with random sizes and lifetimes, each made
 * at the bottom of a call chain of a chosen depth, on one or more threads.
 * Built like a test program (real CUDA headers, the toolkit's libcudart)
 * and run on the simulated device; --api malloc runs the same pattern on
 * the C heap, for heaptrack.
 *
 * Each thread keeps LIVE slots. One pair: pick a slot at random, free what
 * it holds (if anything), allocate a new block of random size (log-uniform,
 * 64 B to 64 KiB) into it. The call chain to the allocation goes through
 * DEPTH noinline frames; which of two functions stands at each of the first
 * four levels depends on the slot, so there are up to 16 distinct stacks.
 *
 * Prints one line of key=value pairs on stdout:
 *   pairs, threads, depth, wall_ns (from the start barrier until the last
 *   thread is done), cpu_ns (CPU time of the worker threads, summed),
 *   bytes (allocated by the loop, the warm-up pair not counted).
 * Exit status 0; 2 if an allocation fails; 64 on bad usage. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum api {
	API_ASYNC,
	API_SYNC,
	API_MALLOC
};

struct opts {
	enum api api;
	long pairs; /* in all, split between the threads */
	int threads;
	int depth;
	int live;
	uint64_t seed;
};

struct worker {
	pthread_t thread;
	const struct opts *o;
	int id;
	long pairs;
	uint64_t rng;
	void **slots;
	uint64_t cpu_ns;
	uint64_t bytes; /* allocated by the loop */
	int failed;
};

static pthread_barrier_t start_line;

static uint64_t
now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: no lock, unlike rand() */
static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* log-uniform from 64 B to 64 KiB */
static size_t
random_size(uint64_t *rng)
{
	uint64_t r = next_random(rng);
	unsigned shift = 6 + (unsigned)(r % 11);
	return ((size_t)1 << shift) + (size_t)((r >> 8) & (((size_t)1 << shift) - 1));
}

static __attribute__((noinline)) int
leaf(struct worker *w, int slot)
{
	void **p = &w->slots[slot];
	size_t bytes = random_size(&w->rng);
	w->bytes += bytes;
	switch (w->o->api) {
	case API_ASYNC:
		if (*p && cudaFreeAsync(*p, 0) != cudaSuccess)
			return -1;
		return cudaMallocAsync(p, bytes, 0) == cudaSuccess ? 0 : -1;
	case API_SYNC:
		if (*p && cudaFree(*p) != cudaSuccess)
			return -1;
		return cudaMalloc(p, bytes) == cudaSuccess ? 0 : -1;
	case API_MALLOC:
		free(*p);
		*p = malloc(bytes);
		if (!*p)
			return -1;
		*(volatile char *)*p = 1; /* a use, so the pair is not elided */
		return 0;
	}
	return -1;
}

/* Two functions, so that the slot chooses among distinct call chains. The
 * volatile sum keeps each frame a real frame (no tail call). */
static __attribute__((noinline)) int down_b(struct worker *w, int slot, int level);

static __attribute__((noinline)) int
down_a(struct worker *w, int slot, int level)
{
	volatile int rc;
	if (level <= 1)
		rc = leaf(w, slot);
	else if (level <= 5 && (slot >> (level - 2) & 1))
		rc = down_b(w, slot, level - 1);
	else
		rc = down_a(w, slot, level - 1);
	return rc;
}

static __attribute__((noinline)) int
down_b(struct worker *w, int slot, int level)
{
	volatile int rc;
	if (level <= 1)
		rc = leaf(w, slot);
	else if (level <= 5 && (slot >> (level - 2) & 1))
		rc = down_b(w, slot, level - 1);
	else
		rc = down_a(w, slot, level - 1);
	return rc + 0;
}

static void
free_all(struct worker *w)
{
	for (int i = 0; i < w->o->live; i++) {
		if (!w->slots[i])
			continue;
		if (w->o->api == API_MALLOC)
			free(w->slots[i]);
		else if (w->o->api == API_ASYNC)
			cudaFreeAsync(w->slots[i], 0);
		else
			cudaFree(w->slots[i]);
		w->slots[i] = NULL;
	}
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	pthread_barrier_wait(&start_line);
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < w->pairs; i++) {
		int slot = (int)(next_random(&w->rng) % (uint64_t)w->o->live);
		if (down_a(w, slot, w->o->depth)) {
			w->failed = 1;
			break;
		}
	}
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	pthread_barrier_wait(&start_line);
	free_all(w);
	return NULL;
}

static int
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--api async|sync|malloc] [--pairs N] [--threads T] [--depth D]\n"
		"          [--live L] [--seed S]\n",
		prog);
	return 64;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ API_ASYNC, 200000, 1, 20, 64, 1 };
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return -1;
		i++;
		if (!strcmp(k, "--api")) {
			if (!strcmp(v, "async"))
				o->api = API_ASYNC;
			else if (!strcmp(v, "sync"))
				o->api = API_SYNC;
			else if (!strcmp(v, "malloc"))
				o->api = API_MALLOC;
			else
				return -1;
		} else if (!strcmp(k, "--pairs")) {
			o->pairs = atol(v);
		} else if (!strcmp(k, "--threads")) {
			o->threads = atoi(v);
		} else if (!strcmp(k, "--depth")) {
			o->depth = atoi(v);
		} else if (!strcmp(k, "--live")) {
			o->live = atoi(v);
		} else if (!strcmp(k, "--seed")) {
			o->seed = strtoull(v, NULL, 0);
		} else {
			return -1;
		}
	}
	bool ok = o->pairs > 0 && o->threads > 0 && o->threads <= 256 && o->depth >= 1 &&
		  o->depth <= 250 && o->live > 0 && o->live <= 1 << 20;
	return ok ? 0 : -1;
}

/* The first CUDA call starts the device (and a tool's trace): not timed. */
static int
warm_up(const struct opts *o)
{
	if (o->api == API_MALLOC)
		return 0;
	void *p;
	if (cudaMalloc(&p, 512) != cudaSuccess || cudaFree(p) != cudaSuccess)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o))
		return usage(argv[0]);
	if (warm_up(&o)) {
		fprintf(stderr, "bench-churn: the device does not work\n");
		return 2;
	}
	struct worker *w = calloc((size_t)o.threads, sizeof(*w));
	void **slots = calloc((size_t)o.threads * (size_t)o.live, sizeof(void *));
	if (!w || !slots)
		return 2;
	pthread_barrier_init(&start_line, NULL, (unsigned)o.threads + 1);
	for (int i = 0; i < o.threads; i++) {
		w[i] = (struct worker){ .o = &o,
					.id = i,
					.rng = o.seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1,
					.slots = slots + (size_t)i * (size_t)o.live,
					.pairs = o.pairs / o.threads + (i < o.pairs % o.threads) };
		if (pthread_create(&w[i].thread, NULL, work, &w[i]))
			return 2;
	}
	pthread_barrier_wait(&start_line);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&start_line);
	uint64_t wall = now_ns(CLOCK_MONOTONIC) - t0;
	uint64_t cpu = 0, bytes = 0;
	int failed = 0;
	for (int i = 0; i < o.threads; i++) {
		pthread_join(w[i].thread, NULL);
		cpu += w[i].cpu_ns;
		bytes += w[i].bytes;
		failed |= w[i].failed;
	}
	if (failed) {
		fprintf(stderr, "bench-churn: an allocation failed\n");
		return 2;
	}
	printf("pairs=%ld threads=%d depth=%d wall_ns=%llu cpu_ns=%llu bytes=%llu\n", o.pairs,
	       o.threads, o.depth, (unsigned long long)wall, (unsigned long long)cpu,
	       (unsigned long long)bytes);
	free(slots);
	free(w);
	return 0;
}
