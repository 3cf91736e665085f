#include "util-map.h"

#include "util-mem.h"

/* slot layout: key at 0, occupied flag at 8, value from 16 */
#define SLOT_VAL 16

struct slot_head {
	uint64_t key;
	uint64_t used;
};

/* splitmix64's finalizer: addresses are multiples of 256 or more and stack
 * ids are small and dense, so the low bits must be mixed from all of them. */
static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline struct slot_head *slot(const struct mt_map *m, size_t i)
{
	return (struct slot_head *)(m->slots + i * m->slot_size);
}

static inline void *slot_val(const struct mt_map *m, size_t i)
{
	return m->slots + i * m->slot_size + SLOT_VAL;
}

void map_init(struct mt_map *m, size_t val_size)
{
	*m = (struct mt_map){
		.val_size = val_size,
		.slot_size = SLOT_VAL + ((val_size + 7) & ~(size_t)7),
	};
}

void map_fini(struct mt_map *m)
{
	free(m->slots);
	map_init(m, m->val_size);
}

static bool find_slot(const struct mt_map *m, uint64_t key, size_t *at)
{
	size_t mask = m->cap - 1;
	size_t i = hash64(key) & mask;
	struct slot_head *s;

	while ((s = slot(m, i))->used) {
		if (s->key == key) {
			*at = i;
			return true;
		}
		i = (i + 1) & mask;
	}
	*at = i;
	return false;
}

void *map_get(const struct mt_map *m, uint64_t key)
{
	size_t i;

	if (m->len == 0)
		return NULL;
	return find_slot(m, key, &i) ? slot_val(m, i) : NULL;
}

static void rehash(struct mt_map *m, size_t cap)
{
	struct mt_map old = *m;

	m->cap = cap;
	m->len = 0;
	m->slots = mt_xcalloc(cap, m->slot_size);
	for (size_t i = 0; i < old.cap; i++) {
		size_t at;

		if (!slot(&old, i)->used)
			continue;
		find_slot(m, slot(&old, i)->key, &at);
		memcpy(slot(m, at), slot(&old, i), m->slot_size);
		m->len++;
	}
	free(old.slots);
}

void *map_put(struct mt_map *m, uint64_t key, bool *inserted)
{
	struct slot_head *s;
	size_t i;

	/* keep the load at most 1/2: most lookups of the live map are misses
	 * (new allocations), and a miss probes the whole cluster */
	if ((m->len + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : 64);
	if (find_slot(m, key, &i)) {
		if (inserted)
			*inserted = false;
		return slot_val(m, i);
	}
	s = slot(m, i);
	s->used = 1;
	s->key = key;
	memset(slot_val(m, i), 0, m->val_size);
	m->len++;
	if (inserted)
		*inserted = true;
	return slot_val(m, i);
}

/* Is home position h outside the cyclic interval (hole, j]? Then the entry
 * at j may move back into the hole without becoming unreachable. */
static inline bool may_fill(size_t hole, size_t j, size_t h)
{
	if (hole <= j)
		return h <= hole || h > j;
	return h <= hole && h > j;
}

bool map_remove(struct mt_map *m, uint64_t key, void *out)
{
	size_t mask = m->cap - 1;
	size_t hole, j;

	if (m->len == 0 || !find_slot(m, key, &hole))
		return false;
	if (out)
		memcpy(out, slot_val(m, hole), m->val_size);
	for (j = (hole + 1) & mask; slot(m, j)->used; j = (j + 1) & mask) {
		size_t h = hash64(slot(m, j)->key) & mask;

		if (!may_fill(hole, j, h))
			continue;
		memcpy(slot(m, hole), slot(m, j), m->slot_size);
		hole = j;
	}
	slot(m, hole)->used = 0;
	m->len--;
	return true;
}

bool map_next(const struct mt_map *m, size_t *pos, uint64_t *key, void **val)
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
