#include <check.h>
#include <stdlib.h>

#include "u64map.h"

/* Random inserts and deletes against a plain array as the oracle; keys
 * chosen to collide so backward-shift deletion is exercised. */
START_TEST(churn_matches_oracle)
{
	enum { N = 4096 };
	static uint64_t oracle[N];
	struct u64map m;
	ck_assert(u64map_init(&m, 2));
	srand(1);
	for (int round = 0; round < 200000; round++) {
		uint64_t k = (uint64_t)(rand() % N) + 1;
		if (rand() % 3) {
			uint64_t v = (uint64_t)rand();
			ck_assert(u64map_put(&m, k * 4096, v));
			oracle[k - 1] = v + 1;
		} else {
			uint64_t v = 0;
			bool had = u64map_del(&m, k * 4096, &v);
			ck_assert_int_eq(had, oracle[k - 1] != 0);
			if (had)
				ck_assert_uint_eq(v + 1, oracle[k - 1]);
			oracle[k - 1] = 0;
		}
	}
	size_t live = 0;
	for (uint64_t k = 1; k <= N; k++) {
		uint64_t *v = u64map_get(&m, k * 4096);
		ck_assert_int_eq(v != NULL, oracle[k - 1] != 0);
		if (v) {
			ck_assert_uint_eq(*v + 1, oracle[k - 1]);
			live++;
		}
	}
	ck_assert_uint_eq(live, m.count);
	ck_assert(!u64map_put(&m, 0, 1));
	u64map_fini(&m);
}
END_TEST

Suite *u64map_suite(void);
Suite *u64map_suite(void)
{
	Suite *s = suite_create("u64map");
	TCase *tc = tcase_create("map");
	tcase_add_test(tc, churn_matches_oracle);
	suite_add_tcase(s, tc);
	return s;
}
