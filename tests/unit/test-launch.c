/* The launch registry (interpose/carry/python-launch.c) without Python:
 * python.c's calls are stubbed here, a thread's "Python frame" is a
 * struct this test allocates and frees. What it holds: a thread with no
 * Python frame (no Python state, or a thread state
 * with no frame: torch's autograd device threads) borrows the frames of the one thread inside the
 * framework, none with zero or two inside; nested entries keep the
 * outermost; and a launcher that has left may free its frames at once,
 * while readers race it (the reader pauses between finding the frame and
 * reading it, where a preempted thread would), which ASan or TSan would
 * report if a reader could still read them, and the magic check catches
 * in a plain build. */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "python.h"

#define MAGIC 0x50594652u /* a frame alive */

struct fake_frame {
	_Atomic unsigned magic;
	unsigned line;
};

static _Thread_local struct fake_frame *this_frame; /* the "Python" frame */
static _Thread_local unsigned pause_rng;
static _Atomic unsigned long borrowed, torn;

/* ---- python.c, stubbed ---- */

uintptr_t mt_python_this_frame(void)
{
	return (uintptr_t)this_frame;
}

unsigned mt_python_splice_borrowed(uintptr_t *ips, unsigned n, unsigned max, uintptr_t marker,
				   uintptr_t frame)
{
	/* where a reader may be preempted: the frame found, not yet read */
	pause_rng = pause_rng * 1103515245u + 12345u;
	if (pause_rng >> 28 == 0) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	} else if (pause_rng >> 28 == 1) {
		sched_yield();
	}
	const struct fake_frame *f = (const struct fake_frame *)frame;
	if (atomic_load_explicit(&f->magic, memory_order_relaxed) != MAGIC)
		atomic_fetch_add(&torn, 1);
	if (n + 2 > max || !MT_IS_LAUNCH_FRAME(marker))
		return n;
	ips[n++] = marker;
	ips[n++] = f->line;
	return n;
}

/* ---- the cases ---- */

static unsigned splice_now(uintptr_t *ips)
{
	ips[0] = 0x1000; /* one native frame */
	return mt_launch_splice(ips, 1, 8);
}

struct gate {
	_Atomic int step; /* the main thread's turn: even; the launcher's: odd */
	unsigned line;
};

static void wait_step(struct gate *g, int step)
{
	while (atomic_load(&g->step) != step)
		sched_yield();
}

/* Enters (nested twice) on step 1, leaves once on step 3, again on 5. */
static void *nested_launcher(void *arg)
{
	struct gate *g = arg;
	struct fake_frame frame = { MAGIC, g->line };
	this_frame = &frame;
	wait_step(g, 1);
	mt_launch_enter();
	mt_launch_enter();
	atomic_store(&g->step, 2);
	wait_step(g, 3);
	mt_launch_leave();
	atomic_store(&g->step, 4);
	wait_step(g, 5);
	mt_launch_leave();
	atomic_store(&g->step, 6);
	return NULL;
}

START_TEST(borrows_from_the_one_inside)
{
	uintptr_t ips[8];
	struct gate a = { 0, 42 }, b = { 0, 7 };
	pthread_t ta, tb;
	pthread_create(&ta, NULL, nested_launcher, &a);
	pthread_create(&tb, NULL, nested_launcher, &b);
	ck_assert_uint_eq(splice_now(ips), 1); /* nobody inside */
	atomic_store(&a.step, 1);
	wait_step(&a, 2);
	ck_assert_uint_eq(splice_now(ips), 3); /* a is inside */
	ck_assert(MT_IS_LAUNCH_FRAME(ips[1]));
	ck_assert_uint_eq(ips[2], 42);
	struct fake_frame own = { MAGIC, 9 };
	this_frame = &own; /* a thread running Python keeps its own frames */
	ck_assert_uint_eq(splice_now(ips), 1);
	this_frame = NULL; /* Python state, no frame (torch's autograd threads) */
	ck_assert_uint_eq(splice_now(ips), 3);
	atomic_store(&b.step, 1);
	wait_step(&b, 2);
	ck_assert_uint_eq(splice_now(ips), 1); /* two inside: not known which */
	atomic_store(&b.step, 3);
	wait_step(&b, 4);
	ck_assert_uint_eq(splice_now(ips), 1); /* b's outer entry still open */
	atomic_store(&b.step, 5);
	wait_step(&b, 6);
	ck_assert_uint_eq(splice_now(ips), 3); /* a alone again */
	ck_assert_uint_eq(ips[2], 42);
	atomic_store(&a.step, 3);
	wait_step(&a, 4);
	ck_assert_uint_eq(splice_now(ips), 3); /* nested: a's outer entry open */
	atomic_store(&a.step, 5);
	wait_step(&a, 6);
	ck_assert_uint_eq(splice_now(ips), 1); /* nobody inside */
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}
END_TEST

#define ROUNDS 20000
#define READERS 3

static _Atomic int racing;

/* Enters with a fresh frame, leaves, and frees the frame at once. */
static void *racing_launcher(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < ROUNDS; i++) {
		struct fake_frame *f = malloc(sizeof(*f));
		atomic_init(&f->magic, MAGIC);
		f->line = i + 1;
		this_frame = f;
		mt_launch_enter();
		if (i % 8 == 0)
			sched_yield();
		mt_launch_leave();
		this_frame = NULL;
		atomic_store_explicit(&f->magic, 0, memory_order_relaxed);
		free(f);
	}
	atomic_store(&racing, 0);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	pause_rng = (unsigned)(uintptr_t)&pause_rng;
	while (atomic_load(&racing)) {
		uintptr_t ips[8];
		if (splice_now(ips) == 3)
			atomic_fetch_add(&borrowed, 1);
	}
	return NULL;
}

START_TEST(a_launcher_that_left_frees_its_frames)
{
	pthread_t l, r[READERS];
	atomic_store(&racing, 1);
	for (unsigned i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	pthread_create(&l, NULL, racing_launcher, NULL);
	pthread_join(l, NULL);
	for (unsigned i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	ck_assert_uint_eq(atomic_load(&torn), 0);
	ck_assert_uint_gt(atomic_load(&borrowed), 0); /* the race was run */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("launch");
	TCase *tc = tcase_create("launch");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, borrows_from_the_one_inside);
	tcase_add_test(tc, a_launcher_that_left_frees_its_frames);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
