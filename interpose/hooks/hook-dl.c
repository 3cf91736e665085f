/* dlsym, the route TensorFlow, XLA, JAX and every runtime take to driver
 * functions: dlopen("libcuda.so.1") and dlsym on that handle, which never
 * meets our exported symbols. On a library handle we hand back our wrapper
 * for any function we hook, or what a framework adapter hands back for one
 * of its entry points (mt_frameworks_symbol: XLA's GetPjrtApi,
 * frameworks/xla-pjrt.c). On the pseudo-handles RTLD_DEFAULT and
 * RTLD_NEXT the answer depends on who is asking, which glibc reads from the
 * return address: those calls are passed on as a tail call, so glibc sees
 * our caller, and the global scope already holds our wrappers.
 *
 * The real dlsym is found with dlvsym(RTLD_NEXT, "dlsym", version): glibc
 * 2.34 and later have no __libc_dlsym, and dlvsym is not hooked. */
#include "hook-real.h"

#include <dlfcn.h>
#include <stdatomic.h>

typedef void *(*dlsym_fn)(void *, const char *);

static dlsym_fn _Atomic real_dlsym;

static dlsym_fn find_real_dlsym(void)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17" };
	dlsym_fn fn = NULL;
	for (size_t i = 0; !fn && i < sizeof(versions) / sizeof(versions[0]); i++)
		fn = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	if (fn)
		atomic_store(&real_dlsym, fn);
	return fn;
}

static inline dlsym_fn get_real_dlsym(void)
{
	dlsym_fn fn = atomic_load_explicit(&real_dlsym, memory_order_relaxed);
	return MT_LIKELY(fn != NULL) ? fn : find_real_dlsym();
}

void *mt_real_dlsym(void *handle, const char *name)
{
	dlsym_fn fn = get_real_dlsym();
	return fn ? fn(handle, name) : NULL;
}

/* Kept out of line so that dlsym itself stays a leaf that tail-calls. */
static __attribute__((noinline)) void *lookup_on_handle(dlsym_fn fn, void *handle,
							const char *name)
{
	void *p = fn(handle, name);
	void *ours = mt_wrap_symbol(name, p);
	return ours != p ? ours : mt_frameworks_symbol(name, p);
}

MT_EXPORT __attribute__((optimize("O2", "omit-frame-pointer", "optimize-sibling-calls"))) void *
dlsym(void *handle, const char *name)
{
	dlsym_fn fn = get_real_dlsym();
	if (MT_UNLIKELY(!fn))
		return NULL;
	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
		return fn(handle, name); /* a tail call: glibc sees our caller */
	return lookup_on_handle(fn, handle, name);
}
