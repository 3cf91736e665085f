/* For alloc_scenarios.py: threads that Python did not start. One allocates
 * (its stack must have native frames only); the other calls back into
 * Python (a ctypes callback makes a thread state for it on the way in).
 * An allocator with a mutex, as PyTorch's.
 * For tests/bench/python-frames.py: timed allocation loops, on the calling
 * thread or on a new thread some native frames deep. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

/* Exported: ctypes calls the last two; the first two name the threads'
 * frames in the trace. */
void *native_alloc_main(void *arg);
void *native_call_main(void *arg);
int native_thread_alloc(size_t bytes);
int native_thread_call(int (*callback)(void));
int locked_alloc(size_t bytes, unsigned hold_us);
double bench_alloc_loop(int n, size_t bytes);
double bench_native_thread(int n, size_t bytes, int depth);

struct job {
	size_t bytes;
	int (*callback)(void);
	int rc;
};

__attribute__((noinline)) void *native_alloc_main(void *arg)
{
	struct job *j = arg;
	void *p;
	j->rc = cudaMalloc(&p, j->bytes);
	return NULL;
}

__attribute__((noinline)) void *native_call_main(void *arg)
{
	struct job *j = arg;
	j->rc = j->callback();
	return NULL;
}

static int run(void *(*fn)(void *), struct job *j)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, j) != 0)
		return -1;
	pthread_join(t, NULL);
	return j->rc;
}

int native_thread_alloc(size_t bytes)
{
	struct job j = { .bytes = bytes };
	return run(native_alloc_main, &j);
}

int native_thread_call(int (*callback)(void))
{
	struct job j = { .callback = callback };
	return run(native_call_main, &j);
}

/* Like PyTorch's caching allocator: cudaMalloc with the allocator's mutex
 * held, after holding it for hold_us. A thread that calls this with the
 * GIL held waits for the mutex with the GIL held: if memtrace took the GIL
 * in its hook on the thread inside, the two would wait for each other. */
static pthread_mutex_t allocator_mutex = PTHREAD_MUTEX_INITIALIZER;

int locked_alloc(size_t bytes, unsigned hold_us)
{
	void *p;
	pthread_mutex_lock(&allocator_mutex);
	usleep(hold_us);
	int rc = cudaMalloc(&p, bytes);
	pthread_mutex_unlock(&allocator_mutex);
	return rc;
}

/* ---- benchmark loops: nanoseconds per cudaMalloc + cudaFree, -1 on error ---- */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double bench_alloc_loop(int n, size_t bytes)
{
	double start = now_ns();
	for (int i = 0; i < n; i++) {
		void *p;
		if (cudaMalloc(&p, bytes) != 0 || cudaFree(p) != 0)
			return -1;
	}
	return (now_ns() - start) / n;
}

struct bench_job {
	int n, depth;
	size_t bytes;
	double ns;
};

/* depth native frames (no tail calls: the result is used after the call) */
static __attribute__((noinline)) double nest(struct bench_job *j, int depth)
{
	if (depth <= 0)
		return bench_alloc_loop(j->n, j->bytes);
	double r = nest(j, depth - 1);
	__asm__ volatile("" : : "g"(&r) : "memory");
	return r;
}

static void *bench_thread_main(void *arg)
{
	struct bench_job *j = arg;
	j->ns = nest(j, j->depth);
	return NULL;
}

double bench_native_thread(int n, size_t bytes, int depth)
{
	struct bench_job j = { .n = n, .depth = depth, .bytes = bytes, .ns = -1 };
	pthread_t t;
	if (pthread_create(&t, NULL, bench_thread_main, &j) != 0)
		return -1;
	pthread_join(t, NULL);
	return j.ns;
}
