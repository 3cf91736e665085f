/* Runs the Check suites of the capture core. Each test-<area>.c exposes
 * <area>_suite(); CK_FORK=no runs them in-process (for a debugger). */
#include <check.h>
#include <stdlib.h>

Suite *config_suite(void);
Suite *stack_table_suite(void);
Suite *site_table_suite(void);
Suite *queue_suite(void);
Suite *map_suite(void);
Suite *writer_suite(void);
Suite *fd_guard_suite(void);
Suite *live_timeline_suite(void);
Suite *framework_oom_suite(void);
Suite *live_cause_suite(void);
Suite *live_set_suite(void);
Suite *fork_gate_suite(void);
Suite *live_reps_suite(void);

int main(int argc, char **argv)
{
	SRunner *sr = srunner_create(NULL);
	Suite *(*const suites[])(void) = { config_suite, stack_table_suite, site_table_suite,
					   queue_suite,	 map_suite,	    writer_suite,
					   fd_guard_suite, live_timeline_suite, framework_oom_suite,
					   live_cause_suite, live_set_suite, fork_gate_suite,
					   live_reps_suite };
	const char *only = argc > 1 ? argv[1] : NULL;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		Suite *s = suites[i]();
		srunner_add_suite(sr, s);
	}
	srunner_run(sr, only, NULL, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
