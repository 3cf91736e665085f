/* The Check suites of the reporter; test-main.c runs the one named by
 * -DTEST_SUITE (see meson.build). */
#pragma once

#include <check.h>

Suite *model_suite(void);
Suite *util_suite(void);
Suite *symbolize_suite(void);
Suite *sites_suite(void);
Suite *graph_suite(void);
Suite *render_suite(void);
Suite *reps_suite(void);
