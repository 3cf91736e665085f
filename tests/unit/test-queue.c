#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "writer.h"
#include "queue.h"
#include "trace-schema.h"

START_TEST(fifo_single_thread)
{
	struct mt_queue *q = mt_queue_new(3, -1);
	struct mt_event ev = { 0 }, out;
	ck_assert(!mt_queue_pop(q, &out));
	for (unsigned i = 0; i < 8; i++) {
		ev.bytes = i;
		mt_queue_push(q, mt_queue_ticket(q), &ev);
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
		mt_queue_push(mpq, mt_queue_ticket(mpq), &ev);
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
	mpq = mt_queue_new(4, -1);
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
	mt_queue_push(arg, mt_queue_ticket(arg), &ev);
	return NULL;
}

/* After close, a producer stuck on a full queue returns. */
START_TEST(close_releases_waiters)
{
	struct mt_queue *q = mt_queue_new(1, -1);
	struct mt_event ev = { 0 };
	mt_queue_push(q, mt_queue_ticket(q), &ev);
	mt_queue_push(q, mt_queue_ticket(q), &ev);
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

/* The event carries its ticket in handle, to be known when it comes out. */
static void push_by(struct mt_queue *q, uint64_t ticket, unsigned kind, uint64_t address,
		    uint32_t tid)
{
	struct mt_event ev = { .handle = ticket, .kind = (uint8_t)kind, .address = address,
			       .tid = tid };
	mt_queue_push(q, ticket, &ev);
}

static void push_ticket(struct mt_queue *q, uint64_t ticket, unsigned kind, uint64_t address)
{
	push_by(q, ticket, kind, address, 0);
}

static uint64_t pop_order(struct mt_queue *q)
{
	struct mt_event ev;
	ck_assert(mt_queue_pop(q, &ev));
	return ev.handle;
}

/* Cells filled out of their tickets' order come out in it. */
START_TEST(pops_in_ticket_order)
{
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_event ev;
	uint64_t t[4];
	for (unsigned i = 0; i < 4; i++)
		t[i] = mt_queue_ticket(q);
	push_ticket(q, t[2], MT_EV_ALLOC, 0);
	push_ticket(q, t[1], MT_EV_ALLOC, 0);
	ck_assert(!mt_queue_pop(q, &ev)); /* t[0] is inside its call */
	push_ticket(q, t[0], MT_EV_ALLOC, 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(pop_order(q), t[i]);
	ck_assert(!mt_queue_pop(q, &ev));
	push_ticket(q, t[3], MT_EV_ALLOC, 0);
	ck_assert_uint_eq(pop_order(q), t[3]);
	ck_assert(!mt_queue_abandon(q)); /* nothing due */
	mt_queue_free(q);
}
END_TEST

/* A cell given up on: its event comes later, in a new cell, late. A
 * filled cell is never given up. */
START_TEST(abandoned_cell_comes_late)
{
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_event ev;
	uint64_t t0 = mt_queue_ticket(q), t1 = mt_queue_ticket(q);
	push_ticket(q, t1, MT_EV_ALLOC, 0);
	ck_assert(mt_queue_abandon(q));
	ck_assert(!mt_queue_abandon(q)); /* t1 is filled */
	ck_assert_uint_eq(pop_order(q), t1);
	push_ticket(q, t0, MT_EV_ALLOC, 0);
	ck_assert_uint_eq(pop_order(q), t0);
	ck_assert(!mt_queue_pop(q, &ev));
	ck_assert_uint_eq(mt_queue_late(q), 1);
	ck_assert_uint_eq(mt_queue_abandoned(q), 1);
	ck_assert_uint_eq(mt_queue_tickets(q), 3);
	mt_queue_free(q);
}
END_TEST

/* A free taken ahead of its turn is skipped when its turn comes. */
START_TEST(taken_ahead_is_skipped)
{
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_event ev;
	uint64_t t0 = mt_queue_ticket(q), t1 = mt_queue_ticket(q), t2 = mt_queue_ticket(q);
	push_ticket(q, t1, MT_EV_FREE, 0x1000);
	push_ticket(q, t2, MT_EV_FREE, 0x2000);
	const struct mt_event at3 = { .kind = MT_EV_ALLOC, .address = 0x3000, .tid = 1 };
	const struct mt_event at1 = { .kind = MT_EV_ALLOC, .address = 0x1000, .tid = 1 };
	ck_assert(!mt_queue_take_ahead(q, &at3, MT_EV_FREE, true, &ev));
	ck_assert(!mt_queue_take_ahead(q, &at1, MT_EV_ALLOC, true, &ev));
	ck_assert(mt_queue_take_ahead(q, &at1, MT_EV_FREE, true, &ev));
	ck_assert_uint_eq(ev.handle, t1);
	push_ticket(q, t0, MT_EV_ALLOC, 0x1000);
	ck_assert_uint_eq(pop_order(q), t0);
	ck_assert_uint_eq(pop_order(q), t2);
	ck_assert(!mt_queue_pop(q, &ev));
	ck_assert_uint_eq(mt_queue_popped(q), 3);
	mt_queue_free(q);
}
END_TEST

/* The release taken ahead for an allocation at an address is never one
 * by a thread that held the address after it: the allocation's own thread,
 * or one whose allocation there comes between (F17: thread 2 got the
 * address at t1 and gave it back at t2; thread 3's release at t3 is the
 * one that went before thread 1's allocation). */
START_TEST(taken_ahead_skips_later_holders)
{
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_event ev;
	uint64_t t0 = mt_queue_ticket(q), t1 = mt_queue_ticket(q), t2 = mt_queue_ticket(q),
		 t3 = mt_queue_ticket(q), t4 = mt_queue_ticket(q);
	push_by(q, t1, MT_EV_ALLOC, 0x1000, 2);
	push_by(q, t2, MT_EV_FREE, 0x1000, 2);
	push_by(q, t3, MT_EV_FREE, 0x1000, 3);
	push_by(q, t4, MT_EV_FREE, 0x1000, 1);
	push_by(q, t0, MT_EV_ALLOC, 0x1000, 1);
	ck_assert_uint_eq(pop_order(q), t0);
	const struct mt_event of = { .kind = MT_EV_ALLOC, .address = 0x1000, .tid = 1 };
	ck_assert(mt_queue_take_ahead(q, &of, MT_EV_FREE, true, &ev));
	ck_assert_uint_eq(ev.handle, t3);
	/* no other: thread 2's follows its own allocation, thread 1's is its own */
	ck_assert(!mt_queue_take_ahead(q, &of, MT_EV_FREE, true, &ev));
	/* not strict: the first there, whoever made it */
	ck_assert(mt_queue_take_ahead(q, &of, MT_EV_FREE, false, &ev));
	ck_assert_uint_eq(ev.handle, t2);
	ck_assert_uint_eq(pop_order(q), t1);
	ck_assert_uint_eq(pop_order(q), t4);
	ck_assert(!mt_queue_pop(q, &ev));
	mt_queue_free(q);
}
END_TEST

/* A thread's own release from before its allocation (by its clock),
 * pushed late (its cell was given up), is still the one taken. */
START_TEST(taken_ahead_takes_own_late_release)
{
	struct mt_queue *q = mt_queue_new(4, -1);
	struct mt_event ev;
	uint64_t t0 = mt_queue_ticket(q), t1 = mt_queue_ticket(q);
	struct mt_event freed = { .handle = t1, .kind = MT_EV_FREE, .address = 0x1000, .tid = 1,
				  .time_ns = 5 };
	mt_queue_push(q, t1, &freed);
	push_by(q, t0, MT_EV_ALLOC, 0x1000, 1);
	ck_assert_uint_eq(pop_order(q), t0);
	const struct mt_event of = { .kind = MT_EV_ALLOC, .address = 0x1000, .tid = 1,
				     .time_ns = 10 };
	ck_assert(mt_queue_take_ahead(q, &of, MT_EV_FREE, true, &ev));
	ck_assert_uint_eq(ev.handle, t1);
	mt_queue_free(q);
}
END_TEST

/* The hot path the other suites run is the plain claim: the kernels CI
 * and users run have membarrier (Linux 4.14). The claims themselves race
 * in test-queue-race.c. */
START_TEST(claims_are_plain)
{
	struct mt_queue *q = mt_queue_new(1, -1);
	ck_assert(q->plain_claim);
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
	tcase_add_test(tc, pops_in_ticket_order);
	tcase_add_test(tc, abandoned_cell_comes_late);
	tcase_add_test(tc, taken_ahead_is_skipped);
	tcase_add_test(tc, taken_ahead_skips_later_holders);
	tcase_add_test(tc, taken_ahead_takes_own_late_release);
	tcase_add_test(tc, claims_are_plain);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
