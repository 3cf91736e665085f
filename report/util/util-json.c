#include "util-json.h"

#include <inttypes.h>

#include "util-str.h"

/* util-str.c's one JSON escaper, with the rules for a <script> element */
void json_str(FILE *f, const char *s)
{
	escape_json_script(f, s);
}

void json_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 : (uint64_t)ns;

	fprintf(f, "%" PRIu64 ".%03" PRIu64, a / 1000, a % 1000);
}
