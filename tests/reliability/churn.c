/* churn: THREADS threads allocate and free on the simulated device for
 * SECONDS (or ITERATIONS each), for the durability (SIGKILL) and load tests.
 *
 *   churn THREADS SECONDS [--iterations N] [--keep K] [--pace-us US]
 *         [--oom-every N] [--log] [--end-after-ms MS _exit|abort]
 *
 * Each thread keeps up to K allocations live (a ring, default 4): every
 * iteration it frees the oldest when the ring is full, then allocates
 * 512 * (1 + i % 8) bytes. With --oom-every N, thread 0 also asks for 2 TiB
 * every N iterations (an out-of-memory failure on any simulated device).
 * At the end every thread frees what it holds.
 *
 * --log writes one line per call to stdout as soon as the call has
 * returned, with write(2) so that the line is in the file even if the
 * process is killed right after:
 *   A TID NS   a cudaMalloc returned success at CLOCK_MONOTONIC NS
 *   F TID NS   a cudaFree returned success
 *   O TID NS   a cudaMalloc returned cudaErrorMemoryAllocation
 * The first line is "ready PID" once every thread has started.
 *
 * --end-after-ms MS HOW (with --log): MS ms after "ready", the main thread
 * writes "E NS" (CLOCK_MONOTONIC) and ends the process with _exit(0),
 * abort(), a write through a null pointer (segv), raise(SIGTERM) (term)
 * or raise(SIGKILL) (kill) while the threads go on: every call logged before that line
 * had returned before the process began to end.
 *
 * At the end, stdout gets one line per thread (in thread order, so it is
 * the same with and without the preload when run by ITERATIONS):
 *   thread I: allocs A frees F ooms O
 * and a total line; stderr gets "tid I TID" per thread and the process's
 * peak resident memory, "vm_hwm_kb N" (from /proc/self/status).
 * Exit status 0; 2 if a CUDA call fails unexpectedly. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define MAX_KEEP 1024

struct worker {
	pthread_t thread;
	int index;
	pid_t tid;
	unsigned long allocs, frees, ooms;
};

static int nthreads = 1;
static double seconds = 1;
static long iterations = -1;
static int keep = 4;
static long pace_us;
static long oom_every;
static bool log_calls;
static long end_after_ms = -1;
static const char *end_how;
static int *volatile nowhere; /* NULL, unknown to the compiler */
static struct worker workers[MAX_THREADS];
static atomic_int started;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void log_call(char what, pid_t tid)
{
	char line[64];
	int n;

	if (!log_calls)
		return;
	n = snprintf(line, sizeof(line), "%c %d %lld\n", what, (int)tid, now_ns());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		exit(4);
}

static void fail(const char *what, cudaError_t err)
{
	fprintf(stderr, "churn: %s failed: %s\n", what, cudaGetErrorName(err));
	exit(2);
}

static __attribute__((noinline)) void release(struct worker *w, void *p)
{
	cudaError_t err = cudaFree(p);
	if (err != cudaSuccess)
		fail("cudaFree", err);
	w->frees++;
	log_call('F', w->tid);
}

static __attribute__((noinline)) void *acquire(struct worker *w, size_t bytes)
{
	void *p;
	cudaError_t err = cudaMalloc(&p, bytes);
	if (err != cudaSuccess)
		fail("cudaMalloc", err);
	w->allocs++;
	log_call('A', w->tid);
	return p;
}

static __attribute__((noinline)) void too_much(struct worker *w)
{
	void *p;
	cudaError_t err = cudaMalloc(&p, (size_t)2 << 40);
	if (err != cudaErrorMemoryAllocation)
		fail("the 2 TiB cudaMalloc (expected to run out of memory)", err);
	cudaGetLastError();
	w->ooms++;
	log_call('O', w->tid);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	void *ring[MAX_KEEP];
	long held = 0, oldest = 0;
	long long end = now_ns() + (long long)(seconds * 1e9);

	w->tid = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < nthreads)
		usleep(100);
	for (long i = 0; iterations < 0 ? now_ns() < end : i < iterations; i++) {
		if (held == keep) {
			release(w, ring[oldest]);
			oldest = (oldest + 1) % keep;
			held--;
		}
		ring[(oldest + held) % keep] = acquire(w, 512 * (size_t)(1 + i % 8));
		held++;
		if (oom_every && w->index == 0 && i % oom_every == oom_every - 1)
			too_much(w);
		if (pace_us)
			usleep((useconds_t)pace_us);
	}
	for (; held; held--, oldest = (oldest + 1) % keep)
		release(w, ring[oldest]);
	return NULL;
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long arg_long(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < min || v > max) {
		fprintf(stderr, "churn: bad number %s\n", s);
		exit(64);
	}
	return v;
}

static void end_now(void)
{
	char line[40];
	usleep((useconds_t)end_after_ms * 1000);
	int n = snprintf(line, sizeof(line), "E %lld\n", now_ns());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(4);
	if (!strcmp(end_how, "abort"))
		abort();
	if (!strcmp(end_how, "segv"))
		*nowhere = 1;
	if (!strcmp(end_how, "term"))
		raise(SIGTERM);
	if (!strcmp(end_how, "kill"))
		raise(SIGKILL);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long allocs = 0, frees = 0, ooms = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: churn THREADS SECONDS [--iterations N] [--keep K] "
				"[--pace-us US] [--oom-every N] [--log]\n");
		return 64;
	}
	nthreads = (int)arg_long(argv[1], 1, MAX_THREADS);
	seconds = atof(argv[2]);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--log"))
			log_calls = true;
		else if (i + 1 < argc && !strcmp(argv[i], "--iterations"))
			iterations = arg_long(argv[++i], 0, 1L << 40);
		else if (i + 1 < argc && !strcmp(argv[i], "--keep"))
			keep = (int)arg_long(argv[++i], 1, MAX_KEEP);
		else if (i + 1 < argc && !strcmp(argv[i], "--pace-us"))
			pace_us = arg_long(argv[++i], 0, 1000000);
		else if (i + 1 < argc && !strcmp(argv[i], "--oom-every"))
			oom_every = arg_long(argv[++i], 1, 1L << 40);
		else if (i + 2 < argc && !strcmp(argv[i], "--end-after-ms")) {
			end_after_ms = arg_long(argv[++i], 0, 1L << 30);
			end_how = argv[++i];
		}
		else {
			fprintf(stderr, "churn: unknown argument %s\n", argv[i]);
			return 64;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		workers[i].index = i;
		if (pthread_create(&workers[i].thread, NULL, work, &workers[i])) {
			fprintf(stderr, "churn: pthread_create failed\n");
			return 2;
		}
	}
	if (log_calls) {
		while (atomic_load(&started) < nthreads)
			usleep(100);
		char line[32];
		int n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
		if (write(STDOUT_FILENO, line, (size_t)n) != n)
			return 4;
		if (end_after_ms >= 0)
			end_now();
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(workers[i].thread, NULL);
	for (int i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];
		if (!log_calls)
			printf("thread %d: allocs %lu frees %lu ooms %lu\n", i, w->allocs, w->frees,
			       w->ooms);
		fprintf(stderr, "tid %d %d\n", i, (int)w->tid);
		allocs += w->allocs;
		frees += w->frees;
		ooms += w->ooms;
	}
	if (!log_calls)
		printf("total: allocs %lu frees %lu ooms %lu\n", allocs, frees, ooms);
	fprintf(stderr, "vm_hwm_kb %ld\n", vm_hwm_kb());
	return 0;
}
