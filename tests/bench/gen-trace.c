/* gen-trace: writes a trace of N events (docs/trace-format.md),
 * shaped like a training job's, for the reporter benchmark. The schema is
 * trace/trace-schema.h's own, so the generator stays in step with it.
 *
 *   gen-trace --events N --out FILE [--stacks S] [--depth D] [--threads T]
 *             [--live L] [--seed X] [--unique-addresses] [--page-size P]
 *             [--reserve R] [--rank N]
 *
 * The run: T threads allocate and free device memory from S call stacks
 * of D frames (stacks share their outer frames, as a program's do; the
 * sites are used with a skew, a few hot and many cold). Sizes are
 * log-uniform from 512 B to 16 MiB; the live set wanders between L/2 and
 * L allocations; one in 64 allocations is pinned host memory. Addresses
 * are reused, as a caching allocator (PyTorch's) and the driver reuse
 * them: each allocation takes a random free one of L blocks of 32 MiB
 * (--unique-addresses: never reused, each allocation a new address). Frees carry
 * the allocation they release, as the writer records them (schema
 * version 2: allocs, frees, their sites). Near the end one allocation
 * fails with out-of-memory (in other_events). Nothing is left live except
 * what the last steps allocated.
 *
 * Writes in one transaction with prepared statements; journal off.
 * --page-size and --reserve (bytes at the end of each page, as an
 * encrypting VFS keeps) make files of other shapes for the reader's tests
 * (tests/report/rows-same.py). --rank N makes rank N of a job: its meta's
 * rank, host node<N/8>, pid 4242+N, a start N ms after rank 0's (the
 * ranks benchmark). */
#include "trace-schema.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
	long events;
	const char *out;
	int stacks;
	int depth;
	int threads;
	int live;
	uint64_t seed;
	bool unique_addresses;
	int page_size, reserve;
	int rank;
};

struct live {
	long seq;
	uint32_t block;
	uint64_t address;
	uint64_t bytes;
	uint8_t mem;
};

static uint64_t rng_state;

static uint64_t
next_random(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static int
fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "gen-trace: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
	return 1;
}

static int
exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(db, sql);
}

static int
step(sqlite3 *db, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : fail(db, sqlite3_sql(s));
}

static int
write_meta(sqlite3 *db, const struct opts *o, uint64_t end_ns)
{
	char events[32], end[32], rank[16], host[32], pid[16], start[32];
	snprintf(events, sizeof(events), "%ld", o->events);
	snprintf(end, sizeof(end), "%llu", (unsigned long long)end_ns);
	snprintf(rank, sizeof(rank), "%d", o->rank);
	if (o->rank)
		snprintf(host, sizeof(host), "node%d", o->rank / 8);
	else
		snprintf(host, sizeof(host), "bench");
	snprintf(pid, sizeof(pid), "%d", 4242 + o->rank);
	snprintf(start, sizeof(start), "%llu",
		 1700000000000000000ull + (unsigned long long)o->rank * 1000000);
	const char *kv[][2] = {
		{ "format", "memtrace-trace" },
		{ "schema_version", "2" },
		{ "memtrace_version", "0.1.0" },
		{ "pid", pid },
		{ "ppid", "1" },
		{ "host", host },
		{ "rank", rank },
		{ "cmdline", "python train.py" },
		{ "exe", "/nonexistent/python3" },
		{ "start_realtime_ns", start },
		{ "start_monotonic_ns", "1000000000" },
		{ "depth", "64" },
		{ "queue_capacity", "65536" },
		{ "commit_interval_ms", "50" },
		{ "events_written", events },
		{ "producer_wait_ns", "0" },
		{ "end_monotonic_ns", end },
		{ "end", "exit" },
	};
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "INSERT INTO meta(key,value) VALUES(?,?)", -1, &s, NULL))
		return fail(db, "meta");
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		sqlite3_bind_text(s, 1, kv[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, kv[i][1], -1, SQLITE_STATIC);
		if (step(db, s))
			return 1;
	}
	sqlite3_finalize(s);
	return 0;
}

/* Modules, frames and stacks. Frame (level j from the outside, stack s)
 * is shared by all stacks equal to s modulo 2^j, so outer frames are few
 * and inner ones many. Frame ids are level * stacks + s mod 2^j + 1. */
static int
write_stacks(sqlite3 *db, const struct opts *o)
{
	if (exec(db, "INSERT INTO apis(id,name) VALUES(1,'cudaMalloc'),(2,'cudaFree'),"
		     "(3,'cudaMallocHost'),(4,'cudaFreeHost');"
		     "INSERT INTO modules(id,path,base,build_id) VALUES"
		     "(1,'/nonexistent/libtorch_cuda.so',140000000000000,NULL),"
		     "(2,'/nonexistent/python3',4194304,NULL)"))
		return 1;
	sqlite3_stmt *f, *sf;
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO frames(id,kind,ip,module,offset,function) "
			       "VALUES(?,0,?,?,?,?)",
			       -1, &f, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO stack_frames(stack,depth,frame) VALUES(?,?,?)", -1,
			       &sf, NULL))
		return fail(db, "prepare");
	char name[64];
	for (int j = 0; j < o->depth; j++) {
		long distinct = j < 30 && (1l << j) < o->stacks ? 1l << j : o->stacks;
		for (long s = 0; s < distinct; s++) {
			long id = (long)j * o->stacks + s + 1;
			int module = j < o->depth / 2 ? 2 : 1;
			uint64_t offset = 0x10000 + (uint64_t)id * 64;
			snprintf(name, sizeof(name), "fn_level%d_%ld", j, s);
			sqlite3_bind_int64(f, 1, id);
			sqlite3_bind_int64(
				f, 2,
				(int64_t)(offset + (module == 1 ? 140000000000000ull : 4194304)));
			sqlite3_bind_int(f, 3, module);
			sqlite3_bind_int64(f, 4, (int64_t)offset);
			sqlite3_bind_text(f, 5, name, -1, SQLITE_TRANSIENT);
			if (step(db, f))
				return 1;
		}
	}
	for (int s = 0; s < o->stacks; s++) {
		for (int d = 0; d < o->depth; d++) {
			int j = o->depth - 1 - d; /* depth 0 is the innermost */
			long distinct = j < 30 && (1l << j) < o->stacks ? 1l << j : o->stacks;
			sqlite3_bind_int(sf, 1, s + 1);
			sqlite3_bind_int(sf, 2, d);
			sqlite3_bind_int64(sf, 3, (long)j * o->stacks + s % distinct + 1);
			if (step(db, sf))
				return 1;
		}
	}
	sqlite3_finalize(f);
	sqlite3_finalize(sf);
	return 0;
}

static uint64_t
random_bytes(void)
{
	uint64_t r = next_random();
	unsigned shift = 9 + (unsigned)(r % 15); /* 512 B .. 16 MiB */
	return ((uint64_t)1 << shift) + ((r >> 8) & (((uint64_t)1 << shift) - 1));
}

/* Hot sites first: the square of a uniform number skews towards 0. */
static int
random_stack(const struct opts *o)
{
	double u = (double)(next_random() >> 11) / (double)(1ull << 53);
	return 1 + (int)(u * u * o->stacks);
}

/* The statements of the event tables, and the sites already written:
 * an allocation's site is (thread, stack, mem), a free's (thread, mem). */
struct writer {
	sqlite3 *db;
	sqlite3_stmt *site, *alloc, *free, *other, *oom;
	uint32_t *site_ids;
	uint32_t nsites;
};

static uint32_t
site_of(struct writer *w, const struct opts *o, int kind, int thread, int stack, int mem)
{
	size_t t = (size_t)(thread - 1000), pinned = mem != MT_MEM_DEVICE;
	size_t i = kind == MT_EV_ALLOC ? ((t * (size_t)o->stacks + (size_t)stack - 1) * 2 + pinned)
				       : (size_t)o->threads * (size_t)o->stacks * 2 + t * 2 + pinned;
	if (w->site_ids[i])
		return w->site_ids[i];
	uint32_t id = ++w->nsites;
	sqlite3_stmt *s = w->site;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, kind);
	sqlite3_bind_int(s, 3, kind == MT_EV_ALLOC ? stack : 0);
	sqlite3_bind_int(s, 4, kind == MT_EV_ALLOC ? (pinned ? 3 : 1) : (pinned ? 4 : 2));
	sqlite3_bind_int(s, 5, thread);
	sqlite3_bind_int(s, 6, kind == MT_EV_ALLOC ? 0 : -1);
	sqlite3_bind_int(s, 7, mem);
	if (step(w->db, s))
		return 0;
	w->site_ids[i] = id;
	return id;
}

static int
prepare_writer(sqlite3 *db, const struct opts *o, struct writer *w)
{
	*w = (struct writer){ .db = db };
	w->site_ids = calloc((size_t)o->threads * ((size_t)o->stacks + 1) * 2, sizeof(uint32_t));
	if (!w->site_ids)
		return fail(NULL, "sites");
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO sites(id,kind,stack,api,thread,device,mem,stream,status)"
			       " VALUES(?,?,?,?,?,?,?,0,0)",
			       -1, &w->site, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO allocs(seq,time_ns,site,address,bytes)"
				   " VALUES(?,?,?,?,?)", -1, &w->alloc, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO frees(seq,time_ns,site,alloc) VALUES(?,?,?,?)", -1,
			       &w->free, NULL) ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO other_events(seq,time_ns,kind,api,thread,device,stream,"
			       "address,bytes,mem,stack,status) VALUES(?,?,?,?,?,?,0,0,?,?,?,?)",
			       -1, &w->other, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO ooms(seq,device_free,device_total) VALUES(?,?,?)",
			       -1, &w->oom, NULL))
		return fail(db, "prepare");
	return 0;
}

static void
finish_writer(struct writer *w)
{
	sqlite3_finalize(w->site);
	sqlite3_finalize(w->alloc);
	sqlite3_finalize(w->free);
	sqlite3_finalize(w->other);
	sqlite3_finalize(w->oom);
	free(w->site_ids);
}

static int
write_oom(struct writer *w, const struct opts *o, long seq, uint64_t t, int thread)
{
	sqlite3_stmt *s = w->other;
	sqlite3_bind_int64(s, 1, seq);
	sqlite3_bind_int64(s, 2, (int64_t)t);
	sqlite3_bind_int(s, 3, MT_EV_OOM);
	sqlite3_bind_int(s, 4, 1);
	sqlite3_bind_int(s, 5, thread);
	sqlite3_bind_int(s, 6, 0);
	sqlite3_bind_int64(s, 7, 1ll << 34);
	sqlite3_bind_int(s, 8, MT_MEM_DEVICE);
	sqlite3_bind_int(s, 9, random_stack(o));
	sqlite3_bind_int(s, 10, 2);
	sqlite3_bind_int64(w->oom, 1, seq);
	sqlite3_bind_int64(w->oom, 2, 1ll << 30);
	sqlite3_bind_int64(w->oom, 3, 80ll << 30);
	return step(w->db, s) || step(w->db, w->oom);
}

static int
write_alloc(struct writer *w, const struct opts *o, const struct live *l, uint64_t t, int thread)
{
	uint32_t site = site_of(w, o, MT_EV_ALLOC, thread, random_stack(o), l->mem);
	sqlite3_stmt *s = w->alloc;
	sqlite3_bind_int64(s, 1, l->seq);
	sqlite3_bind_int64(s, 2, (int64_t)t);
	sqlite3_bind_int64(s, 3, site);
	sqlite3_bind_int64(s, 4, (int64_t)l->address);
	sqlite3_bind_int64(s, 5, (int64_t)l->bytes);
	return site ? step(w->db, s) : 1;
}

static int
write_free(struct writer *w, const struct opts *o, const struct live *l, long seq, uint64_t t,
	   int thread)
{
	uint32_t site = site_of(w, o, MT_EV_FREE, thread, 0, l->mem);
	sqlite3_stmt *s = w->free;
	sqlite3_bind_int64(s, 1, seq);
	sqlite3_bind_int64(s, 2, (int64_t)t);
	sqlite3_bind_int64(s, 3, site);
	sqlite3_bind_int64(s, 4, l->seq);
	return site ? step(w->db, s) : 1;
}

static int
write_events(sqlite3 *db, const struct opts *o, uint64_t *end_ns)
{
	struct writer w;
	if (prepare_writer(db, o, &w))
		return 1;
	struct live *live = calloc((size_t)o->live + 1, sizeof(*live));
	uint32_t *free_blocks = calloc((size_t)o->live, sizeof(*free_blocks));
	if (!live || !free_blocks)
		return fail(NULL, "live set");
	size_t nlive = 0, nfree = (size_t)o->live;
	for (size_t i = 0; i < nfree; i++)
		free_blocks[i] = (uint32_t)i;
	uint64_t t = 1000, next_address = 0x7f0000000000ull;
	long oom_at = o->events - o->events / 100 - 1;
	int rc = 0;
	for (long seq = 0; seq < o->events && !rc; seq++) {
		t += 100 + next_random() % 2000;
		int thread = 1000 + (int)(next_random() % (uint64_t)o->threads);
		bool alloc = nlive < (size_t)o->live / 2 ||
			     (nlive < (size_t)o->live && next_random() % 2);
		if (seq == oom_at) {
			rc = write_oom(&w, o, seq, t, thread);
		} else if (alloc) {
			struct live *l = &live[nlive++];
			l->seq = seq;
			l->bytes = random_bytes();
			l->mem = next_random() % 64 ? MT_MEM_DEVICE : MT_MEM_HOST_PINNED;
			if (o->unique_addresses) {
				l->address = next_address;
				next_address += (l->bytes + 511) & ~511ull;
			} else {
				size_t i = next_random() % nfree;
				l->block = free_blocks[i];
				free_blocks[i] = free_blocks[--nfree];
				l->address = next_address + ((uint64_t)l->block << 25);
			}
			rc = write_alloc(&w, o, l, t, thread);
		} else {
			size_t i = next_random() % nlive;
			struct live l = live[i];
			live[i] = live[--nlive];
			if (!o->unique_addresses)
				free_blocks[nfree++] = l.block;
			rc = write_free(&w, o, &l, seq, t, thread);
		}
	}
	free(live);
	free(free_blocks);
	finish_writer(&w);
	*end_ns = t + 1000;
	return rc;
}

static int
write_threads(sqlite3 *db, const struct opts *o)
{
	char sql[128];
	for (int i = 0; i < o->threads; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO threads(id,name) VALUES(%d,'%s%d')",
			 1000 + i, i ? "worker" : "python", i);
		if (exec(db, sql))
			return 1;
	}
	return exec(db, "INSERT INTO devices(id,total_bytes,free_bytes_at_first_use,first_seq)"
			" VALUES(0,85899345920,84825604096,0)");
}

static int
parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ 1000000, NULL, 2000, 20, 8, 4096, 1, false, 4096, 0, 0 };
	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(k, "--unique-addresses")) {
			o->unique_addresses = true;
			i--;
		} else if (!strcmp(k, "--events"))
			o->events = atol(v);
		else if (!strcmp(k, "--out"))
			o->out = v;
		else if (!strcmp(k, "--stacks"))
			o->stacks = atoi(v);
		else if (!strcmp(k, "--depth"))
			o->depth = atoi(v);
		else if (!strcmp(k, "--threads"))
			o->threads = atoi(v);
		else if (!strcmp(k, "--live"))
			o->live = atoi(v);
		else if (!strcmp(k, "--seed"))
			o->seed = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--page-size"))
			o->page_size = atoi(v);
		else if (!strcmp(k, "--reserve"))
			o->reserve = atoi(v);
		else if (!strcmp(k, "--rank"))
			o->rank = atoi(v);
		else
			return -1;
	}
	return o->out && *o->out && o->events >= 100 && o->stacks > 0 && o->depth > 0 &&
			       o->depth <= 256 && o->threads > 0 && o->live >= 2 && o->page_size >= 512 &&
			       o->page_size <= 65536 && !(o->page_size & (o->page_size - 1)) &&
			       o->reserve >= 0 && o->reserve <= 255 && o->rank >= 0 ?
		       0 :
		       -1;
}

int
main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: %s --events N --out FILE [--stacks S] [--depth D] "
			"[--threads T] [--live L] [--seed X] [--unique-addresses] "
			"[--page-size P] [--reserve R] [--rank N]\n",
			argv[0]);
		return 64;
	}
	rng_state = o.seed * 0x9e3779b97f4a7c15ull + 1;
	unlink(o.out);
	sqlite3 *db;
	if (sqlite3_open(o.out, &db) != SQLITE_OK)
		return fail(db, o.out);
	char schema[sizeof(MT_SCHEMA_SQL) + 64], page_size[64];
	snprintf(schema, sizeof(schema), "%sPRAGMA user_version=%d;", MT_SCHEMA_SQL,
		 MT_SCHEMA_VERSION);
	snprintf(page_size, sizeof(page_size), "PRAGMA page_size=%d", o.page_size);
	if (exec(db, page_size))
		return 1;
	if (o.reserve) {
#ifdef SQLITE_FCNTL_RESERVE_BYTES
		int reserve = o.reserve;
		if (sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve) !=
		    SQLITE_OK)
			return fail(db, "--reserve");
#else
		return fail(db, "--reserve needs SQLite 3.34");
#endif
	}
	uint64_t end_ns = 0;
	if (exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN") ||
	    exec(db, schema) || write_stacks(db, &o) || write_threads(db, &o) ||
	    write_events(db, &o, &end_ns) || write_meta(db, &o, end_ns) || exec(db, "COMMIT"))
		return 1;
	sqlite3_close(db);
	return 0;
}
