/* Allocation and scoped-cleanup helpers for the reporter.
 *
 * The reporter is a command-line tool: running out of memory is reported
 * once and ends the process (exit 1), so callers never handle NULL from
 * these helpers. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util-map.h"

/* Say so once and end the process (exit 1): what the helpers below do
 * when malloc fails, for callers of code that returns the failure
 * (trace/trace-live-set.h). */
void __attribute__((noreturn)) out_of_memory(size_t size);
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
/* xcalloc on a cache line's boundary (64 bytes); free() frees it. */
void *xcalloc_lines(size_t n, size_t size);
void *xrealloc(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* map_put and map_put_raw (trace/util-map.h), which return NULL when
 * out of memory: the reporter says so and exits. */
static inline void *xmap_put(struct map *m, uint64_t key, bool *inserted)
{
	void *v = map_put(m, key, inserted);

	if (!v)
		out_of_memory(m->slot_size * (m->cap ? m->cap * 2 : 64));
	return v;
}

static inline void *xmap_put_raw(struct map *m, uint64_t key, bool *inserted)
{
	void *v = map_put_raw(m, key, inserted);

	if (!v)
		out_of_memory(m->slot_size * (m->cap ? m->cap * 2 : 64));
	return v;
}

/* Grow *p (an array of *cap elements of size elem) so it holds at least
 * need elements. */
void grow_array(void *pp, size_t *cap, size_t need, size_t elem);

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _autofree_ __attribute__((cleanup(freep)))
#define _autoclose_ __attribute__((cleanup(fclosep)))

#define ARRAY_LENGTH(a) (sizeof(a) / sizeof((a)[0]))
