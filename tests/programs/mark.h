/* memtrace_mark when the program runs under memtrace, nothing otherwise:
 * found with dlsym(RTLD_DEFAULT), as docs/capture.md suggests, so the
 * program runs unchanged without the tool. Header only; the program links
 * -ldl (dl_dep); RTLD_DEFAULT needs _GNU_SOURCE, which the project sets. */
#pragma once

#include <dlfcn.h>
#include <stdbool.h>

static inline void
program_mark(const char *label)
{
	static void (*mark)(const char *);
	static bool looked;

	if (!looked) {
		*(void **)&mark = dlsym(RTLD_DEFAULT, "memtrace_mark");
		looked = true;
	}
	if (mark)
		mark(label);
}
