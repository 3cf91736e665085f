/* The writer's live set and what it derives from it (schema 3,
 * docs/trace-format.md): what a free releases, the live bytes of every
 * allocation site, the device peak and what was live at it, the live set
 * at each OOM and mark, the totals by site and kind, and the
 * out-of-memory summary on the program's stderr. In flight mode
 * (MEMTRACE_FLIGHT) it also keeps the file within its bound: allocations
 * and frees go into a ring of JSON chunks, one a commit; the oldest
 * chunks are dropped when the file nears the bound, and the allocations
 * of theirs still live are kept as rows of allocs first.
 *
 * Writer thread only, inside the writer's transactions (trace-writer.c
 * calls it for each event and at each commit). */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

struct mt_live;

struct mt_live_options {
	sqlite3 *db; /* its schema made */
	const char *path; /* the trace, named in the summary */
	uint64_t bound; /* MEMTRACE_FLIGHT in bytes; 0: the full trace */
	struct mt_stack_table *stacks;
	/* names for the summary (as struct mt_writer_options has them) */
	bool (*op_name)(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
	bool (*pyframe)(uintptr_t token, const char **function, const char **file,
			unsigned *line);
};

/* Flight mode's settings of the file (its log's size, no waiting for the
 * disk): before the first transaction. */
bool mt_live_pragmas(sqlite3 *db, uint64_t bound);

/* Flight mode's disk, before the first transaction: the bound reserved
 * up front (main file and log; the sizes they show do not change), so
 * that a disk that fills later costs no commit. Where the disk has less
 * than the bound, the bound is halved until it fits (said); returns the
 * bound to keep. Where the file system cannot reserve, the bound. */
uint64_t mt_live_reserve(const char *path, uint64_t bound);

/* NULL when out of memory or a statement does not prepare (said). */
struct mt_live *mt_live_new(const struct mt_live_options *o);
void mt_live_free(struct mt_live *l);
bool mt_live_flight(const struct mt_live *l);

/* A site the writer interned (its sites row). */
void mt_live_site(struct mt_live *l, uint32_t site, const struct mt_site_key *k);

/* Keeps the live set (trace/trace-live-set.h) in step with a hooked
 * allocation (site: its site), free, failed free, map (site: the
 * mapping's, which holds the memory it maps), unmap or failed unmap, and
 * fills in the bytes and memory kind of what a free releases. Returns the
 * seq of the allocation a free releases, -1 when none is known. */
int64_t mt_live_track(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		      uint32_t site);

/* An allocation (or a mapping) at an address the live set holds (mapped)
 * now: the writer then looks for the release that was served first. */
bool mt_live_holds(const struct mt_live *l, const struct mt_event *ev);

/* An allocs or frees row of site (alloc: what a free releases): counted in
 * the site's totals; in flight mode it goes into the ring (true), else the
 * caller writes it. */
bool mt_live_row(struct mt_live *l, uint64_t seq, uint64_t time_ns, uint32_t site,
		 const struct mt_event *ev, int64_t alloc);
/* An other_events row, counted by kind; in flight mode, in the ring's
 * chunk. */
void mt_live_other(struct mt_live *l, uint64_t seq, uint64_t time_ns, int kind);

/* Any event, after its row: the OOM's live set and summary, a mark's live
 * set, what flight mode keeps. False when a write failed. */
bool mt_live_event(struct mt_live *l, uint64_t seq, uint64_t time_ns, const struct mt_event *ev);

/* Before the writer's COMMIT: the ring's chunk, the totals, the peak and
 * the meta keys that changed. */
bool mt_live_commit(struct mt_live *l);

/* After a COMMIT, in flight mode: drops the oldest chunks (in a
 * transaction of its own) when the file nears its bound. */
bool mt_live_trim(struct mt_live *l);

/* Flight mode commits at least every this many events, so that no chunk
 * takes much of the bound. */
#define MT_FLIGHT_CHUNK 4096
