/* The ring file, TRACE-ring (trace/trace-ring.h): the event queue's cells
 * in a file mapped MAP_SHARED beside the trace, so that an event pushed
 * before a SIGKILL is in the page cache after it, and memtrace recover
 * (or the first report) can move it into the trace. Created like the
 * trace's own files (O_EXCL, O_NOFOLLOW, 0600), its descriptor high and
 * guarded (fd-guard.c). The process holds a POSIX lock on the header
 * while it lives: the kernel drops it when the process dies (never
 * inherited by a fork child), so a reader that can lock the file knows
 * that no writer is left. Removed at a clean close (trace-writer.c). */
#include "core.h"
#include "trace-ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ring_path(const char *trace_path, char *out, size_t outsz)
{
	int n = snprintf(out, outsz, "%s-ring", trace_path);
	return n > 0 && (size_t)n < outsz;
}

int mt_ring_create(const char *trace_path, unsigned log2_capacity, uint64_t start_ns,
		   uint64_t id)
{
	char path[MT_PATH_MAX + 8];
	uint64_t cap = 1ull << log2_capacity;
	off_t size = (off_t)(MT_RING_HEADER_SIZE + cap * MT_RING_CELL_SIZE);
	struct rlimit fsize;
	if (!ring_path(trace_path, path, sizeof(path)))
		return -1;
	/* a file size limit below it: growing the file would raise SIGXFSZ
	 * on the program's thread, whose default kills it */
	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
	    fsize.rlim_cur < (rlim_t)size) {
		errno = EFBIG;
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	fd = mt_fdguard_adopt(fd, MT_FD_TRACE);
	struct mt_ring_header h = {
		.magic = MT_RING_MAGIC,
		.version = MT_RING_VERSION,
		.cell_size = MT_RING_CELL_SIZE,
		.capacity = cap,
		.id = id,
		.pid = (uint64_t)getpid(),
		.start_ns = start_ns,
	};
	/* the lock after the adoption: closing the descriptor it was taken
	 * on would drop it */
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	/* Its blocks allocated now, not at the first store into a page: a
	 * store into a mapped file whose file system is full raises SIGBUS
	 * (posix_fallocate writes zeros where the file system cannot
	 * allocate) */
	int rc = posix_fallocate(fd, 0, size);
	if (rc)
		errno = rc;
	if (rc || pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    fcntl(fd, F_SETLK, &lock) != 0) {
		int saved = errno;
		mt_fdguard_close(fd);
		unlink(path);
		errno = saved;
		return -1;
	}
	return fd;
}

void mt_ring_remove(const char *trace_path)
{
	char path[MT_PATH_MAX + 8];
	if (ring_path(trace_path, path, sizeof(path)))
		unlink(path);
}
