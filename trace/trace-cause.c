/* The rules of trace-cause.h that are not inline: names, thresholds,
 * which cause leads. */
#include "trace-cause.h"

#include <stddef.h>

static const char *const cause_names[] = {
	[TRACE_CAUSE_GROWTH] = "growth",
	[TRACE_CAUSE_TOO_BIG] = "too_big",
	[TRACE_CAUSE_FRAGMENTATION] = "fragmentation",
	[TRACE_CAUSE_ORPHANED_GRAPHS] = "orphaned_graphs",
	[TRACE_CAUSE_NOT_OURS] = "not_ours",
	[TRACE_CAUSE_PREALLOCATED] = "preallocated",
	[TRACE_CAUSE_ALLOCATOR_LIMIT] = "allocator_limit",
};

const char *trace_cause_name(enum trace_cause c)
{
	if ((size_t)c < sizeof(cause_names) / sizeof(*cause_names) && cause_names[c])
		return cause_names[c];
	return "unknown";
}

uint64_t trace_growth_floor(uint64_t device_peak)
{
	uint64_t floor = (uint64_t)(TRACE_GROWTH_SHARE * (double)device_peak);

	return floor < TRACE_GROWTH_MIN_BYTES ? TRACE_GROWTH_MIN_BYTES : floor;
}

bool trace_rounds_grew(const struct trace_rounds *r, uint64_t round, uint64_t floor)
{
	if (r->kept < TRACE_GROWTH_MIN_ROUNDS || r->kept_bytes < floor)
		return false;
	return (r->last_kept - r->first_kept) * 2 >= round - r->first_kept;
}

bool trace_cause_fragmentation(uint64_t device_free, uint64_t requested)
{
	return device_free > 0 && device_free > requested;
}

bool trace_cause_cache_fragmentation(uint64_t requested, uint64_t cache_free, uint64_t largest_free,
				     uint64_t device_free)
{
	return requested && requested > largest_free && requested > device_free &&
	       requested <= cache_free;
}

bool trace_cause_not_ours(uint64_t unexplained, uint64_t requested, uint64_t device_total)
{
	if (!unexplained)
		return false;
	return unexplained >= requested ||
	       (double)unexplained >= TRACE_NOT_OURS_SHARE * (double)device_total;
}

bool trace_cause_not_ours_leads(uint64_t unexplained, uint64_t requested, uint64_t live)
{
	return unexplained >= requested && unexplained >= live;
}

bool trace_cause_arena(uint64_t bytes, uint64_t device_total)
{
	return device_total && (double)bytes >= TRACE_ARENA_SHARE * (double)device_total;
}

bool trace_cause_beyond_device(uint64_t requested, uint64_t device_total)
{
	return device_total && requested > device_total;
}

uint64_t trace_cause_arena_limit(uint64_t reserved, uint64_t regions, uint64_t device_total)
{
	return regions == 1 && trace_cause_arena(reserved, device_total) ? reserved : 0;
}

bool trace_cause_arena_fragmentation(uint64_t requested, uint64_t arena_free,
				     uint64_t largest_free, uint64_t arena)
{
	return trace_cause_cache_fragmentation(requested, arena_free, largest_free, 0) &&
	       (double)arena_free >= TRACE_ARENA_PIECES_SHARE * (double)arena &&
	       arena_free / TRACE_ARENA_PIECES_ROOM >= requested;
}

bool trace_cause_beyond_arena(uint64_t requested, uint64_t step, uint64_t limit)
{
	return limit && (requested > limit || step > limit - requested);
}

bool trace_cause_allocator_limit(bool cuda_failed, bool own_oom)
{
	return own_oom && !cuda_failed;
}

uint64_t trace_cause_limit_room(uint64_t limit, uint64_t reserved)
{
	return limit > reserved ? limit - reserved : 0;
}

int trace_cause_rank(enum trace_cause c, bool not_ours_leads, bool beyond_device)
{
	if (c == TRACE_CAUSE_TOO_BIG && beyond_device)
		return -1;
	switch (c) {
	case TRACE_CAUSE_ALLOCATOR_LIMIT: return -2;
	case TRACE_CAUSE_ORPHANED_GRAPHS: return 0;
	case TRACE_CAUSE_GROWTH: return 1;
	case TRACE_CAUSE_FRAGMENTATION: return 2;
	case TRACE_CAUSE_NOT_OURS: return not_ours_leads ? 3 : 6;
	case TRACE_CAUSE_PREALLOCATED: return 4;
	case TRACE_CAUSE_TOO_BIG: return 5;
	}
	return 7;
}
