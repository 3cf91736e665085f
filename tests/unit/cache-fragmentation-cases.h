/* The cases of fragmentation inside PyTorch's cache
 * (trace_cause_cache_fragmentation), fed to both halves: the library's
 * answer on stderr (tests/unit/test-live-cause.c) and the reporter's rule
 * that its text, HTML and JSON give (tests/report/test-render.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct cache_fragmentation_case {
	const char *what;
	uint64_t requested, cache_free, largest_free;
	uint64_t device_free; /* 0: not known */
	bool fragmentation;
};

#define CFC_MiB (1ull << 20)

static const struct cache_fragmentation_case cache_fragmentation_cases[] = {
	/* the cache's free and the device's together are no fragmentation:
	 * a graph kept every step fails so (issue 46) */
	{ "cache and device together", 8 * CFC_MiB, 5 * CFC_MiB, 3 * CFC_MiB, 4 * CFC_MiB, false },
	{ "together, to the byte", 8 * CFC_MiB, 5 * CFC_MiB, 3 * CFC_MiB, 3 * CFC_MiB, false },
	{ "the cache alone, to the byte", 8 * CFC_MiB, 8 * CFC_MiB, 3 * CFC_MiB, 4 * CFC_MiB, true },
	{ "the cache alone, device unknown", 8 * CFC_MiB, 10 * CFC_MiB, 3 * CFC_MiB, 0, true },
	{ "the cache alone, device short", 8 * CFC_MiB, 10 * CFC_MiB, 3 * CFC_MiB, CFC_MiB, true },
	{ "a free block holds it", 8 * CFC_MiB, 10 * CFC_MiB, 8 * CFC_MiB, 0, false },
	{ "the device holds it", 8 * CFC_MiB, 10 * CFC_MiB, 3 * CFC_MiB, 8 * CFC_MiB, false },
	{ "not enough free anywhere", 8 * CFC_MiB, 3 * CFC_MiB, 2 * CFC_MiB, 4 * CFC_MiB, false },
	{ "the cache short, device unknown", 8 * CFC_MiB, 7 * CFC_MiB, 3 * CFC_MiB, 0, false },
	{ "an empty cache", 8 * CFC_MiB, 0, 0, 4 * CFC_MiB, false },
	{ "no request", 0, 10 * CFC_MiB, 0, 0, false },
	{ "near the top of the range", UINT64_MAX, UINT64_MAX, 0, 1, true },
};

#define CACHE_FRAGMENTATION_CASES \
	(sizeof(cache_fragmentation_cases) / sizeof(*cache_fragmentation_cases))
