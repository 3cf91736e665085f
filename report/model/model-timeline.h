/* The timeline: device bytes live over time, downsampled to a bounded
 * number of buckets, with the live set (by stack) at evenly spaced
 * moments and the events worth a marker (OOMs, marks, graph lifetimes).
 * The model feeds it from its event loop when model.timeline is set; the
 * HTML and Perfetto renderers draw it. Its size does not grow with the
 * trace: a 10-million-event trace gives the same few hundred KiB. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-event.h"
#include "trace-schema.h"
#include "trace-timeline.h"
#include "model.h"
#include "util-map.h"

/* The writer's flight-mode timeline has as many buckets and live sets
 * (interpose/writer/live-timeline.c), so that the reporter lays its buckets on
 * its own: one number each, in trace-schema.h. */
#define TIMELINE_BUCKETS MT_TIMELINE_BUCKETS
/* live sets kept; a power of two dividing TIMELINE_BUCKETS */
#define TIMELINE_SNAPSHOTS MT_TIMELINE_SNAPSHOTS
/* stacks a snapshot keeps, the largest; the rest is summed in other_* */
#define TIMELINE_SNAPSHOT_STACKS 1000
#define TIMELINE_MARKERS 4096
/* streams whose device bytes live at the peak are told apart; the rest
 * are summed in streams_other */
#define TIMELINE_STREAMS 32
/* the same for the threads allocations were made on */
#define TIMELINE_THREADS 32
/* devices with a line of their own (the first seen); the total line
 * counts them all */
#define TIMELINE_DEVICES 16
/* a trace of at most this many events keeps the total line exact as well,
 * one point per event (the Perfetto counter draws it) */
#define TIMELINE_EXACT 4096

/* Bucket i covers [i * width, (i + 1) * width) ns: struct trace_bucket
 * (trace/trace-timeline.h). */

struct timeline_snapshot {
	int64_t time_ns;
	uint64_t live_bytes, live_count;
	/* the largest live stacks, in no order: only the HTML page shows
	 * them in order (model_timeline_sort_stacks), and sorting every
	 * moment's cost a tenth of a report of many ranks */
	struct model_stack_live *stacks;
	size_t n_stacks;
	uint64_t other_bytes, other_count; /* the stacks not kept */
};

struct timeline_marker {
	int64_t time_ns, seq;
	int kind;      /* MT_EV_*: oom, mark or a graph event */
	uint64_t bytes; /* an OOM's request */
};

/* Device bytes live on one stream (0: the legacy default stream, or an
 * allocation made without one). */
struct timeline_stream {
	uint64_t stream;
	uint64_t bytes, count;
};

/* Device bytes live allocated by one thread (the kernel thread id,
 * threads.id; 0: the event named none). */
struct timeline_thread {
	int64_t thread;
	uint64_t bytes, count;
};

/* One device's bytes live, on the same buckets as the total line. */
struct timeline_device_line {
	int device;
	struct trace_bucket *buckets; /* TIMELINE_BUCKETS */
	uint64_t last_live, max;
};

/* The device bytes live after one event, at its time. */
struct timeline_point {
	int64_t time_ns;
	uint64_t live;
};

struct timeline_site_slots {
	uint8_t stream, thread;
};

struct model_timeline {
	int64_t width; /* ns per bucket, doubled when time runs past the last */
	struct trace_bucket buckets[TIMELINE_BUCKETS];
	size_t n_buckets; /* 1 + the last bucket used */
	/* the bucket record() used last, cur_i, covers [cur_lo, cur_hi) */
	size_t cur_i;
	int64_t cur_lo, cur_hi;

	/* the total line, exact, while the trace has at most TIMELINE_EXACT
	 * events (all of them in it: not a flight trace that lost some);
	 * n_exact > TIMELINE_EXACT when it has more */
	struct timeline_point exact[TIMELINE_EXACT];
	size_t n_exact;

	struct timeline_snapshot snaps[TIMELINE_SNAPSHOTS + 1];
	size_t n_snaps;
	int64_t next_snap_ns;

	struct timeline_marker *markers;
	size_t n_markers, cap_markers;
	uint64_t markers_dropped;

	bool pending; /* an event was fed whose result is not recorded yet */
	int64_t pending_ns;
	int64_t last_ns;
	bool started;
	int64_t first_ns; /* the first event's time */
	uint64_t last_live; /* the value recorded last */
	/* by device, when a trace has more than one: the lines grow as
	 * devices appear (a line starts at zero, as its device did) */
	struct timeline_device_line devices[TIMELINE_DEVICES];
	size_t n_devices;

	/* by the stream allocations were made on: what was live at the
	 * device peak. Allocations and frees with an address only, of the
	 * device-side kinds but graph memory (physical at launch, not at its
	 * allocation) and CUPTI's records: VMM mappings, graph memory and
	 * what CUPTI alone saw are not in it, so the
	 * streams can add up to less than the peak. */
	struct timeline_stream streams[TIMELINE_STREAMS], streams_other;
	size_t n_streams;
	uint32_t last_stream; /* the index stream_find found last */
	struct timeline_stream at_peak[TIMELINE_STREAMS], at_peak_other;
	size_t n_at_peak;
	uint64_t peak_seen; /* the model's device peak when at_peak was taken */
	/* which allocations are counted, and in which slots: in the model's
	 * live records (model_live.tl_*) */

	/* the same by the thread that made the allocation, counting the same
	 * allocations, copied at the same peaks */
	struct timeline_thread threads[TIMELINE_THREADS], threads_other;
	size_t n_threads;
	uint32_t last_thread;
	/* by the reader's site (trace_event.site_slot): its stream's slot
	 * + 1 and its thread's, once known (0: not yet) */
	struct timeline_site_slots *site_slots;
	size_t cap_site_slots;
	struct timeline_thread thread_at_peak[TIMELINE_THREADS], thread_at_peak_other;
	size_t n_thread_at_peak;
};

/* duration_hint_ns: how long the trace runs, when known (0: unknown); it
 * sets the first bucket width so that no merging is needed. */
void model_timeline_init(struct model_timeline *tl, int64_t duration_hint_ns);
void model_timeline_fini(struct model_timeline *tl);

/* Called by model_feed before it applies ev: records the result of the
 * previous event, then the moments ev's time passes. */
void model_timeline_feed(struct model_timeline *tl, const struct model *m,
			 const struct trace_event *ev);

/* The model's hooks (model.c), on the events the timeline is fed: rec
 * became live at ev (an allocation with an address, not CUPTI's), and is
 * counted by stream and thread when it is of the kinds counted there; rec
 * is no longer live (a free of it, an allocation at its address) and
 * leaves the tables if it was in them. */
void model_timeline_alloc(struct model_timeline *tl, struct model_live *rec,
			  const struct trace_event *ev);
void model_timeline_forget(struct model_timeline *tl, struct model_live *rec);

/* After the last event (model_finish is fine before or after). */
void model_timeline_finish(struct model_timeline *tl, const struct model *m);

/* A flight trace (model-flight.c): what the writer kept of the time
 * before its ring. start_at, before the first event fed: the ring starts
 * at time_ns, the live sets before it are put back. mark: an event before
 * the ring worth a marker. add_before: a bucket of the writer's, on the
 * bucket of its last event (the writer's width is within twice the
 * line's). add_snapshot: a live set before the ring, stacks largest first,
 * taken over; false when there is no room left. */
void model_timeline_start_at(struct model_timeline *tl, int64_t time_ns);
void model_timeline_mark(struct model_timeline *tl, const struct trace_event *ev);
void model_timeline_add_before(struct model_timeline *tl, const struct trace_bucket *b,
			       int64_t first_ns);
bool model_timeline_add_snapshot(struct model_timeline *tl, struct timeline_snapshot *s);

/* A moment's stacks, largest first (ties: the lower stack id first). */
void model_timeline_sort_stacks(struct model_stack_live *stacks, size_t n);

/* Device bytes live at time_ns, as the buckets know it: the last value
 * recorded in the bucket of time_ns or before it. */
uint64_t model_timeline_at(const struct model_timeline *tl, int64_t time_ns);

/* The lowest device bytes live between from_ns and to_ns (bucket
 * resolution): the floor that memory never went below. */
uint64_t model_timeline_floor(const struct model_timeline *tl, int64_t from_ns, int64_t to_ns);

/* Events that lowered device bytes live between from_ns and to_ns. */
uint64_t model_timeline_drops(const struct model_timeline *tl, int64_t from_ns, int64_t to_ns);
