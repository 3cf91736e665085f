/* Flight mode's disk budget (MEMTRACE_FLIGHT): how the bound is shared
 * between the main file and the write-ahead log, the file's settings
 * that keep it there, the disk reserved up front, and after each commit
 * how far the main file is past its share: trace-live.c then drops the
 * ring's oldest chunks (live-flight.h). */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* Flight mode's settings of the file (its log's size, no waiting for the
 * disk): before the first transaction. */
bool mt_live_pragmas(sqlite3 *db, uint64_t bound);

/* Flight mode's disk, before the first transaction: the bound reserved
 * up front (main file and log; the sizes they show do not change), so
 * that a disk that fills later costs no commit. Where the disk has less
 * than the bound, the bound is halved until it fits (said); returns the
 * bound to keep. Where the file system cannot reserve, the bound. */
uint64_t mt_live_reserve(const char *path, uint64_t bound);

/* The main file's share of the bound: the ring's budget, and SQLite's
 * chunk (it grows by all of it at once). */
uint64_t mt_live_main_share(uint64_t bound);

/* The main file within its share, measured after each commit. */
struct mt_disk {
	uint64_t bound, budget; /* MEMTRACE_FLIGHT; the main file's share of it */
	uint64_t used_after, max_commit; /* bytes used after the last trim; the most a commit added */
	uint64_t high; /* the mark past which the ring gives back */
	bool over_told;
	sqlite3_stmt *pragma[3];
};
/* False when its statements do not prepare. */
bool mt_disk_init(struct mt_disk *d, sqlite3 *db, uint64_t bound);
void mt_disk_fini(struct mt_disk *d);
/* After a commit: true when the main file's bytes in use (*used) are past
 * the high mark, and the ring's oldest chunks are to go until they are
 * under *low. */
bool mt_disk_over(struct mt_disk *d, uint64_t *used, uint64_t *low);
/* After the chunks went (ring_empty: none is left): measured again, and
 * said once when what must stay takes more than the share. */
void mt_disk_after(struct mt_disk *d, bool ring_empty);
