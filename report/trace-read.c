/* Reading a trace: see trace.h and docs/trace-format.md. A trace is
 * untrusted input: any column may be NULL or of the wrong type, any
 * reference may dangle; none of that may crash the reporter. */
#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "trace-schema.h"
#include "util-mem.h"

struct trace_oom_info {
	bool has_free, has_total;
	int64_t device_free, device_total;
};

static inline void finalizep(sqlite3_stmt **s)
{
	sqlite3_finalize(*s);
}
#define _autofinalize_ __attribute__((cleanup(finalizep)))

static int __attribute__((format(printf, 2, 3))) fail(struct trace *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
	return -1;
}

static char *col_strdup(sqlite3_stmt *s, int col)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	return v ? mt_xstrdup((const char *)v) : NULL;
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

static int prepare(struct trace *t, const char *table, const char *sql,
		   sqlite3_stmt **stmt)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, stmt, NULL) == SQLITE_OK)
		return 0;
	return fail(t, "%s is corrupt or was not written by memtrace: cannot read "
		       "table '%s' (%s)",
		    t->path, table, sqlite3_errmsg(t->db));
}

static int step_failed(struct trace *t, const char *table)
{
	return fail(t, "error reading table '%s' of %s: %s; the file may be damaged",
		    table, t->path, sqlite3_errmsg(t->db));
}

/* ---- opening ---------------------------------------------------------- */

/* "file:" URI for path with immutable=1; URI syntax needs %, ?, # quoted. */
static char *immutable_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = mt_xmalloc(n * 3 + 32), *p = uri;

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
	if (sqlite3_open_v2(immutable ? uri : t->path, &t->db, flags, NULL) != SQLITE_OK)
		return fail(t, "cannot open %s: %s", t->path,
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

static bool wal_has_data(const char *path)
{
	_autofree_ char *wal = mt_xasprintf("%s-wal", path);
	struct stat st;

	return stat(wal, &st) == 0 && st.st_size > 0;
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
		return fail(t, "%s is not a memtrace trace (not a SQLite database)", t->path);
	return fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
}

static int count_tables(struct trace *t, int64_t *n)
{
	_autofinalize_ sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(t->db, "SELECT count(*) FROM sqlite_master", -1, &s,
			       NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW)
		return fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	*n = sqlite3_column_int64(s, 0);
	return 0;
}

/* Columns and tables added to schema version 1 later (docs/trace-format.md)
 * are optional: a trace written before them reads as having none. */
static bool has_column(struct trace *t, const char *table, const char *column)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	_autofree_ char *sql = mt_xasprintf("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?",
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

static int check_schema(struct trace *t)
{
	static const char *const tables[] = {
		"meta", "apis", "modules", "frames", "stack_frames", "threads", "events", "ooms",
	};
	int64_t n = 0;

	if (t->schema_version != MT_SCHEMA_VERSION) {
		if (count_tables(t, &n) < 0)
			return -1;
		if (n == 0 && t->immutable)
			return fail(t, "cannot read %s: its data is still in its -wal file, and "
				       "its -shm cannot be created here (read-only directory?): "
				       "copy the trace with its -wal and -shm to a writable directory",
				    t->path);
		if (n == 0)
			return fail(t, "%s is empty: not a memtrace trace (did the program run "
				       "with libmemtrace.so preloaded?)",
				    t->path);
		if (t->schema_version == 0)
			return fail(t, "%s is a SQLite database but not a memtrace trace "
				       "(PRAGMA user_version is 0)",
				    t->path);
		return fail(t, "%s has trace schema version %lld, but this memtrace report "
			       "reads version %d: use the memtrace that wrote the trace",
			    t->path, (long long)t->schema_version, MT_SCHEMA_VERSION);
	}
	for (size_t i = 0; i < ARRAY_LENGTH(tables); i++) {
		if (!has_table(t, tables[i]))
			return fail(t, "%s is incomplete or corrupt: table '%s' is missing",
				    t->path, tables[i]);
	}
	t->has_handle_column = has_column(t, "events", "handle");
	return 0;
}

static int check_file(struct trace *t)
{
	struct stat st;

	if (stat(t->path, &st) < 0)
		return fail(t, "cannot open %s: %s", t->path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(t, "cannot open %s: it is a directory, not a trace file", t->path);
	return 0;
}

int trace_open(struct trace *t, const char *path)
{
	*t = (struct trace){ 0 };
	t->path = mt_xstrdup(path);
	map_init(&t->api_index, sizeof(uint32_t));
	map_init(&t->module_index, sizeof(uint32_t));
	map_init(&t->frame_index, sizeof(uint32_t));
	map_init(&t->stack_index, sizeof(uint32_t));
	map_init(&t->ooms, sizeof(struct trace_oom_info));

	if (check_file(t) < 0 || open_db(t, false) < 0)
		return -1;
	/* one read transaction: every table from the same committed flush */
	if (sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	if (first_read(t) < 0)
		return -1;
	if (t->immutable && sqlite3_exec(t->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return fail(t, "cannot read %s: %s", t->path, sqlite3_errmsg(t->db));
	return check_schema(t);
}

/* ---- loading ---------------------------------------------------------- */

static int check_count(struct trace *t, size_t n, const char *table)
{
	if (n >= TRACE_NONE - 1)
		return fail(t, "%s: table '%s' has more rows than memtrace report handles",
			    t->path, table);
	return 0;
}

static void index_put(struct mt_map *m, int64_t id, size_t idx)
{
	*(uint32_t *)map_put(m, (uint64_t)id, NULL) = (uint32_t)idx;
}

static uint32_t index_get(const struct mt_map *m, int64_t id)
{
	const uint32_t *v = map_get(m, (uint64_t)id);

	return v ? *v : TRACE_NONE;
}

static int load_meta(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (prepare(t, "meta", "SELECT key, value FROM meta", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (col_null(s, 0))
			continue;
		mt_grow(&t->meta, &cap, t->n_meta + 1, sizeof(*t->meta));
		t->meta[t->n_meta++] = (struct trace_meta){
			.key = col_strdup(s, 0), .value = col_strdup(s, 1),
		};
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "meta");
}

static int load_apis(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (prepare(t, "apis", "SELECT id, name FROM apis", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (check_count(t, t->n_apis, "apis") < 0)
			return -1;
		mt_grow(&t->apis, &cap, t->n_apis + 1, sizeof(*t->apis));
		t->apis[t->n_apis] = (struct trace_api){
			.id = sqlite3_column_int64(s, 0), .name = col_strdup(s, 1),
		};
		index_put(&t->api_index, t->apis[t->n_apis].id, t->n_apis);
		t->n_apis++;
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "apis");
}

static int load_modules(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (prepare(t, "modules", "SELECT id, path, base, build_id FROM modules", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct trace_module *mod;

		if (check_count(t, t->n_modules, "modules") < 0)
			return -1;
		mt_grow(&t->modules, &cap, t->n_modules + 1, sizeof(*t->modules));
		mod = &t->modules[t->n_modules];
		*mod = (struct trace_module){
			.id = sqlite3_column_int64(s, 0),
			.path = col_strdup(s, 1),
			.base = sqlite3_column_int64(s, 2),
			.build_id = col_strdup(s, 3),
		};
		if (!mod->path)
			mod->path = mt_xstrdup("");
		index_put(&t->module_index, mod->id, t->n_modules);
		t->n_modules++;
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "modules");
}

static void read_frame(struct trace *t, sqlite3_stmt *s, struct trace_frame *f)
{
	*f = (struct trace_frame){
		.id = sqlite3_column_int64(s, 0),
		.kind = col_small(s, 1),
		.ip = sqlite3_column_int64(s, 2),
		.module = TRACE_NONE,
		.offset = sqlite3_column_int64(s, 4),
		.has_offset = !col_null(s, 4),
		.function = col_strdup(s, 5),
		.file = col_strdup(s, 6),
		.line = col_null(s, 7) ? 0 : sqlite3_column_int64(s, 7),
	};
	if (f->line < 0)
		f->line = 0;
	if (!col_null(s, 3)) {
		f->module = index_get(&t->module_index, sqlite3_column_int64(s, 3));
		if (f->module == TRACE_NONE)
			t->missing_modules++;
	}
}

static int load_frames(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (prepare(t, "frames",
		    "SELECT id, kind, ip, module, offset, function, file, line FROM frames",
		    &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (check_count(t, t->n_frames, "frames") < 0)
			return -1;
		mt_grow(&t->frames, &cap, t->n_frames + 1, sizeof(*t->frames));
		read_frame(t, s, &t->frames[t->n_frames]);
		index_put(&t->frame_index, t->frames[t->n_frames].id, t->n_frames);
		t->n_frames++;
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "frames");
}

/* Rows come ordered by (stack, depth): each run of one stack id is one
 * stack. A gap in depths (a missing row) just shortens the stack. */
static int load_stacks(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0, cap_frames = 0;
	int rc;

	if (prepare(t, "stack_frames",
		    "SELECT stack, frame FROM stack_frames ORDER BY stack, depth", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		uint32_t frame = index_get(&t->frame_index, sqlite3_column_int64(s, 1));

		if (check_count(t, t->n_stack_frames, "stack_frames") < 0)
			return -1;
		if (t->n_stacks == 0 || t->stacks[t->n_stacks - 1].id != id) {
			mt_grow(&t->stacks, &cap, t->n_stacks + 1, sizeof(*t->stacks));
			t->stacks[t->n_stacks] = (struct trace_stack){
				.id = id, .first = (uint32_t)t->n_stack_frames,
			};
			index_put(&t->stack_index, id, t->n_stacks);
			t->n_stacks++;
		}
		if (frame == TRACE_NONE)
			t->missing_frames++;
		mt_grow(&t->stack_frames, &cap_frames, t->n_stack_frames + 1,
			sizeof(*t->stack_frames));
		t->stack_frames[t->n_stack_frames++] = frame;
		t->stacks[t->n_stacks - 1].depth++;
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "stack_frames");
}

static int load_threads(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	int rc;

	if (prepare(t, "threads", "SELECT count(*) FROM threads", &s) < 0)
		return -1;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		return step_failed(t, "threads");
	t->n_threads = (size_t)sqlite3_column_int64(s, 0);
	return 0;
}

static int load_ooms(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	int rc;

	if (prepare(t, "ooms", "SELECT seq, device_free, device_total FROM ooms", &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct trace_oom_info *o = map_put(&t->ooms, (uint64_t)sqlite3_column_int64(s, 0), NULL);

		o->has_free = !col_null(s, 1);
		o->device_free = sqlite3_column_int64(s, 1);
		o->has_total = !col_null(s, 2);
		o->device_total = sqlite3_column_int64(s, 2);
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "ooms");
}

static int load_devices(struct trace *t)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int rc;

	if (!has_table(t, "devices"))
		return 0;
	if (prepare(t, "devices",
		    "SELECT id, total_bytes, free_bytes_at_first_use FROM devices ORDER BY id",
		    &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int id = col_device(s, 0);
		int64_t total = sqlite3_column_int64(s, 1), free_b = sqlite3_column_int64(s, 2);

		if (id < 0)
			continue;
		mt_grow(&t->devices, &cap, t->n_devices + 1, sizeof(*t->devices));
		t->devices[t->n_devices++] = (struct trace_device){
			.id = id,
			.total_bytes = total > 0 ? (uint64_t)total : 0,
			.has_free = !col_null(s, 2) && free_b >= 0,
			.free_bytes_at_first_use = free_b > 0 ? (uint64_t)free_b : 0,
		};
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "devices");
}

int trace_load(struct trace *t)
{
	if (load_meta(t) < 0 || load_apis(t) < 0 || load_modules(t) < 0 ||
	    load_frames(t) < 0 || load_stacks(t) < 0 || load_threads(t) < 0 ||
	    load_ooms(t) < 0 || load_devices(t) < 0)
		return -1;
	return 0;
}

/* ---- events ----------------------------------------------------------- */

static void read_event(struct trace *t, sqlite3_stmt *s, struct mt_event *ev)
{
	int64_t bytes = sqlite3_column_int64(s, 5);

	*ev = (struct mt_event){
		.seq = sqlite3_column_int64(s, 0),
		.time_ns = sqlite3_column_int64(s, 1),
		.kind = col_small(s, 2),
		.api = sqlite3_column_int64(s, 3),
		.address = (uint64_t)sqlite3_column_int64(s, 4),
		.has_address = !col_null(s, 4),
		.bytes = bytes > 0 ? (uint64_t)bytes : 0,
		.mem = col_small(s, 6),
		.stack = sqlite3_column_int64(s, 7),
		.device = col_device(s, 8),
		.handle = (uint64_t)sqlite3_column_int64(s, 9),
		.has_handle = sqlite3_column_type(s, 9) == SQLITE_INTEGER,
	};
	if (ev->stack != 0 && !map_get(&t->stack_index, (uint64_t)ev->stack))
		t->missing_stacks++;
	if (ev->kind == MT_EV_OOM) {
		const struct trace_oom_info *o = map_get(&t->ooms, (uint64_t)ev->seq);

		if (o) {
			ev->has_device_free = o->has_free;
			ev->device_free = o->device_free;
			ev->has_device_total = o->has_total;
			ev->device_total = o->device_total;
		}
	}
}

int trace_read_events(struct trace *t, trace_event_fn fn, void *ctx)
{
	_autofinalize_ sqlite3_stmt *s = NULL;
	struct mt_event ev;
	int rc;

	if (prepare(t, "events",
		    t->has_handle_column
			    ? "SELECT seq, time_ns, kind, api, address, bytes, mem, stack, device, "
			      "handle FROM events ORDER BY seq"
			    : "SELECT seq, time_ns, kind, api, address, bytes, mem, stack, device, "
			      "NULL FROM events ORDER BY seq",
		    &s) < 0)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		read_event(t, s, &ev);
		fn(ctx, &ev);
	}
	return rc == SQLITE_DONE ? 0 : step_failed(t, "events");
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
	uint32_t i = index_get(&t->api_index, id);

	return i == TRACE_NONE ? NULL : t->apis[i].name;
}

const struct trace_stack *trace_find_stack(const struct trace *t, int64_t id)
{
	uint32_t i = index_get(&t->stack_index, id);

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

void trace_close(struct trace *t)
{
	if (t->db)
		sqlite3_close(t->db); /* ends the read transaction */
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
		free(t->frames[i].file);
	}
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
	*t = (struct trace){ 0 };
}
