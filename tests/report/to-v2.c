/* to-v2 DB: rewrites a version-1 trace as version 2 in place
 * (docs/trace-format.md), so that the tests can check that the reporter
 * says the same of both (v2-same.sh) and the fuzz corpus has version-2
 * seeds. The events are replayed in seq order as the writer sees them: an
 * allocation goes into allocs, a free into frees when it releases the
 * allocation last made at its address with that allocation's bytes, and
 * every other row, or any row whose values allocs, frees and sites could
 * not give back as they are, into other_events. Before the version-1
 * table is dropped, the view events must give back its rows exactly. */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"

enum { SEQ, TIME, KIND, API, THREAD, DEVICE, STREAM, ADDRESS, BYTES, MEM, STACK, STATUS, HANDLE,
       OP, SOURCE, NCOLS };

/* The site columns (sites' order after id) and where they are in a row. */
static const int site_cols[] = { KIND, STACK, API, THREAD, DEVICE, MEM, STREAM, OP, STATUS,
				 HANDLE, SOURCE };
#define NSITE (sizeof(site_cols) / sizeof(site_cols[0]))

struct last_alloc {
	sqlite3_int64 address, seq, bytes;
};

static sqlite3 *db;
static struct last_alloc *allocs;
static size_t nallocs, cap_allocs;

static int die(const char *what)
{
	fprintf(stderr, "to-v2: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void exec(const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(sql);
}

static sqlite3_stmt *prepare(const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		die(sql);
	return s;
}

static void step(sqlite3_stmt *s)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		die(sqlite3_sql(s));
	sqlite3_reset(s);
}

/* Columns later versions of schema 1 added, which old traces lack. */
static void add_missing_columns(void)
{
	static const char *const cols[] = { "handle", "op", "source" };
	char sql[128];
	for (unsigned i = 0; i < 3; i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE v1_events ADD COLUMN %s INTEGER", cols[i]);
		sqlite3_exec(db, sql, NULL, NULL, NULL); /* fails when it is there */
	}
}

static bool is_int(sqlite3_stmt *row, int col)
{
	return sqlite3_column_type(row, col) == SQLITE_INTEGER;
}

static bool int_or_null(sqlite3_stmt *row, int col)
{
	int t = sqlite3_column_type(row, col);
	return t == SQLITE_INTEGER || t == SQLITE_NULL;
}

/* The id of the row's site, inserted when new; 0 when a site column
 * holds something sites would not give back (a text, a real). */
static sqlite3_int64 site_of(sqlite3_stmt *row, sqlite3_stmt *find, sqlite3_stmt *add)
{
	sqlite3_int64 id = 0;
	for (unsigned i = 0; i < NSITE; i++) {
		if (!int_or_null(row, site_cols[i]))
			return 0;
		sqlite3_bind_value(find, (int)i + 1, sqlite3_column_value(row, site_cols[i]));
		sqlite3_bind_value(add, (int)i + 1, sqlite3_column_value(row, site_cols[i]));
	}
	if (!is_int(row, KIND) || !is_int(row, API))
		return 0;
	if (sqlite3_step(find) == SQLITE_ROW)
		id = sqlite3_column_int64(find, 0);
	sqlite3_reset(find);
	if (!id) {
		step(add);
		id = sqlite3_last_insert_rowid(db);
	}
	return id;
}

static struct last_alloc *find_alloc(sqlite3_int64 address)
{
	for (size_t i = nallocs; i-- > 0;)
		if (allocs[i].address == address)
			return &allocs[i];
	return NULL;
}

static void remember_alloc(sqlite3_stmt *row)
{
	struct last_alloc *a = find_alloc(sqlite3_column_int64(row, ADDRESS));
	if (!a) {
		if (nallocs == cap_allocs) {
			cap_allocs = cap_allocs ? cap_allocs * 2 : 64;
			allocs = realloc(allocs, cap_allocs * sizeof(*allocs));
			if (!allocs)
				die("out of memory");
		}
		a = &allocs[nallocs++];
	}
	*a = (struct last_alloc){ sqlite3_column_int64(row, ADDRESS), sqlite3_column_int64(row, SEQ),
				  sqlite3_column_int64(row, BYTES) };
}

/* allocs, frees or other_events for one version-1 row. */
static void convert_row(sqlite3_stmt *row, sqlite3_stmt **st)
{
	enum { FIND, ADD, ALLOC, FREE, OTHER };
	sqlite3_int64 kind = sqlite3_column_int64(row, KIND), site = 0;
	struct last_alloc *a = NULL;
	bool narrow = is_int(row, SEQ) && is_int(row, TIME) && is_int(row, ADDRESS) &&
		      is_int(row, BYTES);

	if (narrow && kind == MT_EV_FREE) {
		a = find_alloc(sqlite3_column_int64(row, ADDRESS));
		narrow = a && a->bytes == sqlite3_column_int64(row, BYTES);
	}
	narrow = narrow && (kind == MT_EV_ALLOC || kind == MT_EV_FREE);
	if (narrow)
		site = site_of(row, st[FIND], st[ADD]);
	if (site && kind == MT_EV_ALLOC) {
		sqlite3_bind_value(st[ALLOC], 1, sqlite3_column_value(row, SEQ));
		sqlite3_bind_value(st[ALLOC], 2, sqlite3_column_value(row, TIME));
		sqlite3_bind_int64(st[ALLOC], 3, site);
		sqlite3_bind_value(st[ALLOC], 4, sqlite3_column_value(row, ADDRESS));
		sqlite3_bind_value(st[ALLOC], 5, sqlite3_column_value(row, BYTES));
		step(st[ALLOC]);
		remember_alloc(row);
	} else if (site) {
		sqlite3_bind_value(st[FREE], 1, sqlite3_column_value(row, SEQ));
		sqlite3_bind_value(st[FREE], 2, sqlite3_column_value(row, TIME));
		sqlite3_bind_int64(st[FREE], 3, site);
		sqlite3_bind_int64(st[FREE], 4, a->seq);
		step(st[FREE]);
	} else {
		for (int c = 0; c < NCOLS; c++)
			sqlite3_bind_value(st[OTHER], c + 1, sqlite3_column_value(row, c));
		step(st[OTHER]);
	}
}

static void convert(void)
{
	sqlite3_stmt *st[] = {
		prepare("SELECT id FROM sites WHERE kind IS ?1 AND stack IS ?2 AND api IS ?3 AND "
			"thread IS ?4 AND device IS ?5 AND mem IS ?6 AND stream IS ?7 AND op IS ?8 "
			"AND status IS ?9 AND handle IS ?10 AND source IS ?11"),
		prepare("INSERT INTO sites(kind,stack,api,thread,device,mem,stream,op,status,handle,"
			"source) VALUES(?,?,?,?,?,?,?,?,?,?,?)"),
		prepare("INSERT INTO allocs(seq,time_ns,site,address,bytes) VALUES(?,?,?,?,?)"),
		prepare("INSERT INTO frees(seq,time_ns,site,alloc) VALUES(?,?,?,?)"),
		prepare("INSERT INTO other_events(" MT_EVENT_COLUMNS
			") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
	};
	sqlite3_stmt *row = prepare("SELECT " MT_EVENT_COLUMNS " FROM v1_events ORDER BY seq");
	int rc;
	while ((rc = sqlite3_step(row)) == SQLITE_ROW)
		convert_row(row, st);
	if (rc != SQLITE_DONE)
		die("v1_events");
	sqlite3_finalize(row);
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		sqlite3_finalize(st[i]);
}

static sqlite3_int64 query_int(const char *sql)
{
	sqlite3_stmt *s = prepare(sql);
	if (sqlite3_step(s) != SQLITE_ROW)
		die(sql);
	sqlite3_int64 v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The view must give back every row and column of the old table, in seq
 * order. */
static void check_view(void)
{
	if (query_int("SELECT count(*) FROM (SELECT " MT_EVENT_COLUMNS " FROM v1_events EXCEPT "
		      "SELECT " MT_EVENT_COLUMNS " FROM events)") ||
	    query_int("SELECT count(*) FROM (SELECT " MT_EVENT_COLUMNS " FROM events EXCEPT "
		      "SELECT " MT_EVENT_COLUMNS " FROM v1_events)") ||
	    query_int("SELECT count(*) FROM v1_events") != query_int("SELECT count(*) FROM events")) {
		fprintf(stderr, "to-v2: the view events differs from the version-1 table\n");
		exit(1);
	}
	sqlite3_stmt *s = prepare("SELECT seq FROM events");
	sqlite3_int64 last = INT64_MIN;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (sqlite3_column_int64(s, 0) < last) {
			fprintf(stderr, "to-v2: the view events is not in seq order\n");
			exit(1);
		}
		last = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: to-v2 DB\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die(argv[1]);
	exec("BEGIN; ALTER TABLE events RENAME TO v1_events");
	add_missing_columns();
	exec(MT_SCHEMA_EVENTS_SQL MT_EVENTS_VIEW_V2_SQL);
	convert();
	check_view();
	exec("DROP TABLE v1_events; UPDATE meta SET value = '2' WHERE key = 'schema_version';"
	     "PRAGMA user_version = 2; COMMIT");
	sqlite3_close(db);
	free(allocs);
	return 0;
}
