/* Finding the real functions behind the hooks, asking CUDA what memtrace
 * needs to know for itself, and handing callers our wrappers on every
 * route they take to a CUDA function pointer.
 *
 * Never guess. The real runtime function is the next definition after ours
 * in the global scope (RTLD_NEXT), or the one in the loaded libcudart when
 * the runtime sits in a local scope (as `import torch` loads it); the same
 * for the driver and libcuda. A pointer the driver hands out through
 * cuGetProcAddress is matched against the driver's own exported versioned
 * symbols, so the caller gets the wrapper of exactly that ABI. */
#include "hook-real.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

/* Handing out deprecated entry points is still our job. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Our own wrappers, to hand out and to recognise. */
bool mt_what_fits; /* hook-common.h: set once, before the first call */

static void *const wrappers[MT_API_COUNT] = {
#define MT_HOOK(lib_, ret, name_, params, args) [MT_API_##name_] = (void *)name_,
#include "hooks.def"
};

void *_Atomic mt_real_ptrs[MT_API_COUNT];

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

static void *loaded_handle(bool driver)
{
	static void *_Atomic handles[2];
	void *h = atomic_load(&handles[driver]);
	if (h)
		return h;
	struct lib_query q = { driver ? "libcuda.so" : "libcudart.so", "" };
	if (!mt_dl_iterate_phdr(find_loaded, &q))
		return NULL;
	h = dlopen(q.path, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		atomic_store(&handles[driver], h);
	return h;
}

static void set_real(unsigned api, void *p)
{
	void *expected = NULL;
	atomic_compare_exchange_strong(&mt_real_ptrs[api], &expected, p);
}

/* Once per function. A function memtrace calls for itself is its own
 * loss (a field left unknown), which the program never sees; a function
 * the program called through our wrapper fails as it would without a
 * library that defines it. */
static void say_missing(unsigned api)
{
	static atomic_bool said[MT_API_COUNT];
	const char *name = mt_api_name(api);
	if (atomic_exchange(&said[api], true))
		return;
	if (mt_api_is_own(api))
		mt_log(MT_ENV,
		       "%s, which memtrace calls for itself, is not in this process's %s: "
		       "memtrace records without what it tells (the program's own calls are "
		       "not affected)",
		       name, mt_api_is_driver(api) ? "CUDA driver" : "CUDA runtime");
	else
		mt_log(MT_ENV,
		       "the program called %s, but no %s in this process defines it: the call "
		       "returns an error, as it would without memtrace",
		       name, mt_api_is_driver(api) ? "CUDA driver (libcuda)" : "CUDA runtime");
}

void *mt_real_resolve(unsigned api)
{
	const char *name = mt_api_name(api);
	void *p = mt_real_dlsym(RTLD_NEXT, name);
	if (!p) {
		void *h = loaded_handle(mt_api_is_driver(api));
		p = h ? mt_real_dlsym(h, name) : NULL;
	}
	if (!p) {
		say_missing(api);
		return NULL;
	}
	set_real(api, p);
	return atomic_load(&mt_real_ptrs[api]);
}

struct find {
	const char *name;
	void *self; /* our own definition, to pass over */
	void *found;
};

static int find_definition(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct find *f = data;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	void *p = mt_real_dlsym(h, f->name);
	dlclose(h);
	if (!p || p == f->self)
		return 0;
	f->found = p;
	return 1;
}

void *mt_real_loaded(const char *name, void *self)
{
	struct find f = { name, self, mt_real_dlsym(RTLD_NEXT, name) };
	if (!f.found)
		mt_dl_iterate_phdr(find_definition, &f);
	return f.found;
}

int16_t mt_real_device(unsigned api)
{
	if (mt_api_is_driver(api)) {
		CUdevice dev;
		mt_cuCtxGetDevice_fn get = mt_real_cuCtxGetDevice();
		return get && get(&dev) == CUDA_SUCCESS ? (int16_t)dev : -1;
	}
	int dev;
	mt_cudaGetDevice_fn get = mt_real_cudaGetDevice();
	return get && get(&dev) == cudaSuccess ? (int16_t)dev : -1;
}

bool mt_real_mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b)
{
	size_t f = 0, t = 0;
	bool ok;
	if (mt_api_is_driver(api)) {
		mt_cuMemGetInfo_v2_fn get = mt_real_cuMemGetInfo_v2();
		ok = get && get(&f, &t) == CUDA_SUCCESS;
	} else {
		mt_cudaMemGetInfo_fn get = mt_real_cudaMemGetInfo();
		ok = get && get(&f, &t) == cudaSuccess;
	}
	*free_b = f;
	*total_b = t;
	return ok && t;
}

static bool is_wrapper(const void *p)
{
	for (unsigned api = 1; api < MT_API_COUNT; api++)
		if (wrappers[api] == p)
			return true;
	return false;
}

/* "cuMemAlloc_v2" is a version of base "cuMemAlloc"; so are "_ptsz",
 * "_ptds", "_v2_ptsz"... */
static bool is_version_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n))
		return false;
	const char *rest = name + n;
	if (!*rest)
		return true;
	if (rest[0] == '_' && rest[1] == 'v' && rest[2] >= '0' && rest[2] <= '9') {
		rest += 3;
		while (*rest >= '0' && *rest <= '9')
			rest++;
	}
	return !*rest || !strcmp(rest, "_ptsz") || !strcmp(rest, "_ptds");
}

/* The driver's own exported address for a versioned name, in the object
 * that handed out p. */
static void *driver_export(const char *name, const void *p)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	void *h = dlopen(lm->l_name && lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	void *sym = mt_real_dlsym(h, name);
	dlclose(h);
	return sym;
}

void *mt_wrap_driver_proc(const char *symbol, void *p)
{
	if (!symbol || !p || is_wrapper(p))
		return p;
	for (unsigned api = 1; api < MT_API_COUNT; api++) {
		if (!wrappers[api] || !mt_api_is_driver(api) ||
		    !is_version_of(mt_api_name(api), symbol))
			continue;
		if (driver_export(mt_api_name(api), p) == p) {
			set_real(api, p);
			return wrappers[api];
		}
	}
	return p;
}

void *mt_wrap_symbol(const char *name, void *p)
{
	if (!name || !p || is_wrapper(p))
		return p;
	for (unsigned api = 1; api < MT_API_COUNT; api++) {
		if (wrappers[api] && !strcmp(mt_api_name(api), name)) {
			set_real(api, p);
			return wrappers[api];
		}
	}
	return p;
}
