/* environ: a program that rewrites its environment before its first CUDA
 * call. memtrace read its settings when it was loaded, so the trace goes
 * where MEMTRACE_OUTPUT said then; the program's environment is exactly
 * what the program made it, with and without memtrace.
 *
 * main: clearenv(), then setenv of MEMTRACE_OUTPUT (to a path in a
 * directory that does not exist), MEMTRACE_QUIET=0, RANK=9 and PROGRAM=1;
 * 10 cudaMalloc(4096)/cudaFree pairs; a second thread meanwhile sets and
 * unsets other variables in a loop (after the first CUDA call: glibc's
 * getenv is not safe against a concurrent setenv); then clearenv() again
 * and 10 more pairs. stdout: the environment after each step, sorted.
 * Exit status 0; 2 when a CUDA call fails. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static atomic_bool stop;

static int compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void show(const char *when)
{
	size_t n = 0;
	char *copy[256];

	for (char **e = environ; e && *e && n < 256; e++)
		copy[n++] = *e;
	qsort(copy, n, sizeof(copy[0]), compare);
	printf("%s: %zu variables\n", when, n);
	for (size_t i = 0; i < n; i++)
		printf("  %s\n", copy[i]);
}

static void pairs(void)
{
	for (int i = 0; i < 10; i++) {
		void *p;
		if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
			exit(2);
	}
}

static void *flip(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		char value[32];
		snprintf(value, sizeof(value), "%lu", i);
		setenv("FLIP", value, 1);
		unsetenv("FLIP");
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	clearenv();
	setenv("MEMTRACE_OUTPUT", "/nonexistent-dir/elsewhere-%p.db", 1);
	setenv("MEMTRACE_QUIET", "0", 1);
	setenv("RANK", "9", 1);
	setenv("PROGRAM", "1", 1);
	show("after clearenv and setenv");
	pairs();
	show("after the first CUDA calls");
	pthread_create(&t, NULL, flip, NULL);
	pairs();
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	clearenv();
	pairs();
	show("after clearenv while tracing");
	return 0;
}
