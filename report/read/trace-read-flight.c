/* What a version-3 trace in flight mode keeps beside its events: the
 * ring of recent allocations and frees (JSON chunks, decoded here), its
 * start, the totals that say what left it, and the live sets the writer
 * kept (trace.h: struct trace_flight; docs/trace-format.md). A full trace
 * reads as flight.on = false: its events say everything. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "trace.h"
#include "util-math.h"
#include "util-mem.h"

_Static_assert(MT_EV_TENSOR_LAST < TRACE_TRIMMED_KINDS, "kind_totals read for every kind");

static void finalize(sqlite3_stmt **s)
{
	sqlite3_finalize(*s);
}

/* A meta key as a non-negative integer; 0 when absent or not one. */
static int64_t meta_int(const struct trace *t, const char *key)
{
	const char *v = trace_meta_get(t, key);
	char *end;
	long long n;

	if (!v)
		return 0;
	n = strtoll(v, &end, 10);
	return *end || n < 0 ? 0 : n;
}

static uint64_t col_u64(sqlite3_stmt *s, int col)
{
	int64_t v = sqlite3_column_int64(s, col);

	return v > 0 ? (uint64_t)v : 0;
}

static int read_live(struct trace *t, const char *table, const char *sql,
		     struct trace_live_row **rows, size_t *n)
{
	__attribute__((cleanup(finalize))) sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(t->db, sql, -1, &s, NULL) != SQLITE_OK)
		return trace_fail(t, "%s is a flight trace without a readable table '%s' (%s): it is "
			       "damaged or was not written by memtrace",
			    t->path, table, sqlite3_errmsg(t->db));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		grow_array(rows, &cap, *n + 1, sizeof(**rows));
		(*rows)[(*n)++] = (struct trace_live_row){
			.key = sqlite3_column_int64(s, 0), .site = sqlite3_column_int64(s, 1),
			.bytes = col_u64(s, 2), .count = col_u64(s, 3),
		};
	}
	if (rc != SQLITE_DONE)
		return trace_fail(t, "error reading table '%s' of %s: %s; the file may be damaged", table,
			    t->path, sqlite3_errmsg(t->db));
	return 0;
}

/* site_totals into f->sites (by id) and kind_totals into f->kinds: what
 * the writer wrote, of which the events read will be taken away. */
static int read_totals(struct trace *t)
{
	struct trace_flight *f = &t->flight;
	__attribute__((cleanup(finalize))) sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(t->db,
			       "SELECT site, allocs, alloc_bytes, frees, free_bytes FROM site_totals"
			       " ORDER BY site",
			       -1, &s, NULL) != SQLITE_OK)
		return trace_fail(t, "%s is a flight trace without a readable table 'site_totals' (%s)",
			    t->path, sqlite3_errmsg(t->db));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		grow_array(&f->sites, &cap, f->n_sites + 1, sizeof(*f->sites));
		f->sites[f->n_sites++] = (struct trace_trimmed_site){
			.site = sqlite3_column_int64(s, 0), .allocs = col_u64(s, 1),
			.alloc_bytes = col_u64(s, 2), .frees = col_u64(s, 3),
			.free_bytes = col_u64(s, 4),
		};
	}
	if (rc != SQLITE_DONE)
		return trace_fail(t, "error reading table 'site_totals' of %s: %s", t->path,
			    sqlite3_errmsg(t->db));
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(t->db, "SELECT kind, count FROM kind_totals", -1, &s, NULL) !=
	    SQLITE_OK)
		return trace_fail(t, "%s is a flight trace without a readable table 'kind_totals' (%s)",
			    t->path, sqlite3_errmsg(t->db));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t kind = sqlite3_column_int64(s, 0);

		if (kind > 0 && kind < TRACE_TRIMMED_KINDS)
			f->kinds[kind] += col_u64(s, 1);
	}
	if (rc != SQLITE_DONE)
		return trace_fail(t, "error reading table 'kind_totals' of %s: %s", t->path,
			    sqlite3_errmsg(t->db));
	return 0;
}

static bool has_table(const struct trace *t, const char *name)
{
	__attribute__((cleanup(finalize))) sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(t->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	return sqlite3_step(s) == SQLITE_ROW;
}

/* The writer's timeline and its live sets: a trace written before them
 * has neither, and its timeline starts with the ring. */
static int read_timeline(struct trace *t)
{
	struct trace_flight *f = &t->flight;
	__attribute__((cleanup(finalize))) sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (!has_table(t, "timeline") || !has_table(t, "live_at_time"))
		return 0;
	f->timeline_width_ns = meta_int(t, "timeline_width_ns");
	f->timeline_first_ns = meta_int(t, "timeline_first_ns");
	if (f->timeline_width_ns <= 0)
		return 0; /* nothing was written */
	if (sqlite3_prepare_v2(t->db,
			       "SELECT bucket, min, max, last, t_max, t_last, drops FROM timeline"
			       " ORDER BY bucket",
			       -1, &s, NULL) != SQLITE_OK)
		return trace_fail(t, "%s has an unreadable table 'timeline' (%s): it is damaged or was "
			       "not written by memtrace",
			    t->path, sqlite3_errmsg(t->db));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		grow_array(&f->timeline, &cap, f->n_timeline + 1, sizeof(*f->timeline));
		f->timeline[f->n_timeline++] = (struct trace_timeline_bucket){
			.bucket = sqlite3_column_int64(s, 0), .min = col_u64(s, 1),
			.max = col_u64(s, 2), .last = col_u64(s, 3),
			.t_max = sqlite3_column_int64(s, 4), .t_last = sqlite3_column_int64(s, 5),
			.drops = col_u64(s, 6),
		};
	}
	if (rc != SQLITE_DONE)
		return trace_fail(t, "error reading table 'timeline' of %s: %s; the file may be damaged",
			    t->path, sqlite3_errmsg(t->db));
	return read_live(t, "live_at_time",
			 "SELECT time_ns, site, bytes, count FROM live_at_time ORDER BY time_ns, site",
			 &f->snaps, &f->n_snaps);
}

int trace_load_flight(struct trace *t)
{
	struct trace_flight *f = &t->flight;
	const char *mode = trace_meta_get(t, "mode");

	*f = (struct trace_flight){ 0 };
	if (t->schema_version < 3 || !mode || strcmp(mode, "flight"))
		return 0;
	f->on = true;
	f->bound = (uint64_t)meta_int(t, "flight_bytes");
	f->ring_first_seq = meta_int(t, "ring_first_seq");
	f->ring_first_time_ns = meta_int(t, "ring_first_time_ns");
	f->peak_bytes = (uint64_t)meta_int(t, "peak_bytes");
	f->peak_seq = meta_int(t, "peak_seq");
	f->peak_time_ns = meta_int(t, "peak_time_ns");
	for (int k = 1; k < TRACE_TRIMMED_KINDS; k++) {
		char key[32];

		snprintf(key, sizeof(key), "mem_peak_%d", k);
		f->mem_peak[k] = (uint64_t)meta_int(t, key);
	}
	if (read_totals(t) < 0 ||
	    read_live(t, "live_at_peak", "SELECT 0, site, bytes, count FROM live_at_peak ORDER BY site",
		      &f->peak, &f->n_peak) < 0 ||
	    read_live(t, "live_at_oom",
		      "SELECT oom, site, bytes, count FROM live_at_oom ORDER BY oom, site", &f->ooms,
		      &f->n_ooms) < 0 ||
	    read_live(t, "live_at_mark",
		      "SELECT mark, site, bytes, count FROM live_at_mark ORDER BY mark, site",
		      &f->marks, &f->n_marks) < 0 ||
	    read_timeline(t) < 0)
		return -1;
	return 0;
}

void trace_flight_seen_site(struct trace *t, int64_t site, bool alloc, uint64_t bytes)
{
	struct trace_flight *f = &t->flight;
	size_t i = (size_t)(trace_find_site(t, site) - t->sites);
	struct trace_trimmed_site *seen;

	if (i >= t->n_sites)
		return; /* the rows of no site: not in site_totals either */
	if (!f->seen) {
		f->n_seen = t->n_sites;
		f->seen = xcalloc(f->n_seen + 1, sizeof(*f->seen));
	}
	if (i >= f->n_seen)
		return;
	seen = &f->seen[i];
	if (alloc) {
		seen->allocs++;
		seen->alloc_bytes = sat_add(seen->alloc_bytes, bytes);
	} else {
		seen->frees++;
		seen->free_bytes = sat_add(seen->free_bytes, bytes);
	}
}

void trace_flight_seen_kind(struct trace *t, int kind)
{
	if (kind > 0 && kind < TRACE_TRIMMED_KINDS)
		t->flight.seen_kinds[kind]++;
}

void trace_flight_settle(struct trace *t)
{
	struct trace_flight *f = &t->flight;

	f->trimmed = 0;
	for (size_t i = 0; i < f->n_sites; i++) {
		struct trace_trimmed_site *r = &f->sites[i];
		const struct trace_site *site = trace_find_site(t, r->site);
		size_t k = (size_t)(site - t->sites);
		const struct trace_trimmed_site *seen =
			f->seen && k < f->n_seen ? &f->seen[k] : &(struct trace_trimmed_site){ 0 };

		r->allocs = sat_sub(r->allocs, seen->allocs);
		r->alloc_bytes = sat_sub(r->alloc_bytes, seen->alloc_bytes);
		r->frees = sat_sub(r->frees, seen->frees);
		r->free_bytes = sat_sub(r->free_bytes, seen->free_bytes);
		f->trimmed = sat_add(f->trimmed, sat_add(r->allocs, r->frees));
	}
	for (int k = 0; k < TRACE_TRIMMED_KINDS; k++) {
		f->kinds[k] = sat_sub(f->kinds[k], f->seen_kinds[k]);
		f->trimmed = sat_add(f->trimmed, f->kinds[k]);
	}
	free(f->seen);
	f->seen = NULL;
	f->n_seen = 0;
	memset(f->seen_kinds, 0, sizeof(f->seen_kinds));
}

/* ---- the ring ---- */

static int damaged(struct trace *t, const struct trace_ring *r, const char *what)
{
	return trace_fail(t, "%s is damaged: the ring's chunk at seq %lld %s", t->path,
		    (long long)r->chunk, what);
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* One integer of at most 19 digits and a sign. */
static const char *parse_i64(const char *p, const char *end, int64_t *v)
{
	bool neg = p < end && *p == '-';
	uint64_t u = 0;
	int digits = 0;

	if (neg)
		p++;
	while (p < end && *p >= '0' && *p <= '9' && digits < 20) {
		u = u * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (!digits || digits > 19 || (p < end && *p >= '0' && *p <= '9'))
		return NULL;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return p;
}

/* The next event of the current chunk; false at its end. */
static int next_in_chunk(struct trace *t, struct trace_ring *r, bool *got)
{
	const char *p = skip_space(r->p, r->end);

	*got = false;
	if (p < r->end && *p == ',')
		p = skip_space(p + 1, r->end);
	if (p < r->end && *p == ']') {
		r->p = r->end;
		return 0;
	}
	if (p >= r->end || *p != '[')
		return damaged(t, r, "is not a JSON array of events");
	p++;
	r->n = 0;
	for (;;) {
		p = skip_space(p, r->end);
		if (r->n == MT_RING_FREE_FIELDS || !(p = parse_i64(p, r->end, &r->v[r->n])))
			return damaged(t, r, "has an event that is not 5 or 6 integers");
		r->n++;
		p = skip_space(p, r->end);
		if (p < r->end && *p == ',') {
			p++;
			continue;
		}
		if (p < r->end && *p == ']')
			break;
		return damaged(t, r, "has an event that is not 5 or 6 integers");
	}
	if (r->n != MT_RING_ALLOC_FIELDS && r->n != MT_RING_FREE_FIELDS)
		return damaged(t, r, "has an event that is not 5 or 6 integers");
	r->p = p + 1;
	*got = true;
	return 0;
}

int trace_ring_next(struct trace *t, struct trace_ring *r)
{
	bool got = false;
	int rc;

	r->row = false;
	while (!got) {
		if (r->p < r->end) {
			if (next_in_chunk(t, r, &got) < 0)
				return -1;
			continue;
		}
		rc = sqlite3_step(r->s);
		if (rc == SQLITE_DONE)
			return 0;
		if (rc != SQLITE_ROW)
			return trace_fail(t, "error reading table 'ring' of %s: %s; the file may be damaged",
				    t->path, sqlite3_errmsg(t->db));
		r->chunk = sqlite3_column_int64(r->s, 0);
		r->p = (const char *)sqlite3_column_text(r->s, 1);
		r->end = r->p ? r->p + sqlite3_column_bytes(r->s, 1) : NULL;
		r->p = r->p ? skip_space(r->p, r->end) : NULL;
		if (!r->p || r->p == r->end || *r->p != '[')
			return damaged(t, r, "is not a JSON array of events");
		r->p++;
	}
	r->row = true;
	return 0;
}

int trace_ring_open(struct trace *t, struct trace_ring *r)
{
	*r = (struct trace_ring){ 0 };
	if (!t->flight.on)
		return 0;
	if (sqlite3_prepare_v2(t->db, "SELECT first_seq, events FROM ring ORDER BY first_seq", -1,
			       &r->s, NULL) != SQLITE_OK)
		return trace_fail(t, "%s is a flight trace without a readable table 'ring' (%s)", t->path,
			    sqlite3_errmsg(t->db));
	return trace_ring_next(t, r);
}

void trace_ring_close(struct trace_ring *r)
{
	sqlite3_finalize(r->s);
	*r = (struct trace_ring){ 0 };
}

void trace_flight_free(struct trace_flight *f)
{
	free(f->seen);
	free(f->sites);
	free(f->peak);
	free(f->ooms);
	free(f->marks);
	free(f->timeline);
	free(f->snaps);
	*f = (struct trace_flight){ 0 };
}
