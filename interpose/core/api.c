/* The names of the functions in hooks.def and which library each belongs
 * to: for the trace's apis table and for finding the real functions. */
#include "core.h"

struct api_info {
	const char *name;
	bool driver;
	bool own; /* MT_REAL: called by memtrace itself, never by the program */
};

static const struct api_info apis[MT_API_COUNT] = {
#define MT_HOOK(lib, ret, name_, params, args) [MT_API_##name_] = { #name_, MT_LIB_##lib, false },
#define MT_REAL(lib, ret, name_, params, args) [MT_API_##name_] = { #name_, MT_LIB_##lib, true },
#define MT_NAME(lib, name_) [MT_API_##name_] = { #name_, MT_LIB_##lib, false },
#define MT_LIB_RT false
#define MT_LIB_DRV true
#include "hooks.def"
};

const char *mt_api_name(unsigned api)
{
	return api < MT_API_COUNT && apis[api].name ? apis[api].name : "unknown";
}

bool mt_api_is_driver(unsigned api)
{
	return api < MT_API_COUNT && apis[api].driver;
}

bool mt_api_is_own(unsigned api)
{
	return api < MT_API_COUNT && apis[api].own;
}
