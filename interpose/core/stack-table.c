/* Interned stacks, shared by every application thread without a lock.
 *
 * An open-addressing table maps the hash of a frame array to a stack id;
 * frames live in an append-only arena. A slot is claimed by CAS on its
 * hash, then its id is published with a release store; a reader that finds
 * the hash but not yet the id waits for it (a few instructions). Nothing is
 * ever removed, so no reader can see freed memory. Memory is reserved up
 * front with MAP_NORESERVE and only touched as stacks arrive: the bound is
 * the reservation (see docs/architecture.md). When the table is full,
 * mt_stack_intern returns 0 ("no stack") and events keep flowing. */
#include "core.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct slot {
	_Atomic uint64_t hash;
	_Atomic uint32_t id;
	uint32_t pad;
};

struct entry {
	uint64_t offset; /* into the arena */
	uint32_t n;
	uint32_t pad;
};

struct mt_stack_table {
	struct slot *slots;
	size_t mask;
	struct entry *entries; /* by id; entries[0] unused */
	uint32_t max_ids;
	_Atomic uint32_t next_id;
	uintptr_t *arena;
	size_t arena_cap;
	_Atomic size_t arena_used;
};

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct mt_stack_table *mt_stack_table_new(unsigned log2_slots, size_t max_frames)
{
	struct mt_stack_table *t = reserve(sizeof(*t));
	if (!t)
		return NULL;
	size_t nslots = (size_t)1 << log2_slots;
	t->mask = nslots - 1;
	t->max_ids = (uint32_t)(nslots / 2); /* keep the load factor at most 1/2 */
	t->slots = reserve(nslots * sizeof(struct slot));
	t->entries = reserve((size_t)(t->max_ids + 1) * sizeof(struct entry));
	t->arena_cap = max_frames;
	t->arena = reserve(max_frames * sizeof(uintptr_t));
	atomic_init(&t->next_id, 1);
	if (!t->slots || !t->entries || !t->arena) {
		mt_stack_table_free(t);
		return NULL;
	}
	return t;
}

void mt_stack_table_free(struct mt_stack_table *t)
{
	if (!t)
		return;
	if (t->slots)
		munmap(t->slots, (t->mask + 1) * sizeof(struct slot));
	if (t->entries)
		munmap(t->entries, (size_t)(t->max_ids + 1) * sizeof(struct entry));
	if (t->arena)
		munmap(t->arena, t->arena_cap * sizeof(uintptr_t));
	munmap(t, sizeof(*t));
}

/* Four independent lanes, one multiply a frame each, mixed at the end:
 * the multiplies of a stack's frames overlap instead of waiting for one
 * another (a single chain costs a multiply's latency a frame). The
 * final mix (MurmurHash3's fmix64) spreads every lane's high bits into
 * the low ones that pick the slot. */
static uint64_t hash_frames(const uintptr_t *ips, unsigned n)
{
	const uint64_t k = 0xff51afd7ed558ccdull;
	uint64_t h0 = 0x9e3779b97f4a7c15ull ^ n, h1 = 0xc2b2ae3d27d4eb4full,
		 h2 = 0x165667b19e3779f9ull, h3 = 0x27d4eb2f165667c5ull;
	unsigned i = 0;
	for (; i + 4 <= n; i += 4) {
		h0 = (h0 ^ ips[i]) * k;
		h1 = (h1 ^ ips[i + 1]) * k;
		h2 = (h2 ^ ips[i + 2]) * k;
		h3 = (h3 ^ ips[i + 3]) * k;
	}
	for (; i < n; i++)
		h0 = (h0 ^ ips[i]) * k;
	uint64_t h = h0 ^ (h1 << 16 | h1 >> 48) ^ (h2 << 32 | h2 >> 32) ^ (h3 << 48 | h3 >> 16);
	h ^= h >> 33;
	h *= k;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h ? h : 1; /* 0 marks an empty slot */
}

static uint32_t wait_id(struct slot *s)
{
	uint32_t id;
	while (!(id = atomic_load_explicit(&s->id, memory_order_acquire)))
		sched_yield();
	return id;
}

static bool same_stack(const struct mt_stack_table *t, uint32_t id, const uintptr_t *ips,
		       unsigned n)
{
	const struct entry *e = &t->entries[id];
	return e->n == n && !memcmp(&t->arena[e->offset], ips, n * sizeof(*ips));
}

/* The slot's hash is claimed: store the frames and publish the id. An id
 * of UINT32_MAX marks a slot whose frames did not fit: it matches nothing. */
static uint32_t fill_slot(struct mt_stack_table *t, struct slot *s, const uintptr_t *ips,
			  unsigned n)
{
	uint32_t id = atomic_fetch_add(&t->next_id, 1);
	size_t off = atomic_fetch_add(&t->arena_used, n);
	if (id > t->max_ids || off + n > t->arena_cap) {
		atomic_store_explicit(&s->id, UINT32_MAX, memory_order_release);
		return 0;
	}
	memcpy(&t->arena[off], ips, n * sizeof(*ips));
	t->entries[id].offset = off;
	t->entries[id].n = n;
	atomic_store_explicit(&s->id, id, memory_order_release);
	return id;
}

uint32_t mt_stack_intern(struct mt_stack_table *t, const uintptr_t *ips, unsigned n)
{
	uint64_t h = hash_frames(ips, n);
	for (size_t probe = 0, i = h & t->mask; probe <= t->mask; probe++, i = (i + 1) & t->mask) {
		struct slot *s = &t->slots[i];
		uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
		if (cur == 0) {
			/* full: claiming slots for stacks we cannot store would
			 * only make every later probe longer */
			if (atomic_load_explicit(&t->next_id, memory_order_relaxed) > t->max_ids)
				return 0;
			if (atomic_compare_exchange_strong(&s->hash, &cur, h))
				return fill_slot(t, s, ips, n);
			/* lost the race: cur now holds the winner's hash */
		}
		if (cur != h)
			continue;
		uint32_t id = wait_id(s);
		if (id != UINT32_MAX && same_stack(t, id, ips, n))
			return id;
	}
	return 0;
}

const uintptr_t *mt_stack_get(const struct mt_stack_table *t, uint32_t id, unsigned *n)
{
	if (id == 0 || id > t->max_ids || id >= atomic_load(&t->next_id)) {
		*n = 0;
		return NULL;
	}
	*n = t->entries[id].n;
	return &t->arena[t->entries[id].offset];
}

uint32_t mt_stack_count(const struct mt_stack_table *t)
{
	uint32_t next = atomic_load(&t->next_id) - 1;
	return next < t->max_ids ? next : t->max_ids;
}
