/* Internal to the reader: what its files share (trace-lookup.c, below
 * trace-read.c, trace-read-flight.c and trace-rows.c). */
#pragma once

#include <stdint.h>

#include "trace.h"
#include "util-map.h"

typedef struct sqlite3_stmt sqlite3_stmt;

/* Prepare sql on t->db; on failure -1 with t->error saying that table
 * cannot be read. */
int trace_prepare(struct trace *t, const char *table, const char *sql, sqlite3_stmt **stmt);
/* -1 with t->error saying that reading table failed. */
int trace_step_failed(struct trace *t, const char *table);

/* The index a table's map gives an id, TRACE_NONE when it has none. */
static inline uint32_t trace_index_get(const struct map *m, int64_t id)
{
	const uint32_t *v = map_get(m, (uint64_t)id);

	return v ? *v : TRACE_NONE;
}
