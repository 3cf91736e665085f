/* The writer's timeline (interpose/writer/live-timeline.c): buckets, their
 * doubling, and the moments a live set is due. The numbers follow from
 * MT_TIMELINE_FIRST_WIDTH_NS (65536 ns), MT_TIMELINE_BUCKETS (2048) and
 * MT_TIMELINE_SNAPSHOTS (64): a live set every 32 buckets. */
#include <check.h>

#include "live-timeline.h"

#define W MT_TIMELINE_FIRST_WIDTH_NS
#define PERIOD ((int64_t)W * (MT_TIMELINE_BUCKETS / MT_TIMELINE_SNAPSHOTS))

static struct mt_timeline tl;

START_TEST(one_bucket)
{
	mt_timeline_init(&tl);
	mt_timeline_put(&tl, 5, 100);
	mt_timeline_put(&tl, 10, 300);
	mt_timeline_put(&tl, 20, 50);
	mt_timeline_put(&tl, 30, 70);
	const struct trace_bucket *b = &tl.b[0];
	ck_assert(b->used);
	ck_assert_uint_eq(b->min, 50);
	ck_assert_uint_eq(b->max, 300);
	ck_assert_int_eq(b->t_max, 10);
	ck_assert_uint_eq(b->last, 70);
	ck_assert_int_eq(b->t_last, 30);
	ck_assert_uint_eq(b->drops, 1); /* 300 -> 50 */
	ck_assert_int_eq(tl.first_ns, 5);
	ck_assert_uint_eq(tl.dirty_lo, 0);
	ck_assert_uint_eq(tl.dirty_hi, 1);
	ck_assert(!tl.b[1].used);
	/* an event a thread timed a little earlier does not go back */
	mt_timeline_put(&tl, 25, 80);
	ck_assert_int_eq(b->t_last, 30);
	ck_assert_uint_eq(b->last, 80);
}
END_TEST

START_TEST(doubling_merges_pairs)
{
	mt_timeline_init(&tl);
	mt_timeline_put(&tl, 0, 100);		/* bucket 0 */
	mt_timeline_put(&tl, W, 40);		/* bucket 1: a drop */
	mt_timeline_put(&tl, 3 * W, 500);	/* bucket 3 */
	mt_timeline_put(&tl, (int64_t)W * MT_TIMELINE_BUCKETS, 10); /* past the end */
	ck_assert_int_eq(tl.width, 2 * W);
	ck_assert(tl.rewrite);
	/* buckets 0 and 1 are one now, 2 and 3 another */
	ck_assert_uint_eq(tl.b[0].min, 40);
	ck_assert_uint_eq(tl.b[0].max, 100);
	ck_assert_uint_eq(tl.b[0].last, 40);
	ck_assert_uint_eq(tl.b[0].drops, 1);
	ck_assert_uint_eq(tl.b[1].max, 500);
	ck_assert_int_eq(tl.b[1].t_max, 3 * W);
	ck_assert(tl.b[MT_TIMELINE_BUCKETS / 2].used);
	ck_assert_uint_eq(tl.b[MT_TIMELINE_BUCKETS / 2].last, 10);
	ck_assert_uint_eq(tl.b[MT_TIMELINE_BUCKETS / 2].drops, 1);
	ck_assert(!tl.b[MT_TIMELINE_BUCKETS / 2 + 1].used);
}
END_TEST

START_TEST(moments_on_the_grid)
{
	int64_t at = -1;

	mt_timeline_init(&tl);
	ck_assert(mt_timeline_due(&tl, 1000, &at)); /* the first event: moment 0 */
	ck_assert_int_eq(at, 0);
	ck_assert(!mt_timeline_due(&tl, PERIOD - 1, &at));
	/* a quiet stretch past several moments gives one, the first passed */
	ck_assert(mt_timeline_due(&tl, 3 * PERIOD + 5, &at));
	ck_assert_int_eq(at, PERIOD);
	ck_assert(!mt_timeline_due(&tl, 4 * PERIOD - 1, &at));
	ck_assert(mt_timeline_due(&tl, 4 * PERIOD, &at));
	ck_assert_int_eq(at, 4 * PERIOD);
	/* past the last bucket the width doubles: moments are multiples of
	 * the doubled period from then on */
	ck_assert(mt_timeline_due(&tl, (int64_t)W * MT_TIMELINE_BUCKETS + 1, &at));
	ck_assert_int_eq(mt_timeline_period(&tl), 2 * PERIOD);
	ck_assert_int_eq(at % PERIOD, 0);
	ck_assert(!mt_timeline_due(&tl, (int64_t)W * MT_TIMELINE_BUCKETS + 2, &at));
	ck_assert(mt_timeline_due(&tl, (int64_t)W * MT_TIMELINE_BUCKETS + 2 * PERIOD, &at));
	ck_assert_int_eq(at % (2 * PERIOD), 0);
}
END_TEST

Suite *live_timeline_suite(void);
Suite *live_timeline_suite(void)
{
	Suite *s = suite_create("live-timeline");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, one_bucket);
	tcase_add_test(tc, doubling_merges_pairs);
	tcase_add_test(tc, moments_on_the_grid);
	suite_add_tcase(s, tc);
	return s;
}
