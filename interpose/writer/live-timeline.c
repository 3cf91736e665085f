/* The writer's timeline (live-timeline.h). Its buckets merge as the
 * reporter's do (trace/trace-timeline.c, and halve as model-timeline.c
 * does), so that the reporter can lay them on its own. */
#include "live-timeline.h"

#include <string.h>

#define SNAP_EVERY (MT_TIMELINE_BUCKETS / MT_TIMELINE_SNAPSHOTS)

void mt_timeline_init(struct mt_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->width = MT_TIMELINE_FIRST_WIDTH_NS;
	tl->dirty_lo = MT_TIMELINE_BUCKETS;
}

int64_t mt_timeline_period(const struct mt_timeline *tl)
{
	return tl->width > INT64_MAX / SNAP_EVERY ? INT64_MAX : tl->width * SNAP_EVERY;
}

static bool past_end(const struct mt_timeline *tl, int64_t t)
{
	return tl->width <= INT64_MAX / MT_TIMELINE_BUCKETS && t >= tl->width * MT_TIMELINE_BUCKETS;
}

static void halve(struct mt_timeline *tl)
{
	int64_t period;

	for (size_t i = 0; i < MT_TIMELINE_BUCKETS / 2; i++) {
		struct trace_bucket b = { 0 };

		trace_bucket_merge(&b, &tl->b[2 * i]);
		trace_bucket_merge(&b, &tl->b[2 * i + 1]);
		tl->b[i] = b;
	}
	memset(&tl->b[MT_TIMELINE_BUCKETS / 2], 0, sizeof(tl->b[0]) * (MT_TIMELINE_BUCKETS / 2));
	tl->width *= 2;
	tl->rewrite = true;
	period = mt_timeline_period(tl);
	if (tl->next_snap_ns % period)
		tl->next_snap_ns = tl->next_snap_ns <= INT64_MAX - period / 2
					   ? tl->next_snap_ns + period / 2
					   : INT64_MAX;
}

/* Times from several threads can be a little out of order: the line
 * never goes back. */
static int64_t clamp(struct mt_timeline *tl, int64_t t)
{
	if (!tl->started) {
		tl->started = true;
		tl->first_ns = t;
	}
	return t > tl->last_ns ? t : tl->last_ns;
}

bool mt_timeline_due(struct mt_timeline *tl, int64_t time_ns, int64_t *at_ns)
{
	int64_t t = clamp(tl, time_ns), period, k;

	while (past_end(tl, t) && tl->width <= INT64_MAX / 4)
		halve(tl);
	if (t < tl->next_snap_ns || tl->next_snap_ns == INT64_MAX)
		return false;
	period = mt_timeline_period(tl);
	k = t / period + 1;
	*at_ns = tl->next_snap_ns;
	tl->next_snap_ns = k > INT64_MAX / period ? INT64_MAX : k * period;
	return true;
}

void mt_timeline_put(struct mt_timeline *tl, int64_t time_ns, uint64_t live)
{
	int64_t t = clamp(tl, time_ns);
	struct trace_bucket *b;
	size_t i;

	while (past_end(tl, t) && tl->width <= INT64_MAX / 4)
		halve(tl);
	i = t < 0 ? 0 : (size_t)(t / tl->width);
	if (i >= MT_TIMELINE_BUCKETS)
		i = MT_TIMELINE_BUCKETS - 1;
	b = &tl->b[i];
	trace_bucket_put(b, t, live, &tl->last_live);
	tl->last_ns = t;
	if (i < tl->dirty_lo)
		tl->dirty_lo = i;
	if (i + 1 > tl->dirty_hi)
		tl->dirty_hi = i + 1;
}

/* ---- its rows ---- */

enum { T_ROW, T_CLEAR, T_THIN, T_META, T_COUNT };
_Static_assert(T_COUNT == sizeof(((struct mt_timeline *)0)->stmt) / sizeof(sqlite3_stmt *),
	       "a statement each");

static const char *const stmt_sql[T_COUNT] = {
	[T_ROW] = "INSERT OR REPLACE INTO timeline(bucket,min,max,last,t_max,t_last,drops)"
		  " VALUES(?,?,?,?,?,?,?)",
	[T_CLEAR] = "DELETE FROM timeline",
	[T_THIN] = "DELETE FROM live_at_time WHERE time_ns % ?1 != 0",
	[T_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
};

bool mt_timeline_open(struct mt_timeline *tl, sqlite3 *db, const char *path)
{
	tl->sql = (struct mt_sql){ .db = db, .path = path, .text = stmt_sql, .stmt = tl->stmt,
				   .n = T_COUNT };
	return mt_sql_prepare(&tl->sql);
}

void mt_timeline_close(struct mt_timeline *tl)
{
	mt_sql_finalize(&tl->sql);
}

bool mt_timeline_commit(struct mt_timeline *tl)
{
	if (tl->rewrite) {
		if (!mt_sql_step(&tl->sql, T_CLEAR) ||
		    !MT_SQL_RUN(&tl->sql, T_THIN, mt_timeline_period(tl)))
			return false;
		tl->dirty_lo = 0;
		tl->dirty_hi = MT_TIMELINE_BUCKETS;
		tl->rewrite = false;
	}
	for (size_t i = tl->dirty_lo; i < tl->dirty_hi; i++) {
		const struct trace_bucket *b = &tl->b[i];
		if (b->used && !MT_SQL_RUN(&tl->sql, T_ROW, (int64_t)i, (int64_t)b->min,
					   (int64_t)b->max, (int64_t)b->last, b->t_max, b->t_last,
					   (int64_t)b->drops))
			return false;
	}
	tl->dirty_lo = MT_TIMELINE_BUCKETS;
	tl->dirty_hi = 0;
	if (tl->started && tl->width != tl->width_written) {
		if (!mt_sql_meta(&tl->sql, T_META, "timeline_width_ns", (uint64_t)tl->width) ||
		    !mt_sql_meta(&tl->sql, T_META, "timeline_first_ns", (uint64_t)tl->first_ns))
			return false;
		tl->width_written = tl->width;
	}
	return true;
}
