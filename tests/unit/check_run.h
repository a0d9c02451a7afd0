/* The end of every unit test's main(): run the suite, exit nonzero on any
 * failure (the build's test driver and scripts/test read both). */
#ifndef KTLSD_TESTS_CHECK_RUN_H
#define KTLSD_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
