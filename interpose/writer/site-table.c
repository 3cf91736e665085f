/* The writer's interned event sites (schema version 2, sites table):
 * open addressing with linear probing on the whole key, ids from 1 in
 * the order first seen. Writer thread only; it never shrinks (a program
 * has few sites: stacks times threads times streams, not events). */
#include "core.h"
#include "writer.h"

#include <stdlib.h>
#include <string.h>

struct slot {
	struct mt_site_key key;
	uint32_t id; /* 0: empty */
};

struct mt_site_table {
	struct slot *slots;
	size_t mask;
	uint32_t count;
};

static uint64_t hash_key(const struct mt_site_key *k)
{
	uint64_t w[sizeof(*k) / 8], h = 0x9e3779b97f4a7c15ull;
	memcpy(w, k, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static bool alloc_slots(struct mt_site_table *t, size_t cap)
{
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	return t->slots != NULL;
}

struct mt_site_table *mt_site_table_new(void)
{
	struct mt_site_table *t = calloc(1, sizeof(*t));
	if (t && !alloc_slots(t, 256)) {
		free(t);
		t = NULL;
	}
	return t;
}

void mt_site_table_free(struct mt_site_table *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static struct slot *find(const struct mt_site_table *t, const struct mt_site_key *k)
{
	size_t i = (size_t)hash_key(k) & t->mask;
	while (t->slots[i].id && memcmp(&t->slots[i].key, k, sizeof(*k)))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static bool grow(struct mt_site_table *t)
{
	struct mt_site_table bigger = { .count = t->count };
	if (!alloc_slots(&bigger, (t->mask + 1) * 2))
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].id)
			*find(&bigger, &t->slots[i].key) = t->slots[i];
	free(t->slots);
	*t = bigger;
	return true;
}

uint32_t mt_site_intern(struct mt_site_table *t, const struct mt_site_key *k, bool *added)
{
	struct slot *s = find(t, k);
	*added = false;
	if (s->id)
		return s->id;
	if ((t->count + 1) * 4 > (t->mask + 1) * 3 || t->count == UINT32_MAX - 1) {
		if (t->count == UINT32_MAX - 1 || !grow(t))
			return 0;
		s = find(t, k);
	}
	s->key = *k;
	s->id = ++t->count;
	*added = true;
	return s->id;
}
