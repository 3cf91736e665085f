/* Open addressing with linear probing and backward-shift deletion, so
 * there are no tombstones and a long alloc/free run (the threads test does
 * 160,000 pairs) never degrades the table. */
#include "sim-blockmap.h"

#include <stdlib.h>
#include <string.h>

static size_t
slot_of(const struct sim_blockmap *m, uintptr_t addr)
{
	/* Fibonacci hashing: block addresses share their low 9 bits. */
	uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (m->cap - 1);
}

static void
place(struct sim_blockmap *m, const struct sim_block *b)
{
	size_t i = slot_of(m, b->addr);

	while (m->slots[i].addr != 0)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = *b;
	m->count++;
}

static bool
grow(struct sim_blockmap *m)
{
	struct sim_blockmap bigger = { .cap = m->cap ? m->cap * 2 : 64 };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].addr != 0)
			place(&bigger, &m->slots[i]);
	free(m->slots);
	*m = bigger;
	return true;
}

void
sim_blockmap_fini(struct sim_blockmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

bool
sim_blockmap_insert(struct sim_blockmap *m, const struct sim_block *b)
{
	/* Keep the load under 3/4 so probe runs stay short. */
	if ((m->count + 1) * 4 > m->cap * 3 && !grow(m))
		return false;
	place(m, b);
	return true;
}

static size_t
index_of(const struct sim_blockmap *m, uintptr_t addr)
{
	if (m->cap == 0 || addr == 0)
		return SIZE_MAX;
	for (size_t i = slot_of(m, addr); m->slots[i].addr != 0;
	     i = (i + 1) & (m->cap - 1))
		if (m->slots[i].addr == addr)
			return i;
	return SIZE_MAX;
}

const struct sim_block *
sim_blockmap_find(const struct sim_blockmap *m, uintptr_t addr)
{
	size_t i = index_of(m, addr);

	return i == SIZE_MAX ? NULL : &m->slots[i];
}

/* Pull later members of the probe run back over the hole at i, so every
 * entry stays reachable from its home slot without a tombstone. */
static void
close_hole(struct sim_blockmap *m, size_t i)
{
	size_t mask = m->cap - 1;

	for (size_t j = (i + 1) & mask; m->slots[j].addr != 0; j = (j + 1) & mask) {
		size_t home = slot_of(m, m->slots[j].addr);
		/* Movable unless home lies cyclically in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].addr = 0;
}

bool
sim_blockmap_remove(struct sim_blockmap *m, uintptr_t addr, struct sim_block *out)
{
	size_t i = index_of(m, addr);

	if (i == SIZE_MAX)
		return false;
	if (out)
		*out = m->slots[i];
	close_hole(m, i);
	m->count--;
	return true;
}

/* Addresses of every block of one owner, for tearing down a context.
 * Returns the count; *addrs is malloc'd (NULL when none or out of memory). */
size_t
sim_blockmap_owned(const struct sim_blockmap *m, uint32_t owner, uintptr_t **addrs)
{
	size_t n = 0;

	*addrs = m->count ? malloc(m->count * sizeof(**addrs)) : NULL;
	if (!*addrs)
		return 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].addr != 0 && m->slots[i].owner == owner)
			(*addrs)[n++] = m->slots[i].addr;
	return n;
}

/* A block whose [addr, addr + size) meets [addr, addr + bytes), or NULL.
 * A scan of the whole table: for the small maps (host registrations,
 * address reservations) that need ranges rather than exact keys. */
const struct sim_block *
sim_blockmap_overlap(const struct sim_blockmap *m, uintptr_t addr, size_t bytes)
{
	for (size_t i = 0; i < m->cap; i++) {
		const struct sim_block *b = &m->slots[i];
		if (b->addr != 0 && b->addr < addr + bytes && addr < b->addr + b->size)
			return b;
	}
	return NULL;
}
