/* Address-keyed table of live blocks, shared by the simulated driver's
 * device arenas, pinned host allocations, streams and contexts.
 * Not thread-safe: callers hold the driver lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_block {
	uintptr_t addr;  /* key; 0 marks an empty slot */
	size_t size;     /* bytes charged (rounded), 0 for handles */
	uint32_t owner;  /* id of the context that owns the block */
	uint32_t kind;   /* caller-defined (device, managed, pinned...) */
};

struct sim_blockmap {
	struct sim_block *slots;
	size_t cap;      /* power of two, or 0 before the first insert */
	size_t count;
};

/* sim-blockmap.c */
void sim_blockmap_fini(struct sim_blockmap *m);
bool sim_blockmap_insert(struct sim_blockmap *m, const struct sim_block *b);
const struct sim_block *sim_blockmap_find(const struct sim_blockmap *m, uintptr_t addr);
bool sim_blockmap_remove(struct sim_blockmap *m, uintptr_t addr, struct sim_block *out);
const struct sim_block *sim_blockmap_overlap(const struct sim_blockmap *m, uintptr_t addr,
					    size_t bytes);
size_t sim_blockmap_owned(const struct sim_blockmap *m, uint32_t owner,
			  uintptr_t **addrs);
