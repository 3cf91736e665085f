/* trace/util-map.c, the one hash map of both halves: against a plain
 * array as the oracle, and out of memory (it returns the failure and
 * keeps what it held; it never exits). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util-map.h"

/* Random inserts and deletes against a plain array as the oracle; keys
 * chosen to collide so backward-shift deletion is exercised. */
START_TEST(churn_matches_oracle)
{
	enum { N = 4096 };
	static uint64_t oracle[N];
	struct map m;
	map_init(&m, sizeof(uint64_t));
	srand(1);
	for (int round = 0; round < 200000; round++) {
		uint64_t k = (uint64_t)(rand() % N) + 1;
		if (rand() % 3) {
			uint64_t v = (uint64_t)rand();
			ck_assert(map_put_u64(&m, k * 4096, v));
			oracle[k - 1] = v + 1;
		} else {
			uint64_t v = 0;
			bool had = map_remove(&m, k * 4096, &v);
			ck_assert_int_eq(had, oracle[k - 1] != 0);
			if (had)
				ck_assert_uint_eq(v + 1, oracle[k - 1]);
			oracle[k - 1] = 0;
		}
	}
	size_t live = 0, seen = 0;
	for (uint64_t k = 1; k <= N; k++) {
		uint64_t *v = map_get_u64(&m, k * 4096);
		ck_assert_int_eq(v != NULL, oracle[k - 1] != 0);
		if (v) {
			ck_assert_uint_eq(*v + 1, oracle[k - 1]);
			live++;
		}
	}
	ck_assert_uint_eq(live, m.len);
	uint64_t key;
	void *val;
	for (size_t pos = 0; map_next(&m, &pos, &key, &val); seen++)
		ck_assert_uint_eq(*(uint64_t *)val + 1, oracle[key / 4096 - 1]);
	ck_assert_uint_eq(seen, live);
	/* any key is a key, 0 too (trace ids and addresses are untrusted) */
	ck_assert(map_put_u64(&m, 0, 7));
	ck_assert_uint_eq(*map_get_u64(&m, 0), 7);
	map_fini(&m);
}
END_TEST

/* A value of a cache line's slot (the reporter's records): inserted
 * zeroed, kept whole across growth. */
START_TEST(inline_values)
{
	struct rec {
		uint64_t a[6];
	};
	struct map m;
	bool inserted;
	map_init(&m, sizeof(struct rec));
	ck_assert_uint_eq(m.slot_size, 64);
	for (uint64_t k = 0; k < 10000; k++) {
		struct rec *r = map_put(&m, k, &inserted);
		ck_assert(r && inserted);
		for (int i = 0; i < 6; i++) {
			ck_assert_uint_eq(r->a[i], 0);
			r->a[i] = k * 6 + (uint64_t)i;
		}
	}
	ck_assert_uint_eq((uintptr_t)m.slots % 64, 0);
	for (uint64_t k = 0; k < 10000; k++) {
		struct rec *r = map_put(&m, k, &inserted);
		ck_assert(r && !inserted);
		ck_assert_uint_eq(r->a[5], k * 6 + 5);
	}
	map_fini(&m);
}
END_TEST

/* A size that cannot be had: false, and the map as it was. */
START_TEST(reserve_too_much)
{
	struct map m;
	map_init(&m, sizeof(uint64_t));
	for (uint64_t k = 1; k <= 100; k++)
		ck_assert(map_put_u64(&m, k, k));
	size_t cap = m.cap;
	ck_assert(!map_reserve(&m, SIZE_MAX / 2));
	ck_assert(!map_reserve(&m, SIZE_MAX / 8)); /* cap * slot size overflows */
	ck_assert_uint_eq(m.cap, cap);
	ck_assert_uint_eq(m.len, 100);
	for (uint64_t k = 1; k <= 100; k++)
		ck_assert_uint_eq(*map_get_u64(&m, k), k);
	ck_assert(map_reserve(&m, 1000));
	ck_assert_uint_ge(m.cap, 2000);
	for (uint64_t k = 1; k <= 100; k++)
		ck_assert_uint_eq(*map_get_u64(&m, k), k);
	map_fini(&m);
}
END_TEST

/* The address space limited to a little more than the process uses, in
 * a child of its own: inserts until one cannot grow the map. It returns
 * NULL (the process goes on), and every key put before is still there.
 * Not under a sanitizer, whose allocator reserves far more than any
 * such limit and stops the process when memory runs out. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MAP_TEST_RLIMIT 0
#else
#define MAP_TEST_RLIMIT 1
#endif

static int fill_until_out_of_memory(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%lu", &pages) != 1)
		return 10;
	fclose(f);
	rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64u << 20);
	struct rlimit rl = { limit, limit };
	if (setrlimit(RLIMIT_AS, &rl) != 0)
		return 11;
	struct map m;
	map_init(&m, sizeof(uint64_t));
	uint64_t n = 0;
	while (n < (1u << 26) && map_put_u64(&m, n + 1, n))
		n++;
	if (n == 1u << 26)
		return 12; /* never ran out: the limit did not hold */
	if (m.len != n)
		return 13;
	for (uint64_t k = 1; k <= n; k++) {
		uint64_t *v = map_get_u64(&m, k);
		if (!v || *v != k - 1)
			return 14;
	}
	map_fini(&m);
	return 0;
}

START_TEST(out_of_memory_returns_null)
{
	if (!MAP_TEST_RLIMIT)
		return;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fill_until_out_of_memory());
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child did not exit (status %d)", status);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

Suite *map_suite(void);
Suite *map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map");
	tcase_add_test(tc, churn_matches_oracle);
	tcase_add_test(tc, inline_values);
	tcase_add_test(tc, reserve_too_much);
	tcase_add_test(tc, out_of_memory_returns_null);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
