/* The claims of the queue (interpose/core/queue.c) against a consumer
 * that gives cells up, with the windows a preempted thread would open
 * made wide: queue.c is built here with MT_QUEUE_PAUSE, so that it calls
 * mt_queue_pause (below) between the steps of a claim and of a give-up,
 * where a thread may stop for a while. Both claims: plain (membarrier)
 * and compare-and-swap. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "queue.h"
#include "trace-schema.h"

void mt_queue_pause(int where);

static _Thread_local uint64_t pause_rng;

/* Producers (0-3) stop now and then; the consumer (4, 5) often. */
void mt_queue_pause(int where)
{
	if (!pause_rng)
		pause_rng = (uintptr_t)&pause_rng | 1;
	pause_rng ^= pause_rng << 13, pause_rng ^= pause_rng >> 7, pause_rng ^= pause_rng << 17;
	unsigned r = pause_rng % (where >= 4 ? 8 : 32);
	if (r == 0) {
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	} else if (r == 1) {
		sched_yield();
	}
}

/* Producers that stop between their ticket and their push (a thread
 * inside its call, or preempted there) and a consumer that gives up
 * every cell it waits for at once: every event arrives once, in its cell
 * or late, and every cell given up has its event come late. With plain
 * claims (membarrier) and with compare-and-swap claims. */
enum { RACERS = 4, PER_RACER = 3000 };
static struct mt_queue *rq;

static void *race_push(void *arg)
{
	struct mt_event ev = { 0 };
	uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	ev.tid = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < PER_RACER; i++) {
		uint64_t ticket = mt_queue_ticket(rq);
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		unsigned pause = rng % 64;
		if (pause == 0) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		} else if (pause < 4) {
			sched_yield();
		} else {
			for (volatile unsigned k = 0; k < pause * 8; k++)
				;
		}
		ev.bytes = i;
		mt_queue_push(rq, ticket, &ev);
	}
	return NULL;
}

static void abandon_race(bool plain)
{
	rq = mt_queue_new(4, -1);
	if (!plain)
		rq->plain_claim = false;
	pthread_t th[RACERS];
	for (unsigned i = 0; i < RACERS; i++)
		pthread_create(&th[i], NULL, race_push, (void *)(uintptr_t)i);
	static bool seen[RACERS][PER_RACER];
	memset(seen, 0, sizeof(seen));
	uint64_t total = 0;
	struct mt_event ev;
	while (total < (uint64_t)RACERS * PER_RACER) {
		if (mt_queue_pop(rq, &ev)) {
			ck_assert_uint_lt(ev.tid, RACERS);
			ck_assert_uint_lt(ev.bytes, PER_RACER);
			ck_assert(!seen[ev.tid][ev.bytes]);
			seen[ev.tid][ev.bytes] = true;
			total++;
		} else {
			mt_queue_abandon(rq);
		}
	}
	for (unsigned i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	/* the cells given up at the very end have no event left to come */
	while (mt_queue_abandon(rq))
		;
	ck_assert(!mt_queue_pop(rq, &ev));
	ck_assert_uint_gt(mt_queue_abandoned(rq), 0);
	ck_assert_uint_eq(mt_queue_late(rq), mt_queue_abandoned(rq));
	mt_queue_free(rq);
}

START_TEST(abandon_races_plain_claims)
{
	struct mt_queue *q = mt_queue_new(1, -1);
	/* the kernels CI and users run have it (Linux 4.14) */
	ck_assert(q->plain_claim);
	mt_queue_free(q);
	abandon_race(true);
}
END_TEST

START_TEST(abandon_races_cas_claims)
{
	abandon_race(false);
}
END_TEST
int main(void)
{
	Suite *s = suite_create("queue-race");
	TCase *tc = tcase_create("claims");
	tcase_add_test(tc, abandon_races_plain_claims);
	tcase_add_test(tc, abandon_races_cas_claims);
	tcase_set_timeout(tc, 240);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
