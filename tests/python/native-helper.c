/* For alloc_scenarios.py: threads that Python did not start. One allocates
 * (its stack must have native frames only); the other calls back into
 * Python (a ctypes callback makes a thread state for it on the way in). */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>

/* Exported: ctypes calls the last two; the first two name the threads'
 * frames in the trace. */
void *native_alloc_main(void *arg);
void *native_call_main(void *arg);
int native_thread_alloc(size_t bytes);
int native_thread_call(int (*callback)(void));

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
