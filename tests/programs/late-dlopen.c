/* late-dlopen: `import torch`'s way. The program starts threads before
 * any CUDA library is loaded, then dlopens libcudart.so.13 with RTLD_LOCAL
 * (as Python imports an extension module), makes its first CUDA call, and
 * starts more threads. All allocate through pointers taken with dlsym on
 * that handle; the program is not linked against CUDA. The threads take
 * turns (thread k runs only after thread k - 1 is done), so the order and
 * the peak are fixed. On the simulated 1 GiB device:
 *
 *   main               starts threads 1 and 2, which wait; dlopens
 *                      libcudart.so.13
 *   first_cuda_call    (main thread) cudaMalloc(1048576), cudaFree
 *   main               starts threads 3 and 4, then lets 1..4 run in turn
 *   early_thread_alloc (threads 1, 2: created before CUDA was loaded)
 *                      cudaMalloc(k x 1048576), cudaFree, k = thread number
 *   late_thread_alloc  (threads 3, 4: created after the first CUDA call)
 *                      the same
 *
 * Expected numbers:
 *   cudaMalloc 5, cudaFree 5, from 5 threads (main + 4).
 *   Requested bytes: first_cuda_call 1048576; early_thread_alloc 3145728
 *   (1048576 + 2097152); late_thread_alloc 7340032 (3145728 + 4194304);
 *   11534336 in all.
 *   Live at exit: nothing. Peak: 4194304 bytes (thread 4), one block at a
 *   time.
 *   Exit status 0; 2 if a CUDA call fails, 3 if libcudart.so.13 or one of
 *   its functions cannot be found.
 */
#include "cuda-check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#define THREADS 4
#define EARLY 2
#define UNIT ((size_t)1 << 20)

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);

static malloc_fn rt_malloc;
static free_fn rt_free;

/* Whose turn it is: 0 while the threads wait for CUDA to be loaded. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int turn;

static void
wait_turn(int k)
{
	pthread_mutex_lock(&lock);
	while (turn != k)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

static void
pass_turn(int next)
{
	pthread_mutex_lock(&lock);
	turn = next;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void
alloc_and_free(int k, const char *who)
{
	void *p;

	must_dl(rt_malloc(&p, (size_t)k * UNIT), who);
	must_dl(rt_free(p), who);
}

static __attribute__((noinline)) void
early_thread_alloc(int k)
{
	alloc_and_free(k, "early_thread_alloc");
	printf("thread %d (started before CUDA): %zu bytes, freed\n", k, (size_t)k * UNIT);
}

static __attribute__((noinline)) void
late_thread_alloc(int k)
{
	alloc_and_free(k, "late_thread_alloc");
	printf("thread %d (started after CUDA): %zu bytes, freed\n", k, (size_t)k * UNIT);
}

static void *
worker(void *arg)
{
	int k = (int)(intptr_t)arg;

	wait_turn(k);
	if (k <= EARLY)
		early_thread_alloc(k);
	else
		late_thread_alloc(k);
	pass_turn(k + 1);
	return NULL;
}

static void *
symbol(void *h, const char *name)
{
	void *fn = dlsym(h, name);

	if (!fn) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(3);
	}
	return fn;
}

static __attribute__((noinline)) void
load_runtime(void)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen libcudart.so.13: %s\n", dlerror());
		exit(3);
	}
	rt_malloc = (malloc_fn)symbol(h, "cudaMalloc");
	rt_free = (free_fn)symbol(h, "cudaFree");
	printf("late-dlopen: libcudart.so.13 loaded\n");
}

static __attribute__((noinline)) void
first_cuda_call(void)
{
	alloc_and_free(1, "first_cuda_call");
	printf("first_cuda_call: %zu bytes, freed\n", UNIT);
}

static void
start(pthread_t *t, int k)
{
	if (pthread_create(t, NULL, worker, (void *)(intptr_t)k) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		exit(PROGRAM_CUDA_FAILED);
	}
}

int
main(void)
{
	pthread_t t[THREADS];

	for (int k = 1; k <= EARLY; k++)
		start(&t[k - 1], k);
	printf("late-dlopen: %d threads started before CUDA\n", EARLY);
	fflush(stdout);
	load_runtime();
	first_cuda_call();
	for (int k = EARLY + 1; k <= THREADS; k++)
		start(&t[k - 1], k);
	printf("late-dlopen: %d threads started after the first CUDA call\n", THREADS - EARLY);
	fflush(stdout);
	pass_turn(1);
	for (int k = 0; k < THREADS; k++)
		pthread_join(t[k], NULL);
	printf("late-dlopen: all %d threads done\n", THREADS);
	return 0;
}
