/* Finding the real functions behind the hooks. Never guess: the real
 * runtime function is the next definition after ours in the global scope
 * (RTLD_NEXT), or, when the runtime was dlopen'ed into a local scope (as
 * `import torch` does), the definition in the loaded libcudart itself. */
#include "hook-real.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

enum lib { RT, DRV };

struct api_info {
	const char *name;
	enum lib lib;
};

static const struct api_info apis[MT_API_COUNT] = {
#define MT_HOOK(lib_, ret, name_, params, args) [MT_API_##name_] = { #name_, lib_ },
#define MT_REAL MT_HOOK
#include "hooks.def"
};

void *_Atomic mt_real_ptrs[MT_API_COUNT];

const char *mt_api_name(unsigned api)
{
	return api < MT_API_COUNT && apis[api].name ? apis[api].name : "unknown";
}

struct lib_query {
	const char *prefix;
	char path[MT_PATH_MAX];
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lib_query *q = data;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	if (!base || strncmp(base, q->prefix, strlen(q->prefix)))
		return 0;
	strncpy(q->path, info->dlpi_name, sizeof(q->path) - 1);
	return 1;
}

static void *lookup_in_loaded(const char *prefix, const char *name)
{
	struct lib_query q = { prefix, "" };
	if (!dl_iterate_phdr(find_loaded, &q))
		return NULL;
	void *h = dlopen(q.path, RTLD_LAZY | RTLD_NOLOAD);
	return h ? dlsym(h, name) : NULL;
}

void *mt_real_resolve(unsigned api)
{
	const struct api_info *info = &apis[api];
	void *p = dlsym(RTLD_NEXT, info->name);
	if (!p)
		p = lookup_in_loaded(info->lib == RT ? "libcudart.so" : "libcuda.so", info->name);
	if (!p) {
		mt_log(MT_ENV, "cannot find the real %s in this process; the call fails",
		       info->name);
		return NULL;
	}
	atomic_store_explicit(&mt_real_ptrs[api], p, memory_order_release);
	return p;
}
