/* Saturating arithmetic on byte counts: the sizes come from an untrusted
 * trace, and a total must stop at UINT64_MAX (or 0) rather than wrap. */
#pragma once

#include <stdint.h>

/* a + b, at UINT64_MAX when it would wrap. */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* a - b, at 0 when b is larger. */
static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a < b ? 0 : a - b;
}

/* a + b for a, b >= 0 (times), at INT64_MAX when it would wrap. */
static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}
