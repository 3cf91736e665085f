/* The one clock of the trace: CLOCK_MONOTONIC in nanoseconds (vDSO, no
 * system call on the hot path). */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t mt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
