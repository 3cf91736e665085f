#include <check.h>
#include <string.h>

#include "core.h"
#include "writer.h"

static struct mt_site_key key_of(unsigned i)
{
	struct mt_site_key k;
	memset(&k, 0, sizeof(k));
	k.stack = i % 97;
	k.tid = 1000 + i % 13;
	k.stream = i / 1261; /* 97 * 13: every (stack, thread) pair, then a new stream */
	k.kind = 1;
	k.api = 3;
	k.device = -1;
	k.mem = 1;
	return k;
}

/* Ids count from 1 in the order keys are first seen, the same key gets
 * the same id across growth, and keys differing in any field differ. */
START_TEST(ids_are_stable_and_dense)
{
	enum { N = 5000 };
	struct mt_site_table *t = mt_site_table_new();
	ck_assert_ptr_nonnull(t);
	bool added;
	for (unsigned i = 0; i < N; i++) {
		struct mt_site_key k = key_of(i);
		ck_assert_uint_eq(mt_site_intern(t, &k, &added), i + 1);
		ck_assert(added);
	}
	for (unsigned i = 0; i < N; i++) {
		struct mt_site_key k = key_of(i);
		ck_assert_uint_eq(mt_site_intern(t, &k, &added), i + 1);
		ck_assert(!added);
	}
	struct mt_site_key k = key_of(0);
	k.source = 1;
	ck_assert_uint_eq(mt_site_intern(t, &k, &added), N + 1);
	k = key_of(0);
	k.handle = 1;
	ck_assert_uint_eq(mt_site_intern(t, &k, &added), N + 2);
	k = key_of(0);
	k.status = 2;
	ck_assert_uint_eq(mt_site_intern(t, &k, &added), N + 3);
	mt_site_table_free(t);
}
END_TEST

Suite *site_table_suite(void);
Suite *site_table_suite(void)
{
	Suite *s = suite_create("site-table");
	TCase *tc = tcase_create("intern");
	tcase_add_test(tc, ids_are_stable_and_dense);
	suite_add_tcase(s, tc);
	return s;
}
