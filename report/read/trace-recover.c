/* memtrace recover: the events a killed process had pushed and its writer
 * had not committed, moved from the ring file TRACE-ring into the trace
 * (trace/trace-ring.h, docs/trace-format.md "The ring file").
 *
 * Only when nobody writes the trace any more: the process that made the
 * ring holds a POSIX lock on it while it lives, and an OFD lock here
 * conflicts with it. The cells to move are those at or after the trace's
 * meta ring_tail that hold their ticket's event and were not written in a
 * committed transaction (written below the trace's next seq). They go in
 * the writer's order (first those it had written, by the seq it gave them,
 * then the rest by ticket; a free ahead of an allocation that got its
 * address again, as the writer's early release) and into the tables the writer would have put
 * them in: an allocation into allocs, a free of an allocation still live
 * into frees (with that allocation's size), the rest into other_events,
 * with their sites, ooms, devices and cupti rows; threads and operations
 * they name that the trace lacks get rows without names, and a stack the
 * writer had not written stays without frames (the process that could
 * name them is gone). One transaction, which also moves ring_tail past
 * every cell and counts them in meta recovered_events; then the ring file
 * is removed. A second run finds no ring file, or (killed between the
 * two) no cell after ring_tail: it recovers 0. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-ring.h"
#include "trace-schema.h"
#include "util-map.h"
#include "util-mem.h"

/* A site's columns, as the writer interns them (NULL read as 0). */
struct site_key {
	int64_t v[11]; /* kind, stack, api, thread, device, mem, stream, op, status, handle, source */
};

struct site_val {
	int64_t id;
	struct site_key k;
};

struct live_val {
	int64_t seq;
	uint64_t bytes;
	int mem;
};

struct recovery {
	sqlite3 *db;
	const char *path;
	struct map sites; /* hash of the key -> site_val */
	struct map live; /* address -> live_val */
	int64_t next_site;
	uint64_t start_ns;
	char *error;
};

static uint64_t site_hash(const struct site_key *k)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 11; i++)
		h = map_hash64(h ^ (uint64_t)k->v[i]);
	return h;
}

static int fail(struct recovery *r, const char *what)
{
	if (!r->error)
		r->error = xasprintf("cannot recover %s: %s: %s", r->path, what,
				     r->db ? sqlite3_errmsg(r->db) : "out of memory");
	return -1;
}

static void put_site(struct recovery *r, const struct site_key *k, int64_t id)
{
	bool inserted;
	uint64_t h = site_hash(k);
	for (;; h++) {
		struct site_val *v = xmap_put(&r->sites, h, &inserted);
		if (inserted) {
			*v = (struct site_val){ .id = id, .k = *k };
			return;
		}
		if (!memcmp(&v->k, k, sizeof(*k)))
			return;
	}
}

static int load(struct recovery *r)
{
	sqlite3_stmt *s = NULL;
	struct map freed;

	if (sqlite3_prepare_v2(r->db,
			       "SELECT id,kind,stack,api,thread,device,mem,stream,op,status,handle,"
			       "source FROM sites ORDER BY id",
			       -1, &s, NULL) != SQLITE_OK)
		return fail(r, "reading its sites");
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct site_key k;
		for (int i = 0; i < 11; i++)
			k.v[i] = sqlite3_column_int64(s, i + 1);
		int64_t id = sqlite3_column_int64(s, 0);
		put_site(r, &k, id);
		if (id >= r->next_site)
			r->next_site = id + 1;
	}
	sqlite3_finalize(s);
	if (r->next_site < 1)
		r->next_site = 1;

	/* the live set at the last commit: the allocations no free names */
	map_init(&freed, 0);
	if (sqlite3_prepare_v2(r->db, "SELECT alloc FROM frees", -1, &s, NULL) != SQLITE_OK) {
		map_fini(&freed);
		return fail(r, "reading its frees");
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		bool inserted;
		xmap_put(&freed, (uint64_t)sqlite3_column_int64(s, 0), &inserted);
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(r->db,
			       "SELECT a.seq,a.address,a.bytes,s.mem FROM allocs a"
			       " LEFT JOIN sites s ON s.id=a.site ORDER BY a.seq",
			       -1, &s, NULL) != SQLITE_OK) {
		map_fini(&freed);
		return fail(r, "reading its allocations");
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(s, 0);
		bool inserted;
		if (map_get(&freed, (uint64_t)seq))
			continue;
		struct live_val *v =
			xmap_put(&r->live, (uint64_t)sqlite3_column_int64(s, 1), &inserted);
		*v = (struct live_val){ .seq = seq,
					.bytes = (uint64_t)sqlite3_column_int64(s, 2),
					.mem = (int)sqlite3_column_int64(s, 3) };
	}
	sqlite3_finalize(s);
	map_fini(&freed);
	return 0;
}

static bool run(struct recovery *r, const char *sql, const int64_t *v, const bool *null, int n)
{
	sqlite3_stmt *s = NULL;
	bool ok = sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) == SQLITE_OK;
	for (int i = 0; ok && i < n; i++) {
		if (null && null[i])
			sqlite3_bind_null(s, i + 1);
		else
			sqlite3_bind_int64(s, i + 1, v[i]);
	}
	ok = ok && sqlite3_step(s) == SQLITE_DONE;
	sqlite3_finalize(s);
	return ok;
}

/* The event's site, its row written when new. */
static int64_t site_of(struct recovery *r, const struct mt_ring_event *ev)
{
	struct site_key k = { { ev->kind, ev->stack, ev->api, ev->tid, ev->device, ev->mem,
				(int64_t)ev->stream, ev->op, ev->status, (int64_t)ev->handle,
				ev->source } };
	uint64_t h = site_hash(&k);
	for (;; h++) {
		struct site_val *v = map_get(&r->sites, h);
		if (!v)
			break;
		if (!memcmp(&v->k, &k, sizeof(k)))
			return v->id;
	}
	int64_t id = r->next_site++;
	bool null[12] = { false };
	int64_t row[12] = { id, k.v[0], k.v[1], k.v[2], k.v[3], k.v[4],
			    k.v[5], k.v[6], k.v[7], k.v[8], k.v[9], k.v[10] };
	null[8] = ev->op == 0;
	null[10] = ev->handle == 0;
	null[11] = ev->source == MT_SOURCE_HOOK;
	if (!run(r,
		 "INSERT INTO sites(id,kind,stack,api,thread,device,mem,stream,op,status,handle,"
		 "source) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
		 row, null, 12))
		return -1;
	put_site(r, &k, id);
	return id;
}

static bool add_other(struct recovery *r, int64_t seq, int64_t t, const struct mt_ring_event *ev)
{
	bool sized = ev->kind != MT_EV_FREE && ev->kind != MT_EV_FREE_ERROR ? true : ev->mem != 0;
	int64_t row[15] = { seq, t, ev->kind, ev->api, ev->tid, ev->device, (int64_t)ev->stream,
			    (int64_t)ev->address, (int64_t)ev->bytes, ev->mem, ev->stack,
			    ev->status, (int64_t)ev->handle, ev->op, ev->source };
	bool null[15] = { false };
	null[8] = null[9] = !sized;
	null[12] = ev->handle == 0;
	null[13] = ev->op == 0;
	null[14] = ev->source == MT_SOURCE_HOOK;
	return run(r,
		   "INSERT INTO other_events(" MT_EVENT_COLUMNS
		   ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		   row, null, 15);
}

/* One event, as the writer's write_event would have written it. */
static bool replay(struct recovery *r, int64_t seq, struct mt_ring_event ev)
{
	int64_t t = ev.time_ns > r->start_ns ? (int64_t)(ev.time_ns - r->start_ns) : 0;
	bool hook = ev.source == MT_SOURCE_HOOK;

	if (ev.tid && !run(r, "INSERT OR IGNORE INTO threads(id,name) VALUES(?,NULL)",
			   (int64_t[]){ ev.tid }, NULL, 1))
		return false;
	if (ev.op && !run(r, "INSERT OR IGNORE INTO ops(id,name,domain) VALUES(?,'',NULL)",
			  (int64_t[]){ ev.op }, NULL, 1))
		return false;

	struct live_val a;
	bool found = false;
	if (hook && (ev.kind == MT_EV_FREE || ev.kind == MT_EV_FREE_ERROR)) {
		struct live_val *v = map_get(&r->live, ev.address);
		if (v) {
			a = *v;
			found = true;
			if (ev.kind == MT_EV_FREE)
				map_remove(&r->live, ev.address, NULL);
		}
	}
	if (hook && ev.kind == MT_EV_ALLOC) {
		int64_t site = site_of(r, &ev);
		bool inserted;
		if (site < 0 || !run(r, "INSERT INTO allocs(seq,time_ns,site,address,bytes) "
					"VALUES(?,?,?,?,?)",
				     (int64_t[]){ seq, t, site, (int64_t)ev.address,
						  (int64_t)ev.bytes },
				     NULL, 5))
			return false;
		struct live_val *v = xmap_put(&r->live, ev.address, &inserted);
		*v = (struct live_val){ .seq = seq, .bytes = ev.bytes, .mem = ev.mem };
	} else if (found && ev.kind == MT_EV_FREE && a.mem) {
		ev.bytes = a.bytes;
		ev.mem = (uint8_t)a.mem;
		int64_t site = site_of(r, &ev);
		if (site < 0 || !run(r, "INSERT INTO frees(seq,time_ns,site,alloc) VALUES(?,?,?,?)",
				     (int64_t[]){ seq, t, site, a.seq }, NULL, 4))
			return false;
	} else {
		if (found && a.mem) { /* a free (or a failed one) of what it names */
			ev.bytes = a.bytes;
			ev.mem = (uint8_t)a.mem;
		}
		if (!add_other(r, seq, t, &ev))
			return false;
	}

	if (ev.source == MT_SOURCE_CUPTI &&
	    !run(r, "INSERT INTO cupti(seq,correlation_id,pc) VALUES(?,?,?)",
		 (int64_t[]){ seq, (int64_t)ev.device_free, (int64_t)ev.device_total },
		 (bool[]){ false, ev.device_free == 0, ev.device_total == 0 }, 3))
		return false;
	if (ev.kind == MT_EV_DEVICE &&
	    !run(r, "INSERT OR IGNORE INTO devices(id,total_bytes,free_bytes_at_first_use,"
		    "first_seq) VALUES(?,?,?,?)",
		 (int64_t[]){ ev.device, (int64_t)ev.bytes, (int64_t)ev.handle, seq }, NULL, 4))
		return false;
	if (hook && (ev.kind == MT_EV_OOM || ev.kind == MT_EV_TENSOR_OOM)) {
		bool tensor = ev.kind == MT_EV_TENSOR_OOM;
		int64_t row[4] = { seq, (int64_t)(tensor ? ev.address : ev.device_free),
				   (int64_t)ev.device_total, (int64_t)ev.device_free };
		bool null[4] = { false, ev.device_total == 0, ev.device_total == 0,
				 !tensor || ev.device_free == 0 };
		if (!run(r, "INSERT INTO ooms(seq,device_free,device_total,limit_bytes) "
			    "VALUES(?,?,?,?)",
			 row, null, 4))
			return false;
	}
	return true;
}

static int64_t meta_int(sqlite3 *db, const char *key, int64_t fallback)
{
	sqlite3_stmt *s = NULL;
	int64_t v = fallback;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
			v = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	return v;
}

static const char *meta_text(sqlite3 *db, const char *key, char *out, size_t outsz)
{
	sqlite3_stmt *s = NULL;
	out[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			snprintf(out, outsz, "%s", (const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	return out;
}

static bool put_meta(sqlite3 *db, const char *key, int64_t value)
{
	sqlite3_stmt *s = NULL;
	bool ok = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)", -1,
				     &s, NULL) == SQLITE_OK;
	if (ok) {
		sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, value);
		ok = sqlite3_step(s) == SQLITE_DONE;
	}
	sqlite3_finalize(s);
	return ok;
}

struct pending {
	uint64_t order; /* written seq, or 2^63 + ticket */
	const struct mt_ring_cell *cell;
};

static int by_order(const void *a, const void *b)
{
	uint64_t x = ((const struct pending *)a)->order, y = ((const struct pending *)b)->order;
	return x < y ? -1 : x > y;
}

/* The threads an allocation's early release skips (mt_queue_take_ahead's
 * MT_TAKE_AHEAD_THREADS): past them it takes none. */
#define RECOVER_HELD_THREADS 64

/* The cells of the ring that the trace lacks, in the writer's order. */
static size_t pending_cells(const struct mt_ring_header *h, const struct mt_ring_cell *cells,
			    uint64_t tail, uint64_t next_seq, struct pending *out)
{
	uint64_t mask = h->capacity - 1;
	size_t n = 0;
	for (uint64_t p = tail; p != tail + h->capacity; p++) {
		const struct mt_ring_cell *c = &cells[p & mask];
		uint64_t s = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		bool filled = s == p + 1, done = s == ((p + 1) | MT_RING_DONE);
		if (!filled && !done)
			continue; /* empty, being filled (its call had not returned), or given up */
		bool written = c->written > next_seq; /* in the transaction that did not commit */
		if (done && c->written && !written)
			continue; /* taken ahead of its turn, and committed */
		out[n++] = (struct pending){ .order = written ? c->written : (1ull << 63) + p,
					     .cell = c };
	}
	qsort(out, n, sizeof(*out), by_order);
	return n;
}

/* Whether the trace is memtrace's and the ring its own: 1; 0 when it has
 * no schema yet (killed while being created: no call had returned, so the
 * ring holds nothing to recover); -1 when not. */
static int ring_matches(struct recovery *r, const struct mt_ring_header *h)
{
	char buf[64];
	sqlite3_stmt *s = NULL;
	bool has_meta = sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE name='meta'",
					   -1, &s, NULL) == SQLITE_OK &&
			sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	if (!has_meta)
		return 0;
	if (strcmp(meta_text(r->db, "format", buf, sizeof(buf)), "memtrace-trace") != 0) {
		r->error = xasprintf("cannot recover %s: not a memtrace trace", r->path);
		return -1;
	}
	if ((uint64_t)meta_int(r->db, "ring_id", 0) != h->id) {
		r->error = xasprintf("cannot recover %s: %s-ring belongs to another trace", r->path,
				     r->path);
		return -1;
	}
	return 1;
}

/* The release that an allocation at a live address (todo[i]'s, ev)
 * comes after: the first later free of the address, strict (the writer's
 * rule, mt_queue_take_ahead) by no thread that held the address since (the
 * allocation's own, or one allocating there after, by its clock); n when
 * none. */
static size_t release_for(const struct pending *todo, const bool *done, size_t n, size_t i,
			  const struct mt_ring_event *ev, bool strict)
{
	struct { uint32_t tid; uint64_t time_ns; } held[RECOVER_HELD_THREADS];
	size_t nheld = 0;
	struct mt_ring_event rel;

	held[nheld].tid = ev->tid;
	held[nheld++].time_ns = ev->time_ns;
	for (size_t j = i + 1; j < n; j++) {
		memcpy(&rel, &todo[j].cell->ev, sizeof(rel));
		if (done[j] || rel.source != MT_SOURCE_HOOK || rel.address != ev->address)
			continue;
		size_t k = 0;
		while (k < nheld && held[k].tid != rel.tid)
			k++;
		if (rel.kind == MT_EV_ALLOC && strict) {
			if (k == nheld) {
				if (nheld == RECOVER_HELD_THREADS)
					return n;
				held[nheld].tid = rel.tid;
				held[nheld++].time_ns = rel.time_ns;
			}
			continue;
		}
		if (rel.kind == MT_EV_FREE &&
		    !(strict && k < nheld && rel.time_ns >= held[k].time_ns))
			return j;
	}
	return n;
}

static int recover_into(struct recovery *r, const struct mt_ring_header *h,
			const struct mt_ring_cell *cells, uint64_t *recovered)
{
	if (sqlite3_open_v2(r->path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK)
		return fail(r, "opening it for writing");
	sqlite3_busy_timeout(r->db, 5000);
	if (sqlite3_exec(r->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return fail(r, "BEGIN");
	int match = ring_matches(r, h);
	if (match <= 0) {
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
		return match < 0 ? -1 : 1;
	}
	int64_t tail = meta_int(r->db, "ring_tail", 0);
	int64_t next_seq = 0;
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v2(r->db, "SELECT coalesce(max(seq)+1,0) FROM events", -1, &s, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_finalize(s);
		return fail(r, "reading its events");
	}
	next_seq = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);

	struct pending *todo = xcalloc(h->capacity, sizeof(*todo));
	size_t n = pending_cells(h, cells, (uint64_t)tail, (uint64_t)next_seq, todo);
	int rc = 0;
	if (n && load(r) < 0)
		rc = -1;
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	int64_t seq = next_seq;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct mt_ring_event ev, rel;
		if (done[i])
			continue;
		memcpy(&ev, &todo[i].cell->ev, sizeof(ev));
		/* An allocation at an address still live: its release was
		 * recorded after the allocation's ticket, which is taken before
		 * the call (the device gave the address out again at once). As
		 * the writer does (trace-writer.c, early_release), the release
		 * goes first. */
		if (ev.source == MT_SOURCE_HOOK && ev.kind == MT_EV_ALLOC && ev.address &&
		    map_get(&r->live, ev.address)) {
			size_t j = release_for(todo, done, n, i, &ev, true);
			if (j == n)
				j = release_for(todo, done, n, i, &ev, false);
			if (j < n) {
				done[j] = true;
				memcpy(&rel, &todo[j].cell->ev, sizeof(rel));
				if (!replay(r, seq++, rel))
					rc = fail(r, "writing an event");
			}
		}
		if (rc == 0 && !replay(r, seq++, ev))
			rc = fail(r, "writing an event");
	}
	free(done);
	free(todo);
	if (rc == 0 &&
	    (!put_meta(r->db, "ring_tail", tail + (int64_t)h->capacity) ||
	     (n && !put_meta(r->db, "events_written", next_seq + (int64_t)n)) ||
	     !put_meta(r->db, "recovered_events", meta_int(r->db, "recovered_events", 0) + (int64_t)n) ||
	     sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK))
		rc = fail(r, "COMMIT");
	if (rc == 0)
		*recovered = n;
	/* one file, as the writer's close would have left it: the last
	 * connection's close removes the -wal and -shm but leaves the file in
	 * WAL mode, in which every reader makes them again */
	if (rc == 0)
		sqlite3_exec(r->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	return rc;
}

int trace_recover(const char *path, struct trace_recovery *out)
{
	_autofree_ char *ring = xasprintf("%s-ring", path);
	struct recovery r = { .path = path };
	struct mt_ring_header h;
	struct stat st;
	int rc = -1;

	*out = (struct trace_recovery){ 0 };
	int fd = open(ring, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		out->error = xasprintf("cannot recover %s: %s: %s", path, ring, strerror(errno));
		return -1;
	}
	out->ring = true;
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	if (fcntl(fd, F_OFD_SETLK, &lock) != 0) {
		close(fd);
		out->running = true; /* its process is alive: it writes the trace itself */
		return 0;
	}
	if (fstat(fd, &st) != 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, MT_RING_MAGIC, sizeof(h.magic)) != 0 || h.version != MT_RING_VERSION ||
	    h.cell_size != MT_RING_CELL_SIZE || h.capacity < 2 || h.capacity > (1u << 20) ||
	    (h.capacity & (h.capacity - 1)) ||
	    (uint64_t)st.st_size < MT_RING_HEADER_SIZE + h.capacity * MT_RING_CELL_SIZE) {
		close(fd);
		out->error = xasprintf("cannot recover %s: %s is not a memtrace ring file", path, ring);
		return -1;
	}
	size_t bytes = h.capacity * MT_RING_CELL_SIZE;
	void *cells = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, MT_RING_HEADER_SIZE);
	if (cells == MAP_FAILED) {
		close(fd);
		out->error = xasprintf("cannot recover %s: mapping %s: %s", path, ring, strerror(errno));
		return -1;
	}
	/* a trace still being created when its process was killed (empty, or
	 * a hot journal, which a read-write open would roll back): nothing
	 * had returned, nothing to do; the reporter says what it is */
	_autofree_ char *journal = xasprintf("%s-journal", path);
	struct stat tst;
	if (stat(path, &tst) == 0 && (tst.st_size == 0 || lstat(journal, &tst) == 0)) {
		munmap(cells, bytes);
		close(fd);
		return 0;
	}
	r.start_ns = h.start_ns;
	map_init(&r.sites, sizeof(struct site_val));
	map_init(&r.live, sizeof(struct live_val));
	rc = recover_into(&r, &h, cells, &out->recovered);
	if (rc < 0 && r.db)
		sqlite3_exec(r.db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(r.db);
	map_fini(&r.sites);
	map_fini(&r.live);
	munmap(cells, bytes);
	/* all it held is in the trace now: the trace is one file again */
	if (rc == 0)
		unlink(ring);
	if (rc == 1) /* no schema: left as found */
		rc = 0;
	close(fd);
	out->error = r.error;
	return rc;
}
