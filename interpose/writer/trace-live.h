/* The live side of the writer (schema 3, docs/trace-format.md), reached
 * through one call an event (mt_live_event), one a commit and one after
 * it: which row an event is and its site, what a free releases, the live
 * bytes of every allocation site, the device peak and what was live at
 * it, the live set at each OOM and mark, the totals by site and kind, the
 * out-of-memory answer on the program's stderr (live-answer.h). In flight
 * mode (MEMTRACE_FLIGHT) it also keeps the file within its bound
 * (live-disk.h): allocations and frees go into a ring of JSON chunks
 * (live-flight.h); the oldest chunks are dropped when the file nears the
 * bound, and the allocations of theirs still live are kept as rows of
 * allocs first.
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
	struct mt_site_table *sites; /* the writer's: the events' columns interned */
	/* names for the summary (as struct mt_writer_options has them) */
	bool (*op_name)(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
	bool (*pyframe)(uintptr_t token, const char **function, const char **file,
			unsigned *line);
};

/* Flight mode's disk budget, before the first transaction: live-disk.h. */

/* NULL when out of memory or a statement does not prepare (said). */
struct mt_live *mt_live_new(const struct mt_live_options *o);
void mt_live_free(struct mt_live *l);
bool mt_live_flight(const struct mt_live *l);

/* An allocation (or a mapping) at an address the live set holds (mapped)
 * now: the writer then looks for the release that was served first. */
bool mt_live_holds(const struct mt_live *l, const struct mt_event *ev);

/* The row the writer writes for an event. */
enum mt_live_table {
	MT_LIVE_OTHER, /* other_events: the event's own columns */
	MT_LIVE_ALLOCS, /* allocs(seq, time_ns, site, address, bytes) */
	MT_LIVE_FREES, /* frees(seq, time_ns, site, alloc) */
	MT_LIVE_RING, /* flight mode: in the ring's chunk, no row */
};
struct mt_live_row {
	enum mt_live_table table;
	uint32_t site; /* allocs, frees */
	int64_t alloc; /* frees: the seq of the allocation it releases */
	/* a site this event interned (0: none), whose sites row is due with
	 * these columns */
	uint32_t new_site;
	const struct mt_site_key *new_key;
};

/* Every event, once, in the trace's order: the live set kept in step with
 * it (a free's bytes and memory kind filled in from what it releases),
 * its row decided (*row, always filled in), the OOM's live set and
 * answer, a mark's live set, what flight mode keeps. False when a write
 * failed. */
bool mt_live_event(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		   struct mt_live_row *row);

/* Before the writer's COMMIT: the ring's chunk, the totals, the peak and
 * the meta keys that changed. */
bool mt_live_commit(struct mt_live *l);

/* After a COMMIT, in flight mode: drops the oldest chunks (in a
 * transaction of its own) when the file nears its bound. */
bool mt_live_trim(struct mt_live *l);

/* Flight mode commits at least every this many events, so that no chunk
 * takes much of the bound. */
#define MT_FLIGHT_CHUNK 4096
