#include "u64map.h"

#include <stdlib.h>

static size_t slot_of(const struct u64map *m, uint64_t key)
{
	return u64map_slot(m, key);
}

bool u64map_init(struct u64map *m, size_t log2_cap)
{
	size_t cap = (size_t)1 << log2_cap;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	m->count = 0;
	if (!m->keys || !m->vals) {
		u64map_fini(m);
		return false;
	}
	return true;
}

void u64map_fini(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->mask = m->count = 0;
}

uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->keys || !key)
		return NULL;
	for (size_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == 0)
			return NULL;
	}
}

static bool grow(struct u64map *m)
{
	struct u64map bigger;
	size_t log2 = 0;
	while (((size_t)1 << log2) <= m->mask)
		log2++;
	if (!u64map_init(&bigger, log2 + 1))
		return false;
	for (size_t i = 0; i <= m->mask; i++)
		if (m->keys[i])
			u64map_put(&bigger, m->keys[i], m->vals[i]);
	u64map_fini(m);
	*m = bigger;
	return true;
}

bool u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if (!key)
		return false;
	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && !grow(m))
		return false;
	size_t i = slot_of(m, key);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	if (!m->keys[i])
		m->count++;
	m->keys[i] = key;
	m->vals[i] = val;
	return true;
}

bool u64map_del(struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->keys || !key)
		return false;
	size_t i = slot_of(m, key);
	while (m->keys[i] != key) {
		if (!m->keys[i])
			return false;
		i = (i + 1) & m->mask;
	}
	if (val)
		*val = m->vals[i];
	/* Shift later members of the cluster back so lookups need no tombstones. */
	for (size_t j = (i + 1) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
		size_t home = slot_of(m, m->keys[j]);
		bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->count--;
	return true;
}
