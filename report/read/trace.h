/* Reading a trace (docs/trace-format.md, schema versions 1 to 3). Everything but
 * the events is loaded into memory; the events are streamed in seq order.
 * Keep in step with trace/trace-schema.h and docs/trace-format.md. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-event.h"
#include "util-map.h"

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* How allocations are grouped into sites (--group-by; docs/report-json.md). */
enum report_group_by {
	REPORT_GROUP_SITE = 0, /* the user's own Python frame, else the op, else native frame */
	REPORT_GROUP_PYTHON,
	REPORT_GROUP_OP,
	REPORT_GROUP_NATIVE,
	REPORT_GROUP_STACK, /* one site per distinct stack */
};

/* What the command line asks of the reader: set in trace.opts between
 * trace_load and trace_read_events. Zero is the default. */
struct report_options {
	enum report_group_by group_by;
	const char *at_mark; /* graphs orphaned at the first mark with this label; NULL: at the end */
};

#define TRACE_NONE UINT32_MAX
/* Device ordinals the reader accepts; others read as unknown (-1). */
#define TRACE_MAX_DEVICES 1024

struct trace_meta {
	char *key, *value;
};

struct trace_api {
	int64_t id;
	char *name;
};

struct trace_module {
	int64_t id, base;
	char *path;
	char *build_id; /* lowercase hex, or NULL */
};

struct trace_frame {
	int64_t id;
	int kind; /* MT_FRAME_* */
	int64_t ip, offset;
	bool has_offset;
	uint32_t module; /* index in trace.modules, or TRACE_NONE */
	char *function;	 /* NULL when unknown; demangled (symbolize.c) */
	char *symbol;	 /* the symbol, when function is its demangled name */
	char *file;	 /* NULL when unknown */
	int64_t line;	 /* 0 when unknown */
};

/* A row of the devices table (traces written before it existed have none). */
struct trace_device {
	int id;
	uint64_t total_bytes;
	bool has_free;
	uint64_t free_bytes_at_first_use;
};

struct trace_stack {
	int64_t id;
	uint32_t first; /* index in trace.stack_frames */
	uint32_t depth;
};

/* A row of the ops table: an NVTX range name or a mark label. */
struct trace_op {
	int64_t id;
	char *name;   /* never NULL */
	char *domain; /* NULL: the default domain */
	int64_t same; /* the id of the first op with this name and domain */
	bool has_build;
	int64_t build; /* its number in the series of ranges named per build */
	int mark_kind; /* enum mark_kind, were it a mark's label */
	bool at_mark;  /* its name is the label of opts.at_mark */
};

/* A row of the sites table (version 2): what its allocations and frees
 * share, as the event the reader makes of them, resolved once. */
struct trace_site {
	int64_t id;
	struct trace_event ev;
	bool missing_stack; /* ev.stack names a stack with no frames */
};

/* The user's frames of one stack (model-site.c): a frame index, or
 * TRACE_NONE, its depth, and the frame index of its caller (the next
 * frame of the user's of the same kind out), or TRACE_NONE. */
struct trace_stack_site {
	uint32_t python, python_depth, python_caller;
	uint32_t native, native_depth, native_caller;
	/* its Python, native frame is a site per caller (model-site.c) */
	bool python_split, native_split;
};

/* What a version-3 trace keeps beside its events (trace-read-flight.c,
 * docs/trace-format.md): the live set by site (a sites.id) at the device
 * peak, at OOMs and marks; in flight mode, what left the ring. */
struct trace_live_row {
	int64_t key; /* the OOM's or mark's seq; 0 at the peak */
	int64_t site;
	uint64_t bytes, count;
};

struct trace_trimmed_site {
	int64_t site;
	uint64_t allocs, alloc_bytes, frees, free_bytes;
};

/* above every event kind (trace-schema.h: asserted in trace-read-flight.c) */
#define TRACE_TRIMMED_KINDS 64

/* A bucket of the writer's timeline (table timeline): device bytes live
 * in [bucket * width, (bucket + 1) * width) ns. */
struct trace_timeline_bucket {
	int64_t bucket;
	uint64_t min, max, last;
	int64_t t_max, t_last;
	uint64_t drops;
};

struct trace_flight {
	bool on;      /* meta mode = flight */
	uint64_t bound; /* meta flight_bytes */
	/* the ring: events from ring_first_seq on are all there; before it,
	 * only the live allocations and the kept events */
	int64_t ring_first_seq, ring_first_time_ns;
	uint64_t peak_bytes; /* the writer's device peak (meta peak_bytes) */
	int64_t peak_seq, peak_time_ns;
	uint64_t mem_peak[TRACE_TRIMMED_KINDS]; /* each memory kind's (meta mem_peak_N) */
	/* site_totals and kind_totals, less what the events read show: what
	 * left the ring (after trace_read_events) */
	struct trace_trimmed_site *sites; /* by site id */
	size_t n_sites;
	uint64_t kinds[TRACE_TRIMMED_KINDS]; /* other events, by kind */
	uint64_t trimmed; /* events that left the ring, all told */
	struct trace_live_row *peak, *ooms, *marks; /* ooms, marks: by key, then site */
	size_t n_peak, n_ooms, n_marks;
	/* while reading: the rows seen, by index in sites and by kind */
	struct trace_trimmed_site *seen;
	size_t n_seen;
	uint64_t seen_kinds[TRACE_TRIMMED_KINDS];
	/* the writer's timeline of the whole run, and its live sets (key: the
	 * moment; site 0: the device's total); none in traces before them */
	struct trace_timeline_bucket *timeline;
	size_t n_timeline;
	int64_t timeline_width_ns, timeline_first_ns;
	struct trace_live_row *snaps;
	size_t n_snaps;
};

/* The ring's events in seq order, decoded from its JSON chunks. */
struct trace_ring {
	sqlite3_stmt *s; /* SELECT first_seq, events FROM ring ORDER BY first_seq */
	const char *p, *end; /* in the current chunk's text */
	int64_t chunk; /* its first_seq */
	bool row;      /* v holds an event */
	int64_t v[6];  /* MT_RING_ALLOC_FIELDS or MT_RING_FREE_FIELDS of them */
	int n;
};

struct trace;

/* The rules the reader applies as it reads: which marks are memtrace's,
 * which ops are a series, which frame of a stack is the user's and so
 * an event's site. They are policy, not the trace's format (model-site.c,
 * a layer above the reader), so the reader is handed them: trace_open's
 * rules. Without rules every mark is the user's, no op is of a series and
 * no site is resolved (the model then groups by stack). */
struct trace_site_rules {
	/* enum mark_kind of a mark with this label (trace_load, for each op) */
	int (*mark_kind)(const char *label);
	/* the series of ranges named per build: their has_build and build
	 * (trace_load, once the ops are read) */
	void (*op_builds)(struct trace_op *ops, size_t n);
	/* t->stack_sites, once the frames are symbolized (trace_read_events,
	 * before the first event) */
	void (*prepare)(struct trace *t);
	/* the site of ev as t->opts.group_by says (each event or site row) */
	struct site_ref (*resolve)(const struct trace *t, const struct trace_event *ev);
};

struct trace {
	sqlite3 *db;
	char *path;
	bool immutable;		 /* opened with immutable=1: closed, or no -shm could be made */
	bool wal_ignored;	 /* ... the latter, and a non-empty -wal file was ignored */
	bool shared;		 /* opened without immutable=1: SQLite may make a -wal, -shm */
	unsigned sidecars_found; /* which of them were beside it before (trace-read.c) */
	int64_t schema_version;

	struct trace_meta *meta;
	size_t n_meta;
	struct trace_api *apis;
	size_t n_apis;
	struct map api_index; /* id -> index */
	struct trace_module *modules;
	size_t n_modules;
	struct map module_index;
	struct trace_frame *frames;
	size_t n_frames;
	struct map frame_index; /* id -> index, of the ids not at index id - 1 */
	struct trace_stack *stacks;
	size_t n_stacks;
	struct map stack_index; /* the same */
	uint32_t *stack_frames; /* frame indices, TRACE_NONE for a missing frame */
	size_t n_stack_frames;
	struct map ooms; /* seq -> struct trace_oom_info */
	size_t n_threads;
	struct trace_device *devices;
	size_t n_devices;
	bool has_handle_column; /* events.handle (absent in older traces) */
	bool has_op_column, has_source_column; /* events.op, events.source */
	struct trace_op *ops;
	size_t n_ops;
	struct map op_index; /* id -> index */
	struct map cupti_pc; /* seq -> pc, from the cupti table */
	bool has_cupti;		/* the cupti table has rows: CUPTI saw something */
	uint32_t *modules_by_base; /* module indices by base, for CUPTI's pcs */
	struct trace_site *sites; /* version 2 */
	size_t n_sites;
	struct map site_index; /* the same */
	struct trace_site no_site; /* for rows naming a site that is not there */
	struct trace_flight flight; /* version 3, in flight mode */

	/* How to read it: rules from trace_open; opts set between trace_load
	 * and trace_read_events. */
	const struct trace_site_rules *rules; /* NULL: none */
	struct report_options opts;
	/* per stack, by index in stacks: filled by rules->prepare */
	struct trace_stack_site *stack_sites;
	struct map same_frame; /* frame label hash -> first frame index */

	/* read allocs, frees and sites through SQLite's rows alone, not
	 * from the pages (trace-rows.h; set before trace_load, which reads
	 * the sites): tests compare the two */
	bool sql_rows;
	/* how they were read: rows from the pages, rows through SQLite,
	 * rows of the pages only SQLite could read; the pages gave up on a
	 * table and SQLite read the rest */
	struct trace_read_stats {
		uint64_t from_pages, from_sql, lookups;
		uint64_t alloc_lookups; /* frees whose allocation was asked of allocs */
		uint64_t sites_from_pages; /* sites rows decoded from the pages */
		uint64_t frames_from_pages; /* the same of frames */
		bool handed_over;
	} read_stats;

	/* references to rows that are not there: shown as unknown */
	uint64_t missing_frames;  /* stack_frames rows naming no frame */
	uint64_t missing_modules; /* native frames naming no module */
	uint64_t missing_stacks;  /* events naming a stack with no frames */

	char error[1024]; /* why the last call failed, without prefix */
};

/* ---- trace-read.c ---- */

/* For the reader's files: t->error set as printf would, and -1. */
int __attribute__((format(printf, 2, 3))) trace_fail(struct trace *t, const char *fmt, ...);

/* trace-recover.c: memtrace recover. The events a killed process had
 * pushed into its ring file (TRACE-ring) and not committed, moved into the
 * trace once; the ring file removed after. 0, or -1 with error (malloc'd,
 * the caller frees it). ring: there was a ring file; running: its process
 * is alive (nothing done). */
struct trace_recovery {
	bool ring, running;
	uint64_t recovered;
	char *error;
};
int trace_recover(const char *path, struct trace_recovery *out);
/* A killed writer's trace made one file (its -wal folded in), when nobody
 * else has it open; anything else left as found. */
void trace_settle(const char *path);

/* Open read-only and check this is a trace of a schema version we read;
 * rules (NULL: none) are applied as it is read. A killed process's ring
 * file is recovered into it first (trace_recover, a line on stderr), and
 * a killed writer's trace made one file (trace_settle). On failure
 * returns -1 with t->error set. trace_close in any case. */
int trace_open(struct trace *t, const char *path, const struct trace_site_rules *rules);

/* Load meta, apis, modules, frames, stacks, threads, ooms, devices, ops,
 * the cupti table and (version 2) the sites. */
int trace_load(struct trace *t);

typedef void (*trace_event_fn)(void *ctx, const struct trace_event *ev);

/* Call fn for each event in seq order, with what the reader adds
 * (trace-event.h) resolved as t->opts says. */
int trace_read_events(struct trace *t, trace_event_fn fn, void *ctx);

/* Where trace_read_events_sink writes the events: in place, into ev[n]
 * for n from 0, and once n reaches cap it calls full, which takes the
 * batch and leaves room again (n back to 0, ev maybe another batch); the
 * last batch, of n events (maybe none), is left to the caller. For a
 * caller that keeps the events (trace-batch.c): no copy of each, and no
 * call per event. */
struct trace_sink {
	struct trace_event *ev;
	size_t n, cap;
	void (*full)(struct trace_sink *sink);
	void *ctx;
};

int trace_read_events_sink(struct trace *t, struct trace_sink *sink);

/* ---- trace-batch.c ---- */

/* What fn will need of ev, asked of the memory: called twice on each
 * event, TRACE_AHEAD_FAR events before fn has it and again (near)
 * TRACE_AHEAD_NEAR before, when what the first call asked for has had
 * time to arrive. */
typedef void (*trace_ahead_fn)(void *ctx, const struct trace_event *ev, bool near);
#define TRACE_AHEAD_FAR 8
#define TRACE_AHEAD_NEAR 4

/* A batch's events to fn, each asked of ahead (NULL: none) a few events
 * before, within the batch. Inline: a caller that names its own fn and
 * ahead has them inlined, with no call through a pointer per event. */
static inline __attribute__((always_inline)) void
trace_drain(const struct trace_event *ev, size_t n, trace_event_fn fn, trace_ahead_fn ahead,
	    void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (ahead && i + TRACE_AHEAD_FAR < n)
			ahead(ctx, &ev[i + TRACE_AHEAD_FAR], false);
		if (ahead && i + TRACE_AHEAD_NEAR < n)
			ahead(ctx, &ev[i + TRACE_AHEAD_NEAR], true);
		fn(ctx, &ev[i]);
	}
}

/* The events per batch of trace_read_events_batched and the reporter. */
#define TRACE_BATCH 256

/* trace_read_events with ahead called on each event a few events before
 * fn, all on the caller's thread, the events read in batches of
 * TRACE_BATCH: one thread reads and models, for less CPU time than two
 * (docs/performance.md, "One thread"). The reporter
 * does the same with its own sink (main.c), its fn inlined. */
int trace_read_events_batched(struct trace *t, trace_event_fn fn, trace_ahead_fn ahead,
			      void *ctx);


/* ---- trace-read.c ---- */

/* The smallest and largest allocation of each stack that allocated, to
 * fn, maybe several times for one stack (one scan of the allocations,
 * before the events are read, by the site rules' prepare). -1 when the
 * trace cannot say. */
typedef void (*trace_stack_sizes_fn)(void *ctx, int64_t stack, uint64_t min, uint64_t max);
int trace_stack_sizes(struct trace *t, trace_stack_sizes_fn fn, void *ctx);

/* The number of events (the highest seq + 1), 0 when unknown. */
uint64_t trace_count_events(const struct trace *t);

void trace_close(struct trace *t);

const char *trace_meta_get(const struct trace *t, const char *key);
const char *trace_api_name(const struct trace *t, int64_t id);
/* The name the threads table gives a thread, or NULL (none, or no table).
 * Caller frees. */
char *trace_thread_name(const struct trace *t, int64_t id);
/* NULL when the trace has no frames for that stack id */
const struct trace_stack *trace_find_stack(const struct trace *t, int64_t id);
/* Frame at depth i of s, or NULL when that row names a missing frame. */
const struct trace_frame *trace_stack_frame(const struct trace *t,
					    const struct trace_stack *s, uint32_t i);
const struct trace_module *trace_frame_module(const struct trace *t,
					      const struct trace_frame *f);
/* The op with this id, or NULL. */
const struct trace_op *trace_find_op(const struct trace *t, int64_t id);
/* Index in t->modules of the module whose base is the highest at or
 * below pc, or -1. */
int64_t trace_module_at(const struct trace *t, uint64_t pc);

/* The site row with this id, its event resolved (after
 * trace_read_events); a site of no kind when there is none. */
const struct trace_site *trace_find_site(const struct trace *t, int64_t id);

/* ---- trace-read-flight.c ---- */

/* Fills t->flight from a flight-mode trace's tables (trace_load calls it).
 * -1 with t->error set when they are missing or unreadable. */
int trace_load_flight(struct trace *t);
void trace_flight_free(struct trace_flight *f);
/* A row read (flight mode): an allocs or frees row of the site with this
 * id, or an other_events row of this kind. */
void trace_flight_seen_site(struct trace *t, int64_t site, bool alloc, uint64_t bytes);
void trace_flight_seen_kind(struct trace *t, int kind);
/* After the events: what left the ring, into sites, kinds, trimmed. */
void trace_flight_settle(struct trace *t);
/* The ring: first event (r->row false when none), next, the end. -1 with
 * t->error set for a chunk that is not memtrace's JSON. */
int trace_ring_open(struct trace *t, struct trace_ring *r);
int trace_ring_next(struct trace *t, struct trace_ring *r);
void trace_ring_close(struct trace_ring *r);

/* ---- trace-options.c ---- */

/* "site", "python", "op", "native" or "stack"; false for anything else. */
bool report_parse_group_by(const char *s, enum report_group_by *out);
const char *report_group_by_name(enum report_group_by g);
