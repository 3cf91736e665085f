#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

START_TEST(fifo_single_thread)
{
	struct mt_queue *q = mt_queue_new(3);
	struct mt_event ev = { 0 }, out;
	ck_assert(!mt_queue_pop(q, &out));
	for (unsigned i = 0; i < 8; i++) {
		ev.bytes = i;
		mt_queue_push(q, &ev);
		ck_assert_uint_eq(mt_queue_pushed(q), i + 1);
	}
	for (unsigned i = 0; i < 8; i++) {
		ck_assert(mt_queue_pop(q, &out));
		ck_assert_uint_eq(out.bytes, i);
	}
	ck_assert(!mt_queue_pop(q, &out));
	ck_assert_uint_eq(mt_queue_pushed(q), 8);
	ck_assert_uint_eq(mt_queue_popped(q), 8);
	ck_assert_uint_eq(mt_queue_wait_ns(q), 0);
	mt_queue_free(q);
}
END_TEST

enum { PRODUCERS = 8, PER_PRODUCER = 50000 };
static struct mt_queue *mpq;
static atomic_int pokes;

static void *produce(void *arg)
{
	struct mt_event ev = { 0 };
	ev.tid = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < PER_PRODUCER; i++) {
		ev.bytes = i;
		mt_queue_push(mpq, &ev);
	}
	return NULL;
}

static void count_poke(void *data)
{
	atomic_fetch_add(&pokes, 1);
}

/* A tiny queue with a slow consumer: producers must wait, never drop;
 * every event arrives once, each producer's events in its own order. */
START_TEST(lossless_under_pressure)
{
	mpq = mt_queue_new(4);
	mt_queue_set_pressure_cb(mpq, count_poke, NULL);
	pthread_t th[PRODUCERS];
	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_create(&th[i], NULL, produce, (void *)(uintptr_t)i);
	uint64_t next[PRODUCERS] = { 0 };
	uint64_t total = 0;
	struct mt_event ev;
	while (total < (uint64_t)PRODUCERS * PER_PRODUCER) {
		if (!mt_queue_pop(mpq, &ev)) {
			if (total < 1000) {
				struct timespec ts = { 0, 100000 };
				nanosleep(&ts, NULL);
			}
			continue;
		}
		ck_assert_uint_lt(ev.tid, PRODUCERS);
		ck_assert_uint_eq(ev.bytes, next[ev.tid]);
		next[ev.tid]++;
		total++;
	}
	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_join(th[i], NULL);
	ck_assert(!mt_queue_pop(mpq, &ev));
	ck_assert_uint_eq(mt_queue_pushed(mpq), total);
	ck_assert_uint_gt(mt_queue_wait_ns(mpq), 0);
	ck_assert_int_gt(atomic_load(&pokes), 0);
	mt_queue_free(mpq);
}
END_TEST

static void *push_one(void *arg)
{
	struct mt_event ev = { 0 };
	mt_queue_push(arg, &ev);
	return NULL;
}

/* After close, a producer stuck on a full queue returns. */
START_TEST(close_releases_waiters)
{
	struct mt_queue *q = mt_queue_new(1);
	struct mt_event ev = { 0 };
	mt_queue_push(q, &ev);
	mt_queue_push(q, &ev);
	pthread_t th;
	pthread_create(&th, NULL, push_one, q);
	struct timespec ts = { 0, 20000000 };
	nanosleep(&ts, NULL);
	mt_queue_close(q);
	pthread_join(th, NULL);
	ck_assert_uint_eq(mt_queue_pushed(q), 3);
	mt_queue_free(q);
}
END_TEST

Suite *queue_suite(void);
Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("mpsc");
	tcase_add_test(tc, fifo_single_thread);
	tcase_add_test(tc, lossless_under_pressure);
	tcase_add_test(tc, close_releases_waiters);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
