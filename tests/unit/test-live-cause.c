/* live-cause.c: the cause the library's OOM answer gives, fed the events
 * of the seeds of tests/e2e/test_cause.py by hand (a leak per step, a
 * batch raised past the device, an arena, graphs kept), with no process
 * and no trace: what the sanitizer builds run of it. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cache-fragmentation-cases.h"
#include "live-cause.h"
#include "trace-cause.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void name(void *ctx, uint32_t stack, char *out, size_t n)
{
	(void)ctx;
	snprintf(out, n, "stack%u", stack);
}

/* The answer at an OOM of `requested` on stack, with `live` held by the
 * stacks 1..n_stacks on a 1 GiB device. */
static void answer(struct mt_cause *c, uint32_t stack, uint64_t requested, uint64_t live,
		   uint32_t n_stacks, char *out, size_t n)
{
	uint32_t holders[8];

	for (uint32_t i = 0; i < n_stacks; i++)
		holders[i] = i + 1;
	struct mt_cause_oom o = {
		.stack = stack, .requested = requested, .has_device = true,
		.device_free = GiB > live ? GiB - live : 0, .device_total = GiB, .live = live,
		.peak = live, .holders = holders, .n_holders = n_stacks,
	};
	mt_cause_answer(c, &o, name, NULL, out, n);
}

START_TEST(leak_per_step_is_growth)
{
	/* weights 4 x 64 MiB (stack 1); each step a 16 MiB scratch (stack 3)
	 * freed, a 32 MiB activation kept (stack 2): 23 steps, then the 24th's
	 * activation does not fit */
	struct mt_cause *c = mt_cause_new();
	char out[2048];
	uint64_t live = 0;

	ck_assert_ptr_nonnull(c);
	for (int i = 0; i < 4; i++, live += 64 * MiB)
		mt_cause_alloc(c, 1, 0, 1, 64 * MiB);
	for (int step = 0; step < 23; step++, live += 32 * MiB) {
		mt_cause_alloc(c, 3, 0, 1, 16 * MiB);
		mt_cause_alloc(c, 2, 0, 1, 32 * MiB);
		mt_cause_release(c, 3, 16 * MiB);
	}
	mt_cause_alloc(c, 3, 0, 1, 16 * MiB);
	answer(c, 2, 32 * MiB, live + 16 * MiB, 3, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (growth): memory kept across iterations: stack2 kept "
				  "32.0 MiB in each of 23 repetitions"),
		      "%s", out);
	ck_assert_msg(strstr(out, "\nmemtrace:   try: "), "%s", out);
	mt_cause_free(c);
}
END_TEST

START_TEST(batch_raised_is_too_big)
{
	/* weights 4 x 64 MiB (stack 1); step b: 4 activations of b x 4 MiB
	 * (stack 2), all freed; at b = 64 the fourth does not fit */
	struct mt_cause *c = mt_cause_new();
	char out[2048];

	for (int i = 0; i < 4; i++)
		mt_cause_alloc(c, 1, 0, 1, 64 * MiB);
	for (uint64_t b = 1; b < 64; b *= 2) {
		for (int l = 0; l < 4; l++)
			mt_cause_alloc(c, 2, 0, 1, b * 4 * MiB);
		for (int l = 0; l < 4; l++)
			mt_cause_release(c, 2, b * 4 * MiB);
	}
	for (int l = 0; l < 3; l++)
		mt_cause_alloc(c, 2, 0, 1, 256 * MiB);
	answer(c, 2, 256 * MiB, GiB, 2, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): the step in progress needed 1.0 GiB "
				  "(768.0 MiB allocated since memory was last given back"),
		      "%s", out);
	mt_cause_free(c);
}
END_TEST

START_TEST(arena_is_preallocated)
{
	struct mt_cause *c = mt_cause_new();
	char out[2048];

	mt_cause_alloc(c, 1, 0, 1, 820 * MiB);
	mt_cause_alloc(c, 2, 0, 1, 32 * MiB);
	mt_cause_alloc(c, 2, 0, 1, 64 * MiB);
	answer(c, 2, 128 * MiB, 916 * MiB, 2, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (preallocated): one allocation of 820.0 MiB by stack1"),
		      "%s", out);
	mt_cause_free(c);
}
END_TEST

/* An arena grown region by region to its limit (JAX with
 * XLA_PYTHON_CLIENT_PREALLOCATE=false: cuMemCreate of 2, 4, 8 MiB, then
 * 738 MiB; a cuBLAS workspace of another kind between) is no
 * preallocation; the same 738 MiB first of its kind is. */
START_TEST(grown_arena_is_not_preallocated)
{
	struct mt_cause *c = mt_cause_new();
	char out[2048];

	mt_cause_alloc(c, 1, 0, 5, 2 * MiB);
	mt_cause_alloc(c, 1, 0, 5, 4 * MiB);
	mt_cause_alloc(c, 1, 0, 5, 8 * MiB);
	mt_cause_alloc(c, 3, 0, 1, 32 * MiB);
	mt_cause_alloc(c, 2, 0, 5, 738 * MiB);
	answer(c, 2, 300 * MiB, 784 * MiB, 3, out, sizeof(out));
	ck_assert_msg(!strstr(out, "preallocated"), "%s", out);
	mt_cause_free(c);

	c = mt_cause_new();
	mt_cause_alloc(c, 3, 0, 1, 32 * MiB);
	mt_cause_alloc(c, 2, 0, 5, 738 * MiB);
	answer(c, 2, 300 * MiB, 770 * MiB, 3, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (preallocated): one allocation of 738.0 MiB by stack2"),
		      "%s", out);
	mt_cause_free(c);
}
END_TEST

START_TEST(graphs_kept_lead)
{
	/* executable graphs alive with graph memory not freed lead, as the
	 * report's orphaned graphs lead its causes */
	struct mt_cause *c = mt_cause_new();
	char out[2048];
	uint32_t holders[1] = { 1 };

	for (int i = 0; i < 17; i++)
		mt_cause_exec(c, true);
	mt_cause_exec(c, false);
	mt_cause_alloc(c, 1, 0, 1, 64 * MiB);
	struct mt_cause_oom o = {
		.stack = 1, .live = 64 * MiB, .peak = 64 * MiB, .graph_live = 1088 * MiB,
		.holders = holders, .n_holders = 1,
	};
	mt_cause_answer(c, &o, name, NULL, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (orphaned_graphs): 16 executable graphs not destroyed so "
				  "far"),
		      "%s", out);
	mt_cause_free(c);
}
END_TEST

/* TensorFlow's BFC allocator refused a tensor before its arena took any
 * memory (tf.constant of a 937.5 MiB array, a 799 MiB limit): too big,
 * never the device's pieces, whatever it had free. */
START_TEST(bfc_beyond_its_limit)
{
	char out[1024];
	struct mt_cause *c = mt_cause_new();
	struct mt_cause_oom o = {
		.stack = 1, .requested = 983040000, .has_device = true, .device_free = 1024 * MiB,
		.device_total = 1024 * MiB, .bfc_beyond_limit = true,
	};

	mt_cause_answer(c, &o, name, NULL, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): TensorFlow's BFC allocator refused the 937.5 MiB") &&
			      strstr(out, "try: a smaller tensor") &&
			      !strstr(out, "fragmentation") && !strstr(out, "expandable_segments"),
		      "%s", out);
	o.bfc_beyond_limit = false;
	mt_cause_answer(c, &o, name, NULL, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (fragmentation)"), "%s", out);
	mt_cause_free(c);
}
END_TEST

START_TEST(no_state_no_cause)
{
	char out[64] = "x";
	struct mt_cause_oom o = { 0 };

	mt_cause_answer(NULL, &o, name, NULL, out, sizeof(out));
	ck_assert_str_eq(out, "");
	mt_cause_alloc(NULL, 1, 0, 1, 1);
	mt_cause_release(NULL, 1, 1);
	mt_cause_exec(NULL, true);
	mt_cause_free(NULL);
}
END_TEST

START_TEST(own_cap_is_allocator_limit)
{
	/* PyTorch's allocator refused 100 MiB under a cap of 0.3 of 1 GiB with
	 * 210 MiB reserved: the cap's figures, exact; with a CUDA call failing
	 * (the device refused), or with the cap unknown, it says so */
	char out[2048];
	struct mt_cause_own_oom o = { .requested = 100 * MiB, .limit = 322122547,
				      .reserved = 210 * MiB, .has_device_free = true,
				      .device_free = 814 * MiB };

	mt_cause_own_answer(&o, out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (allocator_limit): PyTorch's caching allocator refused "
				  "the 100.0 MiB (104,857,600 B) asked for"),
		      "%s", out);
	ck_assert_msg(strstr(out, "its cap is 307.2 MiB (322,122,547 B): it had 210.0 MiB "
				  "(220,200,960 B) reserved, so 97.2 MiB (101,921,587 B) was left "
				  "under the cap, while the device itself had 814.0 MiB free\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "\nmemtrace:   try: raise or remove "
				  "torch.cuda.set_per_process_memory_fraction"),
		      "%s", out);
	o.limit = 0;
	mt_cause_own_answer(&o, out, sizeof(out));
	ck_assert_msg(strstr(out, "its cap is not known; it had 210.0 MiB"), "%s", out);
	o.cuda_failed = true;
	mt_cause_own_answer(&o, out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* the cap leads whatever else applies */
	ck_assert_int_lt(trace_cause_rank(TRACE_CAUSE_ALLOCATOR_LIMIT, true, true),
			 trace_cause_rank(TRACE_CAUSE_TOO_BIG, true, true));
	ck_assert_str_eq(trace_cause_name(TRACE_CAUSE_ALLOCATOR_LIMIT), "allocator_limit");
}
END_TEST

/* The stderr half of cache-fragmentation-cases.h: the answer names
 * fragmentation exactly when the shared rule does, and the allocator's
 * own cap (no CUDA call failing) is never fragmentation. */
START_TEST(cache_fragmentation_as_the_report)
{
	const struct cache_fragmentation_case *k = &cache_fragmentation_cases[_i];
	struct mt_cause_own_oom o = {
		.cuda_failed = true, .requested = k->requested, .reserved = k->cache_free,
		.has_device_free = k->device_free != 0, .device_free = k->device_free,
		.cache_free = k->cache_free, .largest_free = k->largest_free,
	};
	char out[1024];

	ck_assert_msg(trace_cause_cache_fragmentation(k->requested, k->cache_free,
						      k->largest_free, k->device_free) ==
			      k->fragmentation,
		      "%s", k->what);
	mt_cause_own_answer(&o, out, sizeof(out));
	ck_assert_msg((strstr(out, "memtrace:   cause (fragmentation): ") != NULL) ==
			      k->fragmentation,
		      "%s: %s", k->what, out);
	if (k->fragmentation)
		ck_assert_msg(strstr(out, "\nmemtrace:   try: PYTORCH_CUDA_ALLOC_CONF="), "%s", out);
	o.cuda_failed = false;
	mt_cause_own_answer(&o, out, sizeof(out));
	ck_assert_msg(!strstr(out, "(fragmentation)") && strstr(out, "(allocator_limit)"), "%s",
		      out);
}
END_TEST

/* Inside a BFC arena (mt_cause_arena_answer, trace_cause_arena_limit,
 * trace_cause_beyond_arena): the limit known only for one region taken
 * at start; the step beyond it is too_big, pieces are fragmentation,
 * the rest is left to the report. */
START_TEST(arena_judged_inside)
{
	const uint64_t dev = 1024 * MiB;
	char out[1024];

	/* one region of 78% of the device: the limit; two, or a small one: none */
	ck_assert_uint_eq(trace_cause_arena_limit(799 * MiB, 1, dev), 799 * MiB);
	ck_assert_uint_eq(trace_cause_arena_limit(799 * MiB, 2, dev), 0);
	ck_assert_uint_eq(trace_cause_arena_limit(300 * MiB, 1, dev), 0);
	ck_assert(trace_cause_beyond_arena(800 * MiB, 0, 799 * MiB));
	ck_assert(!trace_cause_beyond_arena(781 * MiB, 0, 799 * MiB));
	ck_assert(trace_cause_beyond_arena(781 * MiB, 795 * MiB, 799 * MiB));
	ck_assert(!trace_cause_beyond_arena(781 * MiB, 18 * MiB, 799 * MiB));
	ck_assert(!trace_cause_beyond_arena(UINT64_MAX, UINT64_MAX, 0)); /* limit unknown */

	/* the batch's step: more than the arena with the request */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 781 * MiB,
							    .step = 795 * MiB,
							    .limit = 799 * MiB,
							    .arena_free = 2 * MiB,
							    .largest_free = MiB },
			      out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): the step needs 1.5 GiB") &&
			      strstr(out, "try: a smaller batch_size"),
		      "%s", out);
	/* the request alone */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 900 * MiB,
							    .limit = 799 * MiB,
							    .arena_free = 700 * MiB,
							    .largest_free = 700 * MiB },
			      out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): the 900.0 MiB asked for is more than"), "%s",
		      out);
	/* pieces: the arena's free bytes hold it (twice), no chunk does */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 48 * MiB,
							    .step = 8 * MiB,
							    .limit = 799 * MiB,
							    .reserved = 799 * MiB,
							    .arena_free = 100 * MiB,
							    .largest_free = 10 * MiB },
			      out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (fragmentation): 100.0 MiB of the arena") &&
			      !strstr(out, "expandable_segments"),
		      "%s", out);
	/* a few MiB in pieces in a full arena (a leak filled it): no cause */
	ck_assert(!trace_cause_arena_fragmentation(16 * MiB, 22 * MiB, 12 * MiB, 799 * MiB));
	ck_assert(trace_cause_arena_fragmentation(16 * MiB, 80 * MiB, 12 * MiB, 799 * MiB));
	/* free pieces that would hold the weight once, not twice: full */
	ck_assert(!trace_cause_arena_fragmentation(256 * MiB, 415 * MiB, 256 * MiB - 1, 799 * MiB));
	ck_assert(trace_cause_arena_fragmentation(200 * MiB, 415 * MiB, 199 * MiB, 799 * MiB));
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 16 * MiB,
							    .step = 200 * MiB,
							    .limit = 799 * MiB,
							    .reserved = 799 * MiB,
							    .arena_free = 22 * MiB,
							    .largest_free = 12 * MiB },
			      out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* the same, the tensor refused a model's weight: the model, as the
	 * report says it (trace_tf_title, trace_tf_remedy) */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 16 * MiB,
							    .step = 200 * MiB,
							    .limit = 799 * MiB,
							    .reserved = 799 * MiB,
							    .arena_free = 22 * MiB,
							    .largest_free = 12 * MiB,
							    .variable = TRACE_TF_WEIGHT },
			      out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): The model does not fit the arena") &&
			      strstr(out, "try: a smaller model"),
		      "%s", out);
	/* a step's tensor where weights and slots fill half the arena: the
	 * model's state */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 16 * MiB,
							    .step = 8 * MiB,
							    .limit = 800 * MiB,
							    .reserved = 800 * MiB,
							    .arena_free = 22 * MiB,
							    .largest_free = 12 * MiB,
							    .weights = 150 * MiB,
							    .slots = 250 * MiB },
			      out, sizeof(out));
	ck_assert_msg(strstr(out, "cause (too_big): The model and its optimizer's state do not "
				  "fit the arena"),
		      "%s", out);
	/* neither: kept tensors, or a step that would fit alone: the report's */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 64 * MiB,
							    .step = 8 * MiB,
							    .limit = 799 * MiB,
							    .arena_free = 30 * MiB,
							    .largest_free = 30 * MiB },
			      out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* allow_growth: no limit, no too_big */
	mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = 900 * MiB,
							    .step = 100 * MiB,
							    .arena_free = 0,
							    .largest_free = 0 },
			      out, sizeof(out));
	ck_assert_str_eq(out, "");
}
END_TEST

Suite *live_cause_suite(void);
Suite *live_cause_suite(void)
{
	Suite *s = suite_create("live-cause");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, leak_per_step_is_growth);
	tcase_add_test(tc, batch_raised_is_too_big);
	tcase_add_test(tc, arena_is_preallocated);
	tcase_add_test(tc, grown_arena_is_not_preallocated);
	tcase_add_test(tc, graphs_kept_lead);
	tcase_add_test(tc, no_state_no_cause);
	tcase_add_test(tc, bfc_beyond_its_limit);
	tcase_add_test(tc, own_cap_is_allocator_limit);
	tcase_add_test(tc, arena_judged_inside);
	tcase_add_loop_test(tc, cache_fragmentation_as_the_report, 0,
			    (int)CACHE_FRAGMENTATION_CASES);
	suite_add_tcase(s, tc);
	return s;
}
