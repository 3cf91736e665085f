/* fork-child: a process forks after it has used CUDA, as a data loader
 * worker or a multiprocessing pool does. The child cannot use CUDA: like
 * NVIDIA's runtime, the simulated one fails its first call with
 * cudaErrorInitializationError (3). The parent goes on. On the simulated
 * 1 GiB device, in this order:
 *
 *   parent_before  (parent) cudaMalloc(4194304), never freed
 *   main           fork; the parent waits for the child
 *   child_try      (child) cudaMalloc(1048576): fails with
 *                  cudaErrorInitializationError, printed; the child
 *                  exits 0 (exit(), so atexit handlers run)
 *   parent_after   (parent) cudaMalloc(2097152), freed with cudaFree
 *
 * Expected numbers, parent: cudaMalloc 2 (parent_before 4194304,
 * parent_after 2097152), cudaFree 1 (parent_after). Live at exit: 1
 * allocation, 4194304 bytes, parent_before. Peak 6291456 bytes.
 * Child: 1 cudaMalloc of 1048576 bytes that fails with
 * cudaErrorInitializationError (not out of memory); nothing of its own is
 * live at exit, and the parent's allocations are not the child's.
 * Exit status 0 (both); 2 if a CUDA call fails unexpectedly, 4 if the
 * child's call does not fail as expected or the child does not exit 0.
 */
#include "cuda-check.h"

#include <sys/wait.h>
#include <unistd.h>

static void *kept;

static __attribute__((noinline)) void
parent_before(void)
{
	must(cudaMalloc(&kept, (size_t)4 << 20), "parent_before: cudaMalloc");
	printf("parent_before: 4194304 bytes, kept\n");
}

static __attribute__((noinline)) int
child_try(void)
{
	void *p = NULL;
	cudaError_t err = cudaMalloc(&p, (size_t)1 << 20);

	printf("child_try: cudaMalloc: %s\n", cudaGetErrorName(err));
	return err == cudaErrorInitializationError ? 0 : 4;
}

static __attribute__((noinline)) void
parent_after(void)
{
	void *p;

	must(cudaMalloc(&p, (size_t)2 << 20), "parent_after: cudaMalloc");
	must(cudaFree(p), "parent_after: cudaFree");
	printf("parent_after: 2097152 bytes, freed\n");
}

int
main(void)
{
	int status = -1;
	pid_t pid;

	parent_before();
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return PROGRAM_CUDA_FAILED;
	}
	if (pid == 0)
		exit(child_try());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		fprintf(stderr, "the child did not exit\n");
		return 4;
	}
	printf("fork-child: child exited with status %d\n", WEXITSTATUS(status));
	parent_after();
	return WEXITSTATUS(status) == 0 ? 0 : 4;
}
