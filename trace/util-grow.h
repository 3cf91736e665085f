/* A growing array that fails instead of exiting: the capture library must
 * go on when memory runs out (the writer's arrays, trace-cache.c's; the
 * reporter's own arrays exit instead, util-mem.h's grow_array). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* a (of *cap elements of size bytes) with room for n: a itself when it
 * has it, else reallocated to the first power-of-two multiple of first
 * (or of *cap) that holds n, *cap updated and, with zero, the new
 * elements zeroed. NULL when memory or the size runs out: a and *cap are
 * then as they were. */
static inline void *trace_grow(void *a, size_t *cap, size_t n, size_t size, size_t first,
			       bool zero)
{
	if (n <= *cap)
		return a;
	size_t c = *cap ? *cap : first;
	while (c < n) {
		if (c > SIZE_MAX / 2)
			return NULL;
		c *= 2;
	}
	if (c > SIZE_MAX / size)
		return NULL;
	char *p = realloc(a, c * size);
	if (!p)
		return NULL;
	if (zero)
		memset(p + *cap * size, 0, (c - *cap) * size);
	*cap = c;
	return p;
}
