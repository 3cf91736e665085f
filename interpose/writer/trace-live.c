/* The live set and what the writer derives from it (trace-live.h).
 *
 * The peak costs nothing per event: as in the reporter (report/model/model.c),
 * a new peak bumps an epoch, and a site saves its live bytes for the peak
 * before its first change after it. The OOM summary and the live sets at
 * OOMs and marks walk the sites that hold memory, not the allocations.
 *
 * Flight mode's ring costs less than the full trace's rows: an event is a
 * few integers appended to the commit's JSON text, a commit one row of
 * ring, a trim the deletion of whole rows. What must outlive the ring is
 * kept apart: an allocation still live when its chunk goes becomes a row
 * of allocs (and that row goes with the chunk of its free); the kinds
 * MT_FLIGHT_KEPT_KINDS and the events listed in kept stay in other_events
 * (a framework allocator's actions as live-tensors.h says);
 * site_totals and kind_totals count everything written, so that the
 * reader knows what left. */
#include "trace-live.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live-cause.h"
#include "live-tensors.h"
#include "trace-cache.h"
#include "live-timeline.h"
#include "trace-live-set.h"
#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-map.h"
#include "util-demangle.h"
#include "util-math.h"
#include "util-size.h"

/* An OOM less than this long after the previous one is the same episode:
 * the program is retrying or giving up, and has had its summary. */
#define EPISODE_NS (10ull * 1000000000ull)
#define SUMMARY_HOLDERS 5
/* Chunks of the ring the writer tells apart; older ones are merged. */
#define MAX_SEGMENTS 1024

/* The live set is trace/trace-live-set.c's, the reporter's rules; an
 * allocation's holder (trace_live_holder.owner) is a site of the
 * writer's: its own, or for a mapped VMM handle its mapping's. Its user
 * byte says it is a row of allocs (flight mode). */
#define PERSISTED 1
typedef struct trace_live_alloc live_alloc;

struct site_live {
	uint64_t bytes, count; /* hooked allocations live now */
	uint64_t at_peak, at_peak_count;
	uint64_t epoch; /* the peak epoch at_peak is up to date for */
	/* rows written: site_totals */
	uint64_t allocs, alloc_bytes, frees, free_bytes;
	uint32_t stack, op;
	uint32_t slot; /* index + 1 in holding, 0: holds nothing */
	int16_t device;
	uint8_t mem;
	bool known; /* mt_live_site was called */
	bool dirty; /* totals to write */
};

/* Consecutive chunks of the ring (rows whose first_seq is in
 * [first, last], and the other_events rows of that range): how many of
 * their allocations are live and not yet rows of allocs; those freed in a
 * later chunk (crossing: they become rows when these chunks go, so that
 * every free in the ring has its allocation); the rows of allocs their
 * own frees released; the kept rows of a framework allocator's actions
 * that their rows ended (live-tensors.h), which go with them. */
struct segment {
	uint64_t first, last, first_time_ns, bytes, live;
	uint64_t *unpersist;
	size_t n_unpersist, cap_unpersist;
	uint64_t *released;
	size_t n_released, cap_released;
	live_alloc *crossing;
	size_t n_crossing, cap_crossing;
};

enum stmt {
	S_PEAK_CLEAR,
	S_PEAK_ROW,
	S_OOM_ROW,
	S_OOM_CLEAR,
	S_MARK_ROW,
	S_MARK_CLEAR,
	S_META,
	S_KEEP,
	S_UNKEEP,
	S_SITE_TOTAL,
	S_KIND_TOTAL,
	S_RING_ADD,
	S_RING_DROP,
	S_PERSIST,
	S_UNPERSIST,
	S_DEL_OTHER,
	S_DEL_ONE,
	S_DEL_CUPTI,
	S_TL_ROW,
	S_TL_CLEAR,
	S_SNAP_ROW,
	S_SNAP_THIN,
	S_COUNT,
};

static const char *const stmt_sql[S_COUNT] = {
	[S_PEAK_CLEAR] = "DELETE FROM live_at_peak",
	[S_PEAK_ROW] = "INSERT INTO live_at_peak(site,bytes,count) VALUES(?,?,?)",
	[S_OOM_ROW] = "INSERT OR REPLACE INTO live_at_oom(oom,site,bytes,count) VALUES(?,?,?,?)",
	[S_OOM_CLEAR] = "DELETE FROM live_at_oom WHERE oom = ?",
	[S_MARK_ROW] = "INSERT OR REPLACE INTO live_at_mark(mark,site,bytes,count) VALUES(?,?,?,?)",
	[S_MARK_CLEAR] = "DELETE FROM live_at_mark WHERE mark = ?",
	[S_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
	[S_KEEP] = "INSERT OR IGNORE INTO kept(seq) VALUES(?)",
	[S_UNKEEP] = "DELETE FROM kept WHERE seq = ?",
	[S_SITE_TOTAL] = "INSERT OR REPLACE INTO site_totals(site,allocs,alloc_bytes,frees,"
			 "free_bytes) VALUES(?,?,?,?,?)",
	[S_KIND_TOTAL] = "INSERT OR REPLACE INTO kind_totals(kind,count) VALUES(?,?)",
	[S_RING_ADD] = "INSERT INTO ring(first_seq,last_seq,events) VALUES(?,?,?)",
	[S_RING_DROP] = "DELETE FROM ring WHERE first_seq >= ?1 AND first_seq <= ?2",
	[S_PERSIST] = "INSERT OR REPLACE INTO allocs(seq,time_ns,site,address,bytes) "
		      "VALUES(?,?,?,?,?)",
	[S_UNPERSIST] = "DELETE FROM allocs WHERE seq = ?",
	[S_DEL_OTHER] = "DELETE FROM other_events WHERE seq >= ?1 AND seq <= ?2"
			" AND kind NOT IN (" MT_FLIGHT_KEPT_KINDS ")"
			" AND seq NOT IN (SELECT seq FROM kept)",
	[S_DEL_ONE] = "DELETE FROM other_events WHERE seq = ?",
	[S_DEL_CUPTI] = "DELETE FROM cupti WHERE seq >= ?1 AND seq <= ?2"
			" AND seq NOT IN (SELECT seq FROM other_events WHERE seq >= ?1 AND seq <= ?2)"
			" AND seq NOT IN (SELECT seq FROM allocs WHERE seq >= ?1 AND seq <= ?2)",
	[S_TL_ROW] = "INSERT OR REPLACE INTO timeline(bucket,min,max,last,t_max,t_last,drops)"
		     " VALUES(?,?,?,?,?,?,?)",
	[S_TL_CLEAR] = "DELETE FROM timeline",
	[S_SNAP_ROW] = "INSERT OR REPLACE INTO live_at_time(time_ns,site,bytes,count)"
		       " VALUES(?,?,?,?)",
	[S_SNAP_THIN] = "DELETE FROM live_at_time WHERE time_ns % ?1 != 0",
};

/* The sites a live set of the timeline keeps, the largest (row 0 is the
 * device's total). */
#define SNAPSHOT_SITES 32

#define KINDS 64 /* above every event kind */
_Static_assert(MT_EV_TENSOR_LAST < KINDS, "kind_totals counts every kind");

struct mt_live {
	sqlite3 *db;
	sqlite3_stmt *stmt[S_COUNT];
	char path[MT_PATH_MAX];
	struct mt_stack_table *stacks;
	bool (*op_name)(uint32_t, char *, size_t, char *, size_t);
	bool (*pyframe)(uintptr_t, const char **, const char **, unsigned *);

	struct trace_live_set set; /* with the device peak, of its peak kinds */

	struct site_live *sites; /* by site id */
	size_t cap_sites;
	uint32_t *holding; /* ids of the sites with live allocations */
	size_t n_holding, cap_holding;
	uint32_t *dirty; /* ids of the sites whose totals changed */
	size_t n_dirty, cap_dirty;
	uint64_t kinds[KINDS]; /* other_events rows by kind */
	bool kinds_dirty;

	uint64_t mem_live[KINDS], mem_peak[KINDS]; /* by memory kind */
	bool mem_peak_dirty;
	uint64_t written_epoch; /* of the live_at_peak rows in the file */
	bool out_of_memory_told;

	uint64_t ooms, marks, last_oom_kept, last_mark_kept;
	bool had_oom;
	uint64_t last_oom_ns;

	/* flight mode */
	uint64_t bound, budget; /* the file's; the main file's share of it */
	char *chunk; /* this commit's ring events: "[[...],[...]" */
	size_t chunk_len, chunk_cap;
	struct segment open; /* of the chunk; first = UINT64_MAX when empty */
	struct segment *segs; /* the ring's chunks, oldest at head */
	size_t head, n_segs, cap_segs;
	uint64_t ring_first, ring_first_time_ns, trimmed_chunks;
	uint64_t used_after, max_commit; /* bytes used after the last trim; the most a commit added */
	bool meta_dirty, over_told;
	struct map mapped; /* address -> the seq of its cuMemMap */
	struct map launched; /* execs launched once */
	struct mt_tensor_keep tensors; /* which allocator actions stay */
	struct trace_cache cache; /* PyTorch's cache, for the answer at its OOM */
	bool has_cache, cache_failed;
	/* a CUDA OOM inside torch's allocator: its answer waits for the
	 * allocator's own OOM, which names the tensor */
	struct mt_event pending;
	uint64_t pending_seq, pending_ns;
	bool has_pending;
	uint64_t tensor_ooms; /* the allocator's OOMs (their actions pinned) */
	sqlite3_stmt *pragma[3];
	struct mt_timeline *tl; /* the whole run's device bytes live */
	struct mt_cause *cause; /* what the OOM answer's cause is judged from */
	int64_t tl_width_written;
};

/* ---- SQL ---- */

static bool run(struct mt_live *l, enum stmt id)
{
	sqlite3_stmt *s = l->stmt[id];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return true;
	mt_log(MT_ENV, "cannot write the trace %s: %s (at %.40s)", l->path,
	       sqlite3_errmsg(l->db), stmt_sql[id]);
	return false;
}

static bool run_i64(struct mt_live *l, enum stmt id, int n, const int64_t *v)
{
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(l->stmt[id], i + 1, v[i]);
	return run(l, id);
}

#define RUN(l, id, ...)                                                              \
	run_i64(l, id, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
		(int64_t[]){ __VA_ARGS__ })

static bool put_meta(struct mt_live *l, const char *key, uint64_t value)
{
	sqlite3_bind_text(l->stmt[S_META], 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(l->stmt[S_META], 2, (int64_t)value);
	return run(l, S_META);
}

/* ---- the sites ---- */

static struct site_live *site_at(struct mt_live *l, uint32_t id)
{
	if (id >= l->cap_sites) {
		size_t cap = l->cap_sites ? l->cap_sites : 256;
		while (cap <= id)
			cap *= 2;
		struct site_live *p = realloc(l->sites, cap * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + l->cap_sites, 0, (cap - l->cap_sites) * sizeof(*p));
		l->sites = p;
		l->cap_sites = cap;
	}
	return &l->sites[id];
}

static struct site_live *known_site(struct mt_live *l, uint32_t id)
{
	struct site_live *s = id && id < l->cap_sites ? &l->sites[id] : NULL;
	return s && s->known ? s : NULL;
}

void mt_live_site(struct mt_live *l, uint32_t site, const struct mt_site_key *k)
{
	struct site_live *s = site_at(l, site);
	if (!s)
		return;
	s->stack = k->stack;
	s->op = k->op;
	s->mem = k->mem;
	s->device = k->device;
	s->epoch = l->set.peak.epoch; /* born now: it held nothing at earlier peaks */
	s->known = true;
}

static bool peak_kind(int mem)
{
	return trace_live_peak_kind(mem);
}

static void touch(struct mt_live *l, struct site_live *s)
{
	if (trace_live_touch(l->set.peak.epoch, &s->epoch)) {
		s->at_peak = s->bytes;
		s->at_peak_count = s->count;
	}
}

static bool push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		uint32_t *p = realloc(*a, c * sizeof(*p));
		if (!p)
			return false;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return true;
}

static void hold(struct mt_live *l, uint32_t id, struct site_live *s)
{
	if (!s->slot && push_u32(&l->holding, &l->n_holding, &l->cap_holding, id))
		s->slot = (uint32_t)l->n_holding;
}

static void unhold(struct mt_live *l, struct site_live *s)
{
	if (!s->slot)
		return;
	uint32_t last = l->holding[--l->n_holding];
	if (s->slot - 1 < l->n_holding) {
		l->holding[s->slot - 1] = last;
		l->sites[last].slot = s->slot;
	}
	s->slot = 0;
}

/* The holder site's live bytes; the device peak is the live set's
 * (it moves after this, so a site saves its bytes at the old peak). */
static void site_add(struct mt_live *l, uint64_t site, uint64_t bytes)
{
	struct site_live *s = site <= UINT32_MAX ? known_site(l, (uint32_t)site) : NULL;
	if (!s)
		return;
	touch(l, s);
	s->bytes = sat_add(s->bytes, bytes);
	s->count++;
	hold(l, (uint32_t)site, s);
}

static void site_sub(struct mt_live *l, uint64_t site, uint64_t bytes)
{
	struct site_live *s = site <= UINT32_MAX ? known_site(l, (uint32_t)site) : NULL;
	if (!s || !s->count)
		return;
	touch(l, s);
	s->bytes = sat_sub(s->bytes, bytes);
	s->count--;
	if (!s->count)
		unhold(l, s);
}

static void mem_add(struct mt_live *l, int mem, uint64_t bytes)
{
	if (mem > 0 && mem < KINDS && (l->mem_live[mem] = sat_add(l->mem_live[mem], bytes)) >
					      l->mem_peak[mem]) {
		l->mem_peak[mem] = l->mem_live[mem];
		l->mem_peak_dirty = true;
	}
}

static void mem_sub(struct mt_live *l, int mem, uint64_t bytes)
{
	if (mem > 0 && mem < KINDS)
		l->mem_live[mem] = sat_sub(l->mem_live[mem], bytes);
}

/* ---- the ring's segments ---- */

/* The segment (open or in the ring) of the allocation with this seq. */
static struct segment *segment_of(struct mt_live *l, uint64_t seq)
{
	if (l->open.first != UINT64_MAX && seq >= l->open.first)
		return &l->open;
	size_t lo = l->head, hi = l->head + l->n_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->segs[mid].last < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->head + l->n_segs && l->segs[lo].first <= seq ? &l->segs[lo] : NULL;
}

static bool push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		uint64_t *p = realloc(*a, c * sizeof(*p));
		if (!p)
			return false;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return true;
}

static bool push_alloc(struct segment *s, const live_alloc *a)
{
	if (s->n_crossing == s->cap_crossing) {
		size_t c = s->cap_crossing ? s->cap_crossing * 2 : 16;
		live_alloc *p = realloc(s->crossing, c * sizeof(*p));
		if (!p)
			return false;
		s->crossing = p;
		s->cap_crossing = c;
	}
	s->crossing[s->n_crossing++] = *a;
	return true;
}

/* a stops being live (its free goes into the open chunk): its segment has
 * one live allocation less; when its allocation is in an older chunk, it
 * will be a row of allocs from that chunk's end to this one's */
static void ring_released(struct mt_live *l, const live_alloc *a)
{
	struct segment *s;
	if (!l->bound)
		return;
	if (!(a->user & PERSISTED)) {
		s = segment_of(l, a->seq);
		if (!s || s == &l->open) {
			if (s && s->live)
				s->live--;
			return;
		}
		if (s->live)
			s->live--;
		if (!push_alloc(s, a))
			return;
	}
	push_u64(&l->open.unpersist, &l->open.n_unpersist, &l->open.cap_unpersist, a->seq);
}

static void persist(struct mt_live *l, live_alloc *a);

/* a is live again (a free that failed) */
static void ring_restored(struct mt_live *l, live_alloc *a)
{
	struct segment *s;
	if (!l->bound)
		return;
	/* its free's chunk must not take its row after all, nor its own
	 * chunk make a row of it as of a freed one */
	for (size_t i = 0; i <= l->n_segs; i++) {
		s = i < l->n_segs ? &l->segs[l->head + i] : &l->open;
		for (size_t j = 0; j < s->n_unpersist; j++) {
			if (s->unpersist[j] == a->seq)
				s->unpersist[j--] = s->unpersist[--s->n_unpersist];
		}
		for (size_t j = 0; j < s->n_crossing; j++) {
			if (s->crossing[j].seq == a->seq)
				s->crossing[j--] = s->crossing[--s->n_crossing];
		}
	}
	if (a->user & PERSISTED)
		return;
	if ((s = segment_of(l, a->seq))) {
		s->live++;
	} else {
		persist(l, a); /* its chunk is gone already */
	}
}

/* ---- the live set's changes ---- */

/* The stack and device of a holder site, for the cause (live-cause.h). */
static void cause_add(struct mt_live *l, uint64_t site, const live_alloc *a, bool add)
{
	const struct site_live *s = site <= UINT32_MAX ? known_site(l, (uint32_t)site) : NULL;
	if (!s || !trace_live_peak_kind(a->mem))
		return;
	if (add)
		mt_cause_alloc(l->cause, s->stack, s->device, a->mem, a->bytes);
	else
		mt_cause_release(l->cause, s->stack, a->bytes);
}

/* Graph memory counts in its kind's total (the cause's graph memory not
 * freed) but in no site: it is held by no one (the live-set contract). */
static void became_live(void *ctx, live_alloc *a, enum trace_live_why why)
{
	struct mt_live *l = ctx;
	mem_add(l, a->mem, a->bytes);
	if (trace_live_holds(a->mem)) {
		site_add(l, a->holder.owner, a->bytes);
		cause_add(l, a->holder.owner, a, true);
	}
	if (why == TRACE_LIVE_RESTORED)
		ring_restored(l, a);
}

static void became_gone(void *ctx, const live_alloc *a, enum trace_live_why why)
{
	struct mt_live *l = ctx;
	(void)why;
	mem_sub(l, a->mem, a->bytes);
	if (trace_live_holds(a->mem)) {
		site_sub(l, a->holder.owner, a->bytes);
		cause_add(l, a->holder.owner, a, false);
	}
	ring_released(l, a);
}

/* A mapped handle's memory goes to its mapping's site, or back; the
 * cause's stacks see it move as the report's rounds do (model.c's
 * model_live_move). */
static void moved(void *ctx, const live_alloc *a, const struct trace_live_holder *before)
{
	struct mt_live *l = ctx;
	site_sub(l, before->owner, a->bytes);
	cause_add(l, before->owner, a, false);
	site_add(l, a->holder.owner, a->bytes);
	cause_add(l, a->holder.owner, a, true);
}

/* The live set cannot grow: said once; the trace goes on without it. */
static void out_of_memory(struct mt_live *l)
{
	if (l->out_of_memory_told)
		return;
	l->out_of_memory_told = true;
	mt_log(MT_ENV, "out of memory for the live set: the trace's live sets and peak "
		       "miss what came after");
}

/* ---- the timeline (flight mode) ---- */

static int cmp_site_bytes(const void *a, const void *b, void *arg)
{
	const struct site_live *sites = arg;
	uint64_t x = sites[*(const uint32_t *)a].bytes, y = sites[*(const uint32_t *)b].bytes;
	return x > y ? -1 : x < y;
}

/* The live set due at at_ns: the device's total (site 0), then the
 * largest sites of the peak's kinds. */
static bool snapshot(struct mt_live *l, int64_t at_ns)
{
	uint32_t *ids = malloc((l->n_holding + 1) * sizeof(*ids));
	size_t n = 0;
	bool ok = true;
	if (!ids)
		return true; /* a live set fewer: not the trace */
	for (size_t i = 0; i < l->n_holding; i++) {
		if (peak_kind(l->sites[l->holding[i]].mem))
			ids[n++] = l->holding[i];
	}
	qsort_r(ids, n, sizeof(*ids), cmp_site_bytes, l->sites);
	ok = RUN(l, S_SNAP_ROW, at_ns, 0, (int64_t)l->set.peak.live, (int64_t)l->set.peak.count);
	for (size_t i = 0; ok && i < n && i < SNAPSHOT_SITES; i++) {
		const struct site_live *s = &l->sites[ids[i]];
		ok = RUN(l, S_SNAP_ROW, at_ns, ids[i], (int64_t)s->bytes, (int64_t)s->count);
	}
	free(ids);
	return ok;
}

/* Before an event is applied. */
static bool timeline_before(struct mt_live *l, uint64_t time_ns)
{
	int64_t at;
	if (!l->tl || !mt_timeline_due(l->tl, (int64_t)time_ns, &at))
		return true;
	return snapshot(l, at);
}

static bool commit_timeline(struct mt_live *l)
{
	struct mt_timeline *tl = l->tl;
	if (!tl)
		return true;
	if (tl->rewrite) {
		if (!run(l, S_TL_CLEAR) ||
		    !RUN(l, S_SNAP_THIN, mt_timeline_period(tl)))
			return false;
		tl->dirty_lo = 0;
		tl->dirty_hi = MT_TIMELINE_BUCKETS;
		tl->rewrite = false;
	}
	for (size_t i = tl->dirty_lo; i < tl->dirty_hi; i++) {
		const struct trace_bucket *b = &tl->b[i];
		if (b->used && !RUN(l, S_TL_ROW, (int64_t)i, (int64_t)b->min, (int64_t)b->max,
				    (int64_t)b->last, b->t_max, b->t_last, (int64_t)b->drops))
			return false;
	}
	tl->dirty_lo = MT_TIMELINE_BUCKETS;
	tl->dirty_hi = 0;
	if (tl->started && tl->width != l->tl_width_written) {
		if (!put_meta(l, "timeline_width_ns", (uint64_t)tl->width) ||
		    !put_meta(l, "timeline_first_ns", (uint64_t)tl->first_ns))
			return false;
		l->tl_width_written = tl->width;
	}
	return true;
}

bool mt_live_holds(const struct mt_live *l, const struct mt_event *ev)
{
	if (ev->kind == MT_EV_MAP)
		return trace_live_mapped(&l->set, ev->address);
	return ev->kind == MT_EV_ALLOC && trace_live_get(&l->set, ev->address) != NULL;
}

int64_t mt_live_track(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		      uint32_t site)
{
	live_alloc a;
	timeline_before(l, time_ns); /* a write that fails fails the commit too */
	/* Only the hooked calls: CUPTI's records of the same memory arrive
	 * late and in batches, and are matched by the reporter. */
	if (ev->source != MT_SOURCE_HOOK)
		return -1;
	switch (ev->kind) {
	case MT_EV_ALLOC:
		a = (live_alloc){ .seq = seq, .time_ns = time_ns, .address = ev->address,
				  .bytes = ev->bytes, .holder = { ev->stack, site }, .site = site,
				  .mem = ev->mem };
		if (!trace_live_alloc(&l->set, &a, NULL))
			out_of_memory(l);
		return -1;
	case MT_EV_FREE:
		switch (trace_live_free(&l->set, ev->address, &a)) {
		case TRACE_LIVE_FREE_DONE:
		case TRACE_LIVE_FREE_KEPT:
			ev->bytes = a.bytes;
			ev->mem = a.mem;
			return (int64_t)a.seq;
		default:
			return -1;
		}
	case MT_EV_FREE_ERROR:
		if (trace_live_free_error(&l->set, ev->address, seq, time_ns, &a) && a.mem) {
			ev->bytes = a.bytes;
			ev->mem = a.mem;
		}
		return -1;
	case MT_EV_MAP:
		/* site: the mapping's, the holder of what it maps (case F) */
		if (!ev->status && ev->address &&
		    !trace_live_map(&l->set, ev->address, ev->handle, ev->bytes, seq,
				    &(struct trace_live_holder){ ev->stack, site }))
			out_of_memory(l);
		return -1;
	case MT_EV_UNMAP:
		trace_live_unmap(&l->set, ev->address, seq);
		return -1;
	case MT_EV_UNMAP_ERROR:
		trace_live_unmap_error(&l->set, ev->address, seq, time_ns);
		return -1;
	default:
		return -1;
	}
}

/* ---- rows ---- */

static bool chunk_reserve(struct mt_live *l, size_t more)
{
	if (l->chunk_len + more <= l->chunk_cap)
		return true;
	size_t cap = l->chunk_cap ? l->chunk_cap : 64u << 10;
	while (cap < l->chunk_len + more)
		cap *= 2;
	char *p = realloc(l->chunk, cap);
	if (!p)
		return false;
	l->chunk = p;
	l->chunk_cap = cap;
	return true;
}

static char *put_i64(char *p, int64_t v)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	if (v < 0)
		*p++ = '-';
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* [v0,v1,...] after a "," or the chunk's "[" */
static void chunk_event(struct mt_live *l, const int64_t *v, int n, uint64_t seq,
			uint64_t time_ns)
{
	if (!chunk_reserve(l, 2 + (size_t)n * 21 + 2))
		return; /* out of memory: the event is not in the ring */
	char *p = l->chunk + l->chunk_len;
	*p++ = l->chunk_len ? ',' : '[';
	*p++ = '[';
	for (int i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p = put_i64(p, v[i]);
	}
	*p++ = ']';
	l->chunk_len = (size_t)(p - l->chunk);
	if (l->open.first == UINT64_MAX) {
		l->open.first = seq;
		l->open.first_time_ns = time_ns;
	}
	l->open.last = seq;
}

bool mt_live_row(struct mt_live *l, uint64_t seq, uint64_t time_ns, uint32_t site,
		 const struct mt_event *ev, int64_t alloc)
{
	struct site_live *s = site_at(l, site);
	bool is_alloc = ev->kind == MT_EV_ALLOC;
	if (s) {
		if (is_alloc) {
			s->allocs++;
			s->alloc_bytes += ev->bytes;
		} else {
			s->frees++;
			s->free_bytes += ev->bytes;
		}
		if (!s->dirty && push_u32(&l->dirty, &l->n_dirty, &l->cap_dirty, site))
			s->dirty = true;
	}
	if (!l->bound)
		return false;
	if (is_alloc) {
		int64_t v[MT_RING_ALLOC_FIELDS] = { (int64_t)seq, (int64_t)time_ns, site,
						    (int64_t)ev->address, (int64_t)ev->bytes };
		chunk_event(l, v, MT_RING_ALLOC_FIELDS, seq, time_ns);
		if (ev->source == MT_SOURCE_HOOK && ev->address)
			l->open.live++;
	} else {
		int64_t v[MT_RING_FREE_FIELDS] = { (int64_t)seq, (int64_t)time_ns, site, alloc,
						   (int64_t)ev->address, (int64_t)ev->bytes };
		chunk_event(l, v, MT_RING_FREE_FIELDS, seq, time_ns);
	}
	return true;
}

/* An other_events row's share of the file, for the trim's estimate: its
 * cell, record header and values, as SQLite lays them out. */
#define OTHER_ROW_BYTES 40

void mt_live_other(struct mt_live *l, uint64_t seq, uint64_t time_ns, int kind)
{
	if (kind > 0 && kind < KINDS) {
		l->kinds[kind]++;
		l->kinds_dirty = true;
	}
	if (!l->bound)
		return;
	/* the ring's chunk covers it: it goes with the chunk, unless kept */
	if (l->open.first == UINT64_MAX) {
		l->open.first = seq;
		l->open.first_time_ns = time_ns;
	}
	l->open.last = seq;
	l->open.bytes += OTHER_ROW_BYTES;
}

/* The live set now, by site, under key (an OOM's or a mark's seq). */
static bool write_live(struct mt_live *l, enum stmt id, uint64_t key)
{
	for (size_t i = 0; i < l->n_holding; i++) {
		uint32_t site = l->holding[i];
		const struct site_live *s = &l->sites[site];
		if (!RUN(l, id, (int64_t)key, site, (int64_t)s->bytes, (int64_t)s->count))
			return false;
	}
	return true;
}

/* The first kept - 1 and the last: the one before goes when past them. */
static bool write_capped(struct mt_live *l, enum stmt row, enum stmt clear, uint64_t *n,
			 uint64_t *last, unsigned kept, uint64_t seq)
{
	if (*n >= kept && !RUN(l, clear, (int64_t)*last))
		return false;
	if (*n >= kept - 1)
		*last = seq;
	(*n)++;
	return write_live(l, row, seq);
}

/* ---- the out-of-memory summary ---- */

/* C++ names as the report writes them (trace/util-demangle.c). */
static const char *demangled(const char *name, char *out, size_t n)
{
	char *d = trace_demangle(name);
	if (!d)
		return name;
	snprintf(out, n, "%s", d);
	free(d);
	return out;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* One frame of a stack, read for trace-user-frame.h's rule and named. */
struct frame_read {
	struct mt_live *l;
	const uintptr_t *ips;
	char name[384];
};

static bool live_frame_at(void *ctx, uint32_t i, struct trace_frame_view *out)
{
	struct frame_read *r = ctx;
	struct mt_symbol sym;
	unsigned line = 0;

	*out = (struct trace_frame_view){ 0 };
	if (MT_IS_PYFRAME(r->ips[i])) {
		out->python = true;
		return r->l->pyframe &&
		       r->l->pyframe(r->ips[i], &out->function, &out->file, &line);
	}
	if (!mt_symbol_lookup(r->ips[i], &sym) || !sym.module_path[0])
		return false;
	/* ip is a return address: ip - 1 lies in the call */
	out->function = sym.function ? sym.function
			: mt_symbol_static(sym.module_path, r->ips[i] - 1 - sym.module_base,
					   r->name, sizeof(r->name))
				? r->name
				: NULL;
	out->module_path = sym.module_path;
	return true;
}

/* "function (file:line)" of a Python frame, "function (module)" of a
 * native one; file and line of native frames are the report's. */
static void frame_label(struct frame_read *r, uint32_t i, char *out, size_t n)
{
	struct trace_frame_view v;
	char dm[384];
	unsigned line = 0;

	if (MT_IS_PYFRAME(r->ips[i])) {
		const char *fn = NULL, *file = NULL;
		r->l->pyframe(r->ips[i], &fn, &file, &line);
		snprintf(out, n, "%s (%s:%u)", fn ? fn : "?", file ? base_name(file) : "?", line);
		return;
	}
	live_frame_at(r, i, &v);
	snprintf(out, n, "%s (%s)", v.function ? demangled(v.function, dm, sizeof(dm)) : "?",
		 base_name(v.module_path));
}

/* The holder's name as the report's default grouping has it: the user's
 * frame (trace-user-frame.h's rule: the innermost Python frame of the
 * user's, else the user's innermost native frame), with the operation
 * before a native frame; with_caller adds " <- " and its caller's.
 * Static functions are looked up in the module's .symtab. */
static void stack_name(struct mt_live *l, uint32_t stack, uint32_t op, bool with_caller,
		       char *out, size_t n)
{
	unsigned depth = 0;
	struct frame_read r = { .l = l };
	struct trace_user_frames u;
	uint32_t at, caller;
	char domain[64];

	r.ips = stack ? mt_stack_get(l->stacks, stack, &depth) : NULL;
	trace_user_frames(r.ips ? depth : 0, live_frame_at, &r, &u);
	at = trace_user_frame(&u, &caller);
	if (u.python == TRACE_USER_NONE && op && l->op_name &&
	    l->op_name(op, out, n, domain, sizeof(domain)) && out[0])
		return;
	if (at == TRACE_USER_NONE) {
		snprintf(out, n, "(no frame of the program's own)");
		return;
	}
	frame_label(&r, at, out, n);
	if (with_caller && caller != TRACE_USER_NONE) {
		size_t len = strlen(out);
		if (len + 4 < n) {
			snprintf(out + len, n - len, " <- ");
			frame_label(&r, caller, out + len + 4, n - len - 4);
		}
	}
}

struct holder {
	uint32_t stack, op;
	uint64_t bytes, count;
};

static int cmp_holder(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The request (req) and "; device D had F free of T" (dev): when request
 * and free round alike, each exact, and by how much it missed, to two
 * decimals (3.75 KiB), as the report's headline has them. */
static void oom_sizes(const struct mt_event *ev, char *req, size_t rn, char *dev, size_t n)
{
	struct fmt_str fs = fmt_size(ev->device_free), ts = fmt_size(ev->device_total);
	const char *f = fs.s, *t = ts.s;
	snprintf(req, rn, "%s", fmt_size(ev->bytes).s);
	dev[0] = '\0';
	if (!ev->device_total)
		return;
	if (strcmp(req, f) || ev->bytes <= ev->device_free) {
		snprintf(dev, n, "; device %d had %s free of %s", ev->device, f, t);
		return;
	}
	snprintf(req + strlen(req), rn - strlen(req), " (%s)", fmt_bytes(ev->bytes).s);
	snprintf(dev, n, "; device %d had %s (%s) free of %s, short by %s", ev->device, f,
		 fmt_bytes(ev->device_free).s, t, fmt_size_fine(ev->bytes - ev->device_free).s);
}

/* The names of the first holders shown and (last) of the failed request's
 * stack: where two stacks read alike (one helper, two callers), each
 * with its caller. */
static void holder_names(struct mt_live *l, const struct mt_event *ev, const struct holder *h,
			 size_t n, char names[][512])
{
	size_t shown = n < SUMMARY_HOLDERS ? n : SUMMARY_HOLDERS;
	uint32_t stacks[SUMMARY_HOLDERS + 1], ops[SUMMARY_HOLDERS + 1];

	for (size_t i = 0; i < shown; i++) {
		stacks[i] = h[i].stack;
		ops[i] = h[i].op;
	}
	stacks[SUMMARY_HOLDERS] = ev->stack;
	ops[SUMMARY_HOLDERS] = ev->op;
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (i < shown || i == SUMMARY_HOLDERS)
			stack_name(l, stacks[i], ops[i], false, names[i], 512);
	}
	bool alike[SUMMARY_HOLDERS + 1] = { false };
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (i >= shown && i != SUMMARY_HOLDERS)
			continue;
		for (size_t j = 0; j < shown && !alike[i]; j++)
			alike[i] = stacks[j] != stacks[i] && strcmp(names[j], names[i]) == 0;
	}
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (alike[i])
			stack_name(l, stacks[i], ops[i], true, names[i], 512);
	}
}

static void cause_name(void *ctx, uint32_t stack, char *out, size_t n)
{
	stack_name(ctx, stack, 0, true, out, n);
}

/* The cause's lines (live-cause.h) of the OOM ev, whose holders are h. */
static void cause_lines(struct mt_live *l, const struct mt_event *ev, const struct holder *h,
			size_t n, char *out, size_t outsz)
{
	uint32_t *stacks = calloc(n + 1, sizeof(*stacks));
	bool launch = ev->kind == MT_EV_GRAPH_LAUNCH;

	out[0] = '\0';
	if (!stacks)
		return;
	for (size_t i = 0; i < n; i++)
		stacks[i] = h[i].stack;
	struct mt_cause_oom o = {
		.stack = ev->stack, .requested = launch ? 0 : ev->bytes,
		.has_device = !launch && ev->device_total, .device_free = ev->device_free,
		.device_total = ev->device_total, .device = ev->device, .live = l->set.peak.live,
		.peak = l->set.peak.peak, .graph_live = l->mem_live[MT_MEM_GRAPH], .holders = stacks,
		.n_holders = n,
	};
	mt_cause_answer(l->cause, &o, cause_name, l, out, outsz);
	free(stacks);
}

/* A few lines on stderr at the first OOM of an episode: what failed, what
 * the device had, the largest holders, the cause and what to try
 * (live-cause.h), the command for the whole story. A graph launch that
 * failed for memory is one too. */
static void summary(struct mt_live *l, const struct mt_event *ev, uint64_t seq)
{
	struct holder *h = calloc(l->n_holding + 1, sizeof(*h));
	size_t n = 0;
	if (!h)
		return;
	/* by stack: the sites of one stack differ by thread or stream */
	for (size_t i = 0; i < l->n_holding; i++) {
		const struct site_live *s = &l->sites[l->holding[i]];
		size_t j;
		if (!peak_kind(s->mem))
			continue;
		for (j = 0; j < n && h[j].stack != s->stack; j++)
			;
		if (j == n)
			h[n++] = (struct holder){ .stack = s->stack, .op = s->op };
		h[j].bytes += s->bytes;
		h[j].count += s->count;
	}
	qsort(h, n, sizeof(*h), cmp_holder);

	char text[6144], a[80], b[256], where[512], names[SUMMARY_HOLDERS + 1][512], cause[2048];
	size_t len = 0;
#define ADD(...)                                                                           \
	do {                                                                               \
		if (len < sizeof(text))                                                    \
			len += (size_t)snprintf(text + len, sizeof(text) - len, __VA_ARGS__); \
	} while (0)
	holder_names(l, ev, h, n, names);
	snprintf(where, sizeof(where), "%s", names[SUMMARY_HOLDERS]);
	oom_sizes(ev, a, sizeof(a), b, sizeof(b));
	if (ev->kind == MT_EV_GRAPH_LAUNCH) /* its stack may not be recorded */
		ADD("memtrace: out of memory: %s failed%s%s", mt_api_name(ev->api),
		    ev->stack ? " in " : "", ev->stack ? where : "");
	else
		ADD("memtrace: out of memory: %s of %s failed in %s%s", mt_api_name(ev->api), a,
		    where, b);
	ADD("\nmemtrace:   this process holds %s in %llu allocations", fmt_size(l->set.peak.live).s,
	    (unsigned long long)l->set.peak.count);
	ADD(n ? "; the largest holders:\n" : "\n");
	for (size_t i = 0; i < n && i < SUMMARY_HOLDERS; i++) {
		ADD("memtrace:   %10s in %llu: %s\n", fmt_size(h[i].bytes).s,
		    (unsigned long long)h[i].count, names[i]);
	}
	if (n > SUMMARY_HOLDERS)
		ADD("memtrace:   (and %zu more)\n", n - SUMMARY_HOLDERS);
	cause_lines(l, ev, h, n, cause, sizeof(cause));
	ADD("%s", cause);
	ADD("memtrace:   the full report: memtrace report %s\n", l->path);
#undef ADD
	(void)seq;
	if (len >= sizeof(text)) {
		len = sizeof(text) - 1;
		text[len - 1] = '\n';
	}
	mt_log_text(text, len);
	free(h);
}

/* ---- the answer at PyTorch's OOM: the tensor view ---- */

static int cmp_i64(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The tensors' blocks by the stack that made them, largest first; *n of
 * them. NULL when out of memory. */
static struct holder *tensor_holders(const struct trace_cache *c, size_t *n)
{
	struct holder *h = calloc(c->tensors + 1, sizeof(*h));
	size_t k = 0, out = 0;
	if (!h)
		return NULL;
	for (size_t i = 0; i < c->n_segs; i++)
		for (size_t j = 0; j < c->segs[i].n_blocks; j++) {
			const struct trace_cache_block *b = &c->segs[i].blocks[j];
			if (b->allocated && k < c->tensors)
				h[k++] = (struct holder){ .stack = (uint32_t)b->stack,
							  .bytes = b->size, .count = 1 };
		}
	qsort(h, k, sizeof(*h), cmp_i64);
	for (size_t i = 0; i < k; i++) {
		if (out && h[out - 1].stack == h[i].stack) {
			h[out - 1].bytes += h[i].bytes;
			h[out - 1].count++;
		} else {
			h[out++] = h[i];
		}
	}
	qsort(h, out, sizeof(*h), cmp_holder);
	*n = out;
	return h;
}

/* PyTorch's allocator gave up on the tensor of ev: the CUDA call that
 * failed for it (cuda, when one did), the tensor asked for, what torch's
 * cache held (memory_allocated(), memory_reserved()), the lines whose
 * tensors hold it, and when the cache's free memory would have held the
 * tensor but no free block did, fragmentation and what to try. */
static void tensor_summary(struct mt_live *l, const struct mt_event *ev,
			   const struct mt_event *cuda)
{
	const struct trace_cache *c = &l->cache;
	uint64_t free_in_cache = sat_sub(c->reserved, c->allocated);
	uint64_t largest = trace_cache_largest_free(c);
	size_t n = 0;
	struct holder *h = tensor_holders(c, &n);
	char text[6144], where[512], a[80], b[256], name[512];
	size_t len = 0;
#define ADD(...)                                                                           \
	do {                                                                               \
		if (len < sizeof(text))                                                    \
			len += (size_t)snprintf(text + len, sizeof(text) - len, __VA_ARGS__); \
	} while (0)
	if (!h)
		return;
	stack_name(l, ev->stack, ev->op, false, where, sizeof(where));
	if (cuda) {
		oom_sizes(cuda, a, sizeof(a), b, sizeof(b));
		ADD("memtrace: out of memory: %s of %s failed in %s%s\n", mt_api_name(cuda->api), a,
		    where, b);
	} else {
		ADD("memtrace: out of memory: PyTorch's caching allocator refused the tensor in %s "
		    "with no CUDA call failing (a limit of its own, such as "
		    "set_per_process_memory_fraction)\n",
		    where);
	}
	ADD("memtrace:   the tensor asked for: %s (%s); PyTorch's cache: %s reserved (%s), %s "
	    "allocated (%s) to %llu tensors, %s free in the cache (largest free block %s)\n",
	    fmt_size(ev->bytes).s, fmt_bytes(ev->bytes).s, fmt_size(c->reserved).s,
	    fmt_bytes(c->reserved).s, fmt_size(c->allocated).s, fmt_bytes(c->allocated).s,
	    (unsigned long long)c->tensors, fmt_size(free_in_cache).s, fmt_size(largest).s);
	if (n)
		ADD("memtrace:   the tensors, by the line that made them:\n");
	for (size_t i = 0; i < n && i < SUMMARY_HOLDERS; i++) {
		stack_name(l, h[i].stack, 0, false, name, sizeof(name));
		ADD("memtrace:   %10s in %llu: %s\n", fmt_size(h[i].bytes).s,
		    (unsigned long long)h[i].count, name);
	}
	if (n > SUMMARY_HOLDERS)
		ADD("memtrace:   (and %zu more)\n", n - SUMMARY_HOLDERS);
	char cause[1024];
	mt_cause_own_answer(&(struct mt_cause_own_oom){ .cuda_failed = cuda != NULL,
							.requested = ev->bytes,
							.limit = ev->limit,
							.reserved = c->reserved,
							.has_device_free = ev->device_total != 0,
							.device_free = ev->address },
			    cause, sizeof(cause));
	if (cause[0])
		ADD("%s", cause);
	else if (free_in_cache >= ev->bytes && largest < ev->bytes)
		ADD("memtrace:   cause (fragmentation): %s of the cache is free, in pieces: its "
		    "largest free block is smaller than the tensor\n"
		    "memtrace:   try: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
		    "torch.cuda.empty_cache() before the step, fewer distinct tensor sizes\n",
		    fmt_size(free_in_cache).s);
	ADD("memtrace:   the full report: memtrace report %s\n", l->path);
#undef ADD
	if (len >= sizeof(text)) {
		len = sizeof(text) - 1;
		text[len - 1] = '\n';
	}
	mt_log_text(text, len);
	free(h);
}

/* ---- events ---- */

static bool event(struct mt_live *l, uint64_t seq, uint64_t time_ns, const struct mt_event *ev);

bool mt_live_event(struct mt_live *l, uint64_t seq, uint64_t time_ns, const struct mt_event *ev)
{
	if (!timeline_before(l, time_ns) || !event(l, seq, time_ns, ev))
		return false;
	if (l->tl)
		mt_timeline_put(l->tl, (int64_t)time_ns, l->set.peak.live);
	return true;
}

/* cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY alike */
#define GRAPH_LAUNCH_OOM 2

/* The summary at the first OOM of an episode. */
static void oom_answer(struct mt_live *l, const struct mt_event *ev, uint64_t seq,
		       uint64_t time_ns)
{
	if (!l->had_oom || time_ns >= l->last_oom_ns + EPISODE_NS)
		summary(l, ev, seq);
	l->had_oom = true;
	l->last_oom_ns = time_ns;
}

/* The OOM told on stderr failed on a thread with no line of the
 * program's (TensorFlow's executor): where it reached the program. */
static void raised_line(struct mt_live *l, const struct mt_event *ev)
{
	char where[512], text[600];
	stack_name(l, (uint32_t)ev->stack, ev->op, true, where, sizeof(where));
	int n = snprintf(text, sizeof(text), "memtrace:   raised in %s\n", where);
	if (n > 0)
		mt_log_text(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* A framework allocator's action kept (live-tensors.h). */
static bool keep_row(void *ctx, uint64_t seq)
{
	return RUN((struct mt_live *)ctx, S_KEEP, (int64_t)seq);
}

/* An action's row ended by the row just written: in an older chunk, it
 * stays until this one goes; in this one, it goes with it. */
static bool tensor_ended(void *ctx, uint64_t seq)
{
	struct mt_live *l = ctx;
	if (seq >= l->open.first)
		return true;
	return keep_row(l, seq) &&
	       push_u64(&l->open.released, &l->open.n_released, &l->open.cap_released, seq);
}

/* An OOM: the allocator's actions in effect stay for good. */
static bool pin_tensors(struct mt_live *l)
{
	return mt_tkeep_in_effect(&l->tensors, 0, UINT64_MAX, true, keep_row, l);
}

/* An action of PyTorch's allocator into its cache's model. */
static void cache_event(struct mt_live *l, const struct mt_event *ev)
{
	l->has_cache = true;
	if (!trace_cache_event(&l->cache, ev->kind, ev->address, ev->bytes, ev->stream, ev->stack,
			       ev->device) &&
	    !l->cache_failed) {
		mt_log(MT_ENV, "out of memory for PyTorch's cache's model: the answer at its OOM "
			       "may miss tensors");
		l->cache_failed = true;
	}
}

/* What torch's allocator does between a CUDA OOM and its own: it gives
 * its cached segments back and tries again. Anything else means it did
 * not give up (the retry worked) or the OOM was not its: the CUDA OOM's
 * answer is due. */
static bool oom_path(unsigned kind)
{
	return kind == MT_EV_FREE || kind == MT_EV_OOM || kind == MT_EV_UNMAP ||
	       kind == MT_EV_CACHE_SEGMENT_FREE || kind == MT_EV_CACHE_SEGMENT_UNMAP ||
	       kind == MT_EV_TENSOR_OOM;
}

static bool event(struct mt_live *l, uint64_t seq, uint64_t time_ns, const struct mt_event *ev)
{
	bool hooked = ev->source == MT_SOURCE_HOOK;
	uint64_t *known, before, n;

	if (l->has_pending && !oom_path(ev->kind)) {
		l->has_pending = false;
		oom_answer(l, &l->pending, l->pending_seq, l->pending_ns);
	}

	switch (ev->kind) {
	case MT_EV_OOM:
		if (!hooked)
			return true;
		if (!l->has_cache)
			oom_answer(l, ev, seq, time_ns);
		else if (!l->has_pending) {
			/* inside torch's allocator: its OOM (or its retry) comes next */
			l->pending = *ev;
			l->pending_seq = seq;
			l->pending_ns = time_ns;
			l->has_pending = true;
		}
		if (l->bound && l->ooms < TRACE_LIVE_OOMS_KEPT && !pin_tensors(l))
			return false;
		return write_capped(l, S_OOM_ROW, S_OOM_CLEAR, &l->ooms, &l->last_oom_kept,
				    TRACE_LIVE_OOMS_KEPT, seq);
	case MT_EV_OOM_RAISED:
		if (hooked && ev->stack && l->had_oom)
			raised_line(l, ev);
		return true;
	case MT_EV_MARK:
		before = l->last_mark_kept;
		n = l->marks;
		if (!write_capped(l, S_MARK_ROW, S_MARK_CLEAR, &l->marks, &l->last_mark_kept,
				  TRACE_LIVE_MARKS_KEPT, seq))
			return false;
		if (!l->bound)
			return true;
		/* the ring keeps the marks whose live sets are kept */
		if (n >= TRACE_LIVE_MARKS_KEPT && !RUN(l, S_UNKEEP, (int64_t)before))
			return false;
		return RUN(l, S_KEEP, (int64_t)seq);
	case MT_EV_MAP:
		if (!hooked || ev->status || !ev->address || !l->bound)
			return true;
		map_put_u64(&l->mapped, ev->address, seq);
		return RUN(l, S_KEEP, (int64_t)seq);
	case MT_EV_UNMAP:
		if (!l->bound || !hooked || !(known = map_get_u64(&l->mapped, ev->address)))
			return true;
		before = *known;
		map_remove(&l->mapped, ev->address, &before);
		return RUN(l, S_UNKEEP, (int64_t)before);
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
		if (hooked && !ev->status)
			mt_cause_exec(l->cause, ev->kind == MT_EV_EXEC_CREATE);
		return true;
	case MT_EV_GRAPH_LAUNCH:
	case MT_EV_GRAPH_UPLOAD:
		if (hooked && ev->kind == MT_EV_GRAPH_LAUNCH && ev->status == GRAPH_LAUNCH_OOM)
			oom_answer(l, ev, seq, time_ns);
		/* the first makes the graph's memory physical (report/model/model-graph.c) */
		if (!l->bound || ev->status || !ev->handle || map_get(&l->launched, ev->handle))
			return true;
		map_put_u64(&l->launched, ev->handle, 1);
		return RUN(l, S_KEEP, (int64_t)seq);
	case MT_EV_TENSOR_OOM:
		if (l->has_pending || !l->had_oom || time_ns >= l->last_oom_ns + EPISODE_NS)
			tensor_summary(l, ev, l->has_pending ? &l->pending : NULL);
		l->has_pending = false;
		l->had_oom = true;
		l->last_oom_ns = time_ns;
		if (l->bound && l->tensor_ooms++ < TRACE_LIVE_OOMS_KEPT && !pin_tensors(l))
			return false;
		return true;
	default:
		if (ev->kind < MT_EV_TENSOR_FIRST || ev->kind > MT_EV_TENSOR_LAST)
			return true;
		cache_event(l, ev);
		return !l->bound || mt_tkeep_event(&l->tensors, seq, ev, tensor_ended, keep_row, l);
	}
}

/* ---- commits ---- */

static bool commit_chunk(struct mt_live *l)
{
	if (l->open.first == UINT64_MAX)
		return true;
	/* a chunk of other_events rows alone has no ring row */
	if (l->chunk_len) {
		if (!chunk_reserve(l, 1))
			return false;
		l->chunk[l->chunk_len++] = ']';
		sqlite3_stmt *s = l->stmt[S_RING_ADD];
		sqlite3_bind_int64(s, 1, (int64_t)l->open.first);
		sqlite3_bind_int64(s, 2, (int64_t)l->open.last);
		sqlite3_bind_text(s, 3, l->chunk, (int)l->chunk_len, SQLITE_STATIC);
		if (!run(l, S_RING_ADD))
			return false;
	}
	l->open.bytes += l->chunk_len;
	l->chunk_len = 0;
	if (l->n_segs == MAX_SEGMENTS) {
		/* merge the two oldest: a coarser trim, the same memory */
		struct segment *a = &l->segs[l->head], *b = a + 1;
		b->first = a->first;
		b->first_time_ns = a->first_time_ns;
		b->bytes += a->bytes;
		b->live += a->live;
		for (size_t i = 0; i < a->n_unpersist; i++)
			push_u64(&b->unpersist, &b->n_unpersist, &b->cap_unpersist, a->unpersist[i]);
		for (size_t i = 0; i < a->n_crossing; i++)
			push_alloc(b, &a->crossing[i]);
		for (size_t i = 0; i < a->n_released; i++)
			push_u64(&b->released, &b->n_released, &b->cap_released, a->released[i]);
		free(a->unpersist);
		free(a->crossing);
		free(a->released);
		l->head++;
		l->n_segs--;
	}
	if (l->head + l->n_segs == l->cap_segs) {
		if (l->head) {
			memmove(l->segs, l->segs + l->head, l->n_segs * sizeof(*l->segs));
			l->head = 0;
		} else {
			size_t cap = l->cap_segs ? l->cap_segs * 2 : 64;
			struct segment *p = realloc(l->segs, cap * sizeof(*p));
			if (!p)
				return false;
			l->segs = p;
			l->cap_segs = cap;
		}
	}
	l->segs[l->head + l->n_segs++] = l->open;
	l->open = (struct segment){ .first = UINT64_MAX };
	return true;
}

static bool commit_totals(struct mt_live *l)
{
	for (size_t i = 0; i < l->n_dirty; i++) {
		struct site_live *s = &l->sites[l->dirty[i]];
		s->dirty = false;
		if (!RUN(l, S_SITE_TOTAL, l->dirty[i], (int64_t)s->allocs, (int64_t)s->alloc_bytes,
			 (int64_t)s->frees, (int64_t)s->free_bytes))
			return false;
	}
	l->n_dirty = 0;
	for (int k = 0; l->kinds_dirty && k < KINDS; k++) {
		if (l->kinds[k] && !RUN(l, S_KIND_TOTAL, k, (int64_t)l->kinds[k]))
			return false;
	}
	l->kinds_dirty = false;
	return true;
}

static bool commit_peak(struct mt_live *l)
{
	const struct trace_live_peak *p = &l->set.peak;
	if (l->written_epoch == p->epoch)
		return true;
	if (!run(l, S_PEAK_CLEAR))
		return false;
	for (size_t id = 1; id < l->cap_sites; id++) {
		const struct site_live *s = &l->sites[id];
		bool saved = s->epoch == p->epoch;
		uint64_t bytes = saved ? s->at_peak : s->bytes;
		uint64_t count = saved ? s->at_peak_count : s->count;
		if (s->known && bytes && peak_kind(s->mem) &&
		    !RUN(l, S_PEAK_ROW, (int64_t)id, (int64_t)bytes, (int64_t)count))
			return false;
	}
	if (!put_meta(l, "peak_bytes", p->peak) || !put_meta(l, "peak_seq", p->peak_seq) ||
	    !put_meta(l, "peak_time_ns", p->peak_time_ns))
		return false;
	l->written_epoch = p->epoch;
	return true;
}

static bool commit_mem_peaks(struct mt_live *l)
{
	char key[32];
	for (int k = 1; l->mem_peak_dirty && k < KINDS; k++) {
		snprintf(key, sizeof(key), "mem_peak_%d", k);
		if (l->mem_peak[k] && !put_meta(l, key, l->mem_peak[k]))
			return false;
	}
	l->mem_peak_dirty = false;
	return true;
}

bool mt_live_commit(struct mt_live *l)
{
	if (!commit_chunk(l) || !commit_totals(l) || !commit_peak(l) || !commit_mem_peaks(l) ||
	    !commit_timeline(l))
		return false;
	if (l->meta_dirty) {
		if (!put_meta(l, "ring_first_seq", l->ring_first) ||
		    !put_meta(l, "ring_first_time_ns", l->ring_first_time_ns) ||
		    !put_meta(l, "ring_chunks_dropped", l->trimmed_chunks))
			return false;
		l->meta_dirty = false;
	}
	return true;
}

/* ---- the ring's trim ---- */

static int64_t pragma(struct mt_live *l, int i)
{
	sqlite3_stmt *s = l->pragma[i];
	int64_t v = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return v;
}

/* Pages in use in the main file: what deleting rows gives back (freed
 * pages are reused, so the file stops growing at its high-water mark). */
static uint64_t used_bytes(struct mt_live *l)
{
	int64_t pages = pragma(l, 0), free_pages = pragma(l, 1), size = pragma(l, 2);
	if (pages < 0 || free_pages < 0 || size <= 0)
		return 0;
	return (uint64_t)(pages - free_pages) * (uint64_t)size;
}

static void persist(struct mt_live *l, live_alloc *a)
{
	if ((a->user & PERSISTED) || !RUN(l, S_PERSIST, (int64_t)a->seq, (int64_t)a->time_ns, a->site,
				 (int64_t)a->address, (int64_t)a->bytes))
		return;
	a->user |= PERSISTED;
}

/* Segments [head, head + n) leave the ring: their allocations still live
 * become rows of allocs, the rows their frees released go, and the other
 * events of their range but the kept ones. */
static bool drop_segments(struct mt_live *l, size_t n)
{
	struct segment *first = &l->segs[l->head], *last = &l->segs[l->head + n - 1];
	uint64_t from = l->ring_first, to = last->last, live = 0;
	bool ok = sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;

	for (size_t i = 0; i < n; i++)
		live += l->segs[l->head + i].live;
	live_alloc *a;
	for (size_t pos = 0; ok && live && (a = trace_live_next(&l->set, &pos));) {
		if (!(a->user & PERSISTED) && a->seq >= first->first && a->seq <= to) {
			persist(l, a);
			ok = a->user & PERSISTED;
		}
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &l->segs[l->head + i];
		for (size_t j = 0; ok && j < s->n_crossing; j++) {
			persist(l, &s->crossing[j]);
			ok = s->crossing[j].user & PERSISTED;
		}
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &l->segs[l->head + i];
		for (size_t j = 0; ok && j < s->n_unpersist; j++)
			ok = RUN(l, S_UNPERSIST, (int64_t)s->unpersist[j]);
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &l->segs[l->head + i];
		for (size_t j = 0; ok && j < s->n_released; j++)
			ok = RUN(l, S_UNKEEP, (int64_t)s->released[j]) &&
			     RUN(l, S_DEL_ONE, (int64_t)s->released[j]);
	}
	/* the allocator's actions still in effect stay */
	ok = ok && mt_tkeep_in_effect(&l->tensors, from, to, false, keep_row, l);
	ok = ok && RUN(l, S_RING_DROP, (int64_t)first->first, (int64_t)to) &&
	     RUN(l, S_DEL_OTHER, (int64_t)from, (int64_t)to) &&
	     RUN(l, S_DEL_CUPTI, (int64_t)from, (int64_t)to);
	if (!ok) {
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		free(l->segs[l->head + i].unpersist);
		free(l->segs[l->head + i].crossing);
		free(l->segs[l->head + i].released);
	}
	l->head += n;
	l->n_segs -= n;
	l->trimmed_chunks += n;
	l->ring_first = to + 1;
	l->ring_first_time_ns = l->n_segs ? l->segs[l->head].first_time_ns : l->ring_first_time_ns;
	l->meta_dirty = true;
	return mt_live_commit(l) && sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
}

bool mt_live_trim(struct mt_live *l)
{
	uint64_t high, low, used, freed = 0;
	size_t n = 0;

	if (!l->bound)
		return true;
	/* the main file must never pass its one chunk: room is left for the
	 * largest commit seen, twice */
	used = used_bytes(l);
	if (used > l->used_after && used - l->used_after > l->max_commit)
		l->max_commit = used - l->used_after;
	high = l->budget > 4 * l->max_commit ? l->budget - 2 * l->max_commit : l->budget / 2;
	low = high - l->budget / 8;
	l->used_after = used;
	if (used <= high)
		return true;
	/* the oldest chunks whose text adds up to what brings the file
	 * under low (their live allocations stay: a little less comes back) */
	while (n < l->n_segs && used - freed > low)
		freed += l->segs[l->head + n++].bytes;
	if (n && !drop_segments(l, n))
		return false;
	used = l->used_after = used_bytes(l);
	if (used > high && !l->n_segs && !l->over_told) {
		mt_log(MT_USER, "the live allocations and the events flight mode keeps take %s, "
				"more than MEMTRACE_FLIGHT=%s allows; they are kept, and the trace "
				"grows past it (a larger MEMTRACE_FLIGHT keeps a ring of recent events "
				"too)",
		       fmt_size(used).s, fmt_size(l->bound).s);
		l->over_told = true;
	}
	return true;
}

bool mt_live_flight(const struct mt_live *l)
{
	return l->bound != 0;
}

/* ---- lifetime ---- */

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

static uint64_t main_share(uint64_t bound)
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
		uint64_t log = 2 * wal_share(b), main = main_share(b);
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
	int chunk = (int)main_share(bound);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK &&
	       sqlite3_file_control(db, "main", SQLITE_FCNTL_CHUNK_SIZE, &chunk) == SQLITE_OK;
}

static bool setup_flight(struct mt_live *l, uint64_t bound)
{
	static const char *const pragmas[] = {
		"PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size",
	};
	l->bound = bound;
	l->budget = main_share(bound);
	map_init(&l->mapped, sizeof(uint64_t));
	map_init(&l->launched, sizeof(uint64_t));
	if (!map_reserve(&l->mapped, 128) || !map_reserve(&l->launched, 32) ||
	    !mt_tkeep_init(&l->tensors))
		return false;
	if (!(l->tl = malloc(sizeof(*l->tl))))
		return false;
	mt_timeline_init(l->tl);
	for (int i = 0; i < 3; i++) {
		if (sqlite3_prepare_v2(l->db, pragmas[i], -1, &l->pragma[i], NULL) != SQLITE_OK)
			return false;
	}
	return true;
}

struct mt_live *mt_live_new(const struct mt_live_options *o)
{
	struct mt_live *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->db = o->db;
	snprintf(l->path, sizeof(l->path), "%s", o->path);
	l->stacks = o->stacks;
	l->op_name = o->op_name;
	l->pyframe = o->pyframe;
	l->open.first = UINT64_MAX;
	if (!trace_live_init(&l->set, &(struct trace_live_hooks){ .ctx = l,
								  .live = became_live,
								  .gone = became_gone,
								  .moved = moved }))
		goto fail;
	for (int i = 0; i < S_COUNT; i++) {
		if (sqlite3_prepare_v2(l->db, stmt_sql[i], -1, &l->stmt[i], NULL) != SQLITE_OK) {
			mt_log(MT_ENV, "cannot prepare the trace's statements: %s (at %.40s)",
			       sqlite3_errmsg(l->db), stmt_sql[i]);
			goto fail;
		}
	}
	if (o->bound && !setup_flight(l, o->bound))
		goto fail;
	l->cause = mt_cause_new(); /* without it, the answer tells no cause */
	l->meta_dirty = o->bound != 0;
	return l;
fail:
	mt_live_free(l);
	return NULL;
}

void mt_live_free(struct mt_live *l)
{
	if (!l)
		return;
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(l->stmt[i]);
	for (int i = 0; i < 3; i++)
		sqlite3_finalize(l->pragma[i]);
	for (size_t i = 0; i < l->n_segs; i++) {
		free(l->segs[l->head + i].unpersist);
		free(l->segs[l->head + i].crossing);
		free(l->segs[l->head + i].released);
	}
	free(l->segs);
	free(l->open.unpersist);
	free(l->open.crossing);
	free(l->open.released);
	free(l->chunk);
	trace_live_fini(&l->set);
	map_fini(&l->mapped);
	map_fini(&l->launched);
	mt_tkeep_fini(&l->tensors);
	trace_cache_fini(&l->cache);
	free(l->tl);
	free(l->sites);
	free(l->holding);
	free(l->dirty);
	mt_cause_free(l->cause);
	free(l);
}
