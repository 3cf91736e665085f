/* Reading a trace: see trace.h and docs/trace-format.md. A trace is
 * untrusted input: any column may be NULL or of the wrong type, any
 * reference may dangle; none of that may crash the reporter. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-lookup.h"
#include "trace-rows.h"
#include "trace-schema.h"
#include "util-mem.h"

struct trace_oom_info {
	bool has_free, has_total;
	int64_t device_free, device_total;
	uint64_t limit; /* limit_bytes; 0: NULL, or a trace written before it */
};

static inline void finalizep(sqlite3_stmt **s)
{
	sqlite3_finalize(*s);
}
#define _autofinalize_ __attribute__((cleanup(finalizep)))

static char *col_strdup(sqlite3_stmt *s, int col)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	return v ? xstrdup((const char *)v) : NULL;
}

static bool col_null(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL;
}

/* Small enums (kind, mem) arrive as int64: anything out of range is 0. */
static int col_small(sqlite3_stmt *s, int col)
{
	int64_t v = sqlite3_column_int64(s, col);

	return v >= 0 && v <= 255 ? (int)v : 0;
}

/* A device ordinal; NULL and anything no device could have are -1. */
static int col_device(sqlite3_stmt *s, int col)
{
	int64_t v = sqlite3_column_int64(s, col);

	return sqlite3_column_type(s, col) == SQLITE_INTEGER && v >= 0 && v < TRACE_MAX_DEVICES
		       ? (int)v
		       : -1;
}

/* ---- the files beside it ----------------------------------------------- */

/* The report leaves a trace's directory as it found it. SQLite reads a
 * WAL database through its -wal and -shm and creates them when missing,
 * where it can; a read-only connection cannot fold the -wal in, so it
 * leaves both behind (https://www.sqlite.org/wal.html, "Read-Only
 * Databases"). The writer creates both before anything else and SQLite
 * removes both at the last close, so a WAL trace with neither beside it
 * is closed: it is read with immutable=1, which creates nothing. Any other
 * is read through them (a running or killed writer's data is in the
 * -wal), and what that made is removed after (tidy_sidecars). A
 * rollback-journal file read-only makes nothing. docs/trace-format.md. */
static const char *const sidecars[] = { "-wal", "-shm" };
enum { SIDECAR_WAL = 1 << 0, SIDECAR_SHM = 1 << 1 }; /* bit i: sidecars[i] */

/* SQLite's unix VFS: each connection holds a read lock on this byte of
 * the -shm while it has the file open (the "DMS" of
 * https://www.sqlite.org/walformat.html). */
#define SHM_DMS_BYTE 128

static unsigned sidecars_present(const char *path)
{
	unsigned present = 0;
	struct stat st;

	for (size_t i = 0; i < ARRAY_LENGTH(sidecars); i++) {
		_autofree_ char *side = xasprintf("%s%s", path, sidecars[i]);

		if (lstat(side, &st) == 0)
			present |= 1u << i;
	}
	return present;
}

/* File format write and read versions (bytes 18, 19) 2: WAL mode
 * (https://www.sqlite.org/fileformat2.html, "The Database Header"). */
static bool wal_mode(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool wal = fd >= 0 && pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		   memcmp(h, "SQLite format 3", 16) == 0 && h[18] == 2 && h[19] == 2;

	if (fd >= 0)
		close(fd);
	return wal;
}

static bool closed_trace(const char *path)
{
	return wal_mode(path) && sidecars_present(path) == 0;
}

static void unlink_if_empty(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

/* After the connection is closed: remove the sidecars it made, a -wal
 * only if empty (ours holds nothing, a writer's would), and neither while
 * someone else has the -shm open: an OFD lock on its DMS byte conflicts
 * with any connection's, this process's others included, and held while
 * removing it, no connection starts on it. (Closing the descriptor drops
 * this process's own locks on the -shm: only a trace named twice in one
 * run has any.) */
static void tidy_sidecars(const struct trace *t)
{
	unsigned made = sidecars_present(t->path) & ~t->sidecars_found;
	struct flock lock = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_DMS_BYTE, .l_len = 1
	};

	if (!made)
		return;
	_autofree_ char *wal = xasprintf("%s-wal", t->path);
	_autofree_ char *shm = xasprintf("%s-shm", t->path);
	int fd = open(shm, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fcntl(fd, F_OFD_SETLK, &lock) == 0) {
		if (made & SIDECAR_WAL)
			unlink_if_empty(wal);
		if (made & SIDECAR_SHM)
			unlink(shm);
	}
	if (fd >= 0)
		close(fd);
}

/* A killed writer's trace: WAL mode, its data in the -wal, the -wal and
 * -shm the writer made beside it, and no connection on it (a writer
 * still running has the -shm open: the DMS lock test of tidy_sidecars).
 * The first report makes it one file, as the writer's own close would
 * have: opened read-write, a memtrace trace by its meta, switched to
 * rollback-journal mode, which folds the -wal in and removes both.
 * Where anything is otherwise (a running writer, a hot journal, a
 * read-only file or directory, another program's database, a reader
 * that holds it), the trace is read as found. docs/trace-format.md. */
static bool nobody_on(const char *shm)
{
	struct flock lock = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_DMS_BYTE, .l_len = 1
	};
	int fd = open(shm, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	bool alone = fd >= 0 && fcntl(fd, F_OFD_SETLK, &lock) == 0;

	if (fd >= 0)
		close(fd); /* and its lock with it */
	return alone;
}

static bool is_memtrace(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	bool yes = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'format'", -1, &s,
				      NULL) == SQLITE_OK &&
		   sqlite3_step(s) == SQLITE_ROW &&
		   sqlite3_column_type(s, 0) == SQLITE_TEXT &&
		   strcmp((const char *)sqlite3_column_text(s, 0), "memtrace-trace") == 0;

	sqlite3_finalize(s);
	return yes;
}

static void settle_killed(const char *path)
{
	_autofree_ char *shm = xasprintf("%s-shm", path);
	_autofree_ char *journal = xasprintf("%s-journal", path);
	struct stat st;
	sqlite3 *db = NULL;

	if (!wal_mode(path) || sidecars_present(path) != (SIDECAR_WAL | SIDECAR_SHM) ||
	    lstat(journal, &st) == 0 || !nobody_on(shm))
		return;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) ==
		    SQLITE_OK &&
	    is_memtrace(db))
		sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	sqlite3_close(db);
}

void trace_settle(const char *path)
{
	settle_killed(path);
}

/* ---- opening ---------------------------------------------------------- */

/* "file:" URI for path with immutable=1; URI syntax needs %, ?, # quoted. */
static char *immutable_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = xmalloc(n * 3 + 32), *p = uri;

	p += sprintf(p, "file:");
	for (const char *c = path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#')
			p += sprintf(p, "%%%02X", (unsigned char)*c);
		else
			*p++ = *c;
	}
	strcpy(p, "?immutable=1");
	return uri;
}

static int open_db(struct trace *t, bool immutable)
{
	_autofree_ char *uri = immutable ? immutable_uri(t->path) : NULL;
	/* one thread: SQLite's per-call mutexes would cost 10% of the pass */
	int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0);

	if (t->db) {
		sqlite3_close(t->db);
		t->db = NULL;
	}
	t->immutable = immutable;
	t->shared |= !immutable;
	if (sqlite3_open_v2(immutable ? uri : t->path, &t->db, flags, NULL) != SQLITE_OK)
		return trace_fail(t, "cannot open %s: %s", t->path,
			    t->db ? sqlite3_errmsg(t->db) : "out of memory");
	/* a running writer holds its lock only for a short commit */
	sqlite3_busy_timeout(t->db, 5000);
	return 0;
}

static bool can_retry_immutable(int rc)
{
	/* a WAL trace needs its -shm: not creatable in a read-only place */
	rc &= 0xff;
	return rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY || rc == SQLITE_IOERR;
}

static int read_user_version(struct trace *t, int *rc)
{
	_autofinalize_ sqlite3_stmt *s = NULL;

	*rc = sqlite3_prepare_v2(t->db, "PRAGMA user_version", -1, &s, NULL);
	if (*rc == SQLITE_OK) {
		*rc = sqlite3_step(s);
		if (*rc == SQLITE_ROW) {
			t->schema_version = sqlite3_column_int64(s, 0);
			*rc = SQLITE_OK;
			return 0;
		}
	}
	*rc = sqlite3_extended_errcode(t->db);
	return -1;
}

static bool sidecar_has_data(const char *path, const char *suffix)
{
	_autofree_ char *side = xasprintf("%s%s", path, suffix);
	struct stat st;

	return stat(side, &st) == 0 && st.st_size > 0;
}

static bool wal_has_data(const char *path)
{
	return sidecar_has_data(path, "-wal");
}

/* memtrace switches a new trace to WAL mode before anything else: a
 * rollback journal beside it, and no -wal data, means the program was
 * killed in that first moment, before any hooked call had returned. The
 * journal may be empty: killed after SQLite created it, before it wrote
 * to it. */
static bool half_created(const char *path)
{
	_autofree_ char *journal = xasprintf("%s-journal", path);
	struct stat st;

	return stat(journal, &st) == 0 && S_ISREG(st.st_mode) && !wal_has_data(path);
}

static int first_read(struct trace *t)
{
	int rc;

	if (read_user_version(t, &rc) == 0)
		return 0;
	if (!t->immutable && can_retry_immutable(rc)) {
		/* main warns about what this costs once the trace is loaded */
		if (open_db(t, true) == 0 && read_user_version(t, &rc) == 0) {
			t->wal_ignored = wal_has_data(t->path);
			return 0;
		}
	}
	if ((rc & 0xff) == SQLITE_NOTADB)
		return trace_fail(t, "%s is not a memtrace trace (not a SQLite database)", t->path);
	return trace_fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
}

static int count_tables(struct trace *t, int64_t *n)
{
	_autofinalize_ sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(t->db, "SELECT count(*) FROM sqlite_master", -1, &s,
			       NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW)
		return trace_fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	*n = sqlite3_column_int64(s, 0);
	return 0;
}

/* Columns and tables added to schema version 1 later (docs/trace-format.md)
 * are optional: a trace written before them reads as having none. */
static bool has_column(struct trace *t, const char *table, const char *column)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	_autofree_ char *sql = xasprintf("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?",
					 table);

	if (sqlite3_prepare_v2(t->db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, column, -1, SQLITE_STATIC);
	return sqlite3_step(s) == SQLITE_ROW;
}

static bool has_table(struct trace *t, const char *name)
{
	_autofinalize_ sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(t->db,
			       "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	return sqlite3_step(s) == SQLITE_ROW;
}

static int check_tables(struct trace *t, const char *const *tables, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!has_table(t, tables[i]))
			return trace_fail(t, "%s is incomplete or corrupt: table '%s' is missing",
				    t->path, tables[i]);
	}
	return 0;
}

static int check_schema(struct trace *t)
{
	static const char *const tables[] = {
		"meta", "apis", "modules", "frames", "stack_frames", "threads", "ooms",
	};
	static const char *const tables_v1[] = { "events" };
	static const char *const tables_v2[] = { "sites", "allocs", "frees", "other_events" };
	const char *events = t->schema_version == 1 ? "events" : "other_events";
	int64_t n = 0;

	if (t->schema_version < MT_SCHEMA_VERSION_MIN || t->schema_version > MT_SCHEMA_VERSION) {
		if (half_created(t->path))
			return trace_fail(t, "%s was left half-created (the program was killed while "
				       "memtrace was creating it): it holds no events",
				    t->path);
		if (count_tables(t, &n) < 0)
			return -1;
		if (n == 0 && t->wal_ignored)
			return trace_fail(t, "cannot read %s: its data is still in its -wal file, and "
				       "its -shm cannot be created here (read-only directory?): "
				       "copy the trace with its -wal and -shm to a writable directory",
				    t->path);
		if (n == 0)
			return trace_fail(t, "%s is empty: not a memtrace trace (did the program run "
				       "with libmemtrace.so preloaded?)",
				    t->path);
		if (t->schema_version == 0)
			return trace_fail(t, "%s is a SQLite database but not a memtrace trace "
				       "(PRAGMA user_version is 0)",
				    t->path);
		return trace_fail(t, "%s has trace schema version %lld, but this memtrace report "
			       "reads versions %d to %d: use the memtrace that wrote the trace",
			    t->path, (long long)t->schema_version, MT_SCHEMA_VERSION_MIN,
			    MT_SCHEMA_VERSION);
	}
	if (check_tables(t, tables, ARRAY_LENGTH(tables)) < 0 ||
	    (t->schema_version == 1 && check_tables(t, tables_v1, ARRAY_LENGTH(tables_v1)) < 0) ||
	    (t->schema_version >= 2 && check_tables(t, tables_v2, ARRAY_LENGTH(tables_v2)) < 0))
		return -1;
	t->has_handle_column = has_column(t, events, "handle");
	t->has_op_column = has_column(t, events, "op");
	t->has_source_column = has_column(t, events, "source");
	return 0;
}

static int check_file(struct trace *t)
{
	struct stat st;

	if (stat(t->path, &st) < 0)
		return trace_fail(t, "cannot open %s: %s", t->path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return trace_fail(t, "cannot open %s: it is a directory, not a trace file", t->path);
	return 0;
}

int trace_open(struct trace *t, const char *path, const struct trace_site_rules *rules)
{
	*t = (struct trace){ .rules = rules };
	t->path = xstrdup(path);
	map_init(&t->api_index, sizeof(uint32_t));
	map_init(&t->module_index, sizeof(uint32_t));
	map_init(&t->frame_index, sizeof(uint32_t));
	map_init(&t->stack_index, sizeof(uint32_t));
	map_init(&t->ooms, sizeof(struct trace_oom_info));
	map_init(&t->op_index, sizeof(uint32_t));
	map_init(&t->cupti_pc, sizeof(uint64_t));
	map_init(&t->same_frame, sizeof(uint32_t));
	map_init(&t->site_index, sizeof(uint32_t));

	if (check_file(t) < 0)
		return -1;
	/* a killed process's ring first: its events go into the trace before
	 * the trace is made one file and read */
	struct trace_recovery rec;
	if (trace_recover(path, &rec) < 0)
		fprintf(stderr, "memtrace report: %s; reporting what the trace holds\n", rec.error);
	else if (rec.recovered)
		fprintf(stderr, "memtrace report: recovered %llu events of %s from %s-ring\n",
			(unsigned long long)rec.recovered, path, path);
	free(rec.error);
	settle_killed(path);
	t->sidecars_found = sidecars_present(path);
	if (open_db(t, closed_trace(path)) < 0)
		return -1;
	/* one read transaction: every table from the same committed flush */
	if (sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return trace_fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	if (first_read(t) < 0)
		return -1;
	/* ... on the connection first_read opened again, if it did */
	if (sqlite3_get_autocommit(t->db) &&
	    sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return trace_fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	return check_schema(t);
}

/* ---- loading ---------------------------------------------------------- */

static int check_count(struct trace *t, size_t n, const char *table)
{
	if (n >= TRACE_NONE - 1)
		return trace_fail(t, "%s: table '%s' has more rows than memtrace report handles",
			    t->path, table);
	return 0;
}

static void index_put(struct map *m, int64_t id, size_t idx)
{
	*(uint32_t *)xmap_put(m, (uint64_t)id, NULL) = (uint32_t)idx;
}

/* The writer numbers frames, stacks and sites from 1 in the order it
 * writes them: the row of id k is then at index k - 1, found without the
 * table's map, and only the rows numbered otherwise are put in it. */
static bool dense_id(int64_t id, size_t idx)
{
	return id >= 1 && (uint64_t)id == idx + 1;
}

static uint32_t frame_at(const struct trace *t, int64_t id)
{
	if (id >= 1 && (uint64_t)id <= t->n_frames && t->frames[id - 1].id == id)
		return (uint32_t)(id - 1);
	return trace_index_get(&t->frame_index, id);
}

static int load_meta(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (trace_prepare(t, "meta", "SELECT key, value FROM meta", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (col_null(s, 0))
			continue;
		grow_array(&t->meta, &cap, t->n_meta + 1, sizeof(*t->meta));
		t->meta[t->n_meta++] = (struct trace_meta){
			.key = col_strdup(s, 0), .value = col_strdup(s, 1),
		};
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "meta");
}

static int load_apis(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (trace_prepare(t, "apis", "SELECT id, name FROM apis", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (check_count(t, t->n_apis, "apis") < 0)
			return -1;
		grow_array(&t->apis, &cap, t->n_apis + 1, sizeof(*t->apis));
		t->apis[t->n_apis] = (struct trace_api){
			.id = sqlite3_column_int64(s, 0), .name = col_strdup(s, 1),
		};
		index_put(&t->api_index, t->apis[t->n_apis].id, t->n_apis);
		t->n_apis++;
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "apis");
}

static int load_modules(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (trace_prepare(t, "modules", "SELECT id, path, base, build_id FROM modules", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct trace_module *mod;

		if (check_count(t, t->n_modules, "modules") < 0)
			return -1;
		grow_array(&t->modules, &cap, t->n_modules + 1, sizeof(*t->modules));
		mod = &t->modules[t->n_modules];
		*mod = (struct trace_module){
			.id = sqlite3_column_int64(s, 0),
			.path = col_strdup(s, 1),
			.base = sqlite3_column_int64(s, 2),
			.build_id = col_strdup(s, 3),
		};
		if (!mod->path)
			mod->path = xstrdup("");
		index_put(&t->module_index, mod->id, t->n_modules);
		t->n_modules++;
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "modules");
}

static bool row_null(const struct trace_row *row, int col)
{
	return row->null >> col & 1;
}

/* Small enums (kind, mem) of a row: anything out of range is 0. */
static int row_small(const struct trace_row *row, int col)
{
	return row->v[col] >= 0 && row->v[col] <= 255 ? (int)row->v[col] : 0;
}

static bool row_integer(const struct trace_row *row, int col)
{
	return !((row->null | row->other) >> col & 1);
}

static char *row_strdup(const struct trace_rows *rows, int col)
{
	const char *v = trace_rows_text(rows, rows->row, (size_t)col);

	return v ? xstrdup(v) : NULL;
}

/* A frames row, its columns in the schema's order (trace-schema.h). */
enum { FCOL_KIND = 1, FCOL_IP, FCOL_MODULE, FCOL_OFFSET, FCOL_FUNCTION, FCOL_FILE, FCOL_LINE };

static void read_frame(struct trace *t, const struct trace_rows *rows, struct trace_frame *f)
{
	const struct trace_row *row = rows->row;

	*f = (struct trace_frame){
		.id = row->v[0],
		.kind = row_small(row, FCOL_KIND),
		.ip = row->v[FCOL_IP],
		.module = TRACE_NONE,
		.offset = row->v[FCOL_OFFSET],
		.has_offset = !row_null(row, FCOL_OFFSET),
		.function = row_strdup(rows, FCOL_FUNCTION),
		.file = row_strdup(rows, FCOL_FILE),
		.line = row_null(row, FCOL_LINE) ? 0 : row->v[FCOL_LINE],
	};
	if (f->line < 0)
		f->line = 0;
	if (!row_null(row, FCOL_MODULE)) {
		f->module = trace_index_get(&t->module_index, row->v[FCOL_MODULE]);
		if (f->module == TRACE_NONE)
			t->missing_modules++;
	}
}

/* Through trace-rows.h, as sites: a trace has a frame a distinct
 * return address. */
static int load_frames(struct trace *t)
{
	static const char *const cols[] = { "kind",	"ip",	"module", "offset",
					    "function", "file", "line" };
	struct trace_rows rows;
	size_t cap = 0;
	int rc;

	if (trace_rows_open(&rows, t, "frames", "id", cols, ARRAY_LENGTH(cols),
			    1u << (FCOL_FUNCTION - 1) | 1u << (FCOL_FILE - 1), !t->sql_rows) < 0) {
		trace_rows_close(&rows);
		return -1;
	}
	while ((rc = trace_rows_next(t, &rows)) == 1) {
		if (check_count(t, t->n_frames, "frames") < 0) {
			rc = -1;
			break;
		}
		grow_array(&t->frames, &cap, t->n_frames + 1, sizeof(*t->frames));
		read_frame(t, &rows, &t->frames[t->n_frames]);
		if (!dense_id(t->frames[t->n_frames].id, t->n_frames))
			index_put(&t->frame_index, t->frames[t->n_frames].id, t->n_frames);
		t->n_frames++;
	}
	t->read_stats.frames_from_pages = rows.from_pages;
	trace_rows_close(&rows);
	return rc < 0 ? -1 : 0;
}

/* Rows come ordered by (stack, depth): each run of one stack id is one
 * stack. A gap in depths (a missing row) just shortens the stack. */
static int load_stacks(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0, cap_frames = 0;
	int rc;

	if (trace_prepare(t, "stack_frames",
		    "SELECT stack, frame FROM stack_frames ORDER BY stack, depth", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		uint32_t frame = frame_at(t, sqlite3_column_int64(s, 1));

		if (check_count(t, t->n_stack_frames, "stack_frames") < 0)
			return -1;
		if (t->n_stacks == 0 || t->stacks[t->n_stacks - 1].id != id) {
			grow_array(&t->stacks, &cap, t->n_stacks + 1, sizeof(*t->stacks));
			t->stacks[t->n_stacks] = (struct trace_stack){
				.id = id, .first = (uint32_t)t->n_stack_frames,
			};
			if (!dense_id(id, t->n_stacks))
				index_put(&t->stack_index, id, t->n_stacks);
			t->n_stacks++;
		}
		if (frame == TRACE_NONE)
			t->missing_frames++;
		grow_array(&t->stack_frames, &cap_frames, t->n_stack_frames + 1,
			   sizeof(*t->stack_frames));
		t->stack_frames[t->n_stack_frames++] = frame;
		t->stacks[t->n_stacks - 1].depth++;
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "stack_frames");
}

static int load_threads(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	int rc;

	if (trace_prepare(t, "threads", "SELECT count(*) FROM threads", &s) < 0)
		return -1;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		return trace_step_failed(t, "threads");
	t->n_threads = (size_t)sqlite3_column_int64(s, 0);
	return 0;
}

static int load_ooms(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	int rc;

	/* limit_bytes came later in version 3: NULL in a trace without it */
	if (trace_prepare(t, "ooms",
			  has_column(t, "ooms", "limit_bytes")
				  ? "SELECT seq, device_free, device_total, limit_bytes FROM ooms"
				  : "SELECT seq, device_free, device_total, NULL FROM ooms",
			  &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct trace_oom_info *o = xmap_put(&t->ooms, (uint64_t)sqlite3_column_int64(s, 0), NULL);

		o->has_free = !col_null(s, 1);
		o->device_free = sqlite3_column_int64(s, 1);
		o->has_total = !col_null(s, 2);
		o->device_total = sqlite3_column_int64(s, 2);
		o->limit = col_null(s, 3) || sqlite3_column_int64(s, 3) <= 0
				   ? 0
				   : (uint64_t)sqlite3_column_int64(s, 3);
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "ooms");
}

static int load_devices(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (!has_table(t, "devices"))
		return 0;
	if (trace_prepare(t, "devices",
		    "SELECT id, total_bytes, free_bytes_at_first_use FROM devices ORDER BY id",
		    &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int id = col_device(s, 0);
		int64_t total = sqlite3_column_int64(s, 1), free_b = sqlite3_column_int64(s, 2);

		if (id < 0)
			continue;
		grow_array(&t->devices, &cap, t->n_devices + 1, sizeof(*t->devices));
		t->devices[t->n_devices++] = (struct trace_device){
			.id = id,
			.total_bytes = total > 0 ? (uint64_t)total : 0,
			.has_free = !col_null(s, 2) && free_b >= 0,
			.free_bytes_at_first_use = free_b > 0 ? (uint64_t)free_b : 0,
		};
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "devices");
}

/* An op's name and domain as one key: ops with the same are one op. */
static uint64_t op_hash(const char *name, const char *domain)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = domain ? domain : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull; /* no name/domain split is ambiguous */
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* One more row of the ops table; ops of the same name and domain are one
 * op, known by the first id (by_name: op_hash -> its index). */
static void add_op(struct trace *t, sqlite3_stmt *s, struct map *by_name)
{
	struct trace_op *op = &t->ops[t->n_ops];
	uint32_t *first;
	bool inserted;

	*op = (struct trace_op){
		.id = sqlite3_column_int64(s, 0), .name = col_strdup(s, 1),
		.domain = col_strdup(s, 2),
	};
	if (!op->name)
		op->name = xstrdup("");
	op->same = op->id;
	first = xmap_put(by_name, op_hash(op->name, op->domain), &inserted);
	if (inserted)
		*first = (uint32_t)t->n_ops;
	else if (same_str(t->ops[*first].name, op->name) &&
		 same_str(t->ops[*first].domain, op->domain))
		op->same = t->ops[*first].id;
	op->mark_kind = t->rules ? t->rules->mark_kind(op->name) : MARK_USER;
	index_put(&t->op_index, op->id, t->n_ops);
	t->n_ops++;
}

static int load_ops(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	struct map by_name;
	size_t cap = 0;
	int rc, ret = -1;

	if (!has_table(t, "ops"))
		return 0;
	if (trace_prepare(t, "ops", "SELECT id, name, domain FROM ops ORDER BY id", &s) < 0)
		return -1;
	map_init(&by_name, sizeof(uint32_t));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (check_count(t, t->n_ops, "ops") < 0)
			goto out;
		grow_array(&t->ops, &cap, t->n_ops + 1, sizeof(*t->ops));
		add_op(t, s, &by_name);
	}
	if (rc != SQLITE_DONE) {
		trace_step_failed(t, "ops");
		goto out;
	}
	if (t->rules)
		t->rules->op_builds(t->ops, t->n_ops);
	ret = 0;
out:
	map_fini(&by_name);
	return ret;
}

static int load_cupti(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	int rc;

	if (!has_table(t, "cupti"))
		return 0;
	if (trace_prepare(t, "cupti", "SELECT seq, pc FROM cupti", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		t->has_cupti = true;
		if (!col_null(s, 1))
			*(uint64_t *)xmap_put(&t->cupti_pc, (uint64_t)sqlite3_column_int64(s, 0),
					     NULL) = (uint64_t)sqlite3_column_int64(s, 1);
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "cupti");
}

/* A sites row (version 2): the columns its events share, as an event
 * without seq, time, address and bytes; the columns in the order of the
 * schema's record (trace-schema.h), which the pages read fastest. Read
 * as col_small and col_device read a statement's columns. */
enum { SCOL_KIND = 1, SCOL_STACK, SCOL_API, SCOL_THREAD, SCOL_DEVICE, SCOL_MEM, SCOL_STREAM,
       SCOL_OP, SCOL_STATUS, SCOL_HANDLE, SCOL_SOURCE };

static void read_site(struct trace *t, const struct trace_row *row, struct trace_site *site)
{
	int64_t device = row->v[SCOL_DEVICE];

	site->id = row->v[0];
	site->ev = (struct trace_event){
		.kind = row_small(row, SCOL_KIND),
		.api = row->v[SCOL_API],
		.thread = row->v[SCOL_THREAD],
		.device = row_integer(row, SCOL_DEVICE) && device >= 0 && device < TRACE_MAX_DEVICES
				  ? (int)device
				  : -1,
		.stream = (uint64_t)row->v[SCOL_STREAM],
		.mem = row_small(row, SCOL_MEM),
		.stack = row->v[SCOL_STACK],
		.status = row->v[SCOL_STATUS],
		.handle = (uint64_t)row->v[SCOL_HANDLE],
		.has_handle = row_integer(row, SCOL_HANDLE),
		.has_op = row_integer(row, SCOL_OP),
		.op = row->v[SCOL_OP],
		.source = row_small(row, SCOL_SOURCE),
		.module = -1,
		.no_cupti = !t->has_cupti,
	};
}

/* Through trace-rows.h, as allocs and frees: a trace has as many sites
 * as it has distinct call stacks and more, and reading them through
 * SQLite was most of loading a trace of many. */
static int load_sites(struct trace *t)
{
	static const char *const cols[] = { "kind", "stack", "api",    "thread", "device", "mem",
					    "stream", "op",   "status", "handle", "source" };
	struct trace_rows rows;
	size_t cap = 0;
	int rc;

	if (t->schema_version < 2)
		return 0;
	if (trace_rows_open(&rows, t, "sites", "id", cols, ARRAY_LENGTH(cols), 0, !t->sql_rows) < 0) {
		trace_rows_close(&rows);
		return -1;
	}
	while ((rc = trace_rows_next(t, &rows)) == 1) {
		if (check_count(t, t->n_sites, "sites") < 0) {
			rc = -1;
			break;
		}
		grow_array(&t->sites, &cap, t->n_sites + 1, sizeof(*t->sites));
		read_site(t, rows.row, &t->sites[t->n_sites]);
		if (!dense_id(t->sites[t->n_sites].id, t->n_sites))
			index_put(&t->site_index, t->sites[t->n_sites].id, t->n_sites);
		t->n_sites++;
	}
	t->read_stats.sites_from_pages = rows.from_pages;
	trace_rows_close(&rows);
	return rc < 0 ? -1 : 0;
}

/* qsort_r, not a global for the trace: traces are loaded on several
 * threads at once (the ranks of a job) */
static int cmp_module_base(const void *a, const void *b, void *trace)
{
	const struct trace *t = trace;
	uint64_t x = (uint64_t)t->modules[*(const uint32_t *)a].base;
	uint64_t y = (uint64_t)t->modules[*(const uint32_t *)b].base;

	return x < y ? -1 : x > y;
}

static void sort_modules(struct trace *t)
{
	t->modules_by_base = xcalloc(t->n_modules + 1, sizeof(*t->modules_by_base));
	for (size_t i = 0; i < t->n_modules; i++)
		t->modules_by_base[i] = (uint32_t)i;
	qsort_r(t->modules_by_base, t->n_modules, sizeof(*t->modules_by_base), cmp_module_base, t);
}

int trace_load(struct trace *t)
{
	if (load_meta(t) < 0 || load_apis(t) < 0 || load_modules(t) < 0 ||
	    load_frames(t) < 0 || load_stacks(t) < 0 || load_threads(t) < 0 ||
	    load_ooms(t) < 0 || load_devices(t) < 0 || load_ops(t) < 0 || load_cupti(t) < 0 ||
	    load_sites(t) < 0 || trace_load_flight(t) < 0)
		return -1;
	sort_modules(t);
	return 0;
}

/* ---- events ----------------------------------------------------------- */

/* The columns read, in this order; those a trace may lack read as NULL. */
enum {
	COL_SEQ, COL_TIME, COL_KIND, COL_API, COL_ADDRESS, COL_BYTES, COL_MEM, COL_STACK,
	COL_DEVICE, COL_HANDLE, COL_STREAM, COL_STATUS, COL_OP, COL_SOURCE, COL_THREAD,
};

static char *events_sql(const struct trace *t)
{
	return xasprintf("SELECT seq, time_ns, kind, api, address, bytes, mem, stack, device, "
			 "%s, stream, status, %s, %s, thread FROM %s ORDER BY seq",
			 t->has_handle_column ? "handle" : "NULL",
			 t->has_op_column ? "op" : "NULL",
			 t->has_source_column ? "source" : "NULL",
			 t->schema_version == 1 ? "events" : "other_events");
}

/* What the ops table says about the event's op. */
static void read_op(const struct trace *t, struct trace_event *ev)
{
	const struct trace_op *op = ev->has_op ? trace_find_op(t, ev->op) : NULL;

	if (op && op->same != op->id && trace_find_op(t, op->same))
		op = trace_find_op(t, op->same);
	if (!op)
		return;
	ev->op = op->same;
	ev->has_build = op->has_build;
	ev->build = op->build;
	if (ev->kind == MT_EV_MARK) {
		ev->mark_kind = op->mark_kind;
		ev->at_mark = op->at_mark;
	}
}

/* The module of a CUPTI record's pc: its one-frame stack names it, else
 * the modules' bases place it. */
static int64_t cupti_module(const struct trace *t, const struct trace_event *ev)
{
	const struct trace_stack *s = trace_find_stack(t, ev->stack);
	const struct trace_frame *f = trace_stack_frame(t, s, 0);
	const uint64_t *pc;

	if (f && f->module != TRACE_NONE)
		return f->module;
	pc = map_get(&t->cupti_pc, (uint64_t)ev->seq);
	return pc && *pc ? trace_module_at(t, *pc) : -1;
}

/* What the reader adds that depends on the event's site columns alone
 * (the same for every event of a version-2 site). */
static void resolve_site(struct trace *t, struct trace_event *ev)
{
	read_op(t, ev);
	if (t->rules)
		ev->site = t->rules->resolve(t, ev);
}

/* What the ooms table says about an oom event. */
static void read_oom(const struct trace *t, struct trace_event *ev)
{
	const struct trace_oom_info *o = map_get(&t->ooms, (uint64_t)ev->seq);

	if (o) {
		ev->has_device_free = o->has_free;
		ev->device_free = o->device_free;
		ev->has_device_total = o->has_total;
		ev->device_total = o->device_total;
		ev->limit = o->limit;
	}
}

static void read_event(struct trace *t, sqlite3_stmt *s, struct trace_event *ev)
{
	int64_t bytes = sqlite3_column_int64(s, COL_BYTES);

	*ev = (struct trace_event){
		.seq = sqlite3_column_int64(s, COL_SEQ),
		.time_ns = sqlite3_column_int64(s, COL_TIME),
		.kind = col_small(s, COL_KIND),
		.api = sqlite3_column_int64(s, COL_API),
		.address = (uint64_t)sqlite3_column_int64(s, COL_ADDRESS),
		.has_address = !col_null(s, COL_ADDRESS),
		.bytes = bytes > 0 ? (uint64_t)bytes : 0,
		.mem = col_small(s, COL_MEM),
		.stack = sqlite3_column_int64(s, COL_STACK),
		.device = col_device(s, COL_DEVICE),
		.handle = (uint64_t)sqlite3_column_int64(s, COL_HANDLE),
		.has_handle = sqlite3_column_type(s, COL_HANDLE) == SQLITE_INTEGER,
		.stream = (uint64_t)sqlite3_column_int64(s, COL_STREAM),
		.thread = sqlite3_column_int64(s, COL_THREAD), /* NULL reads as 0 */
		.status = sqlite3_column_int64(s, COL_STATUS),
		.has_op = sqlite3_column_type(s, COL_OP) == SQLITE_INTEGER,
		.op = sqlite3_column_int64(s, COL_OP),
		.source = col_small(s, COL_SOURCE),
		.module = -1,
		.no_cupti = !t->has_cupti,
	};
	if (ev->stack != 0 && !trace_find_stack(t, ev->stack))
		t->missing_stacks++;
	if (ev->kind == MT_EV_OOM || ev->kind == MT_EV_TENSOR_OOM)
		read_oom(t, ev);
	if (ev->source == MT_SOURCE_CUPTI)
		ev->module = cupti_module(t, ev);
	resolve_site(t, ev);
}

/* What depends on t->opts, once the frames are symbolized. */
static void prepare_events(struct trace *t)
{
	for (size_t i = 0; i < t->n_ops; i++)
		t->ops[i].at_mark = t->opts.at_mark && strcmp(t->ops[i].name, t->opts.at_mark) == 0;
	if (t->rules)
		t->rules->prepare(t);
}

static int read_events_v1(struct trace *t, trace_event_fn fn, void *ctx)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	_autofree_ char *sql = events_sql(t);
	struct trace_event ev;
	int rc;

	if (trace_prepare(t, "events", sql, &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		read_event(t, s, &ev);
		fn(ctx, &ev);
	}
	return rc == SQLITE_DONE ? 0 : trace_step_failed(t, "events");
}

/* ---- version 2: allocs, frees and other_events merged by seq ---- */

/* What every event of a site shares, resolved once for all of them. */
static void prepare_sites(struct trace *t)
{
	for (size_t i = 0; i < t->n_sites; i++) {
		struct trace_site *site = &t->sites[i];

		site->missing_stack = site->ev.stack != 0 &&
				      !trace_find_stack(t, site->ev.stack);
		resolve_site(t, &site->ev);
		site->ev.site_slot = i < UINT32_MAX ? (uint32_t)(i + 1) : 0;
	}
	/* a row naming no site: an event of no kind, which the model ignores */
	t->no_site = (struct trace_site){
		.ev = { .device = -1, .module = -1, .no_cupti = !t->has_cupti },
	};
	resolve_site(t, &t->no_site.ev);
}

/* The columns every allocs and frees row starts with: seq, time_ns, site. */
static void read_site_event(struct trace *t, const struct trace_row *row, struct trace_event *ev)
{
	const struct trace_site *site = trace_find_site(t, row->v[2]);

	*ev = site->ev;
	ev->seq = row->v[0];
	ev->time_ns = row->v[1];
	if (site->missing_stack)
		t->missing_stacks++;
	if (ev->kind == MT_EV_OOM) /* not from the writer, but the view says so */
		read_oom(t, ev);
	if (ev->source == MT_SOURCE_CUPTI)
		ev->module = cupti_module(t, ev);
}

/* What a free reads of the allocation it names. */
struct alloc_row {
	uint64_t address;
	int64_t bytes;
	bool has_address;
};

static void set_alloc(struct trace_event *ev, const struct alloc_row *a)
{
	ev->address = a->address;
	ev->has_address = a->has_address;
	ev->bytes = a->bytes > 0 ? (uint64_t)a->bytes : 0;
}

/* CUR_RING: flight mode's ring (trace-read-flight.c), no statement of its own */
enum { CUR_ALLOCS, CUR_FREES, CUR_OTHER, CUR_RING, CUR_COUNT };

/* One table's rows in seq order; row: the cursor holds the row whose seq
 * is seq. allocs and frees are read as trace-rows.h reads them, the
 * other events through SQLite. */
struct cursor {
	const char *table;
	struct trace_rows rows; /* allocs, frees */
	sqlite3_stmt *s;	/* other_events */
	bool row;
	int64_t seq;
};

/* The allocations of the last ALLOC_WINDOW seqs, each in the slot of its
 * seq modulo the size: no hashing and no probing, and the slots are
 * written in order. Most allocations are freed well within it. */
#define ALLOC_WINDOW (1u << 15)

struct window_slot { /* 32 bytes: two a line */
	int64_t seq;
	uint64_t address;
	int64_t bytes;
	bool has_address;
	bool used;
};

struct v2_reader {
	struct cursor c[CUR_COUNT];
	/* The hooked allocations read and not yet freed, by seq: a free
	 * names its allocation, read a moment ago, and keeping them is a
	 * fraction of the cost of joining allocs again. They sit in window;
	 * one still unfreed when its slot is wanted again moves to the map.
	 * Only the allocations no free names stay (the leaks, those whose
	 * address was allocated again without a free in between). */
	struct window_slot *window; /* ALLOC_WINDOW of them */
	struct map allocs;	    /* seq -> struct alloc_row: older ones */
	sqlite3_stmt *lookup;	    /* allocs by seq: for what neither has */
	struct trace_ring ring;
};

static struct window_slot *window_slot(const struct v2_reader *r, int64_t seq)
{
	return &r->window[(uint64_t)seq & (ALLOC_WINDOW - 1)];
}

static void keep_alloc(struct v2_reader *r, int64_t seq, const struct alloc_row *a)
{
	struct window_slot *w = window_slot(r, seq);

	if (w->used && w->seq != seq) /* one ALLOC_WINDOW seqs older */
		*(struct alloc_row *)xmap_put(&r->allocs, (uint64_t)w->seq, NULL) =
			(struct alloc_row){ .address = w->address, .bytes = w->bytes,
					    .has_address = w->has_address };
	*w = (struct window_slot){ .seq = seq, .address = a->address, .bytes = a->bytes,
				   .has_address = a->has_address, .used = true };
}

/* The allocation seq names, forgotten (true), or false when not kept. */
static bool take_alloc(struct v2_reader *r, int64_t seq, struct alloc_row *a)
{
	struct window_slot *w = window_slot(r, seq);

	if (w->used && w->seq == seq) {
		*a = (struct alloc_row){ .address = w->address, .bytes = w->bytes,
					 .has_address = w->has_address };
		w->used = false;
		return true;
	}
	return map_remove(&r->allocs, (uint64_t)seq, a);
}

/* allocs: seq, time_ns, site, address, bytes */
static void read_alloc(struct trace *t, struct v2_reader *r, struct trace_event *ev)
{
	const struct trace_row *row = r->c[CUR_ALLOCS].rows.row;
	struct alloc_row a = {
		.address = (uint64_t)row->v[3],
		.bytes = row->v[4],
		.has_address = !(row->null & 1u << 3),
	};

	read_site_event(t, row, ev);
	set_alloc(ev, &a);
	if (t->flight.on)
		trace_flight_seen_site(t, row->v[2], true, ev->bytes);
	/* the writer's frees name hooked allocations only (CUPTI's frees
	 * are in other_events) */
	if (ev->source == MT_SOURCE_HOOK)
		keep_alloc(r, ev->seq, &a);
}

/* A free (seq, time_ns, site, alloc) takes the address and bytes of the
 * allocation it names: from the map, else (a trace not written by
 * memtrace) from the table, as the view events joins them; none when no
 * allocation has that seq. */
static int read_free(struct trace *t, struct v2_reader *r, struct trace_event *ev)
{
	const struct trace_row *row = r->c[CUR_FREES].rows.row;
	int64_t alloc = row->v[3];
	struct alloc_row a = { 0 };
	int rc;

	read_site_event(t, row, ev);
	if (!(row->null & 1u << 3) && !take_alloc(r, alloc, &a)) {
		if (!r->lookup && trace_prepare(t, "allocs",
					  "SELECT address, bytes FROM allocs WHERE seq = ?",
					  &r->lookup) < 0)
			return -1;
		t->read_stats.alloc_lookups++;
		sqlite3_bind_int64(r->lookup, 1, alloc);
		rc = sqlite3_step(r->lookup);
		if (rc == SQLITE_ROW)
			a = (struct alloc_row){
				.address = (uint64_t)sqlite3_column_int64(r->lookup, 0),
				.bytes = sqlite3_column_int64(r->lookup, 1),
				.has_address = !col_null(r->lookup, 0),
			};
		sqlite3_reset(r->lookup);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return trace_step_failed(t, "allocs");
	}
	set_alloc(ev, &a);
	if (t->flight.on)
		trace_flight_seen_site(t, row->v[2], false, ev->bytes);
	return 0;
}

/* A ring event: an allocation or a free with the address and bytes of
 * what it frees, its other columns its site's. */
static void read_ring_event(struct trace *t, const struct trace_ring *r, struct trace_event *ev)
{
	const struct trace_site *site = trace_find_site(t, r->v[2]);
	bool alloc = r->n == MT_RING_ALLOC_FIELDS;
	int64_t bytes = r->v[alloc ? 4 : 5];

	*ev = site->ev;
	ev->seq = r->v[0];
	ev->time_ns = r->v[1];
	ev->address = (uint64_t)r->v[alloc ? 3 : 4];
	ev->has_address = true;
	ev->bytes = bytes > 0 ? (uint64_t)bytes : 0;
	if (site->missing_stack)
		t->missing_stacks++;
	if (ev->source == MT_SOURCE_CUPTI)
		ev->module = cupti_module(t, ev);
	trace_flight_seen_site(t, r->v[2], alloc, ev->bytes);
}

static int cursor_next(struct trace *t, struct v2_reader *r, struct cursor *c)
{
	int rc;

	if (c == &r->c[CUR_RING]) {
		if (trace_ring_next(t, &r->ring) < 0)
			return -1;
		c->row = r->ring.row;
		c->seq = r->ring.v[0];
		return 0;
	}
	if (!c->s) {
		rc = trace_rows_next(t, &c->rows);
		c->row = rc == 1;
		c->seq = c->row ? c->rows.row->v[0] : 0;
		return rc < 0 ? -1 : 0;
	}
	rc = sqlite3_step(c->s);
	c->row = rc == SQLITE_ROW;
	if (c->row)
		c->seq = sqlite3_column_int64(c->s, 0);
	return c->row || rc == SQLITE_DONE ? 0 : trace_step_failed(t, c->table);
}

static struct cursor *cursor_first(struct cursor *c)
{
	struct cursor *first = NULL;

	for (int i = 0; i < CUR_COUNT; i++) {
		if (c[i].row && (!first || c[i].seq < first->seq))
			first = &c[i];
	}
	return first;
}

/* Rows ahead on the cursor whose sites (and slots of the allocations
 * map) are asked of the memory: the sites of a long trace are more than
 * the cache holds, and waiting for them was half of the reading. */
#define SITE_PREFETCH_AHEAD 8

static void prefetch_ahead(const struct trace *t, const struct v2_reader *r,
			   const struct cursor *c)
{
	const struct trace_row *ahead = trace_rows_ahead(&c->rows, SITE_PREFETCH_AHEAD);
	const char *site;

	if (!ahead)
		return;
	/* the slot of the window that row will fill or take */
	__builtin_prefetch(window_slot(r, c == &r->c[CUR_ALLOCS] ? ahead->v[0] : ahead->v[3]));
	if (ahead->v[2] < 1 || (uint64_t)ahead->v[2] > t->n_sites)
		return;
	site = (const char *)&t->sites[ahead->v[2] - 1];
	for (size_t at = 0; at < sizeof(struct trace_site); at += 64)
		__builtin_prefetch(site + at);
	__builtin_prefetch(site + sizeof(struct trace_site) - 1);
}

static int read_next_v2(struct trace *t, struct v2_reader *r, struct cursor *next,
			struct trace_event *ev)
{
	if (next == &r->c[CUR_ALLOCS])
		read_alloc(t, r, ev);
	else if (next == &r->c[CUR_FREES])
		return read_free(t, r, ev);
	else if (next == &r->c[CUR_RING])
		read_ring_event(t, &r->ring, ev);
	else
		read_event(t, next->s, ev);
	if (t->flight.on && next == &r->c[CUR_OTHER])
		trace_flight_seen_kind(t, ev->kind);
	return 0;
}

static int open_cursors(struct trace *t, struct v2_reader *r)
{
	static const char *const alloc_cols[] = { "time_ns", "site", "address", "bytes" };
	static const char *const free_cols[] = { "time_ns", "site", "alloc" };
	_autofree_ char *other = events_sql(t);

	if (trace_rows_open(&r->c[CUR_ALLOCS].rows, t, "allocs", "seq", alloc_cols,
			    ARRAY_LENGTH(alloc_cols), 0, !t->sql_rows) < 0 ||
	    trace_rows_open(&r->c[CUR_FREES].rows, t, "frees", "seq", free_cols,
			    ARRAY_LENGTH(free_cols), 0, !t->sql_rows) < 0 ||
	    trace_prepare(t, "other_events", other, &r->c[CUR_OTHER].s) < 0)
		return -1;
	for (int i = 0; i < CUR_RING; i++) {
		if (cursor_next(t, r, &r->c[i]) < 0)
			return -1;
	}
	if (trace_ring_open(t, &r->ring) < 0)
		return -1;
	r->c[CUR_RING].row = r->ring.row;
	r->c[CUR_RING].seq = r->ring.v[0];
	return 0;
}

/* How allocs and frees were read (trace.h: read_stats). */
static void add_stats(struct trace *t, const struct trace_rows *rows)
{
	t->read_stats.from_pages += rows->from_pages;
	t->read_stats.from_sql += rows->from_sql;
	t->read_stats.lookups += rows->row_lookups;
	t->read_stats.handed_over |= rows->from_sql_after_pages;
}

static int read_events_v2(struct trace *t, struct trace_sink *sink)
{
	struct v2_reader r = {
		.c = {
			[CUR_ALLOCS] = { .table = "allocs" },
			[CUR_FREES] = { .table = "frees" },
			[CUR_OTHER] = { .table = "other_events" },
			[CUR_RING] = { .table = "ring" },
		},
	};
	struct cursor *next;
	int ret = -1;

	r.window = xcalloc(ALLOC_WINDOW, sizeof(*r.window));
	map_init(&r.allocs, sizeof(struct alloc_row));
	prepare_sites(t);
	if (open_cursors(t, &r) < 0)
		goto out;
	while ((next = cursor_first(r.c))) {
		if (read_next_v2(t, &r, next, &sink->ev[sink->n]) < 0)
			goto out;
		if (++sink->n == sink->cap)
			sink->full(sink);
		if (cursor_next(t, &r, next) < 0)
			goto out;
		if (next == &r.c[CUR_ALLOCS] || next == &r.c[CUR_FREES])
			prefetch_ahead(t, &r, next);
	}
	if (t->flight.on)
		trace_flight_settle(t);
	ret = 0;
out:
	for (int i = 0; i < CUR_RING; i++) {
		add_stats(t, &r.c[i].rows);
		trace_rows_close(&r.c[i].rows);
		sqlite3_finalize(r.c[i].s);
	}
	trace_ring_close(&r.ring);
	sqlite3_finalize(r.lookup);
	map_fini(&r.allocs);
	free(r.window);
	return ret;
}

/* A sink for version 1's rows, which are read into an event of their own. */
static void sink_fn(void *ctx, const struct trace_event *ev)
{
	struct trace_sink *sink = ctx;

	sink->ev[sink->n] = *ev;
	if (++sink->n == sink->cap)
		sink->full(sink);
}

int trace_read_events_sink(struct trace *t, struct trace_sink *sink)
{
	prepare_events(t);
	return t->schema_version == 1 ? read_events_v1(t, sink_fn, (void *)sink)
				      : read_events_v2(t, sink);
}

/* trace_read_events' sink: batches of one event, handed to fn. */
struct fn_sink {
	trace_event_fn fn;
	void *ctx;
};

static void fn_full(struct trace_sink *sink)
{
	const struct fn_sink *s = sink->ctx;

	s->fn(s->ctx, sink->ev);
	sink->n = 0;
}

int trace_read_events(struct trace *t, trace_event_fn fn, void *ctx)
{
	struct fn_sink s = { .fn = fn, .ctx = ctx };
	struct trace_event ev;

	prepare_events(t);
	if (t->schema_version == 1)
		return read_events_v1(t, fn, ctx);
	return read_events_v2(t, &(struct trace_sink){ .ev = &ev, .cap = 1, .full = fn_full,
						       .ctx = &s });
}

/* seq runs from 0 without gaps, and max() of an integer primary key is one
 * lookup. */
uint64_t trace_count_events(const struct trace *t)
{
	const char *sql = t->schema_version == 1
				  ? "SELECT max(seq) FROM events"
				  : "SELECT max(coalesce((SELECT max(seq) FROM allocs), -1),"
				    " coalesce((SELECT max(seq) FROM frees), -1),"
				    " coalesce((SELECT max(seq) FROM other_events), -1))";
	sqlite3_stmt *st;
	uint64_t n = 0;

	if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
	    sqlite3_column_int64(st, 0) >= 0)
		n = (uint64_t)sqlite3_column_int64(st, 0) + 1;
	sqlite3_finalize(st);
	return n;
}


/* Version 1's events: one GROUP BY over its one table. */
static int stack_sizes_v1(struct trace *t, trace_stack_sizes_fn fn, void *ctx)
{
	static const char sql[] = "SELECT stack, min(bytes), max(bytes) FROM events"
				  " WHERE kind = 1 AND stack IS NOT NULL GROUP BY stack";
	sqlite3_stmt *s = NULL;
	int rc;

	_Static_assert(MT_EV_ALLOC == 1, "v1's query names the kind");
	if (sqlite3_prepare_v2(t->db, sql, -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return -1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t lo = sqlite3_column_int64(s, 1), hi = sqlite3_column_int64(s, 2);

		fn(ctx, sqlite3_column_int64(s, 0), lo > 0 ? (uint64_t)lo : 0,
		   hi > 0 ? (uint64_t)hi : 0);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

struct site_sizes {
	int64_t min, max;
	bool seen;
};

/* Version 2: the allocs' site and bytes in key order, straight from the
 * pages as the events are read (trace-rows.h), min and max kept per site
 * in an array beside t->sites: one scan, no lookup per row. A JOIN with
 * sites and a GROUP BY stack cost a b-tree lookup per allocation and a
 * sort (docs/performance.md, "The helper's callers"). fn is then called
 * once per site with a stack, several times for a stack of several
 * sites: what it keeps, a min and a max, comes out the same. */
static int stack_sizes_v2(struct trace *t, trace_stack_sizes_fn fn, void *ctx)
{
	/* the record's first columns, all of them up to bytes: the pages'
	 * short way (read_in_order), where site and bytes alone take the
	 * field-by-field one */
	static const char *const cols[] = { "time_ns", "site", "address", "bytes" };
	_autofree_ struct site_sizes *sizes = xcalloc(t->n_sites + 1, sizeof(*sizes));
	struct trace_rows rows;
	int rc;

	if (trace_rows_open(&rows, t, "allocs", "seq", cols, ARRAY_LENGTH(cols), 0,
			    !t->sql_rows) < 0) {
		trace_rows_close(&rows);
		return -1;
	}
	while ((rc = trace_rows_next(t, &rows)) == 1) {
		const struct trace_site *site = trace_find_site(t, rows.row->v[2]);
		struct site_sizes *ss;
		int64_t bytes = rows.row->v[4];

		if (site == &t->no_site)
			continue; /* the JOIN left it out */
		ss = &sizes[site - t->sites];
		if (!ss->seen || bytes < ss->min)
			ss->min = bytes;
		if (!ss->seen || bytes > ss->max)
			ss->max = bytes;
		ss->seen = true;
	}
	trace_rows_close(&rows);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < t->n_sites; i++) {
		const struct site_sizes *ss = &sizes[i];

		/* a NULL stack reads as 0, which the writer never numbers */
		if (ss->seen && t->sites[i].ev.stack != 0)
			fn(ctx, t->sites[i].ev.stack, ss->min > 0 ? (uint64_t)ss->min : 0,
			   ss->max > 0 ? (uint64_t)ss->max : 0);
	}
	return 0;
}

int trace_stack_sizes(struct trace *t, trace_stack_sizes_fn fn, void *ctx)
{
	return t->schema_version == 1 ? stack_sizes_v1(t, fn, ctx) : stack_sizes_v2(t, fn, ctx);
}

void trace_close(struct trace *t)
{
	if (t->db)
		sqlite3_close(t->db); /* ends the read transaction */
	if (t->shared)
		tidy_sidecars(t);
	for (size_t i = 0; i < t->n_meta; i++) {
		free(t->meta[i].key);
		free(t->meta[i].value);
	}
	for (size_t i = 0; i < t->n_apis; i++)
		free(t->apis[i].name);
	for (size_t i = 0; i < t->n_modules; i++) {
		free(t->modules[i].path);
		free(t->modules[i].build_id);
	}
	for (size_t i = 0; i < t->n_frames; i++) {
		free(t->frames[i].function);
		free(t->frames[i].symbol);
		free(t->frames[i].file);
	}
	for (size_t i = 0; i < t->n_ops; i++) {
		free(t->ops[i].name);
		free(t->ops[i].domain);
	}
	free(t->ops);
	trace_flight_free(&t->flight);
	free(t->modules_by_base);
	free(t->stack_sites);
	map_fini(&t->op_index);
	map_fini(&t->cupti_pc);
	map_fini(&t->same_frame);
	free(t->meta);
	free(t->apis);
	free(t->modules);
	free(t->frames);
	free(t->stacks);
	free(t->stack_frames);
	free(t->devices);
	free(t->path);
	map_fini(&t->api_index);
	map_fini(&t->module_index);
	map_fini(&t->frame_index);
	map_fini(&t->stack_index);
	map_fini(&t->ooms);
	map_fini(&t->site_index);
	free(t->sites);
	*t = (struct trace){ 0 };
}
