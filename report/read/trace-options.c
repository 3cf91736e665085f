/* What the command line asks of the reader (trace.h): --group-by's names. */
#include "trace.h"

#include <string.h>

#include "util-mem.h"

bool report_parse_group_by(const char *s, enum report_group_by *out)
{
	static const char *const names[] = { "site", "python", "op", "native", "stack" };

	for (size_t i = 0; s && i < ARRAY_LENGTH(names); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum report_group_by)i;
			return true;
		}
	}
	return false;
}

const char *report_group_by_name(enum report_group_by g)
{
	switch (g) {
	case REPORT_GROUP_SITE: return "site";
	case REPORT_GROUP_PYTHON: return "python";
	case REPORT_GROUP_OP: return "op";
	case REPORT_GROUP_NATIVE: return "native";
	case REPORT_GROUP_STACK: return "stack";
	}
	return "site";
}
