/* The writer thread: drains the queue into the SQLite trace, one
 * transaction per flush, at least every interval_ms and sooner when the
 * queue fills or an OOM asks for a synchronous commit. All symbol work and
 * all bookkeeping that the hot path must not pay for happens here: new
 * stacks and frames are written once, frees get the size of what they
 * release, allocations and frees go into their narrow tables with their
 * repeating columns interned as sites. The schema is
 * docs/trace-format.md (trace/trace-schema.h). */
#include "clock.h"
#include "core.h"
#include "writer.h"
#include "live-disk.h"
#include "trace-live.h"
#include "trace-schema.h"
#include "util-grow.h"
#include "util-map.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum stmt_id {
	ST_SITE,
	ST_OOM,
	ST_FRAME,
	ST_PYFRAME,
	ST_LAUNCHFRAME,
	ST_MODULE,
	ST_STACK_FRAME,
	ST_THREAD,
	ST_META,
	ST_DEVICE,
	ST_OP,
	ST_CUPTI,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_SITE] = "INSERT INTO sites(id,kind,stack,api,thread,device,mem,stream,op,status,"
		    "handle,source) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_OOM] = "INSERT INTO ooms(seq,device_free,device_total,limit_bytes) VALUES(?,?,?,?)",
	[ST_FRAME] = "INSERT INTO frames(id,kind,ip,module,offset,function) VALUES(?,0,?,?,?,?)",
	[ST_PYFRAME] = "INSERT INTO frames(id,kind,function,file,line) VALUES(?,1,?,?,?)",
	[ST_LAUNCHFRAME] = "INSERT INTO frames(id,kind,ip) VALUES(?,2,?)",
	[ST_MODULE] = "INSERT INTO modules(id,path,base,build_id) VALUES(?,?,?,?)",
	[ST_STACK_FRAME] = "INSERT INTO stack_frames(stack,depth,frame) VALUES(?,?,?)",
	[ST_THREAD] = "INSERT OR IGNORE INTO threads(id,name) VALUES(?,?)",
	[ST_META] = "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)",
	[ST_OP] = "INSERT OR IGNORE INTO ops(id,name,domain) VALUES(?,?,?)",
	[ST_CUPTI] = "INSERT INTO cupti(seq,correlation_id,pc) VALUES(?,?,?)",
	[ST_DEVICE] = "INSERT OR IGNORE INTO devices(id,total_bytes,free_bytes_at_first_use,"
		      "first_seq) VALUES(?,?,?,?)",
};

struct module {
	uintptr_t base;
	char *path;
};

/* The event tables. Rows wait here and go into their table EVENT_BATCH at
 * a time, with one multi-row INSERT: a quarter less work per event in
 * SQLite than one INSERT each (tests/bench, docs/performance.md). */
enum batch_id {
	B_ALLOC,
	B_FREE,
	B_OTHER,
	B_COUNT,
};

static const struct {
	const char *sql;
	unsigned columns;
} batch_def[B_COUNT] = {
	[B_ALLOC] = { "INSERT INTO allocs(seq,time_ns,site,address,bytes) VALUES(?,?,?,?,?)", 5 },
	[B_FREE] = { "INSERT INTO frees(seq,time_ns,site,alloc) VALUES(?,?,?,?)", 4 },
	[B_OTHER] = { "INSERT INTO other_events(" MT_EVENT_COLUMNS
		      ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		      15 },
};

#define EVENT_COLUMNS 15
#define EVENT_BATCH 32
struct event_row {
	int64_t v[EVENT_COLUMNS];
	uint16_t null_mask; /* bit i: column i is NULL */
};

struct batch {
	sqlite3_stmt *one;
	sqlite3_stmt *many; /* EVENT_BATCH rows */
	struct event_row rows[EVENT_BATCH];
	unsigned n;
};

struct mt_writer {
	sqlite3 *db;
	sqlite3_stmt *stmt[ST_COUNT];
	struct batch batch[B_COUNT];
	struct mt_queue *queue;
	struct mt_stack_table *stacks;
	struct mt_live *live; /* the live set and what comes of it, the ring */
	uint64_t flight_bound;
	uint64_t ring_id; /* the ring file's; 0: none */
	uint64_t start_ns;
	unsigned interval_ms;
	char path[MT_PATH_MAX];
	bool (*op_name)(uint32_t, char *, size_t, char *, size_t);
	bool (*pyframe)(uintptr_t, const char **, const char **, unsigned *);

	pthread_t thread;
	pthread_mutex_t work; /* held while draining: fork waits for it */
	pthread_mutex_t lock; /* guards the fields below */
	pthread_cond_t wake;
	bool poke;
	_Atomic bool stop;
	/* Bumped at each commit; waiters sleep on it with a futex, not a
	 * condition variable: a broadcast on one waits for a waiter that a
	 * signal interrupted, and that signal's handler may be the _exit
	 * waiting for this writer (mt_writer_finish). */
	_Atomic uint32_t done_gen;
	/* mt_writer_finish: asked with the exit status, done when the file is
	 * closed. Atomics: the asker may be a signal handler. */
	_Atomic bool finish;
	_Atomic int finish_status;
	_Atomic bool finished;
	_Atomic uint64_t committed; /* events with a ticket < committed are in the file */
	_Atomic bool failed; /* the file is unusable: events are drained and dropped */

	struct map frames; /* ip -> frame id */
	struct map threads; /* tid -> 1 */
	struct map ops; /* op ids written */
	struct mt_site_table *sites;
	uint8_t *stack_written; /* by stack id */
	size_t stack_written_cap;
	struct module *modules;
	size_t nmodules;
	int64_t next_frame_id;
	uint64_t dropped;

	/* The seq the next event written gets (the file's order: the
	 * tickets', but for a release written early); the ticket a gap waits
	 * for, since gap_ns; releases written early. */
	uint64_t seq;
	uint64_t gap_ticket;
	uint64_t gap_ns;
	uint64_t early;
	uint64_t unpaired; /* allocations written over a live address */
};

/* How long the writer waits for a ticket taken and not yet pushed (a
 * thread inside a long call, or preempted in its hook) before it gives its
 * cell up and goes on. Meanwhile the queue may fill behind it and the
 * other threads wait for room, which also gives a preempted thread the
 * processor back; a thread that waits for room inside its own long call
 * (CUPTI's callbacks) is freed by the same bound. */
#define MT_GAP_WAIT_NS (1000ull * 1000 * 1000)
/* How long it waits for a release still running at an address an
 * allocation already got again (early_release). */
#define MT_REUSE_WAIT_NS (100ull * 1000 * 1000)
/* How long before it commits what it has written (early_release). */
#define MT_REUSE_COMMIT_NS (1000ull * 1000)
/* How long the last drain of mt_writer_finish waits for a cell being
 * filled before it skips it (mt_queue_skip). */
#define MT_FINISH_FILL_WAIT_NS (100ull * 1000 * 1000)

/* ---- SQLite helpers ---- */

static bool sql_ok(struct mt_writer *w, int rc, const char *what)
{
	if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW)
		return true;
	if (!w->failed)
		mt_log(MT_ENV, "cannot write the trace %s: %s (at %.40s); tracing stops here, the "
			       "program runs on",
		       w->path, w->db ? sqlite3_errmsg(w->db) : "cannot open it", what);
	w->failed = true;
	return false;
}

static bool exec_sql(struct mt_writer *w, const char *sql)
{
	return sql_ok(w, sqlite3_exec(w->db, sql, NULL, NULL, NULL), sql);
}

static bool step(struct mt_writer *w, enum stmt_id id)
{
	sqlite3_stmt *s = w->stmt[id];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return sql_ok(w, rc, stmt_sql[id]);
}

static void bind_text_or_null(sqlite3_stmt *s, int col, const char *text)
{
	if (text && *text)
		sqlite3_bind_text(s, col, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, col);
}

static void put_meta(struct mt_writer *w, const char *key, const char *value)
{
	sqlite3_stmt *s = w->stmt[ST_META];
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
	step(w, ST_META);
}

static void put_meta_u64(struct mt_writer *w, const char *key, uint64_t value)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)value);
	put_meta(w, key, buf);
}

/* ---- the file ---- */

/* Create the files ourselves: O_EXCL|O_NOFOLLOW so a planted symlink,
 * another run's trace or someone else's file is never written through,
 * mode 0600 because a trace holds paths and command lines. The -wal and
 * -shm files are SQLite's, but it opens them without O_EXCL: made empty
 * here first, they are ours too (SQLite takes empty ones as new). */
static const char *const file_suffixes[] = { "", "-wal", "-shm" };

static void remove_files(const char *path, unsigned upto)
{
	char name[MT_PATH_MAX + 8];
	for (unsigned i = 0; i < upto; i++) {
		snprintf(name, sizeof(name), "%s%s", path, file_suffixes[i]);
		unlink(name);
	}
}

static bool create_files(const char *path)
{
	char name[MT_PATH_MAX + 8];
	for (unsigned i = 0; i < sizeof(file_suffixes) / sizeof(file_suffixes[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", path, file_suffixes[i]);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno == EEXIST)
			mt_log(MT_USER, "the trace file %s already exists; not tracing this process "
					"(remove it, or put %%p in MEMTRACE_OUTPUT)",
			       name);
		else
			mt_log(MT_ENV, "cannot create the trace file %s: %s; not tracing this "
				       "process",
			       name, strerror(errno));
		remove_files(path, i);
		return false;
	}
	return true;
}

/* The batch's statement for one row, and the same with EVENT_BATCH groups
 * of values. */
static bool prepare_batch(struct mt_writer *w, enum batch_id id)
{
	const char *sql1 = batch_def[id].sql;
	struct batch *b = &w->batch[id];
	if (!sql_ok(w, sqlite3_prepare_v2(w->db, sql1, -1, &b->one, NULL), sql1))
		return false;
	const char *one = strstr(sql1, "VALUES") + strlen("VALUES");
	size_t head = (size_t)(one - sql1), group = strlen(one);
	char *sql = malloc(head + EVENT_BATCH * (group + 1) + 1);
	if (!sql)
		return false;
	memcpy(sql, sql1, head);
	size_t pos = head;
	for (unsigned i = 0; i < EVENT_BATCH; i++) {
		if (i)
			sql[pos++] = ',';
		memcpy(sql + pos, one, group);
		pos += group;
	}
	sql[pos] = '\0';
	bool ok = sql_ok(w, sqlite3_prepare_v2(w->db, sql, -1, &b->many, NULL), sql1);
	free(sql);
	return ok;
}

static bool open_db(struct mt_writer *w)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
	if (sqlite3_open_v2(w->path, &w->db, flags, NULL) != SQLITE_OK)
		return sql_ok(w, SQLITE_ERROR, "open");
	/* WAL: readers (sqlite3, the reporter) see every committed flush while
	 * the program runs. synchronous=NORMAL: a commit survives the process
	 * being killed (it is in the OS), which is the failure that matters. */
	if (!exec_sql(w, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"))
		return false;
	if (w->flight_bound)
		w->flight_bound = mt_live_reserve(w->path, w->flight_bound);
	if (!mt_live_pragmas(w->db, w->flight_bound))
		return sql_ok(w, SQLITE_ERROR, "the flight mode pragmas");
	char sql[sizeof(MT_SCHEMA_SQL) + 64];
	snprintf(sql, sizeof(sql), "BEGIN;" MT_SCHEMA_SQL "PRAGMA user_version=%d;",
		 MT_SCHEMA_VERSION);
	if (!exec_sql(w, sql))
		return false;
	for (int i = 0; i < ST_COUNT; i++)
		if (!sql_ok(w, sqlite3_prepare_v2(w->db, stmt_sql[i], -1, &w->stmt[i], NULL),
			    stmt_sql[i]))
			return false;
	for (int i = 0; i < B_COUNT; i++)
		if (!prepare_batch(w, (enum batch_id)i))
			return false;
	/* the summary names the trace by a path that a chdir does not break */
	char abs[PATH_MAX];
	w->live = mt_live_new(&(struct mt_live_options){
		.db = w->db,
		.path = realpath(w->path, abs) ? abs : w->path,
		.bound = w->flight_bound,
		.stacks = w->stacks,
		.sites = w->sites,
		.op_name = w->op_name,
		.pyframe = w->pyframe,
	});
	return w->live ? true : sql_ok(w, SQLITE_ERROR, "the live set's statements");
}

static void read_file(const char *path, char *buf, size_t bufsz, bool nul_to_space)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' && nul_to_space)
			buf[i] = ' ';
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\n'))
		buf[--n] = '\0';
}

static void write_static_meta(struct mt_writer *w, const struct mt_writer_options *opt)
{
	char buf[MT_PATH_MAX];
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	uint64_t now = mt_now_ns();
	uint64_t realtime = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;

	put_meta(w, "format", "memtrace-trace");
	put_meta_u64(w, "schema_version", MT_SCHEMA_VERSION);
	put_meta(w, "memtrace_version", MEMTRACE_VERSION);
	put_meta_u64(w, "pid", (uint64_t)getpid());
	put_meta_u64(w, "ppid", (uint64_t)getppid());
	gethostname(buf, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	put_meta(w, "host", buf);
	put_meta(w, "rank", opt->rank ? opt->rank : "0");
	read_file("/proc/self/cmdline", buf, sizeof(buf), true);
	put_meta(w, "cmdline", buf);
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	put_meta(w, "exe", buf);
	put_meta_u64(w, "start_realtime_ns", realtime - (now - opt->start_ns));
	put_meta_u64(w, "start_monotonic_ns", opt->start_ns);
	put_meta_u64(w, "depth", (uint64_t)opt->depth);
	if (opt->what_fits)
		put_meta(w, "what_fits", "1");
	put_meta_u64(w, "queue_capacity", mt_queue_capacity(opt->queue));
	put_meta_u64(w, "commit_interval_ms", opt->interval_ms);
	put_meta(w, "end", "running");
	put_meta(w, "mode", opt->flight ? "flight" : "full");
	if (opt->ring_id) {
		put_meta_u64(w, "ring_id", opt->ring_id);
		put_meta_u64(w, "ring_tail", 0);
	}
	if (w->flight_bound)
		put_meta_u64(w, "flight_bytes", w->flight_bound); /* as the disk allowed */

	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(w->db, "INSERT INTO apis(id,name) VALUES(?,?)", -1, &s, NULL))
		return;
	for (unsigned api = 1; api < MT_API_COUNT; api++) {
		sqlite3_bind_int(s, 1, (int)api);
		sqlite3_bind_text(s, 2, mt_api_name(api), -1, SQLITE_STATIC);
		sqlite3_step(s);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
}

/* ---- stacks, frames, modules, threads ---- */

static void bind_u64_or_null(sqlite3_stmt *s, int col, uint64_t v, bool present)
{
	if (present)
		sqlite3_bind_int64(s, col, (int64_t)v);
	else
		sqlite3_bind_null(s, col);
}

static int64_t module_id(struct mt_writer *w, uintptr_t base, const char *path)
{
	for (size_t i = 0; i < w->nmodules; i++)
		if (w->modules[i].base == base && !strcmp(w->modules[i].path, path))
			return (int64_t)i + 1;
	struct module *m = realloc(w->modules, (w->nmodules + 1) * sizeof(*m));
	if (!m)
		return 0;
	w->modules = m;
	m[w->nmodules].base = base;
	m[w->nmodules].path = strdup(path);
	int64_t id = (int64_t)++w->nmodules;

	char build_id[128];
	mt_symbol_build_id(base, path, build_id, sizeof(build_id));
	sqlite3_stmt *s = w->stmt[ST_MODULE];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 3, (int64_t)base);
	bind_text_or_null(s, 4, build_id);
	step(w, ST_MODULE);
	return id;
}

static void write_python_frame(struct mt_writer *w, int64_t id, uintptr_t token)
{
	const char *function = NULL, *file = NULL;
	unsigned line = 0;
	if (w->pyframe)
		w->pyframe(token, &function, &file, &line);
	sqlite3_stmt *s = w->stmt[ST_PYFRAME];
	sqlite3_bind_int64(s, 1, id);
	bind_text_or_null(s, 2, function);
	bind_text_or_null(s, 3, file);
	bind_u64_or_null(s, 4, line, line != 0);
	step(w, ST_PYFRAME);
}

static int64_t frame_id(struct mt_writer *w, uintptr_t ip)
{
	uint64_t *known = map_get_u64(&w->frames, ip);
	if (known)
		return (int64_t)*known;
	int64_t id = ++w->next_frame_id;
	map_put_u64(&w->frames, ip, (uint64_t)id);
	if (MT_IS_LAUNCH_FRAME(ip)) {
		/* frames borrowed from the launching thread follow (ip: its id) */
		sqlite3_stmt *s = w->stmt[ST_LAUNCHFRAME];
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, MT_LAUNCH_FRAME_TID(ip));
		step(w, ST_LAUNCHFRAME);
		return id;
	}
	if (MT_IS_PYFRAME(ip)) {
		write_python_frame(w, id, ip);
		return id;
	}

	struct mt_symbol sym;
	bool found = mt_symbol_lookup(ip, &sym);
	sqlite3_stmt *s = w->stmt[ST_FRAME];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, (int64_t)ip);
	if (found) {
		sqlite3_bind_int64(s, 3, module_id(w, sym.module_base, sym.module_path));
		sqlite3_bind_int64(s, 4, (int64_t)(ip - sym.module_base));
	}
	bind_text_or_null(s, 5, sym.function);
	step(w, ST_FRAME);
	return id;
}

static bool mark_stack_written(struct mt_writer *w, uint32_t id)
{
	uint8_t *p = trace_grow(w->stack_written, &w->stack_written_cap, (size_t)id + 1, 1, 1024, true);
	if (!p)
		return false;
	w->stack_written = p;
	if (w->stack_written[id])
		return false;
	w->stack_written[id] = 1;
	return true;
}

static void write_stack(struct mt_writer *w, uint32_t id)
{
	if (id == 0 || !mark_stack_written(w, id))
		return;
	unsigned n;
	const uintptr_t *ips = mt_stack_get(w->stacks, id, &n);
	for (unsigned depth = 0; depth < n; depth++) {
		int64_t frame = frame_id(w, ips[depth]);
		sqlite3_stmt *s = w->stmt[ST_STACK_FRAME];
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, depth);
		sqlite3_bind_int64(s, 3, frame);
		step(w, ST_STACK_FRAME);
	}
}

static void write_op(struct mt_writer *w, uint32_t id)
{
	if (!id || map_get(&w->ops, id))
		return;
	map_put_u64(&w->ops, id, 1);
	char name[256] = "", domain[256] = "";
	if (w->op_name)
		w->op_name(id, name, sizeof(name), domain, sizeof(domain));
	sqlite3_stmt *s = w->stmt[ST_OP];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
	bind_text_or_null(s, 3, domain);
	step(w, ST_OP);
}

static void write_thread(struct mt_writer *w, uint32_t tid)
{
	if (!tid || map_get(&w->threads, tid))
		return;
	map_put_u64(&w->threads, tid, 1);
	char path[64], name[64];
	if (!mt_thread_name_get(tid, name, sizeof(name))) {
		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
		read_file(path, name, sizeof(name), false);
	}
	sqlite3_stmt *s = w->stmt[ST_THREAD];
	sqlite3_bind_int64(s, 1, tid);
	bind_text_or_null(s, 2, name);
	step(w, ST_THREAD);
}

/* ---- events ---- */

static void write_site(struct mt_writer *w, uint32_t id, const struct mt_site_key *k)
{
	sqlite3_stmt *s = w->stmt[ST_SITE];
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, k->kind);
	sqlite3_bind_int64(s, 3, k->stack);
	sqlite3_bind_int(s, 4, k->api);
	sqlite3_bind_int64(s, 5, k->tid);
	sqlite3_bind_int(s, 6, k->device);
	sqlite3_bind_int(s, 7, k->mem);
	sqlite3_bind_int64(s, 8, (int64_t)k->stream);
	bind_u64_or_null(s, 9, k->op, k->op != 0);
	sqlite3_bind_int(s, 10, k->status);
	bind_u64_or_null(s, 11, k->handle, k->handle != 0);
	bind_u64_or_null(s, 12, k->source, k->source != MT_SOURCE_HOOK);
	step(w, ST_SITE);
}

static void bind_row(sqlite3_stmt *s, int first, const struct event_row *r, unsigned columns)
{
	for (unsigned c = 0; c < columns; c++) {
		if (r->null_mask & 1u << c)
			sqlite3_bind_null(s, first + (int)c);
		else
			sqlite3_bind_int64(s, first + (int)c, r->v[c]);
	}
}

/* The waiting rows into their table: a full batch in one statement, a
 * partial one (at the end of a flush) row by row. Every column is bound
 * every time, so the bindings are never cleared. */
static void flush_batch(struct mt_writer *w, enum batch_id id)
{
	struct batch *b = &w->batch[id];
	unsigned columns = batch_def[id].columns;
	if (b->n == EVENT_BATCH) {
		for (unsigned i = 0; i < EVENT_BATCH; i++)
			bind_row(b->many, 1 + (int)(i * columns), &b->rows[i], columns);
		int rc = sqlite3_step(b->many);
		sqlite3_reset(b->many);
		sql_ok(w, rc, batch_def[id].sql);
	} else {
		for (unsigned i = 0; i < b->n && !w->failed; i++) {
			bind_row(b->one, 1, &b->rows[i], columns);
			int rc = sqlite3_step(b->one);
			sqlite3_reset(b->one);
			sql_ok(w, rc, batch_def[id].sql);
		}
	}
	b->n = 0;
}

static struct event_row *add_row(struct mt_writer *w, enum batch_id id)
{
	struct batch *b = &w->batch[id];
	if (b->n == EVENT_BATCH)
		flush_batch(w, id);
	return &b->rows[b->n++];
}

/* Anything but a known allocation or free: the version-1 columns. */
static void add_other(struct mt_writer *w, uint64_t seq, uint64_t t, const struct mt_event *ev)
{
	bool sized = ev->kind != MT_EV_FREE && ev->kind != MT_EV_FREE_ERROR ? true : ev->mem != 0;
	struct event_row *r = add_row(w, B_OTHER);
	*r = (struct event_row){ .v = { (int64_t)seq, (int64_t)t, ev->kind, ev->api, ev->tid,
					ev->device, (int64_t)ev->stream, (int64_t)ev->address,
					(int64_t)ev->bytes, ev->mem, ev->stack, ev->status,
					(int64_t)ev->handle, ev->op, ev->source } };
	r->null_mask = (uint16_t)((sized ? 0 : 1u << 8 | 1u << 9) | (ev->handle ? 0 : 1u << 12) |
				  (ev->op ? 0 : 1u << 13) |
				  (ev->source != MT_SOURCE_HOOK ? 0 : 1u << 14));
}

/* The event's row, as the live side decided it (trace-live.h), and the
 * row of a site it interned. */
static void add_event_row(struct mt_writer *w, uint64_t seq, uint64_t t, const struct mt_event *ev,
			  const struct mt_live_row *lr)
{
	struct event_row *r;

	if (lr->new_site)
		write_site(w, lr->new_site, lr->new_key);
	switch (lr->table) {
	case MT_LIVE_ALLOCS:
		r = add_row(w, B_ALLOC);
		*r = (struct event_row){ .v = { (int64_t)seq, (int64_t)t, lr->site,
						(int64_t)ev->address, (int64_t)ev->bytes } };
		break;
	case MT_LIVE_FREES:
		r = add_row(w, B_FREE);
		*r = (struct event_row){ .v = { (int64_t)seq, (int64_t)t, lr->site, lr->alloc } };
		break;
	case MT_LIVE_OTHER:
		add_other(w, seq, t, ev);
		break;
	case MT_LIVE_RING:
		break; /* flight mode: into the ring */
	}
}

static void write_event(struct mt_writer *w, uint64_t seq, struct mt_event *ev)
{
	/* Marks made before the trace started and CUPTI records timed before
	 * it are placed at its start. */
	uint64_t t = ev->time_ns > w->start_ns ? ev->time_ns - w->start_ns : 0;
	write_thread(w, ev->tid);
	write_stack(w, ev->stack);
	write_op(w, ev->op);
	/* the live side, once an event: its row, the live sets, the answer */
	struct mt_live_row lr;
	if (!mt_live_event(w->live, seq, t, ev, &lr))
		w->failed = true;
	add_event_row(w, seq, t, ev, &lr);
	sqlite3_stmt *s;

	if (ev->source == MT_SOURCE_CUPTI) {
		s = w->stmt[ST_CUPTI];
		sqlite3_bind_int64(s, 1, (int64_t)seq);
		bind_u64_or_null(s, 2, ev->device_free, ev->device_free != 0);
		bind_u64_or_null(s, 3, ev->device_total, ev->device_total != 0);
		step(w, ST_CUPTI);
	}

	if (ev->kind == MT_EV_DEVICE) {
		s = w->stmt[ST_DEVICE];
		sqlite3_bind_int(s, 1, ev->device);
		sqlite3_bind_int64(s, 2, (int64_t)ev->bytes);
		sqlite3_bind_int64(s, 3, (int64_t)ev->handle);
		sqlite3_bind_int64(s, 4, (int64_t)seq);
		step(w, ST_DEVICE);
	}

	if (ev->kind == MT_EV_OOM && ev->source == MT_SOURCE_HOOK) {
		s = w->stmt[ST_OOM];
		sqlite3_bind_int64(s, 1, (int64_t)seq);
		bind_u64_or_null(s, 2, ev->device_free, ev->device_total != 0);
		bind_u64_or_null(s, 3, ev->device_total, ev->device_total != 0);
		sqlite3_bind_null(s, 4);
		step(w, ST_OOM);
	}
	/* a framework allocator's own OOM: the free torch read (address),
	 * and its cap, when it had one */
	if (ev->kind == MT_EV_TENSOR_OOM && ev->source == MT_SOURCE_HOOK) {
		s = w->stmt[ST_OOM];
		sqlite3_bind_int64(s, 1, (int64_t)seq);
		bind_u64_or_null(s, 2, ev->address, ev->device_total != 0);
		bind_u64_or_null(s, 3, ev->device_total, ev->device_total != 0);
		bind_u64_or_null(s, 4, ev->limit, ev->limit != 0);
		step(w, ST_OOM);
	}
}

/* The waiting rows, the meta keys and the live sets, then COMMIT; the
 * ring file's cells before ticket upto are free again. */
static void commit(struct mt_writer *w, uint64_t seq, uint64_t upto)
{
	for (int i = 0; i < B_COUNT; i++) {
		if (!w->failed)
			flush_batch(w, (enum batch_id)i);
		w->batch[i].n = 0;
	}
	if (w->failed)
		return;
	put_meta_u64(w, "events_written", seq);
	put_meta_u64(w, "producer_wait_ns", mt_queue_wait_ns(w->queue));
	put_meta_u64(w, "end_monotonic_ns", mt_now_ns() - w->start_ns);
	/* the order's exceptions, when there were any (docs/trace-format.md) */
	if (mt_queue_abandoned(w->queue))
		put_meta_u64(w, "order_tickets_skipped", mt_queue_abandoned(w->queue));
	if (mt_queue_late(w->queue))
		put_meta_u64(w, "order_events_late", mt_queue_late(w->queue));
	if (w->early)
		put_meta_u64(w, "order_releases_early", w->early);
	if (w->unpaired)
		put_meta_u64(w, "order_reuse_unpaired", w->unpaired);
	/* the ring file's cells before this ticket are in the trace: with
	 * events_written, what memtrace recover starts from (trace-ring.h) */
	if (w->ring_id)
		put_meta_u64(w, "ring_tail", upto);
	if (!mt_live_commit(w->live))
		w->failed = true;
	if (exec_sql(w, "COMMIT"))
		mt_queue_release(w->queue, upto);
}

/* Times stay as read: CUPTI's records come late with their own, and a
 * hook reads the clock just before its ticket. */
static void write_ordered(struct mt_writer *w, struct mt_event *ev, uint64_t cell)
{
	mt_queue_note_written(w->queue, cell, w->seq);
	write_event(w, w->seq++, ev);
}

/* The next event in the trace's order (the queue's), or false when the
 * one due is not there yet. A gap left open too long, or at the end
 * (final), is given up on. */
static bool next_event(struct mt_writer *w, struct mt_event *ev, bool final)
{
	for (;;) {
		if (mt_queue_pop(w->queue, ev))
			return true;
		uint64_t due = mt_queue_popped(w->queue);
		if (due == mt_queue_tickets(w->queue))
			return false; /* nothing to wait for */
		uint64_t now = mt_now_ns();
		if (w->gap_ticket != due) {
			w->gap_ticket = due;
			w->gap_ns = now;
		}
		if (!final && now - w->gap_ns < MT_GAP_WAIT_NS)
			return false;
		if (!mt_queue_abandon(w->queue) && !final)
			return false; /* being filled: there in a moment */
		if (final && atomic_load(&w->finish) && now - w->gap_ns > MT_FINISH_FILL_WAIT_NS)
			mt_queue_skip(w->queue);
	}
}

/* An allocation or mapping at an address the live set still holds: if its
 * release is queued, or still running on another thread, it was served
 * first (the device gave the address out again), and is written first.
 * cell: the allocation's own. While it waits, the cells written so far
 * are committed once: the release's thread may be waiting for one of
 * them, which only a commit frees in a ring file (F17). */
static bool early_release(struct mt_writer *w, const struct mt_event *ev, uint64_t cell,
			  struct mt_event *rel)
{
	unsigned kind = ev->kind == MT_EV_MAP ? MT_EV_UNMAP : MT_EV_FREE;
	uint64_t since = 0;
	bool committed = false;
	if (ev->source != MT_SOURCE_HOOK || !ev->address || !mt_live_holds(w->live, ev))
		return false;
	for (;;) {
		if (mt_queue_take_ahead(w->queue, ev, kind, true, rel)) {
			w->early++;
			return true;
		}
		bool running = mt_queue_release_running(w->queue, ev->address);
		uint64_t now = mt_now_ns();
		if (!since)
			since = now;
		if (!running || now - since > MT_REUSE_WAIT_NS) {
			/* done since we looked (its event is in the queue now);
			 * else none of another thread's to come: the first
			 * release there keeps the counts right (queue.c) */
			if (mt_queue_take_ahead(w->queue, ev, kind, true, rel) ||
			    mt_queue_take_ahead(w->queue, ev, kind, false, rel)) {
				w->early++;
				return true;
			}
			w->unpaired++;
			return false;
		}
		if (!committed && w->ring_id && now - since > MT_REUSE_COMMIT_NS &&
		    mt_queue_released(w->queue) < cell) {
			committed = true;
			commit(w, w->seq, cell);
			if (!w->failed && !exec_sql(w, "BEGIN"))
				w->failed = true;
		}
		sched_yield();
	}
}

static void wake_waiters(struct mt_writer *w)
{
	atomic_fetch_add(&w->done_gen, 1);
	syscall(SYS_futex, &w->done_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* One flush: everything in the queue now, in one transaction; in flight
 * mode in transactions of MT_FLIGHT_CHUNK events, each followed by the
 * ring's trim when the file nears its bound. final: the last, which
 * waits for no ticket. */
static void drain(struct mt_writer *w, bool final)
{
	pthread_mutex_lock(&w->work);
	if (mt_fdguard_lost())
		w->failed = true; /* the program took a trace descriptor (fd-guard.c) */
	struct mt_event ev, rel;
	uint64_t first = mt_queue_popped(w->queue);
	unsigned in_tx = 0;
	bool open = false, flight = w->live && mt_live_flight(w->live);
	/* a ring file's cells are freed only by a commit: one at least every
	 * half queue, so that producers never wait for a long drain */
	uint64_t half = mt_queue_capacity(w->queue) / 2;
	while (next_event(w, &ev, final)) {
		if (!open && !w->failed)
			open = exec_sql(w, "BEGIN");
		if (open && !w->failed) {
			/* each event's own cell (the release taken ahead has another) */
			uint64_t cell = mt_queue_taken(w->queue);
			if (early_release(w, &ev, cell, &rel))
				write_ordered(w, &rel, mt_queue_taken(w->queue));
			write_ordered(w, &ev, cell);
		} else {
			w->dropped++;
		}
		if (open && flight && ++in_tx >= MT_FLIGHT_CHUNK) {
			commit(w, w->seq, mt_queue_popped(w->queue));
			open = false;
			in_tx = 0;
			if (!w->failed && !mt_live_trim(w->live))
				w->failed = true;
		} else if (open && w->ring_id &&
			   mt_queue_popped(w->queue) - mt_queue_released(w->queue) >= half) {
			commit(w, w->seq, mt_queue_popped(w->queue));
			open = false;
		}
	}
	if (open)
		commit(w, w->seq, mt_queue_popped(w->queue));
	for (int i = 0; i < B_COUNT; i++)
		w->batch[i].n = 0;
	if (open && flight && !w->failed && !mt_live_trim(w->live))
		w->failed = true;
	uint64_t upto = mt_queue_popped(w->queue);
	if (w->failed || !w->ring_id)
		mt_queue_release(w->queue, upto); /* dropped, or not kept */
	pthread_mutex_unlock(&w->work);

	if (upto != first || w->failed) {
		atomic_store(&w->committed, upto);
		wake_waiters(w);
	}
}

static void after_interval(struct mt_writer *w, clockid_t clock, struct timespec *until)
{
	clock_gettime(clock, until);
	until->tv_nsec += (long)w->interval_ms * 1000000L;
	until->tv_sec += until->tv_nsec / 1000000000L;
	until->tv_nsec %= 1000000000L;
}

/* The lock for at most one interval: a thread that a signal interrupted
 * while it held it (in mt_writer_sync) must not stop the writer, whom the
 * handler's _exit may be waiting for. pthread_mutex_timedlock, on the
 * wall clock, rather than pthread_mutex_clocklock: ThreadSanitizer (gcc
 * 12) does not intercept the latter and then takes the lock for not held;
 * a wall clock set back only makes this one wait longer. */
static void wait_for_work(struct mt_writer *w)
{
	struct timespec until;
	after_interval(w, CLOCK_REALTIME, &until);
	if (pthread_mutex_timedlock(&w->lock, &until) != 0)
		return;
	after_interval(w, CLOCK_MONOTONIC, &until); /* the condition's clock */
	if (!w->poke && !w->stop && !atomic_load(&w->finish))
		pthread_cond_timedwait(&w->wake, &w->lock, &until);
	w->poke = false;
	pthread_mutex_unlock(&w->lock);
}

static void close_db(struct mt_writer *w);
static void write_end(struct mt_writer *w, int exit_status);

/* The end that mt_writer_finish asked for, on this thread: the last
 * drain, the end, the file closed. */
static void finish_here(struct mt_writer *w)
{
	drain(w, true);
	pthread_mutex_lock(&w->work);
	write_end(w, atomic_load(&w->finish_status));
	close_db(w);
	pthread_mutex_unlock(&w->work);
	atomic_store(&w->finished, true);
}

static void *writer_main(void *arg)
{
	struct mt_writer *w = arg;
	for (;;) {
		wait_for_work(w);
		bool stop = w->stop;
		if (!stop && atomic_load(&w->finish)) {
			finish_here(w);
			break;
		}
		drain(w, stop);
		if (stop)
			break;
	}
	return NULL;
}

static void poke(void *arg)
{
	struct mt_writer *w = arg;
	pthread_mutex_lock(&w->lock);
	w->poke = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

/* meta.end "exit", and the status when known (-1: not). */
static void write_end(struct mt_writer *w, int exit_status)
{
	if (w->failed || !w->db)
		return;
	exec_sql(w, "BEGIN");
	put_meta(w, "end", "exit");
	if (exit_status >= 0)
		put_meta_u64(w, "exit_status", (uint64_t)exit_status);
	exec_sql(w, "COMMIT");
}

/* ---- lifetime ---- */

/* The start and the last commit run on the program's thread. A write past
 * RLIMIT_FSIZE there would send it SIGXFSZ, whose default kills the
 * process: hold the signal back around our writes and take back only one
 * that our writes raised (EFBIG then fails the write, as on the writer
 * thread, which blocks every signal). */
struct xfsz_guard {
	sigset_t old;
	bool was_pending;
};

static void xfsz_hold(struct xfsz_guard *g)
{
	sigset_t set, pending;
	sigemptyset(&set);
	sigaddset(&set, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGXFSZ) == 1;
}

static void xfsz_release(struct xfsz_guard *g)
{
	sigset_t set, pending;
	sigemptyset(&set);
	sigaddset(&set, SIGXFSZ);
	sigpending(&pending);
	if (!g->was_pending && sigismember(&pending, SIGXFSZ) == 1) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static void init_sync(struct mt_writer *w)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->work, NULL);
	pthread_mutex_init(&w->lock, NULL);
}

static bool start_thread(struct mt_writer *w)
{
	/* The writer takes no signals: they belong to the program's threads. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		mt_log(MT_ENV, "cannot start the writer thread: %s; not tracing", strerror(rc));
		return false;
	}
	pthread_setname_np(w->thread, "memtrace-writer");
	return true;
}

/* A closed trace is one file in rollback-journal mode: any reader
 * (sqlite3, Python, DuckDB, a read-only medium) opens it without making a
 * -wal and -shm beside it, which a WAL database needs even to be read.
 * Switching folds the -wal in and removes both (docs/trace-format.md). A
 * reader that holds the file at this moment keeps it in WAL mode, which
 * the close then checkpoints as before: it is waited for a little, not
 * long, since the process is ending. Not after a failure: the file may be
 * full, or one of its descriptors the program's (fd-guard.c). */
static void leave_one_file(struct mt_writer *w)
{
	sqlite3_stmt *s = NULL;
	if (w->failed || !w->db)
		return;
	sqlite3_busy_timeout(w->db, 200);
	if (sqlite3_prepare_v2(w->db, "PRAGMA journal_mode=DELETE", -1, &s, NULL) == SQLITE_OK)
		while (sqlite3_step(s) == SQLITE_ROW)
			;
	sqlite3_finalize(s);
}

/* Finalizes the statements and closes the database (which checkpoints). */
static void close_db(struct mt_writer *w)
{
	mt_live_free(w->live);
	w->live = NULL;
	for (int i = 0; i < ST_COUNT; i++) {
		sqlite3_finalize(w->stmt[i]);
		w->stmt[i] = NULL;
	}
	for (int i = 0; i < B_COUNT; i++) {
		sqlite3_finalize(w->batch[i].one);
		sqlite3_finalize(w->batch[i].many);
		w->batch[i].one = w->batch[i].many = NULL;
	}
	/* flight mode: the main file grew by its whole share at once
	 * (mt_live_pragmas' chunk), so that a disk that fills costs no
	 * commit; without the chunk, the checkpoint of the close truncates it
	 * to its pages (a killed process leaves it at the chunk's size:
	 * docs/usage.md) */
	if (w->db && w->flight_bound) {
		int none = 0;
		sqlite3_file_control(w->db, "main", SQLITE_FCNTL_CHUNK_SIZE, &none);
	}
	leave_one_file(w);
	/* everything the ring held is in the trace (or, when the file could
	 * not be written, was dropped as it was taken): no ring file is left
	 * beside a closed trace */
	if (w->db && w->ring_id)
		mt_ring_remove(w->path);
	if (w->db)
		sqlite3_close(w->db);
	w->db = NULL;
}

static void destroy(struct mt_writer *w)
{
	close_db(w);
	map_fini(&w->frames);
	map_fini(&w->threads);
	mt_site_table_free(w->sites);
	map_fini(&w->ops);
	for (size_t i = 0; i < w->nmodules; i++)
		free(w->modules[i].path);
	free(w->modules);
	free(w->stack_written);
	free(w);
}

struct mt_writer *mt_writer_start(const struct mt_writer_options *opt)
{
	struct mt_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	snprintf(w->path, sizeof(w->path), "%s", opt->path);
	w->queue = opt->queue;
	w->stacks = opt->stacks;
	w->start_ns = opt->start_ns;
	w->interval_ms = opt->interval_ms;
	w->flight_bound = opt->flight;
	w->ring_id = opt->ring_id;
	w->op_name = opt->op_name;
	w->pyframe = opt->pyframe;
	w->gap_ticket = UINT64_MAX; /* no gap yet */
	atomic_init(&w->committed, mt_queue_popped(opt->queue));
	init_sync(w);
	map_init(&w->frames, sizeof(uint64_t));
	map_init(&w->threads, sizeof(uint64_t));
	map_init(&w->ops, sizeof(uint64_t));
	if (!map_reserve(&w->frames, 2048) || !map_reserve(&w->threads, 32) ||
	    !map_reserve(&w->ops, 32) ||
	    !(w->sites = mt_site_table_new()))
		goto fail;
	if (!create_files(w->path))
		goto fail;
	struct xfsz_guard guard;
	xfsz_hold(&guard);
	/* flight mode: the first checkpoint grows the main file to its
	 * reserved share now, not when the disk may be full */
	bool ok = open_db(w) && (write_static_meta(w, opt), exec_sql(w, "COMMIT")) &&
		  (!w->flight_bound || sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
								 NULL, NULL) == SQLITE_OK) &&
		  start_thread(w);
	if (!ok) {
		/* what we created is ours and holds no trace: leave nothing behind */
		close_db(w);
		remove_files(w->path, 3);
	}
	xfsz_release(&guard);
	if (!ok)
		goto fail;
	mt_queue_set_pressure_cb(w->queue, poke, w);
	return w;
fail:
	destroy(w);
	return NULL;
}

bool mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;

	poke(w);
	for (;;) {
		uint32_t gen = atomic_load(&w->done_gen);
		if (atomic_load(&w->committed) > upto || w->failed || w->stop)
			break;
		struct timespec now, left;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t ns = (int64_t)(until.tv_sec - now.tv_sec) * 1000000000 +
			     (until.tv_nsec - now.tv_nsec);
		if (ns <= 0)
			break;
		left.tv_sec = ns / 1000000000;
		left.tv_nsec = ns % 1000000000;
		syscall(SYS_futex, &w->done_gen, FUTEX_WAIT_PRIVATE, gen, &left, NULL, 0);
	}
	return atomic_load(&w->committed) > upto && !w->failed;
}

bool mt_writer_failed(const struct mt_writer *w)
{
	return atomic_load(&((struct mt_writer *)w)->failed);
}

uint64_t mt_writer_committed(const struct mt_writer *w)
{
	return atomic_load(&((struct mt_writer *)w)->committed);
}

/* Stops the thread and closes the file; the writer's memory stays, since
 * a thread still inside a hook may be about to wait on it (the process is
 * ending). mt_writer_free releases it where nothing can (tests). */
void mt_writer_stop(struct mt_writer *w, bool normal_exit, int exit_status)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	wake_waiters(w);
	pthread_join(w->thread, NULL);
	mt_queue_set_pressure_cb(w->queue, NULL, NULL);
	if (atomic_load(&w->finished))
		return; /* mt_writer_finish did it all */
	struct xfsz_guard guard;
	xfsz_hold(&guard);
	if (normal_exit)
		write_end(w, exit_status);
	pthread_mutex_lock(&w->work);
	close_db(w);
	pthread_mutex_unlock(&w->work);
	xfsz_release(&guard);
	if (w->dropped)
		mt_log(MT_ENV, "%llu events could not be written to %s",
		       (unsigned long long)w->dropped, w->path);
	atomic_store(&w->finished, true); /* a finish asked meanwhile waits no more */
}

/* Sleeps until the file is closed (upto UINT64_MAX) or every ticket
 * below upto is committed, as long as the writer pops events: at most
 * timeout_ms without. No lock: the caller may be a signal handler. */
static bool wait_progress(struct mt_writer *w, uint64_t upto, unsigned timeout_ms)
{
	uint64_t seen = mt_queue_popped(w->queue), idle_ms = 0;
	for (;;) {
		if (atomic_load(&w->finished))
			return upto == UINT64_MAX;
		if (upto != UINT64_MAX && atomic_load(&w->committed) >= upto)
			return true;
		if (w->failed || idle_ms >= timeout_ms)
			return false;
		struct timespec ms = { 0, 1000000L };
		nanosleep(&ms, NULL);
		uint64_t now = mt_queue_popped(w->queue);
		idle_ms = now == seen ? idle_ms + 1 : 0;
		seen = now;
	}
}

/* For _exit and the like, which may be called from a signal handler, by a
 * thread that holds any lock: nothing here takes a lock it waits for, nor
 * allocates. The writer thread does the work (the last drain, meta.end
 * "exit" with the status, the close); the caller waits as long as the
 * writer makes progress, and gives up after timeout_ms without any (a
 * lock the caller holds, a cell it was filling). */
bool mt_writer_finish(struct mt_writer *w, int exit_status, unsigned timeout_ms)
{
	if (!atomic_load(&w->finish)) { /* else another thread asked: wait with it */
		atomic_store(&w->finish_status, exit_status);
		atomic_store(&w->finish, true);
	}
	if (pthread_mutex_trylock(&w->lock) == 0) { /* else it wakes within its interval */
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
	}
	return wait_progress(w, UINT64_MAX, timeout_ms);
}

/* For exec: every event pushed so far committed, the writer going on
 * after (an exec that fails goes on tracing). Same rules as
 * mt_writer_finish. */
bool mt_writer_commit_now(struct mt_writer *w, unsigned timeout_ms)
{
	uint64_t upto = mt_queue_tickets(w->queue);
	if (atomic_load(&w->committed) >= upto)
		return true;
	if (pthread_mutex_trylock(&w->lock) == 0) {
		w->poke = true;
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
	}
	return wait_progress(w, upto, timeout_ms);
}

bool mt_writer_is_self(const struct mt_writer *w)
{
	return pthread_equal(pthread_self(), w->thread);
}

void mt_writer_free(struct mt_writer *w)
{
	destroy(w);
}

void mt_writer_lock(struct mt_writer *w)
{
	pthread_mutex_lock(&w->work);
}

void mt_writer_unlock(struct mt_writer *w)
{
	pthread_mutex_unlock(&w->work);
}
