/* First-fit allocator over a range of addresses: a simulated device's
 * memory, a pool's chunk, the reserved address space, the imported IPC
 * region. Deterministic: the same sequence of calls yields the same
 * addresses. Not thread-safe: callers hold the driver lock. */
#pragma once

#include "sim-blockmap.h"

/* Every allocation is charged in multiples of this. */
#define SIM_ARENA_GRANULE ((size_t)512)

struct sim_extent {
	size_t off;
	size_t len;
};

struct sim_arena {
	uintptr_t base;
	size_t size;                /* multiple of SIM_ARENA_GRANULE */
	size_t used;                /* rounded bytes of live blocks */
	size_t limit;               /* most bytes live at once; size unless set */
	size_t over;                /* bytes of blocks beyond the limit (sim_arena_alloc_over) */
	struct sim_blockmap overmap; /* those blocks */
	struct sim_extent *holes;   /* free extents, sorted by offset, coalesced */
	size_t nholes;
	size_t capholes;
	struct sim_blockmap live;
};

/* sim-arena.c */
size_t sim_arena_round(size_t bytes);
bool sim_arena_init(struct sim_arena *a, uintptr_t base, size_t size);
void sim_arena_set_limit(struct sim_arena *a, size_t limit);
void sim_arena_fini(struct sim_arena *a);
bool sim_arena_alloc(struct sim_arena *a, size_t bytes, uint32_t owner,
		     uint32_t kind, uintptr_t *addr);
bool sim_arena_alloc_aligned(struct sim_arena *a, size_t bytes, size_t align, uint32_t owner,
			     uint32_t kind, uintptr_t *addr);
bool sim_arena_alloc_over(struct sim_arena *a, size_t bytes, uint32_t owner, uint32_t kind,
			  uintptr_t *addr);
const struct sim_block *sim_arena_find(const struct sim_arena *a, uintptr_t addr);
bool sim_arena_free(struct sim_arena *a, uintptr_t addr);
size_t sim_arena_release_owner(struct sim_arena *a, uint32_t owner);
bool sim_arena_contains(const struct sim_arena *a, uintptr_t addr, size_t bytes);
