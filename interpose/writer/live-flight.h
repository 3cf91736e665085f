/* Flight mode's ring (MEMTRACE_FLIGHT): allocations and frees go into a
 * ring of JSON chunks, one a commit, instead of rows of allocs and frees;
 * the oldest chunks go when the file nears its bound (trace-live.c's
 * trim, live-disk.h's budget). What must outlive the ring is kept apart:
 * an allocation still live when its chunk goes becomes a row of allocs
 * (and that row goes with the chunk of its free); the kinds
 * MT_FLIGHT_KEPT_KINDS and the events listed in kept stay in
 * other_events (a framework allocator's actions as live-tensors.h says,
 * the mappings live, the first launch of each graph, the marks whose live
 * sets are kept). Writer thread only, inside the writer's transactions. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "trace-live-set.h"

/* A live allocation's user byte (trace_live_alloc.user): it is a row of
 * allocs. */
#define MT_FLIGHT_PERSISTED 1

struct mt_flight;

/* NULL when out of memory or a statement does not prepare (said). */
struct mt_flight *mt_flight_new(sqlite3 *db, const char *path);
void mt_flight_free(struct mt_flight *f);

/* An allocs or frees row of site (alloc: what a free releases) into the
 * open chunk. */
void mt_flight_row(struct mt_flight *f, uint64_t seq, uint64_t time_ns, uint32_t site,
		   const struct mt_event *ev, int64_t alloc);
/* An other_events row: the open chunk covers it, and it goes with it
 * unless kept. */
void mt_flight_other(struct mt_flight *f, uint64_t seq, uint64_t time_ns);

/* The live set's changes (its gone and live hooks): a stops being live
 * (its free is in the open chunk); a is live again (a free that failed). */
void mt_flight_released(struct mt_flight *f, const struct trace_live_alloc *a);
void mt_flight_restored(struct mt_flight *f, struct trace_live_alloc *a);

/* Any event, after its row: what the ring keeps of it. ooms, marks and
 * last_mark are the live sets at OOMs and marks written before it, and
 * the seq of the last mark whose live set is kept (trace-live.c). False
 * when a write failed. */
bool mt_flight_event(struct mt_flight *f, uint64_t seq, const struct mt_event *ev, uint64_t ooms,
		     uint64_t marks, uint64_t last_mark);

/* Before the writer's COMMIT: the chunk's ring row; the meta keys of the
 * ring that changed. */
bool mt_flight_commit(struct mt_flight *f);
bool mt_flight_commit_meta(struct mt_flight *f);

/* The trim (trace-live.c): the chunks in the ring; how many of the
 * oldest add up to what brings the main file from used bytes under low;
 * the seqs [first, last] of the n oldest and how many of their
 * allocations are live and no row yet. */
size_t mt_flight_chunks(const struct mt_flight *f);
size_t mt_flight_oldest(const struct mt_flight *f, uint64_t used, uint64_t low);
void mt_flight_span(const struct mt_flight *f, size_t n, uint64_t *first, uint64_t *last,
		    uint64_t *live);
/* a becomes a row of allocs (once); false when it could not be written. */
bool mt_flight_persist(struct mt_flight *f, struct trace_live_alloc *a);
/* The n oldest chunks leave the ring, inside the caller's transaction:
 * their crossing allocations become rows, the rows their frees released
 * go, and their other events but the kept ones. False when a write
 * failed: then nothing of the ring changed, and the caller rolls back. */
bool mt_flight_drop(struct mt_flight *f, size_t n);
