/* What the reader's files share, below them all (trace-read.c,
 * trace-read-flight.c, trace-rows.c): the reader's messages and
 * statements, and the lookups in a loaded trace (trace.h). */
#include "trace.h"

#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "trace-lookup.h"
#include "util-mem.h"

/* ---- messages and statements ----------------------------------------- */

int trace_fail(struct trace *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
	return -1;
}

int trace_prepare(struct trace *t, const char *table, const char *sql, sqlite3_stmt **stmt)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, stmt, NULL) == SQLITE_OK)
		return 0;
	return trace_fail(t, "%s is corrupt or was not written by memtrace: cannot read "
		       "table '%s' (%s)",
		    t->path, table, sqlite3_errmsg(t->db));
}

int trace_step_failed(struct trace *t, const char *table)
{
	return trace_fail(t, "error reading table '%s' of %s: %s; the file may be damaged",
		    table, t->path, sqlite3_errmsg(t->db));
}

/* ---- lookups ---------------------------------------------------------- */

const char *trace_meta_get(const struct trace *t, const char *key)
{
	for (size_t i = 0; i < t->n_meta; i++) {
		if (strcmp(t->meta[i].key, key) == 0)
			return t->meta[i].value;
	}
	return NULL;
}

const char *trace_api_name(const struct trace *t, int64_t id)
{
	uint32_t i = trace_index_get(&t->api_index, id);

	return i == TRACE_NONE ? NULL : t->apis[i].name;
}

char *trace_thread_name(const struct trace *t, int64_t id)
{
	sqlite3_stmt *s = NULL;
	char *name = NULL;

	if (sqlite3_prepare_v2(t->db, "SELECT name FROM threads WHERE id = ?", -1, &s, NULL) !=
	    SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_TEXT)
		name = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return name;
}

const struct trace_stack *trace_find_stack(const struct trace *t, int64_t id)
{
	uint32_t i;

	if (id >= 1 && (uint64_t)id <= t->n_stacks && t->stacks[id - 1].id == id)
		return &t->stacks[id - 1];
	i = trace_index_get(&t->stack_index, id);

	return i == TRACE_NONE ? NULL : &t->stacks[i];
}

const struct trace_frame *trace_stack_frame(const struct trace *t,
					    const struct trace_stack *s, uint32_t i)
{
	uint32_t f;

	if (!s || i >= s->depth)
		return NULL;
	f = t->stack_frames[s->first + i];
	return f == TRACE_NONE ? NULL : &t->frames[f];
}

const struct trace_module *trace_frame_module(const struct trace *t,
					      const struct trace_frame *f)
{
	return f && f->module != TRACE_NONE ? &t->modules[f->module] : NULL;
}

const struct trace_op *trace_find_op(const struct trace *t, int64_t id)
{
	uint32_t i = trace_index_get(&t->op_index, id);

	return i == TRACE_NONE ? NULL : &t->ops[i];
}

int64_t trace_module_at(const struct trace *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n_modules;

	if (!t->modules_by_base)
		return -1;
	/* the first module whose base is above pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uint64_t)t->modules[t->modules_by_base[mid]].base <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int64_t)t->modules_by_base[lo - 1] : -1;
}

const struct trace_site *trace_find_site(const struct trace *t, int64_t id)
{
	uint32_t i;

	/* the writer numbers sites from 1 in the order it writes them */
	if (id >= 1 && (uint64_t)id <= t->n_sites && t->sites[id - 1].id == id)
		return &t->sites[id - 1];
	i = trace_index_get(&t->site_index, id);
	return i == TRACE_NONE ? &t->no_site : &t->sites[i];
}
