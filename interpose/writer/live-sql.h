/* The statements of the live side's files (trace-live.c, live-flight.c,
 * live-timeline.c): each file's own set, prepared at once and stepped
 * with integer values, a failure said with the trace's name. Inline, so
 * that no file of the live side calls another for them. Writer thread
 * only. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

struct mt_sql {
	sqlite3 *db;
	const char *path;	 /* the trace, named when a statement fails */
	const char *const *text; /* the statements, by id */
	sqlite3_stmt **stmt;	 /* n of them, prepared by mt_sql_prepare */
	int n;
};

/* False (said) when one does not prepare. */
static inline bool mt_sql_prepare(struct mt_sql *q)
{
	for (int i = 0; i < q->n; i++) {
		if (sqlite3_prepare_v2(q->db, q->text[i], -1, &q->stmt[i], NULL) != SQLITE_OK) {
			mt_log(MT_ENV, "cannot prepare the trace's statements: %s (at %.40s)",
			       sqlite3_errmsg(q->db), q->text[i]);
			return false;
		}
	}
	return true;
}

static inline void mt_sql_finalize(struct mt_sql *q)
{
	for (int i = 0; q->stmt && i < q->n; i++)
		sqlite3_finalize(q->stmt[i]);
}

static inline bool mt_sql_step(const struct mt_sql *q, int id)
{
	sqlite3_stmt *s = q->stmt[id];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return true;
	mt_log(MT_ENV, "cannot write the trace %s: %s (at %.40s)", q->path, sqlite3_errmsg(q->db),
	       q->text[id]);
	return false;
}

static inline bool mt_sql_run(const struct mt_sql *q, int id, int n, const int64_t *v)
{
	for (int i = 0; i < n; i++)
		sqlite3_bind_int64(q->stmt[id], i + 1, v[i]);
	return mt_sql_step(q, id);
}

#define MT_SQL_RUN(q, id, ...)                                                         \
	mt_sql_run(q, id, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
		   (int64_t[]){ __VA_ARGS__ })

/* id: the file's "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)" */
static inline bool mt_sql_meta(const struct mt_sql *q, int id, const char *key, uint64_t value)
{
	sqlite3_bind_text(q->stmt[id], 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q->stmt[id], 2, (int64_t)value);
	return mt_sql_step(q, id);
}
