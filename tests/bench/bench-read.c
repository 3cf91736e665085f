/* bench-read TRACE --raw|--pages|--sql: how fast the reporter's reader
 * alone goes, against what bounds it (docs/performance.md, "The
 * reporter"). --raw reads the file's bytes (from the page cache, once it
 * is warm) in 1 MiB blocks; --pages reads the events as the reporter does,
 * allocs and frees decoded from the file's pages (trace-rows.c); --sql the
 * same through SQLite's rows. No model, one thread. Prints
 *   events=N bytes=B seconds=S
 * with the file's size in bytes. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void count(void *ctx, const struct trace_event *ev)
{
	uint64_t *n = ctx;

	(void)ev;
	(*n)++;
}

static int read_raw(const char *path, uint64_t *bytes)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		*bytes += (uint64_t)n;
	close(fd);
	return n < 0 ? -1 : 0;
}

static int read_events(const char *path, bool sql, uint64_t *events)
{
	struct trace t = { 0 };
	int rc = -1;

	if (trace_open(&t, path, NULL) == 0 && trace_load(&t) == 0) {
		t.sql_rows = sql;
		rc = trace_read_events(&t, count, events);
	}
	if (rc < 0)
		fprintf(stderr, "bench-read: %s\n", t.error);
	trace_close(&t);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t events = 0, bytes = 0;
	struct stat st;
	double t0;
	int rc;

	if (argc != 3 || stat(argv[1], &st) < 0) {
		fprintf(stderr, "usage: bench-read TRACE --raw|--pages|--sql\n");
		return 64;
	}
	t0 = now();
	if (strcmp(argv[2], "--raw") == 0)
		rc = read_raw(argv[1], &bytes);
	else
		rc = read_events(argv[1], strcmp(argv[2], "--sql") == 0, &events);
	if (rc < 0)
		return 1;
	printf("events=%" PRIu64 " bytes=%lld seconds=%.6f\n", events, (long long)st.st_size,
	       now() - t0);
	return 0;
}
