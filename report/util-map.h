/* An open-addressing hash map from 64-bit keys to fixed-size values stored
 * inline: linear probing, backward-shift deletion (no tombstones, so a map
 * that sees millions of insert/remove pairs stays short), one allocation
 * per resize and none per entry. A slot holds key, occupancy and value
 * together (one cache line for the live map). Any 64-bit key is valid:
 * occupancy is not a reserved key, since trace ids and addresses are
 * untrusted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_map {
	unsigned char *slots;
	size_t val_size;
	size_t slot_size;
	size_t cap; /* a power of two, or 0 */
	size_t len;
};

void map_init(struct mt_map *m, size_t val_size);
void map_fini(struct mt_map *m);

/* The value stored under key, or NULL. Valid until the next insert or
 * remove. */
void *map_get(const struct mt_map *m, uint64_t key);

/* The value under key, inserted zero-filled (and *inserted set) when the key
 * was absent. Valid until the next insert or remove. */
void *map_put(struct mt_map *m, uint64_t key, bool *inserted);

/* Remove key; copy its value to out (when not NULL). False if absent. */
bool map_remove(struct mt_map *m, uint64_t key, void *out);

/* Iterate: for (size_t i = 0; map_next(m, &i, &key, &val);) ... */
bool map_next(const struct mt_map *m, size_t *pos, uint64_t *key, void **val);
