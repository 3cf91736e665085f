/* JSON output for the renderers that write JSON of their own making (the
 * HTML page's data block, the Perfetto trace, compare): strings are
 * escaped so the text may also sit inside an HTML <script> element. */
#pragma once

#include <stdint.h>
#include <stdio.h>

/* s as a JSON string literal, quotes included, NULL as null. Invalid
 * UTF-8 becomes U+FFFD; besides what JSON requires, <, >, &, U+2028 and
 * U+2029 are written as \u escapes, so "</script>" or "<!--" cannot end or
 * change the element the JSON sits in. */
void json_str(FILE *f, const char *s);

/* Nanoseconds as microseconds with three decimals (Chrome trace "ts"). */
void json_us(FILE *f, int64_t ns);
