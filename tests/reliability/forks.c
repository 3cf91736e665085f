/* forks: fork() under memtrace, in two shapes.
 *
 *   forks threads N   4 threads allocate and free without pause while the
 *                     main thread forks N times in a row (after its own
 *                     first cudaMalloc). Child i, with the parent's
 *                     threads frozen mid-call: if i is even it calls
 *                     cudaMalloc and cudaFree (on the simulated device a
 *                     child of an initialised process gets
 *                     cudaErrorInitializationError, as on a real one) and
 *                     prints the results; if i is odd it makes no CUDA call.
 *                     Then exit(0). The parent waits for each child.
 *   forks chain N     the parent, which never initialises CUDA before,
 *                     forks N children one after the other; each makes 10
 *                     cudaMalloc(4096)/cudaFree pairs and one 2 TiB
 *                     cudaMalloc (out of memory), then exit(0). At the
 *                     end the parent makes one cudaMalloc/cudaFree pair.
 *
 * stdout: one line per child ("child I: ..."), then the parent's counts;
 * the same with and without the preload. Exit status 0; 1 when a child
 * failed or did not exit 0; 2 when a CUDA call failed unexpectedly. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4

static atomic_bool stop;
static unsigned long pairs[WORKERS];

static void must(cudaError_t err, const char *what)
{
	if (err != cudaSuccess) {
		fprintf(stderr, "forks: %s: %s\n", what, cudaGetErrorName(err));
		exit(2);
	}
}

static void *churn(void *arg)
{
	size_t i = (size_t)arg;
	while (!atomic_load(&stop)) {
		void *p;
		must(cudaMalloc(&p, 512 * (1 + pairs[i] % 8)), "worker cudaMalloc");
		must(cudaFree(p), "worker cudaFree");
		pairs[i]++;
	}
	return NULL;
}

static int wait_child(pid_t pid, int i)
{
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "forks: child %d ended with status 0x%x\n", i, status);
		return 1;
	}
	return 0;
}

static void threaded_child(int i)
{
	if (i % 2 == 0) {
		void *p = NULL;
		cudaError_t a = cudaMalloc(&p, 4096);
		cudaError_t f = cudaFree(p);
		printf("child %d: cudaMalloc %s, cudaFree %s\n", i, cudaGetErrorName(a),
		       cudaGetErrorName(f));
	} else {
		printf("child %d: no CUDA\n", i);
	}
	fflush(stdout);
	exit(0);
}

static int threads(int n)
{
	pthread_t t[WORKERS];
	void *p;
	int bad = 0;

	must(cudaMalloc(&p, 4096), "cudaMalloc");
	for (size_t i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	for (int i = 0; i < n; i++) {
		usleep(2000);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			threaded_child(i);
		bad |= pid < 0 || wait_child(pid, i);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	must(cudaFree(p), "cudaFree");
	printf("parent: %d forks, workers ran\n", n);
	for (int i = 0; i < WORKERS; i++)
		fprintf(stderr, "worker %d: %lu pairs\n", i, pairs[i]);
	return bad;
}

static void chain_child(int i)
{
	void *p;
	for (int k = 0; k < 10; k++) {
		must(cudaMalloc(&p, 4096), "child cudaMalloc");
		must(cudaFree(p), "child cudaFree");
	}
	if (cudaMalloc(&p, (size_t)2 << 40) != cudaErrorMemoryAllocation)
		exit(2);
	printf("child %d: 10 pairs and an out-of-memory failure\n", i);
	fflush(stdout);
	exit(0);
}

static int chain(int n)
{
	void *p;
	int bad = 0;

	for (int i = 0; i < n; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			chain_child(i);
		bad |= pid < 0 || wait_child(pid, i);
	}
	must(cudaMalloc(&p, 4096), "parent cudaMalloc");
	must(cudaFree(p), "parent cudaFree");
	printf("parent: %d children, then one pair\n", n);
	return bad;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (argc > 2 && !strcmp(argv[1], "threads"))
		return threads(n);
	if (argc > 2 && !strcmp(argv[1], "chain"))
		return chain(n);
	fprintf(stderr, "usage: forks threads|chain N\n");
	return 64;
}
