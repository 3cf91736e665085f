/* What the renderers share (render-common.c): a frame's label made to fit
 * the text report's width, its file:line whole. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/cache-fragmentation-cases.h"
#include "render.h"
#include "suites.h"
#include "trace-schema.h"

/* The label of a frame of function at file:line in room columns. */
static void check_fit(int kind, const char *function, const char *file, int64_t line,
		      size_t room, const char *want)
{
	struct trace t = { 0 };
	struct trace_frame f = { .kind = kind, .function = (char *)function,
				 .file = (char *)file, .line = line };
	char *got = render_frame_label_fit(&t, &f, true, room);

	ck_assert_str_eq(got, want);
	free(got);
}

#define native(...) check_fit(MT_FRAME_NATIVE, __VA_ARGS__)
#define python(...) check_fit(MT_FRAME_PYTHON, __VA_ARGS__)

START_TEST(fits_whole)
{
	native("ns::Cls::f(void**, unsigned long)", "/src/a.cpp", 67, 100,
	       "ns::Cls::f(void**, unsigned long) (a.cpp:67)");
	native("main", NULL, 0, 4, "main");
}
END_TEST

/* parameter lists first, then template arguments, then qualifiers */
START_TEST(cxx_in_steps)
{
	const char *pool = "ns::Pool<ns::A<float, 256ul>, std::B<true> >::grow(unsigned long, int)";

	native("ns::Cls::f(void**, unsigned long, bool)", "/src/a.cpp", 67, 30,
	       "ns::Cls::f(...) (a.cpp:67)");
	native(pool, "/src/pool.hpp", 31, 80,
	       "ns::Pool<ns::A<float, 256ul>, std::B<true> >::grow(...) (pool.hpp:31)");
	native(pool, "/src/pool.hpp", 31, 50, "ns::Pool<...>::grow(...) (pool.hpp:31)");
	native(pool, "/src/pool.hpp", 31, 37, "...Pool<...>::grow(...) (pool.hpp:31)");
	native(pool, "/src/pool.hpp", 31, 26, "...grow(...) (pool.hpp:31)");
	/* the last name stays whole, past the room if it must */
	native(pool, "/src/pool.hpp", 31, 0, "...grow(...) (pool.hpp:31)");
}
END_TEST

/* what looks like brackets but is not */
START_TEST(cxx_operators)
{
	native("ns::Vec<int, long>::operator<<(std::ostream&) const", NULL, 0, 35,
	       "ns::Vec<...>::operator<<(...) const");
	native("ns::F<int>::operator()(int, int) const", NULL, 0, 33,
	       "ns::F<int>::operator()(...) const");
	native("ns::P<int, long>::operator->() const", NULL, 0, 30, "ns::P<...>::operator->() const");
	native("(anonymous namespace)::helper(int, int)", "/src/h.cpp", 9, 44,
	       "(anonymous namespace)::helper(...) (h.cpp:9)");
	native("void ns::run<float>(float const*)", NULL, 0, 22, "void ns::run<...>(...)");
	native("void ns::run<float>(float const*)", NULL, 0, 20, "...run<...>(...)");
}
END_TEST

/* no C++ rules: the start cut, file:line whole */
START_TEST(other_names)
{
	python("<module>", "/home/u/train.py", 120, 10, "<module> (train.py:120)");
	python("Module._call_impl_with_a_long_tail", "/m.py", 1527, 30,
	       "...ith_a_long_tail (m.py:1527)");
	native("a_c_function_whose_name_is_long", "/src/l.c", 5, 0, "..._name_is_long (l.c:5)");
}
END_TEST

/* The reporter's half of cache-fragmentation-cases.h (the stderr half:
 * tests/unit/test-live-cause.c): what the text, HTML and JSON reports
 * call fragmentation, an OOM's cache and device figures as the model
 * keeps them. */
START_TEST(cache_fragmentation_as_stderr)
{
	const struct cache_fragmentation_case *k = &cache_fragmentation_cases[_i];
	struct model_oom o = {
		.has_device_free = k->device_free != 0,
		.device_free = k->device_free > INT64_MAX ? INT64_MAX : (int64_t)k->device_free,
		.framework = { .has = true, .has_request = true, .requested = k->requested,
			       .allocated = 0, .reserved = k->cache_free,
			       .largest_free = k->largest_free },
	};

	if (k->device_free > INT64_MAX)
		return; /* the model keeps device_free signed */
	ck_assert_msg(render_cache_fragmentation(NULL, &o) == k->fragmentation, "%s", k->what);
	o.allocator_own = true;
	ck_assert_msg(!render_cache_fragmentation(NULL, &o), "%s: the allocator's cap", k->what);
	o.allocator_own = false;
	o.framework.has_request = false;
	ck_assert_msg(!render_cache_fragmentation(NULL, &o), "%s: no request", k->what);
}
END_TEST

Suite *render_suite(void)
{
	Suite *s = suite_create("render");
	TCase *tc = tcase_create("label-fit");

	tcase_add_test(tc, fits_whole);
	tcase_add_test(tc, cxx_in_steps);
	tcase_add_test(tc, cxx_operators);
	tcase_add_test(tc, other_names);
	tcase_add_loop_test(tc, cache_fragmentation_as_stderr, 0,
			    (int)CACHE_FRAGMENTATION_CASES);
	suite_add_tcase(s, tc);
	return s;
}
