/* A map from non-zero 64-bit keys to 64-bit values: open addressing with
 * linear probing and backward-shift deletion (no tombstones, so a map with
 * heavy churn stays fast). Used by the writer thread only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys; /* 0 = empty */
	uint64_t *vals;
	size_t mask;
	size_t count;
};

bool u64map_init(struct u64map *m, size_t log2_cap);
void u64map_fini(struct u64map *m);
/* Returns a pointer to the value of key, or NULL. */
uint64_t *u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or overwrites; false when out of memory. */
bool u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Removes key; returns true and its value in *val when it was there. */
bool u64map_del(struct u64map *m, uint64_t key, uint64_t *val);

/* The slot where key's probe starts. */
static inline size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & m->mask;
}

/* Ask the memory for that slot's key and value, for a lookup soon. */
static inline void u64map_prefetch(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->keys)
		return;
	i = u64map_slot(m, key);
	__builtin_prefetch(&m->keys[i]);
	__builtin_prefetch(&m->vals[i]);
}
