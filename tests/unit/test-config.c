#include <check.h>
#include <string.h>

#include "core.h"
#include "writer.h"

static const char *env_vals[16][2];

static const char *fake_getenv(const char *name)
{
	for (int i = 0; i < 16 && env_vals[i][0]; i++)
		if (!strcmp(env_vals[i][0], name))
			return env_vals[i][1];
	return NULL;
}

static void set_env(int i, const char *name, const char *value)
{
	env_vals[i][0] = name;
	env_vals[i][1] = value;
	env_vals[i + 1][0] = NULL;
}

START_TEST(defaults)
{
	struct mt_config cfg;
	env_vals[0][0] = NULL;
	mt_config_load(&cfg, fake_getenv);
	ck_assert_str_eq(cfg.output, "memtrace-%p.db");
	ck_assert_int_eq(cfg.depth, 64);
	ck_assert(!cfg.quiet);
}
END_TEST

START_TEST(values)
{
	struct mt_config cfg;
	set_env(0, "MEMTRACE_OUTPUT", "/tmp/t-%r.db");
	set_env(1, "MEMTRACE_DEPTH", "12");
	set_env(2, "MEMTRACE_QUIET", "1");
	mt_config_load(&cfg, fake_getenv);
	ck_assert_str_eq(cfg.output, "/tmp/t-%r.db");
	ck_assert_int_eq(cfg.depth, 12);
	ck_assert(cfg.quiet);
	mt_log_set_quiet(false);
}
END_TEST

START_TEST(bad_values_fall_back)
{
	static const char *const bad_depths[] = { "0", "257", "-3", "12x", "lots", "" };
	struct mt_config cfg;
	for (size_t i = 0; i < sizeof(bad_depths) / sizeof(bad_depths[0]); i++) {
		set_env(0, "MEMTRACE_DEPTH", bad_depths[i]);
		set_env(1, "MEMTRACE_QUIET", "maybe");
		mt_config_load(&cfg, fake_getenv);
		ck_assert_int_eq(cfg.depth, 64);
		ck_assert(!cfg.quiet);
	}
	char longpath[MT_PATH_MAX + 10];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	set_env(0, "MEMTRACE_OUTPUT", longpath);
	mt_config_load(&cfg, fake_getenv);
	ck_assert_str_eq(cfg.output, "memtrace-%p.db");
}
END_TEST

START_TEST(flight_sizes)
{
	static const struct {
		const char *value;
		uint64_t bytes;
	} cases[] = {
		{ NULL, 0 },			/* unset: the full trace */
		{ "0", 0 },
		{ "no", 0 },
		{ "1", 64ull << 20 },		/* on: the default */
		{ "yes", 64ull << 20 },
		{ "4M", 4ull << 20 },
		{ "4MiB", 4ull << 20 },
		{ "2048k", 2ull << 20 },
		{ "3G", 3ull << 30 },
		{ "5000000", 5000000 },
		{ "5000000B", 5000000 },
		{ "512K", 1ull << 20 },		/* less than the least: the least */
		{ "64 M", 64ull << 20 },	/* not a size: the default */
		{ "-4M", 64ull << 20 },
		{ "4T", 64ull << 20 },
		{ "99999999999999999999", 64ull << 20 },
	};
	struct mt_config cfg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		env_vals[0][0] = NULL;
		if (cases[i].value)
			set_env(0, "MEMTRACE_FLIGHT", cases[i].value);
		mt_config_load(&cfg, fake_getenv);
		ck_assert_msg(cfg.flight == cases[i].bytes, "MEMTRACE_FLIGHT=%s: %llu, not %llu",
			      cases[i].value ? cases[i].value : "(unset)",
			      (unsigned long long)cfg.flight, (unsigned long long)cases[i].bytes);
	}
}
END_TEST

START_TEST(report_at_exit)
{
	static const char *const cases[][2] = {
		{ "text", "text" }, { "json", "json" }, { "html", "html" },
		{ "no", "" },	    { "pdf", "" },	{ "HTML", "" },
	};
	struct mt_config cfg;

	env_vals[0][0] = NULL;
	mt_config_load(&cfg, fake_getenv);
	ck_assert_str_eq(cfg.report_at_exit, "");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_env(0, "MEMTRACE_REPORT_AT_EXIT", cases[i][0]);
		mt_config_load(&cfg, fake_getenv);
		ck_assert_str_eq(cfg.report_at_exit, cases[i][1]);
	}
}
END_TEST

START_TEST(expand)
{
	char out[64];
	ck_assert_int_eq(mt_config_expand_output("m-%p-%h-%r-%%.db", 42, "node1", "3", out,
						 sizeof(out)),
			 0);
	ck_assert_str_eq(out, "m-42-node1-3-%.db");
	/* host and rank come from outside: no path separators survive */
	ck_assert_int_eq(mt_config_expand_output("%h/%r", 1, "../x", "a/b", out, sizeof(out)), 0);
	ck_assert_str_eq(out, ".._x/a_b");
	ck_assert_int_eq(mt_config_expand_output("bad-%q", 1, "h", "0", out, sizeof(out)), -1);
	ck_assert_int_eq(mt_config_expand_output("trailing-%", 1, "h", "0", out, sizeof(out)),
			 -1);
	ck_assert_int_eq(mt_config_expand_output("%p%p%p", 123456, "h", "0", out, 10), -1);
}
END_TEST

START_TEST(rank_order)
{
	set_env(0, "SLURM_PROCID", "7");
	ck_assert_str_eq(mt_config_rank(fake_getenv), "7");
	set_env(1, "OMPI_COMM_WORLD_RANK", "5");
	ck_assert_str_eq(mt_config_rank(fake_getenv), "5");
	set_env(2, "RANK", "2");
	ck_assert_str_eq(mt_config_rank(fake_getenv), "2");
	env_vals[0][0] = NULL;
	ck_assert_str_eq(mt_config_rank(fake_getenv), "0");
}
END_TEST

Suite *config_suite(void);
Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("env");
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, values);
	tcase_add_test(tc, bad_values_fall_back);
	tcase_add_test(tc, flight_sizes);
	tcase_add_test(tc, report_at_exit);
	tcase_add_test(tc, expand);
	tcase_add_test(tc, rank_order);
	suite_add_tcase(s, tc);
	return s;
}
