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
 *   _Exit        _Exit(8)
 *   busy-_exit   _exit(5) from a thread while 4 others allocate, as busy-exit
 *   signal-_exit _exit(10) from a SIGUSR1 handler, the signal sent to one
 *                of 4 threads that allocate, free and run out of memory
 *                (so it may land inside a hook)
 *   vfork        a vfork child _exits (it shares memory with the parent,
 *                whose trace must go on), then exit(11)
 *   abort        abort() (SIGABRT)
 *   segv         a write through a null pointer (SIGSEGV)
 *   kill         raise(SIGKILL)
 *   term         raise(SIGTERM), whose default ends the process
 *   fpe          an integer division by zero (SIGFPE)
 * Exit statuses are those; the signals kill the process. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static void *_exit_from_thread(void *arg)
{
	_exit((int)(size_t)arg);
}

static void _exit_on_signal(int sig)
{
	(void)sig;
	_exit(10);
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
	if (!strcmp(mode, "busy-_exit") || !strcmp(mode, "signal-_exit")) {
		pthread_t busy_threads[4];
		signal(SIGUSR1, _exit_on_signal);
		for (int i = 0; i < 4; i++)
			pthread_create(&busy_threads[i], NULL, busy, NULL);
		usleep(20000);
		if (!strcmp(mode, "signal-_exit"))
			pthread_kill(busy_threads[1], SIGUSR1);
		else
			pthread_create(&t, NULL, _exit_from_thread, (void *)5);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "vfork")) {
		pid_t child = vfork();
		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		hold_buffers();
		exit(11);
	}
	if (!strcmp(mode, "_exit"))
		_exit(6);
	if (!strcmp(mode, "_Exit"))
		_Exit(8);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv")) {
		*nowhere = 1;
		exit(7); /* not reached */
	}
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	if (!strcmp(mode, "term"))
		raise(SIGTERM);
	if (!strcmp(mode, "fpe")) {
		volatile int seven = 7, zero = 0;
		exit(seven / zero); /* SIGFPE: the division traps */
	}
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
