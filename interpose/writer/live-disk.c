/* Flight mode's disk budget (live-disk.h). */
#include "live-disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "util-size.h"

/* The write-ahead log has twice this of the bound, and is checkpointed
 * at half of it: a commit, or a reader holding a snapshot, can take it
 * past (docs/usage.md). The main file gets the rest,
 * reserved at once as SQLite's chunk, so that the disk it needs is
 * taken at the start. */
static uint64_t wal_share(uint64_t bound)
{
	uint64_t w = bound / 8;
	return w < (128u << 10) ? 128u << 10 : w > (8u << 20) ? 8u << 20 : w;
}

uint64_t mt_live_main_share(uint64_t bound)
{
	uint64_t wal = wal_share(bound);
	return (bound > 3 * wal ? bound - 2 * wal : bound / 3) & ~(uint64_t)0xffff;
}

/* What a reservation leaves free: the log's index and SQLite's own. */
#define RESERVE_SLACK (256u << 10)

/* [from, from + len) of the file given back to the disk (past its end:
 * its size does not change). */
static void punch(const char *path, uint64_t from, uint64_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > from)
		from = (uint64_t)st.st_size;
	(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)len);
	close(fd);
}

/* len bytes of the file reserved, its size unchanged; errno kept. */
static bool reserve(const char *path, uint64_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int err = 0;
	if (fd < 0)
		return false;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)len) != 0)
		err = errno;
	close(fd);
	errno = err;
	return err == 0;
}

uint64_t mt_live_reserve(const char *path, uint64_t bound)
{
	char wal[MT_PATH_MAX + 8];
	uint64_t b = bound;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	for (;;) {
		uint64_t log = 2 * wal_share(b), main = mt_live_main_share(b);
		/* with room to spare for the log's index (-shm) and SQLite's
		 * temporary files: the slack is reserved, then given back */
		if (reserve(path, main + RESERVE_SLACK) && reserve(wal, log)) {
			punch(path, main, RESERVE_SLACK);
			break;
		}
		int err = errno;
		/* a failed reservation may keep part of itself */
		punch(path, 0, bound + RESERVE_SLACK);
		punch(wal, 0, bound);
		if (err != ENOSPC && err != EDQUOT)
			return bound; /* cannot reserve here (EOPNOTSUPP): the bound as asked */
		if (b / 2 < MT_FLIGHT_MIN) {
			mt_log(MT_ENV, "the disk of %s has not even %llu KiB free: the flight trace "
				       "will stop when it fills",
			       path, (unsigned long long)(MT_FLIGHT_MIN >> 10));
			return bound;
		}
		b /= 2;
	}
	if (b < bound)
		mt_log(MT_ENV, "the disk of %s has less than the %llu KiB of MEMTRACE_FLIGHT free: "
			       "the flight trace keeps within %llu KiB",
		       path, (unsigned long long)(bound >> 10), (unsigned long long)(b >> 10));
	return b;
}

bool mt_live_pragmas(sqlite3 *db, uint64_t bound)
{
	char sql[160];
	uint64_t wal = wal_share(bound);
	if (!bound)
		return true;
	/* synchronous=OFF: a commit is in the OS when it returns, which is
	 * what a killed process needs; checkpoints, which the small log
	 * makes frequent, do not wait for the disk */
	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_size_limit=%llu; PRAGMA wal_autocheckpoint=%llu; "
		 "PRAGMA synchronous=OFF;",
		 (unsigned long long)(2 * wal), (unsigned long long)(wal / 8192 ? wal / 8192 : 1));
	/* the main file grows by its whole share at once, and a checkpoint's
	 * truncation keeps it (a chunk is never cut) */
	int chunk = (int)mt_live_main_share(bound);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK &&
	       sqlite3_file_control(db, "main", SQLITE_FCNTL_CHUNK_SIZE, &chunk) == SQLITE_OK;
}

/* ---- the main file's share, kept after each commit ---- */

bool mt_disk_init(struct mt_disk *d, sqlite3 *db, uint64_t bound)
{
	static const char *const pragmas[3] = {
		"PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size",
	};
	*d = (struct mt_disk){ .bound = bound, .budget = mt_live_main_share(bound) };
	for (int i = 0; i < 3; i++) {
		if (sqlite3_prepare_v2(db, pragmas[i], -1, &d->pragma[i], NULL) != SQLITE_OK)
			return false;
	}
	return true;
}

void mt_disk_fini(struct mt_disk *d)
{
	for (int i = 0; i < 3; i++)
		sqlite3_finalize(d->pragma[i]);
}

static int64_t pragma(struct mt_disk *d, int i)
{
	sqlite3_stmt *s = d->pragma[i];
	int64_t v = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return v;
}

/* Pages in use in the main file: what deleting rows gives back (freed
 * pages are reused, so the file stops growing at its high-water mark). */
static uint64_t used_bytes(struct mt_disk *d)
{
	int64_t pages = pragma(d, 0), free_pages = pragma(d, 1), size = pragma(d, 2);
	if (pages < 0 || free_pages < 0 || size <= 0)
		return 0;
	return (uint64_t)(pages - free_pages) * (uint64_t)size;
}

bool mt_disk_over(struct mt_disk *d, uint64_t *used, uint64_t *low)
{
	/* the main file must never pass its one chunk: room is left for the
	 * largest commit seen, twice */
	*used = used_bytes(d);
	if (*used > d->used_after && *used - d->used_after > d->max_commit)
		d->max_commit = *used - d->used_after;
	d->high = d->budget > 4 * d->max_commit ? d->budget - 2 * d->max_commit : d->budget / 2;
	*low = d->high - d->budget / 8;
	d->used_after = *used;
	return *used > d->high;
}

void mt_disk_after(struct mt_disk *d, bool ring_empty)
{
	uint64_t used = d->used_after = used_bytes(d);
	if (used > d->high && ring_empty && !d->over_told) {
		mt_log(MT_USER, "the live allocations and the events flight mode keeps take %s, "
				"more than MEMTRACE_FLIGHT=%s allows; they are kept, and the trace "
				"grows past it (a larger MEMTRACE_FLIGHT keeps a ring of recent events "
				"too)",
		       fmt_size(used).s, fmt_size(d->bound).s);
		d->over_told = true;
	}
}
