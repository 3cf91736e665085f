/* fdguard: a program that touches the trace's own descriptors, which it
 * never opened (it finds them in /proc/self/fd). memtrace must behave as
 * if they were not there, and never write into the program's files.
 *
 *   fdguard close TRACE       close() each of the trace's descriptors: each
 *                             must fail with EBADF and stay open
 *   fdguard closefrom TRACE   closefrom(3): the trace's descriptors stay
 *                             open
 *   fdguard dup2 TRACE FILE   dup2() a file of its own onto the trace's
 *                             -wal descriptor and write through that
 *                             number: the file must hold only the
 *                             program's lines (memtrace stops tracing)
 *
 * Each mode first makes a CUDA call (the trace starts), and afterwards
 * 1000 cudaMalloc/cudaFree pairs, sleeps 150 ms (the writer commits at
 * least every 50 ms) and ends with exit(). Prints what it saw; exit status
 * 0 when as expected, 1 when not, 2 when a CUDA call failed, 64 for bad
 * arguments. */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FDS 16

static char trace[PATH_MAX];

static void allocate(int pairs)
{
	for (int k = 0; k < pairs; k++) {
		void *p;
		if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
			exit(2);
	}
}

/* The descriptors open on trace + suffix ("" for any of the trace's
 * files), ascending. */
static int trace_fds(const char *suffix, int *fds)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t len = strlen(trace);
	while (d && (e = readdir(d)) && n < MAX_FDS) {
		char target[PATH_MAX + 16];
		ssize_t t = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (e->d_name[0] == '.' || t < 0 || (size_t)t < len)
			continue;
		target[t] = '\0';
		const char *rest = target + len;
		if (strncmp(target, trace, len) || (*suffix && strcmp(rest, suffix)) ||
		    (!*suffix && *rest && strcmp(rest, "-wal") && strcmp(rest, "-shm")))
			continue;
		int fd = atoi(e->d_name);
		int i = n++;
		for (; i > 0 && fds[i - 1] > fd; i--)
			fds[i] = fds[i - 1];
		fds[i] = fd;
	}
	if (d)
		closedir(d);
	return n;
}

static int try_close(void)
{
	int fds[MAX_FDS], n = trace_fds("", fds), bad = n == 0;
	printf("the trace's descriptors: %d\n", n);
	for (int i = 0; i < n; i++) {
		errno = 0;
		int rc = close(fds[i]);
		int err = errno;
		const char *open = fcntl(fds[i], F_GETFD) == -1 ? "closed" : "still open";
		printf("close: %d %s, %s\n", rc, err == EBADF ? "EBADF" : strerror(err), open);
		bad |= rc != -1 || err != EBADF || fcntl(fds[i], F_GETFD) == -1;
	}
	return bad;
}

static int try_closefrom(void)
{
	int fds[MAX_FDS], n = trace_fds("", fds);
	closefrom(3);
	int after[MAX_FDS], m = trace_fds("", after);
	printf("the trace's descriptors: %d before closefrom(3), %d after\n", n, m);
	return n == 0 || m != n;
}

static int try_dup2(const char *file)
{
	static const char first[] = "the program's first line\n", second[] = "and its second\n";
	int fds[MAX_FDS], n = trace_fds("-wal", fds);
	int mine = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (n != 1 || mine < 0 || write(mine, first, strlen(first)) != (ssize_t)strlen(first))
		return 1;
	int rc = dup2(mine, fds[0]);
	printf("dup2 onto the -wal's descriptor: %s\n", rc == fds[0] ? "done" : strerror(errno));
	close(mine);
	if (rc != fds[0] || write(fds[0], second, strlen(second)) != (ssize_t)strlen(second))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || strlen(argv[2]) >= sizeof(trace))
		return 64;
	strcpy(trace, argv[2]);
	void *p;
	if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
		return 2;
	int bad;
	if (!strcmp(argv[1], "close"))
		bad = try_close();
	else if (!strcmp(argv[1], "closefrom"))
		bad = try_closefrom();
	else if (!strcmp(argv[1], "dup2") && argc == 4)
		bad = try_dup2(argv[3]);
	else
		return 64;
	allocate(1000);
	usleep(150000);
	fflush(stdout);
	exit(bad);
}
