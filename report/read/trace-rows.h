/* The rows of one of a trace's tables keyed by an INTEGER PRIMARY KEY
 * (allocs, frees, sites, frames) in key order: read straight from the
 * database file's b-tree pages where that gives what SQLite would, else
 * through SQLite's rows. Internal to the reader (trace-read.c);
 * docs/performance.md says why it exists. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

typedef struct sqlite3_stmt sqlite3_stmt;

#define TRACE_ROWS_MAX 11

struct trace_rows_pages;

/* v[0] is the key (seq, or the id of sites and frames), v[i] the i-th
 * column named, as sqlite3_column_int64 reads it (a text column's:
 * trace_rows_text); bit i of null is set when that column is NULL, bit i
 * of other when it holds a real, a text or a blob.
 * A row has the values of its table's columns and no more: rows are
 * only seen through pointers. */
struct trace_row {
	uint32_t null, other;
	int64_t v[];
};

struct trace_rows {
	/* once trace_rows_next returned 1: valid until the next call */
	const struct trace_row *row;

	/* how the rows were read, for tests and benchmarks: rows decoded
	 * from the pages, rows through SQLite (from the start, or after the
	 * pages gave up: from_sql_after_pages), rows of the pages that only
	 * SQLite could read (an overflow page, a text value) */
	uint64_t from_pages, from_sql, row_lookups;
	bool from_sql_after_pages;

	/* private */
	const char *table, *key;
	char *columns; /* "seq, a, b" */
	size_t n;
	struct trace_row *sql_row; /* what SQLite's rows are read into */
	uint32_t text;		   /* bit i: v[i] is a text's offset in strings */
	char *strings;		   /* the texts of the rows given, NUL-ended */
	size_t n_strings, cap_strings;
	sqlite3_stmt *s, *lookup;
	struct trace_rows_pages *pages; /* NULL: SQLite's rows */
	bool delivered;
	int64_t last_seq;
};

/* Open the rows of table, columns cols[0..n) (n <= TRACE_ROWS_MAX) after
 * its key column (INTEGER PRIMARY KEY, for the pages). Bit i of text:
 * cols[i] is read as sqlite3_column_text reads it. pages: try the file's
 * pages (false: SQLite's rows only). On failure returns -1 with t->error
 * set; trace_rows_close in any case. */
int trace_rows_open(struct trace_rows *r, struct trace *t, const char *table, const char *key,
		    const char *const *cols, size_t n, uint32_t text, bool pages);

/* Text column col of row (1-based, as v): NULL for NULL. Valid while
 * row is. */
const char *trace_rows_text(const struct trace_rows *r, const struct trace_row *row, size_t col);

/* The next row: 1, or 0 after the last, or -1 with t->error set. */
int trace_rows_next(struct trace *t, struct trace_rows *r);

/* The row k places after r->row, when it is already read (a leaf of the
 * pages is decoded at once), else NULL: what to prefetch for. */
const struct trace_row *trace_rows_ahead(const struct trace_rows *r, size_t k);

void trace_rows_close(struct trace_rows *r);
