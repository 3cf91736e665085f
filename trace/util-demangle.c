/* C++ names demangled (util-demangle.h). */
#include "util-demangle.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *demangler;
static int looked;

void trace_demangle_use(trace_demangle_fn f)
{
	__atomic_store_n(&demangler, (void *)(uintptr_t)f, __ATOMIC_RELAXED);
	__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
}

/* The C++ runtimes that define __cxa_demangle, by soname. */
static const char *const runtimes[] = { "libstdc++.so.6", "libc++abi.so.1" };

/* In the global scope, else in a C++ runtime the process loaded out of
 * it (a library opened RTLD_LOCAL brought it: Python's extensions, such
 * as torch's), which RTLD_NOLOAD finds without loading anything; the
 * reference it takes keeps the function there. */
static void *find(void)
{
	void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");

	for (size_t i = 0; !f && i < sizeof(runtimes) / sizeof(*runtimes); i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			f = dlsym(h, "__cxa_demangle");
	}
	return f;
}

/* Found once; threads that race find it alike. Not found, it is looked
 * for again next time: the program may load a C++ runtime later. */
static trace_demangle_fn lookup(void)
{
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		void *f = find();
		if (!f)
			return NULL;
		trace_demangle_use((trace_demangle_fn)(uintptr_t)f);
	}
	return (trace_demangle_fn)(uintptr_t)__atomic_load_n(&demangler, __ATOMIC_RELAXED);
}

char *trace_demangle(const char *name)
{
	trace_demangle_fn fn;
	int status = -1;
	char *d;

	if (!name || strncmp(name, "_Z", 2) != 0 || strlen(name) > 4096 || !(fn = lookup()))
		return NULL;
	d = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}
