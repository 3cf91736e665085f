/* Flight mode's ring of chunks (live-flight.h).
 *
 * The ring costs less than the full trace's rows: an event is a few
 * integers appended to the commit's JSON text, a commit one row of ring,
 * a trim the deletion of whole rows. site_totals and kind_totals
 * (trace-live.c) count everything written, so that the reader knows
 * what left. */
#include "live-flight.h"

#include <stdlib.h>
#include <string.h>

#include "live-sql.h"
#include "live-tensors.h"
#include "trace-schema.h"
#include "util-grow.h"
#include "util-map.h"

/* Chunks of the ring the writer tells apart; older ones are merged. */
#define MAX_SEGMENTS 1024

typedef struct trace_live_alloc live_alloc;

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
	S_META,
	S_KEEP,
	S_UNKEEP,
	S_RING_ADD,
	S_RING_DROP,
	S_PERSIST,
	S_UNPERSIST,
	S_DEL_OTHER,
	S_DEL_ONE,
	S_DEL_CUPTI,
	S_COUNT,
};

static const char *const stmt_sql[S_COUNT] = {
	[S_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
	[S_KEEP] = "INSERT OR IGNORE INTO kept(seq) VALUES(?)",
	[S_UNKEEP] = "DELETE FROM kept WHERE seq = ?",
	[S_RING_ADD] = "INSERT INTO ring(first_seq,last_seq,events) VALUES(?,?,?)",
	[S_RING_DROP] = "DELETE FROM ring WHERE first_seq >= ?1 AND first_seq <= ?2",
	[S_PERSIST] = "INSERT OR REPLACE INTO allocs(seq,time_ns,site,address,bytes) "
		      "VALUES(?,?,?,?,?)",
	[S_UNPERSIST] = "DELETE FROM allocs WHERE seq = ?",
	[S_DEL_OTHER] = "DELETE FROM other_events WHERE seq >= ?1 AND seq <= ?2"
			" AND kind NOT IN (" MT_FLIGHT_KEPT_KINDS ")"
			" AND seq NOT IN (SELECT seq FROM kept)",
	[S_DEL_ONE] = "DELETE FROM other_events WHERE seq = ?",
	[S_DEL_CUPTI] =
		"DELETE FROM cupti WHERE seq >= ?1 AND seq <= ?2"
		" AND seq NOT IN (SELECT seq FROM other_events WHERE seq >= ?1 AND seq <= ?2)"
		" AND seq NOT IN (SELECT seq FROM allocs WHERE seq >= ?1 AND seq <= ?2)",
};

struct mt_flight {
	struct mt_sql sql;
	sqlite3_stmt *stmt[S_COUNT];
	char *chunk; /* this commit's ring events: "[[...],[...]" */
	size_t chunk_len, chunk_cap;
	struct segment open;  /* of the chunk; first = UINT64_MAX when empty */
	struct segment *segs; /* the ring's chunks, oldest at head */
	size_t head, n_segs, cap_segs;
	uint64_t ring_first, ring_first_time_ns, trimmed_chunks;
	bool meta_dirty;
	struct map mapped;	       /* address -> the seq of its cuMemMap */
	struct map launched;	       /* execs launched once */
	struct mt_tensor_keep tensors; /* which allocator actions stay */
	uint64_t tensor_ooms;	       /* the allocator's OOMs (their actions pinned) */
};

#define RUN(f, id, ...) MT_SQL_RUN(&(f)->sql, id, __VA_ARGS__)

/* ---- the segments ---- */

/* The segment (open or in the ring) of the allocation with this seq. */
static struct segment *segment_of(struct mt_flight *f, uint64_t seq)
{
	if (f->open.first != UINT64_MAX && seq >= f->open.first)
		return &f->open;
	size_t lo = f->head, hi = f->head + f->n_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->segs[mid].last < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->head + f->n_segs && f->segs[lo].first <= seq ? &f->segs[lo] : NULL;
}

static bool push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	uint64_t *p = trace_grow(*a, cap, *n + 1, sizeof(*p), 16, false);
	if (!p)
		return false;
	*a = p;
	(*a)[(*n)++] = v;
	return true;
}

static bool push_alloc(struct segment *s, const live_alloc *a)
{
	live_alloc *p =
		trace_grow(s->crossing, &s->cap_crossing, s->n_crossing + 1, sizeof(*p), 16, false);
	if (!p)
		return false;
	s->crossing = p;
	s->crossing[s->n_crossing++] = *a;
	return true;
}

static void segment_free(struct segment *s)
{
	free(s->unpersist);
	free(s->crossing);
	free(s->released);
}

/* a stops being live (its free goes into the open chunk): its segment has
 * one live allocation less; when its allocation is in an older chunk, it
 * will be a row of allocs from that chunk's end to this one's */
void mt_flight_released(struct mt_flight *f, const live_alloc *a)
{
	struct segment *s;
	if (!(a->user & MT_FLIGHT_PERSISTED)) {
		s = segment_of(f, a->seq);
		if (!s || s == &f->open) {
			if (s && s->live)
				s->live--;
			return;
		}
		if (s->live)
			s->live--;
		if (!push_alloc(s, a))
			return;
	}
	push_u64(&f->open.unpersist, &f->open.n_unpersist, &f->open.cap_unpersist, a->seq);
}

bool mt_flight_persist(struct mt_flight *f, live_alloc *a)
{
	if (!(a->user & MT_FLIGHT_PERSISTED) &&
	    RUN(f, S_PERSIST, (int64_t)a->seq, (int64_t)a->time_ns, a->site, (int64_t)a->address,
		(int64_t)a->bytes))
		a->user |= MT_FLIGHT_PERSISTED;
	return a->user & MT_FLIGHT_PERSISTED;
}

/* a is live again (a free that failed) */
void mt_flight_restored(struct mt_flight *f, live_alloc *a)
{
	struct segment *s;
	/* its free's chunk must not take its row after all, nor its own
	 * chunk make a row of it as of a freed one */
	for (size_t i = 0; i <= f->n_segs; i++) {
		s = i < f->n_segs ? &f->segs[f->head + i] : &f->open;
		for (size_t j = 0; j < s->n_unpersist; j++) {
			if (s->unpersist[j] == a->seq)
				s->unpersist[j--] = s->unpersist[--s->n_unpersist];
		}
		for (size_t j = 0; j < s->n_crossing; j++) {
			if (s->crossing[j].seq == a->seq)
				s->crossing[j--] = s->crossing[--s->n_crossing];
		}
	}
	if (a->user & MT_FLIGHT_PERSISTED)
		return;
	if ((s = segment_of(f, a->seq)))
		s->live++;
	else
		mt_flight_persist(f, a); /* its chunk is gone already */
}

/* ---- the open chunk ---- */

static bool chunk_reserve(struct mt_flight *f, size_t more)
{
	char *p = trace_grow(f->chunk, &f->chunk_cap, f->chunk_len + more, 1, 64u << 10, false);
	if (!p)
		return false;
	f->chunk = p;
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

/* The open chunk covers seq. */
static void cover(struct mt_flight *f, uint64_t seq, uint64_t time_ns)
{
	if (f->open.first == UINT64_MAX) {
		f->open.first = seq;
		f->open.first_time_ns = time_ns;
	}
	f->open.last = seq;
}

/* [v0,v1,...] after a "," or the chunk's "[" */
static void chunk_event(struct mt_flight *f, const int64_t *v, int n, uint64_t seq,
			uint64_t time_ns)
{
	if (!chunk_reserve(f, 2 + (size_t)n * 21 + 2))
		return; /* out of memory: the event is not in the ring */
	char *p = f->chunk + f->chunk_len;
	*p++ = f->chunk_len ? ',' : '[';
	*p++ = '[';
	for (int i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p = put_i64(p, v[i]);
	}
	*p++ = ']';
	f->chunk_len = (size_t)(p - f->chunk);
	cover(f, seq, time_ns);
}

void mt_flight_row(struct mt_flight *f, uint64_t seq, uint64_t time_ns, uint32_t site,
		   const struct mt_event *ev, int64_t alloc)
{
	if (ev->kind == MT_EV_ALLOC) {
		int64_t v[MT_RING_ALLOC_FIELDS] = { (int64_t)seq, (int64_t)time_ns, site,
						    (int64_t)ev->address, (int64_t)ev->bytes };
		chunk_event(f, v, MT_RING_ALLOC_FIELDS, seq, time_ns);
		if (ev->source == MT_SOURCE_HOOK && ev->address)
			f->open.live++;
	} else {
		int64_t v[MT_RING_FREE_FIELDS] = {
			(int64_t)seq, (int64_t)time_ns,	    site,
			alloc,	      (int64_t)ev->address, (int64_t)ev->bytes
		};
		chunk_event(f, v, MT_RING_FREE_FIELDS, seq, time_ns);
	}
}

/* An other_events row's share of the file, for the trim's estimate: its
 * cell, record header and values, as SQLite lays them out. */
#define OTHER_ROW_BYTES 40

void mt_flight_other(struct mt_flight *f, uint64_t seq, uint64_t time_ns)
{
	cover(f, seq, time_ns);
	f->open.bytes += OTHER_ROW_BYTES;
}

/* ---- what the ring keeps ---- */

/* A framework allocator's action kept (live-tensors.h). */
static bool keep_row(void *ctx, uint64_t seq)
{
	return RUN((struct mt_flight *)ctx, S_KEEP, (int64_t)seq);
}

/* An action's row ended by the row just written: in an older chunk, it
 * stays until this one goes; in this one, it goes with it. */
static bool tensor_ended(void *ctx, uint64_t seq)
{
	struct mt_flight *f = ctx;
	if (seq >= f->open.first)
		return true;
	return keep_row(f, seq) &&
	       push_u64(&f->open.released, &f->open.n_released, &f->open.cap_released, seq);
}

/* An OOM: the allocator's actions in effect stay for good. */
static bool pin_tensors(struct mt_flight *f)
{
	return mt_tkeep_in_effect(&f->tensors, 0, UINT64_MAX, true, keep_row, f);
}

bool mt_flight_event(struct mt_flight *f, uint64_t seq, const struct mt_event *ev, uint64_t ooms,
		     uint64_t marks, uint64_t last_mark)
{
	bool hooked = ev->source == MT_SOURCE_HOOK;
	uint64_t *known, before;

	switch (ev->kind) {
	case MT_EV_OOM:
		return !hooked || ooms >= TRACE_LIVE_OOMS_KEPT || pin_tensors(f);
	case MT_EV_MARK:
		/* the ring keeps the marks whose live sets are kept */
		if (marks >= TRACE_LIVE_MARKS_KEPT && !RUN(f, S_UNKEEP, (int64_t)last_mark))
			return false;
		return RUN(f, S_KEEP, (int64_t)seq);
	case MT_EV_MAP:
		if (!hooked || ev->status || !ev->address)
			return true;
		map_put_u64(&f->mapped, ev->address, seq);
		return RUN(f, S_KEEP, (int64_t)seq);
	case MT_EV_UNMAP:
		if (!hooked || !(known = map_get_u64(&f->mapped, ev->address)))
			return true;
		before = *known;
		map_remove(&f->mapped, ev->address, &before);
		return RUN(f, S_UNKEEP, (int64_t)before);
	case MT_EV_GRAPH_LAUNCH:
	case MT_EV_GRAPH_UPLOAD:
		/* the first makes the graph's memory physical (report/model/model-graph.c) */
		if (ev->status || !ev->handle || map_get(&f->launched, ev->handle))
			return true;
		map_put_u64(&f->launched, ev->handle, 1);
		return RUN(f, S_KEEP, (int64_t)seq);
	case MT_EV_TENSOR_OOM:
		return f->tensor_ooms++ >= TRACE_LIVE_OOMS_KEPT || pin_tensors(f);
	default:
		if (ev->kind < MT_EV_TENSOR_FIRST || ev->kind > MT_EV_TENSOR_LAST)
			return true;
		return mt_tkeep_event(&f->tensors, seq, ev, tensor_ended, keep_row, f);
	}
}

/* ---- commits ---- */

/* the two oldest segments made one: a coarser trim, the same memory */
static void merge_oldest(struct mt_flight *f)
{
	struct segment *a = &f->segs[f->head], *b = a + 1;
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
	segment_free(a);
	f->head++;
	f->n_segs--;
}

bool mt_flight_commit(struct mt_flight *f)
{
	if (f->open.first == UINT64_MAX)
		return true;
	/* a chunk of other_events rows alone has no ring row */
	if (f->chunk_len) {
		if (!chunk_reserve(f, 1))
			return false;
		f->chunk[f->chunk_len++] = ']';
		sqlite3_stmt *s = f->stmt[S_RING_ADD];
		sqlite3_bind_int64(s, 1, (int64_t)f->open.first);
		sqlite3_bind_int64(s, 2, (int64_t)f->open.last);
		sqlite3_bind_text(s, 3, f->chunk, (int)f->chunk_len, SQLITE_STATIC);
		if (!mt_sql_step(&f->sql, S_RING_ADD))
			return false;
	}
	f->open.bytes += f->chunk_len;
	f->chunk_len = 0;
	if (f->n_segs == MAX_SEGMENTS)
		merge_oldest(f);
	if (f->head + f->n_segs == f->cap_segs) {
		if (f->head) {
			memmove(f->segs, f->segs + f->head, f->n_segs * sizeof(*f->segs));
			f->head = 0;
		} else {
			struct segment *p = trace_grow(f->segs, &f->cap_segs, f->n_segs + 1,
						       sizeof(*p), 64, false);
			if (!p)
				return false;
			f->segs = p;
		}
	}
	f->segs[f->head + f->n_segs++] = f->open;
	f->open = (struct segment){ .first = UINT64_MAX };
	return true;
}

bool mt_flight_commit_meta(struct mt_flight *f)
{
	if (!f->meta_dirty)
		return true;
	if (!mt_sql_meta(&f->sql, S_META, "ring_first_seq", f->ring_first) ||
	    !mt_sql_meta(&f->sql, S_META, "ring_first_time_ns", f->ring_first_time_ns) ||
	    !mt_sql_meta(&f->sql, S_META, "ring_chunks_dropped", f->trimmed_chunks))
		return false;
	f->meta_dirty = false;
	return true;
}

/* ---- the trim ---- */

size_t mt_flight_chunks(const struct mt_flight *f)
{
	return f->n_segs;
}

/* the oldest chunks whose text adds up to what brings the file under low
 * (their live allocations stay: a little less comes back) */
size_t mt_flight_oldest(const struct mt_flight *f, uint64_t used, uint64_t low)
{
	uint64_t freed = 0;
	size_t n = 0;
	while (n < f->n_segs && used - freed > low)
		freed += f->segs[f->head + n++].bytes;
	return n;
}

void mt_flight_span(const struct mt_flight *f, size_t n, uint64_t *first, uint64_t *last,
		    uint64_t *live)
{
	*first = f->segs[f->head].first;
	*last = f->segs[f->head + n - 1].last;
	*live = 0;
	for (size_t i = 0; i < n; i++)
		*live += f->segs[f->head + i].live;
}

bool mt_flight_drop(struct mt_flight *f, size_t n)
{
	uint64_t from = f->ring_first, to = f->segs[f->head + n - 1].last;
	uint64_t first = f->segs[f->head].first;
	bool ok = true;

	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &f->segs[f->head + i];
		for (size_t j = 0; ok && j < s->n_crossing; j++)
			ok = mt_flight_persist(f, &s->crossing[j]);
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &f->segs[f->head + i];
		for (size_t j = 0; ok && j < s->n_unpersist; j++)
			ok = RUN(f, S_UNPERSIST, (int64_t)s->unpersist[j]);
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct segment *s = &f->segs[f->head + i];
		for (size_t j = 0; ok && j < s->n_released; j++)
			ok = RUN(f, S_UNKEEP, (int64_t)s->released[j]) &&
			     RUN(f, S_DEL_ONE, (int64_t)s->released[j]);
	}
	/* the allocator's actions still in effect stay */
	ok = ok && mt_tkeep_in_effect(&f->tensors, from, to, false, keep_row, f);
	ok = ok && RUN(f, S_RING_DROP, (int64_t)first, (int64_t)to) &&
	     RUN(f, S_DEL_OTHER, (int64_t)from, (int64_t)to) &&
	     RUN(f, S_DEL_CUPTI, (int64_t)from, (int64_t)to);
	if (!ok)
		return false;
	for (size_t i = 0; i < n; i++)
		segment_free(&f->segs[f->head + i]);
	f->head += n;
	f->n_segs -= n;
	f->trimmed_chunks += n;
	f->ring_first = to + 1;
	f->ring_first_time_ns = f->n_segs ? f->segs[f->head].first_time_ns : f->ring_first_time_ns;
	f->meta_dirty = true;
	return true;
}

/* ---- lifetime ---- */

struct mt_flight *mt_flight_new(sqlite3 *db, const char *path)
{
	struct mt_flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->sql = (struct mt_sql){
		.db = db, .path = path, .text = stmt_sql, .stmt = f->stmt, .n = S_COUNT
	};
	f->open.first = UINT64_MAX;
	f->meta_dirty = true;
	map_init(&f->mapped, sizeof(uint64_t));
	map_init(&f->launched, sizeof(uint64_t));
	if (!map_reserve(&f->mapped, 128) || !map_reserve(&f->launched, 32) ||
	    !mt_tkeep_init(&f->tensors) || !mt_sql_prepare(&f->sql)) {
		mt_flight_free(f);
		return NULL;
	}
	return f;
}

void mt_flight_free(struct mt_flight *f)
{
	if (!f)
		return;
	mt_sql_finalize(&f->sql);
	for (size_t i = 0; i < f->n_segs; i++)
		segment_free(&f->segs[f->head + i]);
	free(f->segs);
	segment_free(&f->open);
	free(f->chunk);
	map_fini(&f->mapped);
	map_fini(&f->launched);
	mt_tkeep_fini(&f->tensors);
	free(f);
}
