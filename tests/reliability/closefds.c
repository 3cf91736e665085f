/* closefds: a program that closes file descriptors it did not open, as
 * daemons, sandboxed workers and fork-then-exec helpers do, and then opens
 * its own files, which get the lowest free numbers. memtrace must never
 * read from, write into or close them.
 *
 *   closefds start DIR     close every descriptor (0, 1 and 2 included)
 *                          before the first CUDA call, then open
 *                          DIR/data-0 .. DIR/data-5 (descriptors 0 to 5)
 *   closefds running DIR   make a first CUDA call (the trace starts), then
 *                          close every descriptor from 3 up (the standard
 *                          three stay) and open DIR/data-0 .. data-5
 *                          (descriptors 3 to 8: the numbers memtrace's
 *                          trace and unwinder had)
 *
 * Then: write a known line to each file and rewind it, make 2000
 * cudaMalloc/cudaFree pairs, half of them from a function built without
 * unwind tables (nocfi.c: the unwinder falls back to frame pointers and
 * checks memory as it goes), sleep 150 ms (the writer commits at least
 * every 50 ms), and check that each file is still open, at offset 0, and
 * holds exactly its line.
 *
 * The verdict ("intact", or what changed, one line per file) goes to
 * DIR/verdict and, in "running" mode, to stdout. "start" ends with exit(),
 * "running" with _exit(): what happens to the trace itself there is not
 * this program's question. Exit status 0 when intact, 1 when not, 2 when
 * a CUDA call failed. */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nocfi.h"

#define FILES 6

static char dir[3000];

static void close_from(unsigned first)
{
	if (close_range(first, ~0U, 0) != 0)
		for (int fd = (int)first; fd < 65536; fd++)
			close(fd);
}

static void line_for(int i, char *buf, size_t n)
{
	snprintf(buf, n, "file %d: the program's own data\n", i);
}

static int open_data(int i)
{
	char path[3100], line[128];
	snprintf(path, sizeof(path), "%s/data-%d", dir, i);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		exit(3);
	line_for(i, line, sizeof(line));
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) || lseek(fd, 0, SEEK_SET))
		exit(3);
	return fd;
}

/* What happened to file i, or NULL when nothing did. */
static const char *damage(int fd, int i)
{
	char want[128], got[4096];

	if (fcntl(fd, F_GETFD) == -1)
		return "closed";
	line_for(i, want, sizeof(want));
	ssize_t n = pread(fd, got, sizeof(got), 0);
	struct stat st;
	if (n != (ssize_t)strlen(want) || memcmp(want, got, (size_t)n) || fstat(fd, &st) ||
	    st.st_size != n)
		return "written into";
	if (lseek(fd, 0, SEEK_CUR) != 0)
		return "read from (its offset moved)";
	return NULL;
}

static void allocate(void)
{
	for (int k = 0; k < 2000; k++) {
		void *p;
		cudaError_t err = k % 2 ? cudaMalloc(&p, 4096) : nocfi_cuda_malloc(&p, 4096);
		if (err != cudaSuccess || cudaFree(p) != cudaSuccess)
			exit(2);
	}
}

int main(int argc, char **argv)
{
	int fds[FILES];
	bool running = argc == 3 && !strcmp(argv[1], "running");
	char verdict[4096] = "";

	if (argc != 3 || (!running && strcmp(argv[1], "start")))
		return 64;
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	if (running) {
		void *p;
		if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
			return 2;
		usleep(100000);
	}
	close_from(running ? 3 : 0);
	for (int i = 0; i < FILES; i++)
		fds[i] = open_data(i);
	allocate();
	usleep(150000);
	for (int i = 0; i < FILES; i++) {
		const char *what = damage(fds[i], i);
		if (what)
			snprintf(verdict + strlen(verdict), sizeof(verdict) - strlen(verdict),
				 "data-%d (descriptor %d): %s\n", i, fds[i], what);
	}
	bool bad = *verdict;
	if (!bad)
		strcpy(verdict, "intact\n");
	char path[3100];
	snprintf(path, sizeof(path), "%s/verdict", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, verdict, strlen(verdict)) < 0)
			bad = true;
		close(fd);
	}
	if (!running)
		exit(bad);
	fputs(verdict, stdout);
	fflush(stdout);
	_exit(bad);
}
