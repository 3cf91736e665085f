/* An open-addressing hash map from 64-bit keys to fixed-size values stored
 * inline: linear probing, backward-shift deletion (no tombstones, so a map
 * that sees millions of insert/remove pairs stays short), one allocation
 * per resize and none per entry. A slot holds key, occupancy and value
 * together (one cache line for a 48-byte value). Any 64-bit key is valid:
 * occupancy is not a reserved key, since trace ids and addresses are
 * untrusted.
 *
 * One map for both halves (the library's writer thread and the reporter):
 * it never exits. An insert that needs memory it cannot get returns NULL
 * and leaves the map as it was; each caller decides (the library turns
 * the trace off, the reporter says so and exits: xmap_put, util-mem.h).
 * Not thread-safe: one thread at a time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct map {
	unsigned char *slots;
	size_t val_size;
	size_t slot_size;
	size_t cap; /* a power of two, or 0 */
	size_t len;
};

void map_init(struct map *m, size_t val_size);
void map_fini(struct map *m);

/* Room for n entries without growing; false (the map as it was) when
 * the memory for that many cannot be had. */
bool map_reserve(struct map *m, size_t n);

/* Remove key; copy its value to out (when not NULL). False if absent. */
bool map_remove(struct map *m, uint64_t key, void *out);

/* Remove the entry in slot at (map_get_at's), copying its value to out
 * (when not NULL): a lookup less than map_remove after map_get. */
void map_remove_at(struct map *m, size_t at, void *out);

/* Iterate: for (size_t i = 0; map_next(m, &i, &key, &val);) ... */
bool map_next(const struct map *m, size_t *pos, uint64_t *key, void **val);

/* ---- inline: the model does several lookups an event ---- */

/* slot layout: key at 0, occupied flag at 8, value from 16 */
#define MAP_SLOT_VAL 16

struct map_slot_head {
	uint64_t key;
	uint64_t used; /* 0, or the key's hash with MAP_USED: removal reads it */
};

#define MAP_USED (1ULL << 63) /* above any slot index */

/* splitmix64's finalizer: addresses are multiples of 256 or more and stack
 * ids are small and dense, so the low bits must be mixed from all of them. */
static inline uint64_t map_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline struct map_slot_head *map_slot_(const struct map *m, size_t i)
{
	return (struct map_slot_head *)(m->slots + i * m->slot_size);
}

/* Where key, of hash h, is (true), or the empty slot that ends its probe
 * (false). The map must have slots. */
static inline bool map_find_hashed_(const struct map *m, uint64_t key, uint64_t h, size_t *at)
{
	size_t mask = m->cap - 1;
	size_t i = h & mask;
	struct map_slot_head *s;

	while ((s = map_slot_(m, i))->used) {
		if (s->key == key) {
			*at = i;
			return true;
		}
		i = (i + 1) & mask;
	}
	*at = i;
	return false;
}

static inline bool map_find_(const struct map *m, uint64_t key, size_t *at)
{
	return map_find_hashed_(m, key, map_hash64(key), at);
}

/* The value stored under key, or NULL. Valid until the next insert or
 * remove. */
static inline void *map_get(const struct map *m, uint64_t key)
{
	size_t i;

	if (m->len == 0)
		return NULL;
	return map_find_(m, key, &i) ? (unsigned char *)map_slot_(m, i) + MAP_SLOT_VAL : NULL;
}

/* Ask the memory for the slot where key's probe starts: for a lookup a
 * few events ahead. Harmless on any map, empty or not. */
static inline void map_prefetch(const struct map *m, uint64_t key)
{
	const unsigned char *s;

	if (m->cap == 0)
		return;
	s = (const unsigned char *)map_slot_(m, map_hash64(key) & (m->cap - 1));
	__builtin_prefetch(s);
	__builtin_prefetch(s + m->slot_size - 1);
}

/* map_get that also tells the slot (for map_remove_at). */
static inline void *map_get_at(const struct map *m, uint64_t key, size_t *at)
{
	if (m->len == 0)
		return NULL;
	return map_find_(m, key, at) ? (unsigned char *)map_slot_(m, *at) + MAP_SLOT_VAL : NULL;
}

/* map_put when the map must grow first; NULL when it cannot. */
void *map_put_grow(struct map *m, uint64_t key, bool *inserted);

/* map_put whose value, when inserted, is left for the caller to fill
 * whole (what it holds is undefined): for an insert that writes its
 * value at once. NULL when out of memory (the map unchanged). */
static inline void *map_put_raw(struct map *m, uint64_t key, bool *inserted)
{
	struct map_slot_head *s;
	uint64_t h = map_hash64(key);
	size_t i;

	/* keep the load at most 1/2: most lookups of the live map are misses
	 * (new allocations), and a miss probes the whole cluster */
	if ((m->len + 1) * 2 > m->cap)
		return map_put_grow(m, key, inserted);
	if (map_find_hashed_(m, key, h, &i)) {
		if (inserted)
			*inserted = false;
		return (unsigned char *)map_slot_(m, i) + MAP_SLOT_VAL;
	}
	s = map_slot_(m, i);
	s->used = h | MAP_USED;
	s->key = key;
	m->len++;
	if (inserted)
		*inserted = true;
	return (unsigned char *)s + MAP_SLOT_VAL;
}

/* The value under key, inserted zero-filled (and *inserted set) when the key
 * was absent. Valid until the next insert or remove. NULL when out of
 * memory (the map unchanged). */
static inline void *map_put(struct map *m, uint64_t key, bool *inserted)
{
	bool added = false;
	void *v = map_put_raw(m, key, &added);

	if (v && added)
		memset(v, 0, m->val_size);
	if (inserted)
		*inserted = added;
	return v;
}

/* A map whose values are one uint64_t (map_init(m, sizeof(uint64_t))):
 * key to value, false when out of memory. */
static inline bool map_put_u64(struct map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = map_put_raw(m, key, NULL);

	if (!v)
		return false;
	*v = val;
	return true;
}

static inline uint64_t *map_get_u64(const struct map *m, uint64_t key)
{
	return map_get(m, key);
}
