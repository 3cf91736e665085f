#include "util-map.h"

#include <stdlib.h>

#define SLOT_VAL MAP_SLOT_VAL

static inline struct map_slot_head *slot(const struct map *m, size_t i)
{
	return map_slot_(m, i);
}

static inline void *slot_val(const struct map *m, size_t i)
{
	return m->slots + i * m->slot_size + SLOT_VAL;
}

void map_init(struct map *m, size_t val_size)
{
	*m = (struct map){
		.val_size = val_size,
		.slot_size = SLOT_VAL + ((val_size + 7) & ~(size_t)7),
	};
}

void map_fini(struct map *m)
{
	free(m->slots);
	map_init(m, m->val_size);
}

/* cap slots, zeroed; those of a cache line each start on one (the
 * reporter's live records). NULL when out of memory. */
static unsigned char *alloc_slots(size_t cap, size_t slot_size)
{
	void *p;

	if (cap > SIZE_MAX / slot_size)
		return NULL;
	if (slot_size % 64)
		return calloc(cap, slot_size);
	if (posix_memalign(&p, 64, cap * slot_size) != 0)
		return NULL;
	memset(p, 0, cap * slot_size);
	return p;
}

static bool rehash(struct map *m, size_t cap)
{
	unsigned char *slots = alloc_slots(cap, m->slot_size);
	struct map old = *m;

	if (!slots)
		return false;
	m->slots = slots;
	m->cap = cap;
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++) {
		size_t at;

		if (!slot(&old, i)->used)
			continue;
		map_find_(m, slot(&old, i)->key, &at);
		memcpy(slot(m, at), slot(&old, i), m->slot_size);
		m->len++;
	}
	free(old.slots);
	return true;
}

bool map_reserve(struct map *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 64;

	/* the load stays at most 1/2, as map_put_raw keeps it */
	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 4)
			return false;
		cap *= 2;
	}
	return cap == m->cap || rehash(m, cap);
}

void *map_put_grow(struct map *m, uint64_t key, bool *inserted)
{
	if (!rehash(m, m->cap ? m->cap * 2 : 64))
		return NULL;
	return map_put_raw(m, key, inserted);
}

/* Is home position h outside the cyclic interval (hole, j]? Then the entry
 * at j may move back into the hole without becoming unreachable. */
static inline bool may_fill(size_t hole, size_t j, size_t h)
{
	if (hole <= j)
		return h <= hole || h > j;
	return h <= hole && h > j;
}

bool map_remove(struct map *m, uint64_t key, void *out)
{
	size_t at;

	if (m->len == 0 || !map_find_(m, key, &at))
		return false;
	map_remove_at(m, at, out);
	return true;
}

/* A slot moved back into the hole: the common sizes known to the
 * compiler (a 48-byte value, a uint64_t: the live set's addresses), a
 * few moves instead of a call. */
static inline void copy_slot(unsigned char *to, const unsigned char *from, size_t n)
{
	if (n == 64)
		memcpy(to, from, 64);
	else if (n == MAP_SLOT_VAL + sizeof(uint64_t))
		memcpy(to, from, MAP_SLOT_VAL + sizeof(uint64_t));
	else
		memcpy(to, from, n);
}

void map_remove_at(struct map *m, size_t at, void *out)
{
	size_t mask = m->cap - 1;
	size_t hole = at, j;

	if (out && m->val_size == sizeof(uint64_t))
		memcpy(out, slot_val(m, hole), sizeof(uint64_t));
	else if (out)
		memcpy(out, slot_val(m, hole), m->val_size);
	for (j = (hole + 1) & mask; slot(m, j)->used; j = (j + 1) & mask) {
		size_t h = slot(m, j)->used & mask; /* the hash map_put kept */

		if (!may_fill(hole, j, h))
			continue;
		copy_slot((unsigned char *)slot(m, hole), (unsigned char *)slot(m, j), m->slot_size);
		hole = j;
	}
	slot(m, hole)->used = 0;
	m->len--;
}

bool map_next(const struct map *m, size_t *pos, uint64_t *key, void **val)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (!slot(m, i)->used)
			continue;
		if (key)
			*key = slot(m, i)->key;
		if (val)
			*val = slot_val(m, i);
		*pos = i + 1;
		return true;
	}
	*pos = m->cap;
	return false;
}
