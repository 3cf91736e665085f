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

/* Looked up once; threads that race look it up alike. */
static trace_demangle_fn lookup(void)
{
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE))
		trace_demangle_use((trace_demangle_fn)(uintptr_t)dlsym(RTLD_DEFAULT,
									"__cxa_demangle"));
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
