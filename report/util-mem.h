/* Allocation and scoped-cleanup helpers for the reporter.
 *
 * The reporter is a command-line tool: running out of memory is reported
 * once and ends the process (exit 1), so callers never handle NULL from
 * these helpers. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *mt_xmalloc(size_t size);
void *mt_xcalloc(size_t n, size_t size);
void *mt_xrealloc(void *p, size_t n, size_t size);
char *mt_xstrdup(const char *s);
char *mt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *p (an array of *cap elements of size elem) so it holds at least
 * need elements. */
void mt_grow(void *pp, size_t *cap, size_t need, size_t elem);

static inline void mt_freep(void *p)
{
	free(*(void **)p);
}

static inline void mt_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _autofree_ __attribute__((cleanup(mt_freep)))
#define _autoclose_ __attribute__((cleanup(mt_fclosep)))

#define ARRAY_LENGTH(a) (sizeof(a) / sizeof((a)[0]))
