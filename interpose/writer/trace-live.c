/* The live set and what the writer derives from it (trace-live.h): the
 * row of each event (its site interned, what a free releases), the live
 * bytes of every site, the device peak and what was live at it, the live
 * sets at OOMs, marks and the timeline's moments, the totals by site and
 * kind. On top of the live side's other ideas, each its own file, which
 * it calls: flight mode's ring (live-flight.c) and its disk budget
 * (live-disk.c), the answer on stderr (live-answer.c) and its cause
 * (live-cause.c), the timeline (live-timeline.c). The trim stays here,
 * since it walks the live set and ends with the commit.
 *
 * The peak costs nothing per event: as in the reporter (report/model/model.c),
 * a new peak bumps an epoch, and a site saves its live bytes for the peak
 * before its first change after it. The OOM answer and the live sets at
 * OOMs and marks walk the sites that hold memory, not the allocations. */
#include "trace-live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live-answer.h"
#include "live-cause.h"
#include "live-disk.h"
#include "live-flight.h"
#include "live-sql.h"
#include "live-timeline.h"
#include "trace-live-set.h"
#include "trace-schema.h"
#include "util-grow.h"
#include "util-math.h"

/* The live set is trace/trace-live-set.c's, the reporter's rules; an
 * allocation's holder (trace_live_holder.owner) is a site of the
 * writer's: its own, or for a mapped VMM handle its mapping's. Its user
 * byte says it is a row of allocs (flight mode, MT_FLIGHT_PERSISTED). */
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
	bool known; /* interned (site_known) */
	bool dirty; /* totals to write */
};

enum stmt {
	S_PEAK_CLEAR,
	S_PEAK_ROW,
	S_OOM_ROW,
	S_OOM_CLEAR,
	S_MARK_ROW,
	S_MARK_CLEAR,
	S_META,
	S_SITE_TOTAL,
	S_KIND_TOTAL,
	S_SNAP_ROW,
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
	[S_SITE_TOTAL] = "INSERT OR REPLACE INTO site_totals(site,allocs,alloc_bytes,frees,"
			 "free_bytes) VALUES(?,?,?,?,?)",
	[S_KIND_TOTAL] = "INSERT OR REPLACE INTO kind_totals(kind,count) VALUES(?,?)",
	[S_SNAP_ROW] = "INSERT OR REPLACE INTO live_at_time(time_ns,site,bytes,count)"
		       " VALUES(?,?,?,?)",
};

/* The sites a live set of the timeline keeps, the largest (row 0 is the
 * device's total). */
#define SNAPSHOT_SITES 32

#define KINDS 64 /* above every event kind */
_Static_assert(MT_EV_TENSOR_LAST < KINDS, "kind_totals counts every kind");

struct mt_live {
	sqlite3 *db;
	struct mt_sql sql;
	sqlite3_stmt *stmt[S_COUNT];
	char path[MT_PATH_MAX];

	struct trace_live_set set; /* with the device peak, of its peak kinds */

	struct mt_site_table *site_table; /* the writer's */
	struct mt_site_key key; /* of the site this event interned */
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

	struct mt_flight *flight; /* flight mode's ring; NULL: the full trace */
	struct mt_disk disk; /* flight mode's budget */
	struct mt_timeline *tl; /* the whole run's device bytes live (flight mode) */
	struct mt_cause *cause; /* what the OOM answer's cause is judged from */
	struct mt_answer answer; /* names and path for it, and when it is due */
};

#define RUN(l, id, ...) MT_SQL_RUN(&(l)->sql, id, __VA_ARGS__)

static bool put_meta(struct mt_live *l, const char *key, uint64_t value)
{
	return mt_sql_meta(&l->sql, S_META, key, value);
}

/* ---- the sites ---- */

static struct site_live *site_at(struct mt_live *l, uint32_t id)
{
	struct site_live *p = trace_grow(l->sites, &l->cap_sites, (size_t)id + 1, sizeof(*p), 256,
					 true);
	if (!p)
		return NULL;
	l->sites = p;
	return &l->sites[id];
}

static struct site_live *known_site(struct mt_live *l, uint32_t id)
{
	struct site_live *s = id && id < l->cap_sites ? &l->sites[id] : NULL;
	return s && s->known ? s : NULL;
}

static void site_known(struct mt_live *l, uint32_t site, const struct mt_site_key *k)
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
	uint32_t *p = trace_grow(*a, cap, *n + 1, sizeof(*p), 256, false);
	if (!p)
		return false;
	*a = p;
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
	if (why == TRACE_LIVE_RESTORED && l->flight)
		mt_flight_restored(l->flight, a);
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
	if (l->flight)
		mt_flight_released(l->flight, a);
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

bool mt_live_holds(const struct mt_live *l, const struct mt_event *ev)
{
	if (ev->kind == MT_EV_MAP)
		return trace_live_mapped(&l->set, ev->address);
	return ev->kind == MT_EV_ALLOC && trace_live_get(&l->set, ev->address) != NULL;
}

/* The live set in step with a hooked allocation (site: its site), free,
 * failed free, map (site: the mapping's, which holds the memory it maps),
 * unmap or failed unmap; a free's bytes and memory kind filled in from
 * what it releases. The seq of the allocation a free releases, -1 when
 * none is known. */
static int64_t track(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		     uint32_t site)
{
	live_alloc a;
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

/* ---- the event's row ---- */

/* The site of the event's columns with memory kind mem (site-table.c),
 * its live record made when new, and its sites row then due from the
 * writer (row->new_site); 0 when the table is out of memory. */
static uint32_t intern(struct mt_live *l, const struct mt_event *ev, uint8_t mem,
		       struct mt_live_row *row)
{
	struct mt_site_key *k = &l->key;
	bool added;
	memset(k, 0, sizeof(*k));
	k->stream = ev->stream;
	k->handle = ev->handle;
	k->stack = ev->stack;
	k->tid = ev->tid;
	k->op = ev->op;
	k->status = ev->status;
	k->device = ev->device;
	k->api = ev->api;
	k->kind = ev->kind;
	k->mem = mem;
	k->source = ev->source;
	uint32_t id = mt_site_intern(l->site_table, k, &added);
	if (added) {
		site_known(l, id, k);
		row->new_site = id;
		row->new_key = k;
	}
	return id;
}

/* The site that holds what a mapping maps (the live-set contract, case
 * F): the map's columns, with the memory kind of the handle it maps, so
 * that a live set by site (live_at_*) names the stack that mapped it. */
static uint32_t mapping_site(struct mt_live *l, const struct mt_event *ev,
			     struct mt_live_row *row)
{
	if (ev->source != MT_SOURCE_HOOK || ev->status || !ev->address)
		return 0;
	return intern(l, ev, MT_MEM_VMM_PHYSICAL, row);
}

/* An allocs or frees row of site, in its totals. */
static void count_row(struct mt_live *l, uint32_t site, const struct mt_event *ev)
{
	struct site_live *s = site_at(l, site);
	if (!s)
		return;
	if (ev->kind == MT_EV_ALLOC) {
		s->allocs++;
		s->alloc_bytes += ev->bytes;
	} else {
		s->frees++;
		s->free_bytes += ev->bytes;
	}
	if (!s->dirty && push_u32(&l->dirty, &l->n_dirty, &l->cap_dirty, site))
		s->dirty = true;
}

/* The event's row: allocs for an allocation, frees for a free of an
 * allocation known live (its address and bytes are the allocation's),
 * other_events for the rest; in flight mode an allocation's or a free's
 * goes into the ring's chunk instead. */
static void decide_row(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		       struct mt_live_row *row)
{
	/* an allocation's site is its own; a free's has the memory kind of
	 * what it releases, which track fills in */
	uint32_t site = ev->kind == MT_EV_ALLOC ? intern(l, ev, ev->mem, row) : 0;
	row->alloc = track(l, seq, time_ns, ev,
			   ev->kind == MT_EV_MAP ? mapping_site(l, ev, row) : site);
	if (ev->kind != MT_EV_ALLOC && row->alloc >= 0 && ev->mem != 0)
		site = intern(l, ev, ev->mem, row);
	if (!site) {
		row->table = MT_LIVE_OTHER;
		if (ev->kind > 0 && ev->kind < KINDS) {
			l->kinds[ev->kind]++;
			l->kinds_dirty = true;
		}
		if (l->flight)
			mt_flight_other(l->flight, seq, time_ns);
		return;
	}
	count_row(l, site, ev);
	row->site = site;
	if (l->flight) {
		row->table = MT_LIVE_RING;
		mt_flight_row(l->flight, seq, time_ns, site, ev, row->alloc);
	} else {
		row->table = ev->kind == MT_EV_ALLOC ? MT_LIVE_ALLOCS : MT_LIVE_FREES;
	}
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

/* ---- the out-of-memory answer (live-answer.c): its holders ---- */

/* A few lines on stderr at the first OOM of an episode (live-answer.h):
 * the holders, by stack (the sites of one stack differ by thread or
 * stream). A graph launch that failed for memory is one too. */
static void summary(struct mt_live *l, const struct mt_event *ev)
{
	struct mt_answer_holder *h = calloc(l->n_holding + 1, sizeof(*h));
	size_t n = 0;
	if (!h)
		return;
	for (size_t i = 0; i < l->n_holding; i++) {
		const struct site_live *s = &l->sites[l->holding[i]];
		size_t j;
		if (!peak_kind(s->mem))
			continue;
		for (j = 0; j < n && h[j].stack != s->stack; j++)
			;
		if (j == n)
			h[n++] = (struct mt_answer_holder){ .stack = s->stack, .op = s->op };
		h[j].bytes += s->bytes;
		h[j].count += s->count;
	}
	mt_answer_oom(&l->answer, ev, h, n,
		      &(struct mt_answer_live){ .live = l->set.peak.live,
						.count = l->set.peak.count,
						.peak = l->set.peak.peak,
						.graph_live = l->mem_live[MT_MEM_GRAPH] });
	free(h);
}
/* ---- events ---- */

/* What the event does to the live sets kept and the answer on stderr. */
static bool event(struct mt_live *l, uint64_t seq, uint64_t time_ns, const struct mt_event *ev)
{
	const struct mt_event *oom;
	uint64_t ooms = l->ooms, marks = l->marks, last_mark = l->last_mark_kept;

	if (MT_UNLIKELY(l->answer.has_pending) && (oom = mt_answer_settle(&l->answer, ev)))
		summary(l, oom);
	if (mt_answer_wants(ev->kind)) {
		l->answer.peak = l->set.peak.peak;
		if ((oom = mt_answer_event(&l->answer, ev, time_ns)))
			summary(l, oom);
	}

	switch (ev->kind) {
	case MT_EV_OOM:
		if (ev->source == MT_SOURCE_HOOK &&
		    !write_capped(l, S_OOM_ROW, S_OOM_CLEAR, &l->ooms, &l->last_oom_kept,
				  TRACE_LIVE_OOMS_KEPT, seq))
			return false;
		break;
	case MT_EV_MARK:
		if (!write_capped(l, S_MARK_ROW, S_MARK_CLEAR, &l->marks, &l->last_mark_kept,
				  TRACE_LIVE_MARKS_KEPT, seq))
			return false;
		break;
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
		if (ev->source == MT_SOURCE_HOOK && !ev->status)
			mt_cause_exec(l->cause, ev->kind == MT_EV_EXEC_CREATE);
		break;
	default:
		break;
	}
	return !l->flight || mt_flight_event(l->flight, seq, ev, ooms, marks, last_mark);
}

bool mt_live_event(struct mt_live *l, uint64_t seq, uint64_t time_ns, struct mt_event *ev,
		   struct mt_live_row *row)
{
	*row = (struct mt_live_row){ .alloc = -1 };
	timeline_before(l, time_ns); /* a write that fails fails the commit too */
	decide_row(l, seq, time_ns, ev, row);
	if (!event(l, seq, time_ns, ev))
		return false;
	if (l->tl)
		mt_timeline_put(l->tl, (int64_t)time_ns, l->set.peak.live);
	return true;
}

/* ---- commits ---- */

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
	if (!mt_sql_step(&l->sql, S_PEAK_CLEAR))
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
	return (!l->flight || mt_flight_commit(l->flight)) && commit_totals(l) && commit_peak(l) &&
	       commit_mem_peaks(l) && (!l->tl || mt_timeline_commit(l->tl)) &&
	       (!l->flight || mt_flight_commit_meta(l->flight));
}

/* ---- the ring's trim ---- */

/* The n oldest chunks leave the ring (live-flight.h), in a transaction of
 * their own: first their allocations still live become rows of allocs,
 * which only the live set knows; then the commit, whose meta keys the
 * drop changed. */
static bool drop_segments(struct mt_live *l, size_t n)
{
	uint64_t first, last, live;
	bool ok = sqlite3_exec(l->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	live_alloc *a;

	mt_flight_span(l->flight, n, &first, &last, &live);
	for (size_t pos = 0; ok && live && (a = trace_live_next(&l->set, &pos));) {
		if (!(a->user & MT_FLIGHT_PERSISTED) && a->seq >= first && a->seq <= last)
			ok = mt_flight_persist(l->flight, a);
	}
	if (!ok || !mt_flight_drop(l->flight, n)) {
		sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
		return false;
	}
	return mt_live_commit(l) && sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
}

bool mt_live_trim(struct mt_live *l)
{
	uint64_t used, low;
	size_t n;

	if (!l->flight || !mt_disk_over(&l->disk, &used, &low))
		return true;
	n = mt_flight_oldest(l->flight, used, low);
	if (n && !drop_segments(l, n))
		return false;
	mt_disk_after(&l->disk, mt_flight_chunks(l->flight) == 0);
	return true;
}

bool mt_live_flight(const struct mt_live *l)
{
	return l->flight != NULL;
}

/* ---- lifetime ---- */

static bool setup_flight(struct mt_live *l, uint64_t bound)
{
	if (!(l->flight = mt_flight_new(l->db, l->path)) || !(l->tl = malloc(sizeof(*l->tl))))
		return false;
	mt_timeline_init(l->tl);
	return mt_timeline_open(l->tl, l->db, l->path) && mt_disk_init(&l->disk, l->db, bound);
}

struct mt_live *mt_live_new(const struct mt_live_options *o)
{
	struct mt_live *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->db = o->db;
	snprintf(l->path, sizeof(l->path), "%s", o->path);
	l->sql = (struct mt_sql){ .db = o->db, .path = l->path, .text = stmt_sql, .stmt = l->stmt,
				  .n = S_COUNT };
	l->site_table = o->sites;
	if (!trace_live_init(&l->set, &(struct trace_live_hooks){ .ctx = l,
								  .live = became_live,
								  .gone = became_gone,
								  .moved = moved }) ||
	    !mt_sql_prepare(&l->sql) || (o->bound && !setup_flight(l, o->bound))) {
		mt_live_free(l);
		return NULL;
	}
	l->cause = mt_cause_new(); /* without it, the answer tells no cause */
	l->answer = (struct mt_answer){ .path = l->path, .stacks = o->stacks,
					.op_name = o->op_name, .pyframe = o->pyframe,
					.cause = l->cause };
	mt_reps_init(&l->answer.reps);
	return l;
}

void mt_live_free(struct mt_live *l)
{
	if (!l)
		return;
	mt_sql_finalize(&l->sql);
	mt_flight_free(l->flight);
	mt_disk_fini(&l->disk);
	trace_live_fini(&l->set);
	mt_answer_fini(&l->answer);
	if (l->tl)
		mt_timeline_close(l->tl);
	free(l->tl);
	free(l->sites);
	free(l->holding);
	free(l->dirty);
	mt_cause_free(l->cause);
	free(l);
}
