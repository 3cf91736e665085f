/* rows-same TRACE [EXPECT...]: the events of TRACE are the same whether
 * allocs and frees are read from the file's pages (trace-rows.c) or
 * through SQLite's rows, and whether they are read one by one or in
 * batches (trace-batch.c):
 * every field of every
 * event, the reader's counts and its outcome. Then it checks how the rows were read against EXPECT:
 *   pages        rows were decoded from the pages
 *   no-pages     none was (SQLite read them all)
 *   lookups      some cells of the pages were read through SQLite
 *   handover     the pages gave up and SQLite read the rest of a table
 *   no-handover  the pages read every table to its end
 *   fails        reading the events fails (both ways)
 *   no-alloc-lookups  every free found its allocation among those read
 *                before, without asking allocs for it
 *   site-pages   sites rows were decoded from the pages (trace_load)
 *   frame-pages  the same of frames rows
 * and prints the counts and the bytes the frees freed. Exit 0 when all
 * holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "trace.h"

struct events {
	struct trace_event *ev;
	size_t n, cap;
};

static void keep(void *ctx, const struct trace_event *ev)
{
	struct events *e = ctx;

	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 1024;
		e->ev = realloc(e->ev, e->cap * sizeof(*e->ev));
		if (!e->ev)
			exit(2);
	}
	e->ev[e->n++] = *ev;
}

struct read {
	struct trace t;
	struct events e;
	int rc;
};

enum how { ONE_BY_ONE, BATCHED };

static int read_trace(struct read *r, const char *path, bool sql_rows, enum how how)
{
	memset(r, 0, sizeof(*r));
	if (trace_open(&r->t, path, NULL) < 0) {
		fprintf(stderr, "rows-same: %s\n", r->t.error);
		return -1;
	}
	r->t.sql_rows = sql_rows; /* sites too, which trace_load reads */
	if (trace_load(&r->t) < 0) {
		fprintf(stderr, "rows-same: %s\n", r->t.error);
		return -1;
	}
	if (how == BATCHED)
		r->rc = trace_read_events_batched(&r->t, keep, NULL, &r->e);
	else
		r->rc = trace_read_events(&r->t, keep, &r->e);
	return 0;
}

/* The fields of an event, one by one (their padding is not compared). */
#define FIELDS(X)                                                                              \
	X(seq) X(time_ns) X(kind) X(api) X(device) X(address) X(has_address) X(bytes) X(mem)    \
	X(stack) X(handle) X(has_handle) X(stream) X(thread) X(status) X(source)                \
	X(has_device_free) X(has_device_total) X(device_free) X(device_total) X(has_op) X(op)   \
	X(has_build) X(build) X(mark_kind) X(at_mark) X(module) X(no_cupti)

static int compare_event(const struct trace_event *a, const struct trace_event *b, size_t i)
{
	int bad = 0;
#define CMP(f)                                                                                 \
	if (a->f != b->f) {                                                                    \
		fprintf(stderr, "rows-same: event %zu (seq %" PRId64 "): " #f " %" PRId64        \
				" one way, %" PRId64 " the other\n",                              \
			i, a->seq, (int64_t)a->f, (int64_t)b->f);                              \
		bad = 1;                                                                       \
	}
	FIELDS(CMP)
#undef CMP
	return bad;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The frames trace_load read, field by field. */
static int compare_frames(const struct trace *a, const struct trace *b, const char *how)
{
	int bad = 0;

	if (a->n_frames != b->n_frames) {
		fprintf(stderr, "rows-same: %s: %zu and %zu frames\n", how, a->n_frames, b->n_frames);
		return 1;
	}
	for (size_t i = 0; i < a->n_frames && bad < 20; i++) {
		const struct trace_frame *x = &a->frames[i], *y = &b->frames[i];

		if (x->id != y->id || x->kind != y->kind || x->ip != y->ip || x->offset != y->offset ||
		    x->has_offset != y->has_offset || x->module != y->module ||
		    x->line != y->line || !same_str(x->function, y->function) ||
		    !same_str(x->file, y->file)) {
			fprintf(stderr, "rows-same: %s: frame %zu (id %" PRId64 ") differs: %s %s:%" PRId64
					" one way, %s %s:%" PRId64 " the other\n",
				how, i, x->id, x->function ? x->function : "(null)",
				x->file ? x->file : "(null)", x->line,
				y->function ? y->function : "(null)", y->file ? y->file : "(null)",
				y->line);
			bad++;
		}
	}
	return bad;
}

static int compare(const struct read *sql, const struct read *pages, const char *how)
{
	int bad = compare_frames(&sql->t, &pages->t, how);

	if (sql->rc != pages->rc) {
		fprintf(stderr, "rows-same: %s: reading returned %d and %d (%s)\n", how, sql->rc,
			pages->rc, pages->rc ? pages->t.error : sql->t.error);
		bad = 1;
	}
	if (sql->e.n != pages->e.n) {
		fprintf(stderr, "rows-same: %s: %zu and %zu events\n", how, sql->e.n, pages->e.n);
		bad = 1;
	}
	for (size_t i = 0; i < sql->e.n && i < pages->e.n && bad < 20; i++)
		bad += compare_event(&sql->e.ev[i], &pages->e.ev[i], i);
	if (sql->t.missing_stacks != pages->t.missing_stacks) {
		fprintf(stderr, "rows-same: %s: missing stacks %" PRIu64 " and %" PRIu64 "\n", how,
			sql->t.missing_stacks, pages->t.missing_stacks);
		bad = 1;
	}
	return bad;
}

static int expect(const struct read *r, const char *what)
{
	const struct trace_read_stats *s = &r->t.read_stats;
	bool ok;

	if (strcmp(what, "pages") == 0)
		ok = s->from_pages > 0;
	else if (strcmp(what, "no-pages") == 0)
		ok = s->from_pages == 0;
	else if (strcmp(what, "lookups") == 0)
		ok = s->lookups > 0;
	else if (strcmp(what, "handover") == 0)
		ok = s->handed_over;
	else if (strcmp(what, "no-handover") == 0)
		ok = !s->handed_over;
	else if (strcmp(what, "fails") == 0)
		ok = r->rc < 0;
	else if (strcmp(what, "no-alloc-lookups") == 0)
		ok = s->alloc_lookups == 0;
	else if (strcmp(what, "site-pages") == 0)
		ok = s->sites_from_pages > 0;
	else if (strcmp(what, "frame-pages") == 0)
		ok = s->frames_from_pages > 0;
	else {
		fprintf(stderr, "rows-same: unknown expectation %s\n", what);
		return 1;
	}
	if (!ok)
		fprintf(stderr, "rows-same: %s: expected %s\n", r->t.path, what);
	return !ok;
}

int main(int argc, char **argv)
{
	static struct read sql, pages, batched;
	uint64_t freed = 0;
	int bad;

	if (argc < 2) {
		fprintf(stderr, "usage: rows-same TRACE [EXPECT...]\n");
		return 2;
	}
	if (read_trace(&sql, argv[1], true, ONE_BY_ONE) < 0 ||
	    read_trace(&pages, argv[1], false, ONE_BY_ONE) < 0 ||
	    read_trace(&batched, argv[1], false, BATCHED) < 0)
		return 1;
	bad = compare(&sql, &pages, "SQLite's rows, the pages");
	bad |= compare(&pages, &batched, "one by one, in batches");
	if (sql.t.read_stats.from_pages || sql.t.read_stats.sites_from_pages ||
	    sql.t.read_stats.frames_from_pages) {
		fprintf(stderr, "rows-same: SQLite's rows were asked for, but the pages were read\n");
		bad = 1;
	}
	for (int i = 2; i < argc; i++)
		bad |= expect(&pages, argv[i]);
	for (size_t i = 0; i < pages.e.n; i++)
		if (pages.e.ev[i].kind == MT_EV_FREE)
			freed += pages.e.ev[i].bytes;
	printf("%s: %zu events; pages: %" PRIu64 " rows, %" PRIu64 " through SQLite, %" PRIu64
	       " looked up%s; %" PRIu64 " allocations looked up; freed %" PRIu64 " bytes\n",
	       argv[1], pages.e.n, pages.t.read_stats.from_pages, pages.t.read_stats.from_sql,
	       pages.t.read_stats.lookups, pages.t.read_stats.handed_over ? ", handed over" : "",
	       pages.t.read_stats.alloc_lookups, freed);
	trace_close(&sql.t);
	trace_close(&pages.t);
	trace_close(&batched.t);
	free(sql.e.ev);
	free(pages.e.ev);
	free(batched.e.ev);
	return bad ? 1 : 0;
}
