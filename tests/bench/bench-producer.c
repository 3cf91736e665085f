/* bench-producer: what an event costs the application thread, without
 * preload, CUDA or the writer: interpose/record/record.c's recording path called
 * through producer-core.c, at the bottom of a call
 * chain of a chosen depth, on one or more threads, with a consumer that
 * discards (or no consumer: --stalled).
 *
 *   --mode pair    an allocation event and a free event (the default)
 *   --mode none    nothing: the cost of the call chain itself
 *   --mode unwind  the native unwind alone
 *   --mode intern  the stack-table lookup alone (stacks captured once)
 *   --mode push    two queue pushes (a pair's worth)
 *
 * The call chain and its 16 distinct stacks are those of bench-churn.c.
 * Prints one line of key=value pairs: iterations, threads, depth, wall_ns,
 * cpu_ns (worker threads, summed), wait_ns (producers waiting for room),
 * stacks (distinct stacks interned). Exit status 0; 64 on bad usage. */
#include "producer-core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 16
#define MAX_DEPTH 64 /* MEMTRACE_DEPTH's default */

enum mode {
	MODE_PAIR,
	MODE_UNWIND,
	MODE_INTERN,
	MODE_PUSH,
	MODE_NONE
};

struct opts {
	enum mode mode;
	long iterations; /* in all, split between the threads */
	int threads;
	int depth;
	bool stalled;
};

struct worker {
	pthread_t thread;
	const struct opts *o;
	long iterations;
	uint64_t rng;
	uint64_t cpu_ns;
	uintptr_t ips[SLOTS][MAX_DEPTH];
	unsigned n[SLOTS];
};

static pthread_barrier_t start_line;

static uint64_t
now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static __attribute__((noinline)) void
leaf(struct worker *w, int slot, bool capture)
{
	uint64_t addr = 0x200000000ull + (uint64_t)slot * 4096;
	if (capture) {
		w->n[slot] = bp_capture(w->ips[slot], MAX_DEPTH);
		return;
	}
	switch (w->o->mode) {
	case MODE_PAIR:
		bp_free_event(addr);
		bp_alloc_event(addr, 4096);
		break;
	case MODE_UNWIND:
		bp_unwind(MAX_DEPTH);
		break;
	case MODE_INTERN:
		bp_intern(w->ips[slot], w->n[slot]);
		break;
	case MODE_PUSH:
		bp_push(addr);
		bp_push(addr);
		break;
	case MODE_NONE:
		break;
	}
}

static __attribute__((noinline)) int down_b(struct worker *w, int slot, int level, bool capture);

static __attribute__((noinline)) int
down_a(struct worker *w, int slot, int level, bool capture)
{
	volatile int rc = 0;
	if (level <= 1)
		leaf(w, slot, capture);
	else if (level <= 5 && (slot >> (level - 2) & 1))
		rc = down_b(w, slot, level - 1, capture);
	else
		rc = down_a(w, slot, level - 1, capture);
	return rc;
}

static __attribute__((noinline)) int
down_b(struct worker *w, int slot, int level, bool capture)
{
	volatile int rc = 0;
	if (level <= 1)
		leaf(w, slot, capture);
	else if (level <= 5 && (slot >> (level - 2) & 1))
		rc = down_b(w, slot, level - 1, capture);
	else
		rc = down_a(w, slot, level - 1, capture);
	return rc + 0;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	if (w->o->mode == MODE_INTERN)
		for (int s = 0; s < SLOTS; s++)
			down_a(w, s, w->o->depth, true);
	pthread_barrier_wait(&start_line);
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < w->iterations; i++)
		down_a(w, (int)(next_random(&w->rng) % SLOTS), w->o->depth, false);
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	pthread_barrier_wait(&start_line);
	return NULL;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ MODE_PAIR, 1000000, 1, 20, false };
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i];
		if (!strcmp(k, "--stalled")) {
			o->stalled = true;
			continue;
		}
		const char *v = i + 1 < argc ? argv[++i] : NULL;
		if (!v)
			return -1;
		if (!strcmp(k, "--mode")) {
			static const char *const names[] = { "pair", "unwind", "intern", "push",
							     "none" };
			int m = -1;
			for (int j = 0; j < 5; j++)
				if (!strcmp(v, names[j]))
					m = j;
			if (m < 0)
				return -1;
			o->mode = (enum mode)m;
		} else if (!strcmp(k, "--iterations")) {
			o->iterations = atol(v);
		} else if (!strcmp(k, "--threads")) {
			o->threads = atoi(v);
		} else if (!strcmp(k, "--depth")) {
			o->depth = atoi(v);
		} else {
			return -1;
		}
	}
	return o->iterations > 0 && o->threads > 0 && o->threads <= 256 && o->depth >= 1 &&
			       o->depth <= 250 ?
		       0 :
		       -1;
}

/* Room for every event when nobody drains (a pair is two events). */
static unsigned
queue_log2(const struct opts *o)
{
	if (!o->stalled)
		return 16; /* MT_QUEUE_LOG2 in interpose/preload.c */
	unsigned l = 10;
	while (((uint64_t)1 << l) < 2 * (uint64_t)o->iterations + 2 && l < 30)
		l++;
	return l;
}

int
main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s [--mode pair|unwind|intern|push|none] [--iterations N] [--threads T]\n"
			"          [--depth D] [--stalled]\n",
			argv[0]);
		return 64;
	}
	if (!bp_start(queue_log2(&o), o.stalled, MAX_DEPTH)) {
		fprintf(stderr, "bench-producer: cannot set up the queue\n");
		return 1;
	}
	struct worker *w = calloc((size_t)o.threads, sizeof(*w));
	if (!w)
		return 1;
	pthread_barrier_init(&start_line, NULL, (unsigned)o.threads + 1);
	for (int i = 0; i < o.threads; i++) {
		w[i].o = &o;
		w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		w[i].iterations = o.iterations / o.threads + (i < o.iterations % o.threads);
		if (pthread_create(&w[i].thread, NULL, work, &w[i]))
			return 1;
	}
	pthread_barrier_wait(&start_line);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&start_line);
	uint64_t wall = now_ns(CLOCK_MONOTONIC) - t0;
	uint64_t cpu = 0;
	for (int i = 0; i < o.threads; i++) {
		pthread_join(w[i].thread, NULL);
		cpu += w[i].cpu_ns;
	}
	bp_stop();
	printf("iterations=%ld threads=%d depth=%d wall_ns=%llu cpu_ns=%llu wait_ns=%llu "
	       "stacks=%u\n",
	       o.iterations, o.threads, o.depth, (unsigned long long)wall, (unsigned long long)cpu,
	       (unsigned long long)bp_wait_ns(), bp_stack_count());
	free(w);
	return 0;
}
