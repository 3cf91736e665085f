/* main() for one suite: meson builds each test-<area>.c with this file and
 * -DTEST_SUITE=<area>_suite. CK_FORK=no makes failures debuggable. */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
	SRunner *sr = srunner_create(TEST_SUITE());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
