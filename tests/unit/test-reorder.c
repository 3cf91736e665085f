#include <check.h>

#include "internal.h"
#include "trace-schema.h"

static struct mt_event at(uint64_t ticket, unsigned kind, uint64_t address)
{
	return (struct mt_event){ .order = ticket, .kind = (uint8_t)kind, .address = address };
}

static uint64_t take(struct mt_reorder *r)
{
	struct mt_event ev;
	ck_assert(mt_reorder_take(r, &ev));
	return ev.order;
}

/* Out of order in, in order out; nothing before its turn. */
START_TEST(takes_in_ticket_order)
{
	struct mt_reorder r;
	mt_reorder_init(&r);
	struct mt_event ev;
	for (uint64_t t = 5; t-- > 1;)
		ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = t }));
	ck_assert(!mt_reorder_take(&r, &ev)); /* 0 is due */
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 0 }));
	for (uint64_t t = 0; t < 5; t++)
		ck_assert_uint_eq(take(&r), t);
	ck_assert(!mt_reorder_take(&r, &ev));
	ck_assert_uint_eq(r.n, 0);
	mt_reorder_fini(&r);
}
END_TEST

/* A release taken early leaves its ticket done: take steps past it. */
START_TEST(steps_past_what_went_early)
{
	struct mt_reorder r;
	mt_reorder_init(&r);
	struct mt_event ev, tmp;
	tmp = at(0, MT_EV_ALLOC, 0x1000);
	ck_assert(mt_reorder_put(&r, &tmp));
	tmp = at(2, MT_EV_FREE, 0x1000);
	ck_assert(mt_reorder_put(&r, &tmp));
	tmp = at(1, MT_EV_ALLOC, 0x2000);
	ck_assert(mt_reorder_put(&r, &tmp));
	ck_assert_uint_eq(take(&r), 0);
	ck_assert(!mt_reorder_take_early(&r, MT_EV_FREE, 0x2000, &ev));
	ck_assert(mt_reorder_take_early(&r, MT_EV_FREE, 0x1000, &ev));
	ck_assert_uint_eq(ev.order, 2);
	ck_assert_uint_eq(take(&r), 1);
	ck_assert(!mt_reorder_take(&r, &ev)); /* 2 went early; 3 is due */
	ck_assert_uint_eq(r.next, 3);
	ck_assert_uint_eq(r.early, 1);
	ck_assert_uint_eq(r.skipped, 0);
	mt_reorder_fini(&r);
}
END_TEST

/* A gap given up on; the event that fills it comes late, first out. */
START_TEST(gives_up_a_gap_and_takes_the_late)
{
	struct mt_reorder r;
	mt_reorder_init(&r);
	struct mt_event ev;
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 3 }));
	ck_assert(!mt_reorder_take(&r, &ev));
	mt_reorder_skip(&r);
	ck_assert_uint_eq(r.skipped, 3);
	ck_assert_uint_eq(take(&r), 3);
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 1 }));
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 4 }));
	ck_assert_uint_eq(take(&r), 1); /* late, at once */
	ck_assert_uint_eq(take(&r), 4);
	ck_assert_uint_eq(r.late, 1);
	mt_reorder_fini(&r);
}
END_TEST

/* The ring grows past its first size with what it holds in place, and
 * refuses a ticket too far ahead while it holds anything. */
START_TEST(grows_and_bounds)
{
	struct mt_reorder r;
	mt_reorder_init(&r);
	for (uint64_t t = 1; t <= 10000; t++)
		ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = t * 3 % 10001 }));
	ck_assert(!mt_reorder_put(&r, &(struct mt_event){ .order = 1 + MT_REORDER_MAX_SLOTS }));
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 0 }));
	for (uint64_t t = 0; t <= 10000; t++)
		ck_assert_uint_eq(take(&r), t);
	/* nothing held: a ticket far ahead gives up the gap at once */
	ck_assert(mt_reorder_put(&r, &(struct mt_event){ .order = 10001 + 2 * MT_REORDER_MAX_SLOTS }));
	ck_assert_uint_eq(take(&r), 10001 + 2 * MT_REORDER_MAX_SLOTS);
	ck_assert_uint_eq(r.skipped, 2 * MT_REORDER_MAX_SLOTS);
	mt_reorder_fini(&r);
}
END_TEST

Suite *reorder_suite(void);
Suite *reorder_suite(void)
{
	Suite *s = suite_create("reorder");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, takes_in_ticket_order);
	tcase_add_test(tc, steps_past_what_went_early);
	tcase_add_test(tc, gives_up_a_gap_and_takes_the_late);
	tcase_add_test(tc, grows_and_bounds);
	suite_add_tcase(s, tc);
	return s;
}
