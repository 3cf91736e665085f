/* The whole run's device bytes live, as a flight trace keeps it (schema
 * 3's timeline table, docs/trace-format.md): the reporter's timeline
 * (report/model/model-timeline.c) made by the writer, so that a trace whose
 * ring holds only the last events still has the run's floor, its drops
 * and, with the live sets trace-live.c writes at the moments it names,
 * its growth.
 *
 * MT_TIMELINE_BUCKETS buckets; bucket i covers [i * width, (i + 1) *
 * width) ns of the trace's time. The width starts at
 * MT_TIMELINE_FIRST_WIDTH_NS and doubles, each bucket taking two, when
 * time runs past the last one; a live set is due every
 * MT_TIMELINE_BUCKETS / MT_TIMELINE_SNAPSHOTS buckets, and a doubling
 * keeps those on the new grid. Per event: a compare or a division.
 * Its rows (tables timeline and meta) are written here; the live sets
 * (live_at_time) by trace-live.c, by site. Writer thread only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live-sql.h"
#include "trace-schema.h"
#include "trace-timeline.h"

#define MT_TIMELINE_FIRST_WIDTH_NS (1 << 16)


struct mt_timeline {
	int64_t width;
	int64_t first_ns, last_ns; /* the first event's time; the latest */
	int64_t next_snap_ns;	   /* when the next live set is due */
	bool started;
	uint64_t last_live;
	/* to write: buckets [dirty_lo, dirty_hi); all of them, over a
	 * cleared table, after a doubling (rewrite) */
	size_t dirty_lo, dirty_hi;
	bool rewrite;
	struct trace_bucket b[MT_TIMELINE_BUCKETS];
	/* its rows (mt_timeline_open) */
	struct mt_sql sql;
	sqlite3_stmt *stmt[4];
	int64_t width_written;
};

void mt_timeline_init(struct mt_timeline *tl);

/* Before an event at time_ns is applied: true when a live set is due,
 * the one before the event, to be labelled *at_ns (a moment on the grid,
 * not the event's time). */
bool mt_timeline_due(struct mt_timeline *tl, int64_t time_ns, int64_t *at_ns);

/* After it: the device bytes live it left. */
void mt_timeline_put(struct mt_timeline *tl, int64_t time_ns, uint64_t live);

/* The time between live sets: moments on the grid are its multiples. */
int64_t mt_timeline_period(const struct mt_timeline *tl);

/* Its rows in the trace db (after mt_timeline_init): false when a
 * statement does not prepare (said). */
bool mt_timeline_open(struct mt_timeline *tl, sqlite3 *db, const char *path);
void mt_timeline_close(struct mt_timeline *tl);
/* Before the writer's COMMIT: the buckets that changed (all of them, and
 * the live sets off the new grid gone, after a doubling), the width. */
bool mt_timeline_commit(struct mt_timeline *tl);
