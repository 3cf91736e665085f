/* live-reps.c: the latest tensors and the growth the answer finds in
 * them (trace/trace-reps.h's rule), fed by hand: a build loop that keeps
 * its model, a loop that frees what it makes, a leak past the ring's
 * wrap, a free the ring has already forgotten. */
#include <check.h>

#include "live-reps.h"
#include "trace-cause.h"

#define MiB (1ull << 20)

/* Stack s's user frames are one line, id 100 + s: each stack a line of
 * the loop. */
static uint32_t chain(void *ctx, uint32_t stack, uint64_t *out, uint32_t cap)
{
	(void)ctx;
	if (!cap || !stack)
		return 0;
	out[0] = 100 + stack;
	return 1;
}

/* stack 3 is a module's forward */
static bool forward(void *ctx, uint32_t stack)
{
	(void)ctx;
	return stack == 3;
}

/* rounds of: the build (stack 1) makes 1 MiB and keeps it, a step
 * (stack 2) makes 4 MiB and frees it, the forward (stack 3) makes 2 MiB
 * and frees it; keep_forward: the build's freed, the forward's kept (a
 * loss kept with its graph) */
static void loop(struct mt_reps *r, uint64_t *address, int rounds, bool keep_forward)
{
	for (int i = 0; i < rounds; i++) {
		uint64_t build = ++*address << 20, step = ++*address << 20, fwd;

		mt_reps_made(r, build, 1, MiB);
		mt_reps_made(r, step, 2, 4 * MiB);
		mt_reps_gone(r, step);
		if (keep_forward)
			mt_reps_gone(r, build);
		fwd = ++*address << 20;
		mt_reps_made(r, fwd, 3, 2 * MiB);
		if (!keep_forward)
			mt_reps_gone(r, fwd);
	}
}

START_TEST(build_loop_grows)
{
	struct mt_reps r;
	struct mt_reps_growth g;
	uint64_t address = 0;

	mt_reps_init(&r);
	loop(&r, &address, 6, false);
	mt_reps_made(&r, ++address << 20, 1, MiB); /* the pass in progress */
	ck_assert(mt_reps_growth(&r, chain, forward, NULL, trace_growth_floor(16 * MiB), &g));
	ck_assert_uint_eq(g.g.key, 101);
	ck_assert_uint_eq(g.g.per_pass, MiB);
	ck_assert_uint_ge(g.g.kept, 3);
	ck_assert_uint_eq(g.largest_stack, 1);
	ck_assert(!g.graph);
	mt_reps_fini(&r);
}
END_TEST

START_TEST(kept_forward_is_a_graph)
{
	struct mt_reps r;
	struct mt_reps_growth g;
	uint64_t address = 0;

	mt_reps_init(&r);
	loop(&r, &address, 6, true);
	ck_assert(mt_reps_growth(&r, chain, forward, NULL, trace_growth_floor(16 * MiB), &g));
	ck_assert_uint_eq(g.g.key, 103);
	ck_assert_uint_eq(g.g.per_pass, 2 * MiB);
	ck_assert(g.graph);
	mt_reps_fini(&r);
}
END_TEST

START_TEST(all_freed_is_no_growth)
{
	struct mt_reps r;
	struct mt_reps_growth g;

	mt_reps_init(&r);
	for (uint64_t i = 1; i <= 20; i++) {
		mt_reps_made(&r, i << 20, 2, 4 * MiB);
		mt_reps_gone(&r, i << 20);
	}
	ck_assert(!mt_reps_growth(&r, chain, forward, NULL, trace_growth_floor(16 * MiB), &g));
	mt_reps_gone(&r, 999 << 20); /* never made: nothing happens */
	mt_reps_fini(&r);
}
END_TEST

/* More tensors than the ring keeps: the latest window still shows the
 * leak; a tensor made before the window and freed after is forgotten. */
START_TEST(ring_wraps)
{
	struct mt_reps r;
	struct mt_reps_growth g;
	uint64_t address = 0;

	mt_reps_init(&r);
	mt_reps_made(&r, 1ull << 40, 2, MiB); /* long-lived, then freed late */
	for (uint64_t i = 0; i < MT_REPS_KEPT + 1000; i++) {
		uint64_t a = (2ull << 40) + (i << 12);

		mt_reps_made(&r, a, 2, 4096);
		mt_reps_gone(&r, a);
	}
	mt_reps_gone(&r, 1ull << 40);
	loop(&r, &address, 6, false);
	ck_assert_uint_eq(r.made, MT_REPS_KEPT + 1001 + 6 * 3);
	ck_assert(mt_reps_growth(&r, chain, forward, NULL, trace_growth_floor(16 * MiB), &g));
	ck_assert_uint_eq(g.g.key, 101);
	mt_reps_fini(&r);
}
END_TEST

Suite *live_reps_suite(void);
Suite *live_reps_suite(void)
{
	Suite *s = suite_create("live-reps");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, build_loop_grows);
	tcase_add_test(tc, kept_forward_is_a_graph);
	tcase_add_test(tc, all_freed_is_no_growth);
	tcase_add_test(tc, ring_wraps);
	suite_add_tcase(s, tc);
	return s;
}
