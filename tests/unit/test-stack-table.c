#include <check.h>
#include <pthread.h>
#include <string.h>

#include "core.h"
#include "writer.h"

static void make_stack(uintptr_t *ips, unsigned n, unsigned variant)
{
	for (unsigned i = 0; i < n; i++)
		ips[i] = 0x400000 + variant * 0x1000 + i * 16;
}

START_TEST(same_stack_same_id)
{
	struct mt_stack_table *t = mt_stack_table_new(8, 4096);
	uintptr_t a[5], b[5];
	make_stack(a, 5, 1);
	make_stack(b, 5, 2);
	uint32_t ia = mt_stack_intern(t, a, 5);
	uint32_t ib = mt_stack_intern(t, b, 5);
	ck_assert_uint_ne(ia, 0);
	ck_assert_uint_ne(ib, 0);
	ck_assert_uint_ne(ia, ib);
	ck_assert_uint_eq(mt_stack_intern(t, a, 5), ia);
	/* a prefix is a different stack */
	uint32_t ip = mt_stack_intern(t, a, 4);
	ck_assert_uint_ne(ip, ia);
	unsigned n;
	const uintptr_t *got = mt_stack_get(t, ib, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert(!memcmp(got, b, sizeof(b)));
	ck_assert_uint_eq(mt_stack_count(t), 3);
	ck_assert_ptr_null(mt_stack_get(t, 0, &n));
	ck_assert_ptr_null(mt_stack_get(t, 99, &n));
	mt_stack_table_free(t);
}
END_TEST

START_TEST(full_table_returns_zero)
{
	/* 16 slots hold at most 8 stacks */
	struct mt_stack_table *t = mt_stack_table_new(4, 4096);
	uintptr_t ips[3];
	uint32_t ids[8];
	for (unsigned v = 0; v < 8; v++) {
		make_stack(ips, 3, v);
		ids[v] = mt_stack_intern(t, ips, 3);
		ck_assert_uint_eq(ids[v], v + 1);
	}
	make_stack(ips, 3, 100);
	ck_assert_uint_eq(mt_stack_intern(t, ips, 3), 0);
	/* the stacks already there still resolve */
	for (unsigned v = 0; v < 8; v++) {
		make_stack(ips, 3, v);
		ck_assert_uint_eq(mt_stack_intern(t, ips, 3), ids[v]);
	}
	mt_stack_table_free(t);
}
END_TEST

START_TEST(arena_full_returns_zero)
{
	struct mt_stack_table *t = mt_stack_table_new(8, 10);
	uintptr_t ips[6];
	make_stack(ips, 6, 1);
	ck_assert_uint_ne(mt_stack_intern(t, ips, 6), 0);
	make_stack(ips, 6, 2);
	ck_assert_uint_eq(mt_stack_intern(t, ips, 6), 0);
	mt_stack_table_free(t);
}
END_TEST

enum { THREADS = 8, STACKS = 2000 };
static struct mt_stack_table *shared;
static uint32_t seen[THREADS][STACKS];

static void *intern_all(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uintptr_t ips[10];
	for (unsigned round = 0; round < 3; round++)
		for (unsigned k = 0; k < STACKS; k++) {
			unsigned v = (k * 7 + me * 13) % STACKS; /* each thread in its own order */
			make_stack(ips, 1 + v % 10, v);
			seen[me][v] = mt_stack_intern(shared, ips, 1 + v % 10);
		}
	return NULL;
}

/* Threads racing to intern the same stacks agree on one id per stack. */
START_TEST(threads_agree)
{
	shared = mt_stack_table_new(14, 1 << 16);
	pthread_t th[THREADS];
	for (unsigned i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, intern_all, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (unsigned v = 0; v < STACKS; v++) {
		ck_assert_uint_ne(seen[0][v], 0);
		for (unsigned i = 1; i < THREADS; i++)
			ck_assert_uint_eq(seen[i][v], seen[0][v]);
	}
	ck_assert_uint_eq(mt_stack_count(shared), STACKS);
	mt_stack_table_free(shared);
}
END_TEST

Suite *stack_table_suite(void);
Suite *stack_table_suite(void)
{
	Suite *s = suite_create("stack-table");
	TCase *tc = tcase_create("intern");
	tcase_add_test(tc, same_stack_same_id);
	tcase_add_test(tc, full_table_returns_zero);
	tcase_add_test(tc, arena_full_returns_zero);
	tcase_add_test(tc, threads_agree);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
