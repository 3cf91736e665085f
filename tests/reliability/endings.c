/* endings: allocations, an out-of-memory failure, then the process ends in
 * the way MODE says. The durability tests read the trace it leaves.
 *
 *   endings MODE [SLEEP_MS]
 *
 * Before ending: hold_buffers makes 3 x cudaMalloc(1 MiB), too_much asks
 * for 2 TiB (an OOM on any simulated device), then the program prints
 * "ending MODE" (flushed) and sleeps SLEEP_MS (default 0), so that the
 * events are older than the writer's commit interval when it ends.
 *
 * MODE:
 *   return       main returns 0
 *   exit         exit(3) from main
 *   thread-exit  exit(4) from a second thread while main waits in pause()
 *   busy-exit    exit(5) from a thread while 4 others allocate, free and
 *                run out of memory as fast as they can
 *   _exit        _exit(6)
 *   abort        abort() (SIGABRT)
 *   segv         a write through a null pointer (SIGSEGV)
 *   kill         raise(SIGKILL)
 * Exit statuses are those; the signals kill the process. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *held[3];
static int *volatile nowhere; /* NULL, unknown to the compiler */

static __attribute__((noinline)) void hold_buffers(void)
{
	for (int i = 0; i < 3; i++)
		if (cudaMalloc(&held[i], (size_t)1 << 20) != cudaSuccess)
			exit(2);
}

static __attribute__((noinline)) void too_much(void)
{
	void *p;
	if (cudaMalloc(&p, (size_t)2 << 40) != cudaErrorMemoryAllocation)
		exit(2);
	cudaGetLastError();
}

static void *exit_from_thread(void *arg)
{
	exit((int)(size_t)arg);
}

static void *busy(void *arg)
{
	(void)arg;
	for (;;) {
		void *p;
		if (cudaMalloc(&p, 4096) == cudaSuccess)
			cudaFree(p);
		too_much();
	}
	return NULL;
}

static void end(const char *mode)
{
	pthread_t t;

	if (!strcmp(mode, "return"))
		return;
	if (!strcmp(mode, "exit"))
		exit(3);
	if (!strcmp(mode, "thread-exit")) {
		pthread_create(&t, NULL, exit_from_thread, (void *)4);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "busy-exit")) {
		for (int i = 0; i < 4; i++)
			pthread_create(&t, NULL, busy, NULL);
		usleep(20000);
		pthread_create(&t, NULL, exit_from_thread, (void *)5);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "_exit"))
		_exit(6);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv")) {
		*nowhere = 1;
		exit(7); /* not reached */
	}
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	fprintf(stderr, "endings: unknown mode %s\n", mode);
	exit(64);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: endings MODE [SLEEP_MS]\n");
		return 64;
	}
	hold_buffers();
	too_much();
	printf("ending %s\n", argv[1]);
	fflush(stdout);
	if (argc > 2)
		usleep((useconds_t)atoi(argv[2]) * 1000);
	end(argv[1]);
	return 0;
}
