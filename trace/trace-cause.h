/* The cause of an out-of-memory failure: the names, the rounds arithmetic
 * and the rules that decide between causes, shared by the reporter
 * (report/model/model.c keeps the rounds, report/render/diagnose.c words each cause
 * with its evidence) and the capture library's out-of-memory answer on
 * stderr (interpose/writer/live-cause.c), so both give the same cause for the
 * same events. Pure functions: no SQLite, no allocation, constant work
 * per call. docs/report.md, "The cause", states the rules. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The causes, by the name the JSON report gives them. */
enum trace_cause {
	TRACE_CAUSE_GROWTH = 1,	     /* memory kept across iterations or builds */
	TRACE_CAUSE_TOO_BIG,	     /* the working set does not fit the device */
	TRACE_CAUSE_FRAGMENTATION,   /* more free at the failure than the request */
	TRACE_CAUSE_ORPHANED_GRAPHS, /* graph execs left behind, graph memory never freed */
	TRACE_CAUSE_NOT_OURS,	     /* device memory in use the process did not allocate */
	TRACE_CAUSE_PREALLOCATED,    /* a framework's arena took most of the device at start */
	TRACE_CAUSE_ALLOCATOR_LIMIT, /* a framework allocator's own cap refused it, not the device */
};

/* "growth", "too_big", ...; "unknown" for anything else */
const char *trace_cause_name(enum trace_cause c);

/* growth: a stack kept memory in at least this many rounds in a row ... */
#define TRACE_GROWTH_MIN_ROUNDS 3
/* ... at least this much together, and this share of the device's peak */
#define TRACE_GROWTH_MIN_BYTES (1u << 20)
#define TRACE_GROWTH_SHARE 0.10
/* not_ours: at least the request, or this share of the device */
#define TRACE_NOT_OURS_SHARE 0.10
/* preallocated: one of a device's first TRACE_EARLY_ALLOCS device-side
 * allocations of at least this share of the device, and the first of its
 * memory kind there (an arena grown region by region is none) */
#define TRACE_EARLY_ALLOCS 16
#define TRACE_ARENA_SHARE 0.70

/* Rounds: the run cut where the process gives device memory back, the
 * first device-side allocation after a free beginning a new one (a
 * training step that frees its activations ends one; a burst of loads is
 * one). What a stack kept from round to round, judged by events alone. */
struct trace_rounds {
	uint64_t kept;			/* rounds in a row that ended with more of it live */
	uint64_t kept_bytes;		/* what those rounds kept, together */
	uint64_t first_kept, last_kept; /* the first and last of them */
	uint64_t open_bytes;		/* added in the round in progress (at an OOM) */
	uint64_t min_alloc, max_alloc;	/* its smallest and largest allocation */
	uint64_t allocs;		/* its device-side allocations */
};

/* The round a stack was last touched in ended with `bytes` of it live,
 * `start` when it began: one more round that kept memory, or memory given
 * back, which ends the run of rounds that kept some. */
static inline void trace_round_close(struct trace_rounds *r, uint64_t round, uint64_t start,
				     uint64_t bytes)
{
	if (bytes > start) {
		if (!r->kept)
			r->first_kept = round;
		r->kept++;
		r->kept_bytes = r->kept_bytes + (bytes - start) < r->kept_bytes
					? UINT64_MAX
					: r->kept_bytes + (bytes - start);
		r->last_kept = round;
	} else if (bytes < start) {
		r->kept = 0;
		r->kept_bytes = 0;
	}
}

/* One stack's rounds as the events go. Its live device-side bytes are the
 * caller's (the reporter and the library each keep them already) and are
 * passed in, as they were before the event. */
struct trace_round_stack {
	struct trace_rounds r; /* open_bytes unset: see trace_round_view */
	uint64_t round;	       /* the last round it was touched in */
	uint64_t start_bytes;  /* its live bytes when that round began for it */
};

/* The run's round: the one in progress, and whether memory was given back
 * since it began (then the next allocation begins the next one). */
struct trace_round_run {
	uint64_t round;
	bool gave_back;
};

/* st is touched by an event of the round in progress. */
static inline void trace_round_touch(const struct trace_round_run *run,
				     struct trace_round_stack *st, uint64_t live)
{
	if (st->round == run->round && st->r.allocs)
		return;
	if (st->r.allocs)
		trace_round_close(&st->r, st->round, st->start_bytes, live);
	st->round = run->round;
	st->start_bytes = live;
}

/* A device-side allocation of the run: after memory was given back, it
 * begins a new round. Before its trace_round_alloc. */
static inline void trace_round_next(struct trace_round_run *run)
{
	if (run->gave_back) {
		run->round++;
		run->gave_back = false;
	}
}

/* Memory given back (a device-side free): the round in progress ends at
 * the next allocation. After its trace_round_free. */
static inline void trace_round_given_back(struct trace_round_run *run)
{
	run->gave_back = true;
}

/* `bytes` charged to st, whose live bytes were `live` (an allocation, or
 * the reporter moving one to another stack). */
static inline void trace_round_alloc(const struct trace_round_run *run,
				     struct trace_round_stack *st, uint64_t live, uint64_t bytes)
{
	trace_round_touch(run, st, live);
	st->r.allocs++;
	if (!st->r.min_alloc || bytes < st->r.min_alloc)
		st->r.min_alloc = bytes;
	if (bytes > st->r.max_alloc)
		st->r.max_alloc = bytes;
}

/* Bytes taken from st, whose live bytes were `live`. */
static inline void trace_round_free(const struct trace_round_run *run, struct trace_round_stack *st,
				    uint64_t live)
{
	trace_round_touch(run, st, live);
}

/* st's rounds now, its live bytes `live`. open: count the round in
 * progress as ended (at the end of a run), else (at an OOM) leave it open,
 * what it added in open_bytes. False when st never allocated. */
static inline bool trace_round_view(const struct trace_round_run *run,
				    const struct trace_round_stack *st, uint64_t live, bool open,
				    struct trace_rounds *out)
{
	*out = st->r;
	if (!st->r.allocs)
		return false;
	/* after a free, the next allocation begins a round: none is in progress */
	bool in_progress = st->round == run->round && !run->gave_back;
	if (open || !in_progress)
		trace_round_close(out, st->round, st->start_bytes, live);
	else if (live > st->start_bytes)
		out->open_bytes = live - st->start_bytes;
	return true;
}

/* The round an OOM now falls in (what trace_rounds_grew compares with). */
static inline uint64_t trace_round_at_oom(const struct trace_round_run *run)
{
	return run->round + run->gave_back;
}

/* growth's test for one stack's rounds: at least TRACE_GROWTH_MIN_ROUNDS
 * rounds in a row kept memory, at least `floor` together
 * (trace_growth_floor), the last of them in the second half of the rounds
 * since the first (a load at the start, then a burst of rounds that keep
 * nothing, is no growth). `round`: the round in progress. */
bool trace_rounds_grew(const struct trace_rounds *r, uint64_t round, uint64_t floor);
/* The least a growing stack kept: TRACE_GROWTH_MIN_BYTES, or a tenth of
 * the device's peak. */
uint64_t trace_growth_floor(uint64_t device_peak);

/* fragmentation: more free at the failure than the request */
bool trace_cause_fragmentation(uint64_t device_free, uint64_t requested);
/* Fragmentation inside PyTorch's cache, at its OOM (the library's answer
 * on stderr, the text, HTML and JSON reports all ask this): the tensor
 * asked for fits in no free block of the cache (largest_free) nor in what
 * the device had left (device_free, 0 when not known), yet the cache's
 * free bytes alone (cache_free: reserved less allocated) would hold it:
 * free memory in pieces, which expandable_segments or empty_cache() can
 * join, what torch's own message means by "reserved but unallocated".
 * The cache's free bytes and the device's together are not enough: the
 * cache had no room for it, and a program whose tensors grow step by
 * step (a leak) fails with a little of each. */
bool trace_cause_cache_fragmentation(uint64_t requested, uint64_t cache_free, uint64_t largest_free,
				     uint64_t device_free);
/* not_ours applies: memory in use that the process's allocations do not
 * explain (unexplained) is at least the request or a tenth of the device;
 * it leads when it is also at least what the process holds (live). */
bool trace_cause_not_ours(uint64_t unexplained, uint64_t requested, uint64_t device_total);
bool trace_cause_not_ours_leads(uint64_t unexplained, uint64_t requested, uint64_t live);
/* preallocated: an early allocation of at least TRACE_ARENA_SHARE of the device */
bool trace_cause_arena(uint64_t bytes, uint64_t device_total);

/* The request alone is more than the device's memory: no arena, pieces
 * or memory kept explain the failure, since it could never succeed. */
bool trace_cause_beyond_device(uint64_t requested, uint64_t device_total);

/* Inside a framework's arena whose tensors are seen (TensorFlow's BFC
 * arena: frameworks/tensorflow-bfc.c), at the arena's own OOM: the device
 * outside the arena is the framework's memory limit at work, so the
 * device's causes (its free memory in pieces, others' memory, the arena
 * preallocated) do not apply; the cause is judged inside the arena.
 * The arena's size is its limit when it is one region taken at start
 * (trace_cause_arena: the default setting); an arena grown region by
 * region (allow_growth) has a limit the trace does not hold: limit 0.
 * Fragmentation inside it is trace_cause_cache_fragmentation's, the
 * device's free memory left out. */
uint64_t trace_cause_arena_limit(uint64_t reserved, uint64_t regions, uint64_t device_total);
/* Fragmentation inside such an arena: trace_cause_cache_fragmentation
 * (its free bytes would hold the request, none of its free chunks does;
 * the device left out), the free bytes are at least
 * TRACE_ARENA_PIECES_SHARE of its regions (arena): the few MiB left in
 * pieces when tensors kept round after round filled the arena are no
 * cause of their own; and they would hold the request
 * TRACE_ARENA_PIECES_ROOM times: put together, pieces that hold this
 * tensor and not the next of its size (a weight's initializer makes two,
 * Adam two slots per weight, a step the same activations again) would
 * fail at the next, and the arena is full, not in pieces (a Keras model
 * too big for the arena, failing at its build with 415 MiB free in two
 * pieces for a 256 MiB weight). */
#define TRACE_ARENA_PIECES_SHARE 0.10
#define TRACE_ARENA_PIECES_ROOM 2
bool trace_cause_arena_fragmentation(uint64_t requested, uint64_t arena_free,
				     uint64_t largest_free, uint64_t arena);
/* The request with what the step that failed holds in the arena
 * (step: its tensors made at the line that failed; 0 for the request
 * alone) is more than the arena's limit (0: unknown): the step cannot
 * fit, whatever else the arena frees, and too_big leads. */
bool trace_cause_beyond_arena(uint64_t requested, uint64_t step, uint64_t limit);

/* allocator_limit: a framework's caching allocator refused the request
 * with no CUDA call failing, by a cap of its own (PyTorch's
 * set_per_process_memory_fraction, its cap the fraction times the
 * device's memory): the device's free memory, pieces or size are not what
 * failed, and the cap leads. What was left under the cap (limit: the cap,
 * 0 when not known; reserved: what the allocator held then, its
 * memory_reserved()): the room the request had. */
bool trace_cause_allocator_limit(bool cuda_failed, bool own_oom);
uint64_t trace_cause_limit_room(uint64_t limit, uint64_t reserved);

/* Which cause leads when several apply (the lowest first): memory kept
 * (graphs left behind, growth), which also cuts the free memory into
 * pieces; then the pieces; then whose memory filled the device; too_big
 * last, when nothing above explains the failure, and first when the
 * request is beyond the device (trace_cause_beyond_device); before all,
 * an allocator's own cap (it alone refused the request). */
int trace_cause_rank(enum trace_cause c, bool not_ours_leads, bool beyond_device);
/* A cause of this rank explains an OOM by itself: too_big does not apply. */
#define TRACE_CAUSE_EXPLAINS 2
