#include <check.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "writer.h"
#include "queue.h"
#include "trace-schema.h"

enum { THREADS = 8, PAIRS = 5000 };

static struct mt_queue *queue;
static struct mt_stack_table *stacks;

/* Frames the writer can symbolize: return addresses inside this binary. */
static __attribute__((noinline)) void frame_a(void)
{
	__asm__ volatile("");
}

static __attribute__((noinline)) void frame_b(void)
{
	__asm__ volatile("");
}

static void *produce(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	uintptr_t ips[2] = { (uintptr_t)frame_a + 1, (uintptr_t)frame_b + 1 };
	uint32_t stack = mt_stack_intern(stacks, ips, 1 + me % 2);
	for (uint64_t i = 0; i < PAIRS; i++) {
		struct mt_event ev = { 0 };
		ev.time_ns = mt_now_ns();
		ev.tid = 1000 + me;
		ev.api = 1;
		ev.kind = MT_EV_ALLOC;
		ev.mem = MT_MEM_DEVICE;
		ev.address = (uint64_t)(me + 1) << 32 | (i + 1) * 512;
		ev.bytes = 512 * (1 + i % 4);
		ev.stack = stack;
		mt_queue_push(queue, mt_queue_ticket(queue), &ev);
		ev.kind = MT_EV_FREE;
		ev.bytes = 0;
		ev.mem = 0;
		ev.stack = 0;
		mt_queue_push(queue, mt_queue_ticket(queue), &ev);
	}
	return NULL;
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static void make_path(char *path, size_t n, const char *name)
{
	snprintf(path, n, "%s/memtrace-test-writer-%d-%s.db", P_tmpdir, (int)getpid(), name);
	unlink(path);
}

static void remove_db(const char *path)
{
	char side[4200];
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

/* Eight producers on a small queue: every event lands in the file once, in
 * seq order with no gaps, frees learn the size they release, stacks and
 * frames are written once, and the meta rows say how it ended. */
START_TEST(writes_every_event_once)
{
	char path[4096];
	make_path(path, sizeof(path), "many");
	queue = mt_queue_new(8, -1);
	stacks = mt_stack_table_new(10, 1024);
	struct mt_writer_options opt = { .path = path, .queue = queue, .stacks = stacks,
					 .depth = 8, .interval_ms = 10, .start_ns = mt_now_ns() };
	struct mt_writer *w = mt_writer_start(&opt);
	ck_assert_ptr_nonnull(w);
	pthread_t th[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, produce, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	uint64_t total = (uint64_t)THREADS * PAIRS * 2;
	ck_assert(mt_writer_sync(w, total - 1, 10000));
	ck_assert_uint_ge(mt_writer_committed(w), total);
	mt_writer_stop(w, true, 3);
	mt_writer_free(w);

	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM events"), total);
	ck_assert_int_eq(query_int(db, "SELECT max(seq) - min(seq) + 1 FROM events"), total);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM events WHERE kind=2 AND bytes IS NULL"),
			 0);
	/* each thread allocates 512 * (1+2+3+4) * PAIRS/4 bytes and frees them all */
	int64_t per_thread = 512 * 10 * (PAIRS / 4);
	ck_assert_int_eq(query_int(db, "SELECT sum(bytes) FROM events WHERE kind=1"),
			 THREADS * per_thread);
	ck_assert_int_eq(query_int(db, "SELECT sum(bytes) FROM events WHERE kind=2"),
			 THREADS * per_thread);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM threads"), THREADS);
	ck_assert_int_eq(query_int(db, "SELECT count(DISTINCT stack) FROM stack_frames"), 2);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM stack_frames"), 1 + 2);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM frames"), 2);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM modules"), 1);
	ck_assert_int_eq(query_int(db, "SELECT value = 'exit' FROM meta WHERE key='end'"), 1);
	ck_assert_int_eq(query_int(db, "SELECT value FROM meta WHERE key='exit_status'"), 3);
	ck_assert_int_eq(query_int(db, "SELECT value FROM meta WHERE key='events_written'"),
			 total);
	ck_assert_int_eq(query_int(db, "PRAGMA user_version"), MT_SCHEMA_VERSION);
	/* schema 2: every pair in allocs and frees, a free naming its
	 * allocation; one alloc and one free site per thread */
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM allocs"), total / 2);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM frees f JOIN allocs a ON "
				       "a.seq = f.alloc AND a.seq < f.seq"),
			 total / 2);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM other_events"), 0);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM sites"), 2 * THREADS);
	sqlite3_close(db);
	remove_db(path);
	mt_stack_table_free(stacks);
	mt_queue_free(queue);
}
END_TEST

static void push(struct mt_queue *q, unsigned kind, uint64_t addr, uint64_t bytes)
{
	struct mt_event ev = { 0 };
	ev.time_ns = mt_now_ns();
	ev.kind = (uint8_t)kind;
	ev.api = 1;
	ev.address = addr;
	ev.bytes = bytes;
	ev.mem = kind == MT_EV_ALLOC ? MT_MEM_HOST_PINNED : 0;
	ev.device_total = kind == MT_EV_OOM ? 4096 : 0;
	ev.device_free = kind == MT_EV_OOM ? 1024 : 0;
	mt_queue_push(q, mt_queue_ticket(q), &ev);
}

/* A free that failed gives its allocation back; an OOM gets its row. */
START_TEST(free_error_and_oom_rows)
{
	char path[4096];
	make_path(path, sizeof(path), "kinds");
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_stack_table *t = mt_stack_table_new(4, 16);
	struct mt_writer_options opt = { .path = path, .queue = q, .stacks = t, .depth = 8,
					 .interval_ms = 1000, .start_ns = mt_now_ns() };
	struct mt_writer *w = mt_writer_start(&opt);
	ck_assert_ptr_nonnull(w);
	push(q, MT_EV_ALLOC, 0x1000, 100);
	push(q, MT_EV_FREE, 0x1000, 0);
	push(q, MT_EV_FREE_ERROR, 0x1000, 0);
	push(q, MT_EV_FREE, 0x1000, 0); /* the retry frees it for real */
	push(q, MT_EV_FREE, 0x2000, 0); /* unknown address */
	push(q, MT_EV_OOM, 0, 5000);
	/* an OOM is synced at once, not at the (long) interval */
	ck_assert(mt_writer_sync(w, 5, 2000));
	mt_writer_stop(w, false, -1);
	mt_writer_free(w);

	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM events WHERE address=4096 AND "
				       "bytes=100 AND mem=3"),
			 4);
	ck_assert_int_eq(query_int(db, "SELECT bytes IS NULL FROM events WHERE seq=4"), 1);
	/* the free and its retry name the allocation; the failed free, the
	 * free of an unknown address and the OOM keep every column */
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM frees WHERE alloc=0"), 2);
	ck_assert_int_eq(query_int(db, "SELECT group_concat(seq) = '2,4,5' FROM other_events"), 1);
	ck_assert_int_eq(query_int(db, "SELECT device_free FROM ooms WHERE seq=5"), 1024);
	ck_assert_int_eq(query_int(db, "SELECT device_total FROM ooms WHERE seq=5"), 4096);
	ck_assert_int_eq(query_int(db, "SELECT value = 'running' FROM meta WHERE key='end'"), 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM meta WHERE key='exit_status'"), 0);
	sqlite3_close(db);
	remove_db(path);
	mt_stack_table_free(t);
	mt_queue_free(q);
}
END_TEST

static bool exists(const char *path, const char *suffix)
{
	char name[4200];
	snprintf(name, sizeof(name), "%s%s", path, suffix);
	return access(name, F_OK) == 0;
}

/* _exit's path: mt_writer_commit_now (exec, abort) commits what was
 * pushed and the writer goes on; mt_writer_finish drains what is left,
 * gives up a ticket never pushed, writes the end with the status and
 * closes the trace as one file in rollback-journal mode, well before the
 * (long) interval; mt_writer_stop after it does nothing more. */
START_TEST(commit_now_then_finish)
{
	char path[4096];
	make_path(path, sizeof(path), "finish");
	struct mt_queue *q = mt_queue_new(8, -1);
	struct mt_stack_table *t = mt_stack_table_new(4, 16);
	struct mt_writer_options opt = { .path = path, .queue = q, .stacks = t, .depth = 8,
					 .interval_ms = 10000, .start_ns = mt_now_ns() };
	struct mt_writer *w = mt_writer_start(&opt);
	ck_assert_ptr_nonnull(w);
	for (uint64_t i = 0; i < 10; i++)
		push(q, MT_EV_ALLOC, 0x1000 * (i + 1), 100);
	ck_assert(mt_writer_commit_now(w, 2000));
	ck_assert_uint_ge(mt_writer_committed(w), 10);
	for (uint64_t i = 0; i < 10; i++)
		push(q, MT_EV_FREE, 0x1000 * (i + 1), 0);
	mt_queue_ticket(q); /* a thread that never comes back */
	uint64_t start = mt_now_ns();
	ck_assert(mt_writer_finish(w, 7, 2000));
	ck_assert_uint_lt(mt_now_ns() - start, 1500ull * 1000 * 1000);
	mt_writer_stop(w, true, 3);
	mt_writer_free(w);

	ck_assert(!exists(path, "-wal"));
	ck_assert(!exists(path, "-shm"));
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM allocs"), 10);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM frees"), 10);
	ck_assert_int_eq(query_int(db, "SELECT value = 'exit' FROM meta WHERE key='end'"), 1);
	ck_assert_int_eq(query_int(db, "SELECT value FROM meta WHERE key='exit_status'"), 7);
	sqlite3_stmt *s;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(s, 0), "delete");
	sqlite3_finalize(s);
	sqlite3_close(db);
	ck_assert(!exists(path, "-wal"));
	remove_db(path);
	mt_stack_table_free(t);
	mt_queue_free(q);
}
END_TEST

/* An event pushed with a ticket of its own (taken earlier, as record.c
 * takes an allocation's before its call). */
static void push_at(struct mt_queue *q, uint64_t ticket, unsigned kind, uint64_t addr,
		    uint64_t bytes, uint32_t tid)
{
	struct mt_event ev = { 0 };
	ev.tid = tid;
	ev.time_ns = mt_now_ns();
	ev.kind = (uint8_t)kind;
	ev.api = 1;
	ev.address = addr;
	ev.bytes = bytes;
	ev.mem = kind == MT_EV_ALLOC ? MT_MEM_DEVICE : 0;
	mt_queue_push(q, ticket, &ev);
}

/* Events pushed out of their tickets' order are written in it; an
 * allocation at an address whose free is still to come in that order
 * (the device gave the address out again before the free's call
 * returned) gets it after that free, not over the live one. */
START_TEST(written_in_ticket_order)
{
	char path[4096];
	make_path(path, sizeof(path), "order");
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_stack_table *t = mt_stack_table_new(4, 16);
	struct mt_writer_options opt = { .path = path, .queue = q, .stacks = t, .depth = 8,
					 .interval_ms = 1000, .start_ns = mt_now_ns() };
	uint64_t k[5];
	struct mt_writer *w = mt_writer_start(&opt);
	ck_assert_ptr_nonnull(w);
	for (unsigned i = 0; i < 5; i++)
		k[i] = mt_queue_ticket(q);
	/* the device: A at 0x1000 (thread 1), B at 0x2000 (thread 2), free A
	 * (thread 1), C at 0x1000 (thread 3; its ticket before the free's:
	 * its call began first), free B (thread 2) */
	push_at(q, k[4], MT_EV_FREE, 0x2000, 0, 2);
	push_at(q, k[1], MT_EV_ALLOC, 0x2000, 200, 2);
	push_at(q, k[3], MT_EV_FREE, 0x1000, 0, 1);
	push_at(q, k[2], MT_EV_ALLOC, 0x1000, 300, 3);
	ck_assert(!mt_writer_sync(w, k[0], 50)); /* k[0] is not here yet */
	push_at(q, k[0], MT_EV_ALLOC, 0x1000, 100, 1);
	/* the free written early is not waited for again (the writer gives
	 * up on a missing ticket only after a second) */
	ck_assert(mt_writer_sync(w, k[4], 500));
	mt_writer_stop(w, false, -1);
	mt_writer_free(w);

	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(query_int(db, "SELECT group_concat(kind || ':' || bytes, ' ') = "
				       "'1:100 1:200 2:100 1:300 2:200' FROM "
				       "(SELECT kind, bytes FROM events ORDER BY seq)"),
			 1);
	/* C is live at the end, at its address */
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM frees f JOIN allocs a "
				       "ON a.seq = f.alloc WHERE a.bytes = 300"),
			 0);
	ck_assert_int_eq(query_int(db, "SELECT value FROM meta WHERE key='order_releases_early'"),
			 1);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM meta WHERE key LIKE 'order_%' AND "
				       "key != 'order_releases_early'"),
			 0);
	sqlite3_close(db);
	remove_db(path);
	mt_stack_table_free(t);
	mt_queue_free(q);
}
END_TEST

START_TEST(existing_file_is_refused)
{
	char path[4096];
	make_path(path, sizeof(path), "taken");
	FILE *f = fopen(path, "w");
	fputs("not ours", f);
	fclose(f);
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_stack_table *t = mt_stack_table_new(4, 16);
	struct mt_writer_options opt = { .path = path, .queue = q, .stacks = t, .depth = 8,
					 .interval_ms = 10, .start_ns = mt_now_ns() };
	ck_assert_ptr_null(mt_writer_start(&opt));
	char buf[16] = "";
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "not ours");
	unlink(path);
	mt_stack_table_free(t);
	mt_queue_free(q);
}
END_TEST

Suite *writer_suite(void);
Suite *writer_suite(void)
{
	Suite *s = suite_create("writer");
	TCase *tc = tcase_create("sqlite");
	tcase_add_test(tc, writes_every_event_once);
	tcase_add_test(tc, free_error_and_oom_rows);
	tcase_add_test(tc, written_in_ticket_order);
	tcase_add_test(tc, existing_file_is_refused);
	tcase_add_test(tc, commit_now_then_finish);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
