/* exec-child: a CUDA process starts another CUDA program (fork + exec),
 * as a launcher or a test harness does. The child is the `leaks` program
 * (its path is argv[1], else `leaks` next to this program), with its own
 * numbers (leaks.c); its output appears between the parent's lines. On the
 * simulated 1 GiB device, in this order:
 *
 *   parent_alloc  (parent) cudaMalloc(8388608)
 *   main          fork + exec of leaks, wait for it, print its status
 *   parent_free   (parent) cudaFree of parent_alloc's block
 *
 * Expected numbers, parent: cudaMalloc 1 (8388608, parent_alloc), cudaFree
 * 1 (parent_free). Live at exit: nothing. Peak 8388608 bytes.
 * Child: exactly the leaks program's numbers, in a process of its own.
 * Exit status 0; 2 if a CUDA call fails, 4 if leaks cannot be run or does
 * not exit 0.
 */
#include "cuda-check.h"

#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *block;

/* argv[1], or "leaks" in this program's directory. */
static const char *
child_path(int argc, char **argv, char *buf, size_t len)
{
	ssize_t n;
	char *slash;

	if (argc > 1)
		return argv[1];
	n = readlink("/proc/self/exe", buf, len - sizeof("leaks"));
	if (n <= 0)
		return "leaks";
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	strcpy(slash ? slash + 1 : buf, "leaks");
	return buf;
}

static __attribute__((noinline)) void
parent_alloc(void)
{
	must(cudaMalloc(&block, (size_t)8 << 20), "parent_alloc: cudaMalloc");
	printf("parent_alloc: 8388608 bytes\n");
}

static __attribute__((noinline)) void
parent_free(void)
{
	must(cudaFree(block), "parent_free: cudaFree");
	printf("parent_free: freed\n");
}

static int
run(const char *path)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(path, "leaks", (char *)NULL);
		perror(path);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
	char buf[PATH_MAX];
	int status;

	parent_alloc();
	status = run(child_path(argc, argv, buf, sizeof(buf)));
	printf("exec-child: leaks exited with status %d\n", status);
	parent_free();
	return status == 0 ? 0 : 4;
}
