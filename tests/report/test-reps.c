/* The repetitions found from a framework's tensors (trace/trace-reps.h):
 * programs written as sequences of tensors, each with the user's frames
 * of its stack (outermost first) and whether it is live at the moment. */
#include <check.h>
#include <stdlib.h>

#include "suites.h"
#include "trace-reps.h"

/* <module>'s line that calls main(): the frame all of main's tensors share */
#define MAIN_CALL 100
/* the lines of a loop, as frame ids */
enum { BUILD = 10, FORWARD, BACKWARD, STEP, VAL, BATCH, LAYER, EPOCH_END };

struct prog {
	struct trace_rep_tensor t[512];
	uint64_t chains[512][2];
	size_t n;
};

/* a tensor made by line: a line of the script, or of main() when nested */
static void make(struct prog *p, bool nested, uint64_t line, uint64_t bytes, bool live)
{
	uint64_t *c = p->chains[p->n];
	uint32_t d = 0;

	if (nested)
		c[d++] = MAIN_CALL;
	c[d++] = line;
	p->t[p->n++] = (struct trace_rep_tensor){ .chain = c, .depth = d, .bytes = bytes,
						  .live = live };
}

/* One training step: a forward whose activations backward frees, the
 * gradients of the step (freed by the next zero_grad: only the last
 * step's live), the optimizer's state made at the first step, and a
 * validation loss kept with its graph when keep. */
static void step(struct prog *p, bool nested, int i, int steps, bool keep)
{
	make(p, nested, FORWARD, 1000, false);
	make(p, nested, FORWARD, 1000, false);
	make(p, nested, BACKWARD, 300, i == steps - 1);
	make(p, nested, STEP, 600, i == 0);
	make(p, nested, VAL, 5000, keep);
}

START_TEST(test_graph_kept_each_step)
{
	static struct prog p;
	struct trace_rep_growth g;

	p.n = 0;
	for (int b = 0; b < 3; b++)
		make(&p, false, BUILD, 100, true);
	for (int i = 0; i < 8; i++)
		step(&p, false, i, 8, true);
	ck_assert(trace_reps_growth(p.t, p.n, false, 1, &g));
	ck_assert_uint_eq(g.key, VAL);
	ck_assert_uint_eq(g.level, 0);
	ck_assert_uint_eq(g.passes, 8);
	ck_assert_uint_eq(g.kept, 8);
	ck_assert_uint_eq(g.per_pass, 5000);
	ck_assert_uint_eq(g.kept_bytes, 8 * 5000);
	/* at an OOM, the last step is in progress: seven */
	ck_assert(trace_reps_growth(p.t, p.n, true, 1, &g));
	ck_assert_uint_eq(g.kept, 7);
	ck_assert_uint_eq(g.per_pass, 5000);
	/* the floor: 40000 kept is not growth under a floor above it */
	ck_assert(!trace_reps_growth(p.t, p.n, false, 40001, &g));
}
END_TEST

START_TEST(test_nothing_kept)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* a module's 24 layers built by one line: one pass, kept; then steps
	 * that keep nothing but the optimizer's state once */
	p.n = 0;
	for (int l = 0; l < 24; l++)
		make(&p, false, LAYER, 100, true);
	for (int i = 0; i < 8; i++)
		step(&p, false, i, 8, false);
	ck_assert(!trace_reps_growth(p.t, p.n, false, 1, &g));
}
END_TEST

START_TEST(test_loop_in_main)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* the same loop inside main(): one level deeper */
	p.n = 0;
	make(&p, true, BUILD, 100, true);
	for (int i = 0; i < 6; i++)
		step(&p, true, i, 6, true);
	ck_assert(trace_reps_growth(p.t, p.n, false, 1, &g));
	ck_assert_uint_eq(g.level, 1);
	ck_assert_uint_eq(g.key, VAL);
	ck_assert_uint_eq(g.per_pass, 5000);
}
END_TEST

START_TEST(test_loop_in_a_function)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* the model built at the script's level, then trained in a function
	 * the script calls once: the script's lines differ (the build, the
	 * call) but none comes round; the loop is one level in */
	p.n = 0;
	make(&p, false, BUILD, 100, true);
	for (int i = 0; i < 6; i++)
		step(&p, true, i, 6, true);
	ck_assert(trace_reps_growth(p.t, p.n, false, 1, &g));
	ck_assert_uint_eq(g.level, 1);
	ck_assert_uint_eq(g.key, VAL);
	ck_assert_uint_eq(g.kept, 6);
	ck_assert_uint_eq(g.per_pass, 5000);
	/* the same, keeping nothing: no growth one level in either */
	p.n = 0;
	make(&p, false, BUILD, 100, true);
	for (int i = 0; i < 6; i++)
		step(&p, true, i, 6, false);
	ck_assert(!trace_reps_growth(p.t, p.n, false, 1, &g));
}
END_TEST

START_TEST(test_builds_kept)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* a model built and trained per round and kept: its parameters at
	 * the build's line, its gradients at the training's; the build leads
	 * and a repetition keeps both */
	p.n = 0;
	for (int r = 0; r < 5; r++) {
		make(&p, false, BUILD, 4000, true);
		make(&p, false, FORWARD, 9000, false);
		make(&p, false, BACKWARD, 4100, true);
	}
	ck_assert(trace_reps_growth(p.t, p.n, true, 1, &g));
	ck_assert_uint_eq(g.key, BUILD);
	ck_assert_uint_eq(g.per_pass, 8100);
	/* back to back, no tensor of another line between: one pass */
	p.n = 0;
	for (int r = 0; r < 5; r++)
		make(&p, false, BUILD, 4000, true);
	make(&p, false, FORWARD, 10, false);
	ck_assert(!trace_reps_growth(p.t, p.n, false, 1, &g));
}
END_TEST

START_TEST(test_epoch_not_batch)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* each epoch evaluates two batches, each keeping its graph: the
	 * repetition is the epoch (the line that comes round least often) */
	p.n = 0;
	for (int e = 0; e < 5; e++) {
		make(&p, false, FORWARD, 1000, false);
		for (int b = 0; b < 2; b++) {
			make(&p, false, BATCH, 10, false);
			make(&p, false, VAL, 3000, true);
		}
		make(&p, false, EPOCH_END, 8, false);
	}
	ck_assert(trace_reps_growth(p.t, p.n, false, 1, &g));
	ck_assert_uint_eq(g.key, VAL);
	ck_assert_uint_eq(g.passes, 10);
	ck_assert_uint_eq(g.per_pass, 6000);
	ck_assert(g.rep_key == FORWARD || g.rep_key == EPOCH_END);
}
END_TEST

START_TEST(test_warm_up)
{
	static struct prog p;
	struct trace_rep_growth g;

	/* kept in the first three passes, then never: the last of them not in
	 * the second half of the passes */
	p.n = 0;
	for (int i = 0; i < 12; i++) {
		make(&p, false, FORWARD, 100, false);
		make(&p, false, VAL, 5000, i < 3);
	}
	ck_assert(!trace_reps_growth(p.t, p.n, false, 1, &g));
	ck_assert(!trace_reps_growth(p.t, 0, false, 1, &g));
}
END_TEST

Suite *reps_suite(void)
{
	Suite *s = suite_create("reps");
	TCase *tc = tcase_create("reps");

	tcase_add_test(tc, test_graph_kept_each_step);
	tcase_add_test(tc, test_nothing_kept);
	tcase_add_test(tc, test_loop_in_main);
	tcase_add_test(tc, test_loop_in_a_function);
	tcase_add_test(tc, test_builds_kept);
	tcase_add_test(tc, test_epoch_not_batch);
	tcase_add_test(tc, test_warm_up);
	suite_add_tcase(s, tc);
	return s;
}
