#include "util-mem.h"

#include <stdarg.h>
#include <stdint.h>

void out_of_memory(size_t size)
{
	fprintf(stderr, "memtrace report: out of memory (needed %zu more bytes); "
			"the trace may be too large for this machine\n",
		size);
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		out_of_memory(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xcalloc_lines(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	if (posix_memalign(&p, 64, n && size ? n * size : 1) != 0)
		out_of_memory(n * size);
	memset(p, 0, n * size);
	return p;
}

void *xrealloc(void *p, size_t n, size_t size)
{
	void *q;

	if (size && n > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	q = realloc(p, n && size ? n * size : 1);
	if (!q)
		out_of_memory(n * size);
	return q;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		out_of_memory(strlen(s) + 1);
	return d;
}

void grow_array(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return;
	while (n < need)
		n *= 2;
	*p = xrealloc(*p, n, elem);
	*cap = n;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory(strlen(fmt));
	return s;
}
