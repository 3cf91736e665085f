/* The free list is a sorted array of holes: first fit is a scan from the
 * lowest address, and a freed block merges with its neighbours, so the
 * addresses a test sees follow from its call sequence alone. */
#include "sim-arena.h"

#include <stdlib.h>
#include <string.h>

/* Rounded size, or 0 when rounding would overflow. */
size_t
sim_arena_round(size_t bytes)
{
	if (bytes > SIZE_MAX - (SIM_ARENA_GRANULE - 1))
		return 0;
	return (bytes + SIM_ARENA_GRANULE - 1) & ~(SIM_ARENA_GRANULE - 1);
}

static bool
reserve_holes(struct sim_arena *a, size_t n)
{
	struct sim_extent *h;
	size_t cap;

	if (n <= a->capholes)
		return true;
	cap = a->capholes ? a->capholes * 2 : 16;
	h = realloc(a->holes, cap * sizeof(*h));
	if (!h)
		return false;
	a->holes = h;
	a->capholes = cap;
	return true;
}

bool
sim_arena_init(struct sim_arena *a, uintptr_t base, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->base = base;
	a->size = size & ~(SIM_ARENA_GRANULE - 1);
	a->limit = a->size;
	if (a->size == 0)
		return true;
	if (!reserve_holes(a, 1))
		return false;
	a->holes[0] = (struct sim_extent){ .off = 0, .len = a->size };
	a->nholes = 1;
	return true;
}

/* At most limit bytes live at once, however much address space the arena
 * spans: a device's memory is pages behind a larger virtual range, so an
 * allocation fails when the memory is used up, not when the free memory is
 * in pieces. */
void
sim_arena_set_limit(struct sim_arena *a, size_t limit)
{
	a->limit = limit < a->size ? limit & ~(SIM_ARENA_GRANULE - 1) : a->size;
}

void
sim_arena_fini(struct sim_arena *a)
{
	free(a->holes);
	sim_blockmap_fini(&a->live);
	sim_blockmap_fini(&a->overmap);
	memset(a, 0, sizeof(*a));
}

static void
remove_hole(struct sim_arena *a, size_t i)
{
	memmove(&a->holes[i], &a->holes[i + 1],
		(a->nholes - i - 1) * sizeof(*a->holes));
	a->nholes--;
}

/* The first hole that holds len bytes starting at an address aligned to
 * align; *start is that offset. SIZE_MAX when none does. */
static size_t
first_fit(const struct sim_arena *a, size_t len, size_t align, size_t *start)
{
	for (size_t i = 0; i < a->nholes; i++) {
		uintptr_t at = a->base + a->holes[i].off;
		size_t pad = (size_t)(((at + align - 1) & ~(uintptr_t)(align - 1)) - at);

		if (a->holes[i].len >= len && a->holes[i].len - len >= pad) {
			*start = a->holes[i].off + pad;
			return i;
		}
	}
	return SIZE_MAX;
}

/* Carve [start, start + len) out of hole i, keeping what is left on
 * either side. */
static bool
take(struct sim_arena *a, size_t i, size_t start, size_t len)
{
	struct sim_extent h = a->holes[i];
	size_t before = start - h.off, after = h.len - before - len;

	if (before && after) {
		if (!reserve_holes(a, a->nholes + 1))
			return false;
		memmove(&a->holes[i + 1], &a->holes[i], (a->nholes - i) * sizeof(*a->holes));
		a->nholes++;
		a->holes[i].len = before;
		a->holes[i + 1] = (struct sim_extent){ .off = start + len, .len = after };
	} else if (before) {
		a->holes[i].len = before;
	} else if (after) {
		a->holes[i] = (struct sim_extent){ .off = start + len, .len = after };
	} else {
		remove_hole(a, i);
	}
	return true;
}

/* False when the request does not fit (or its bookkeeping cannot be
 * allocated): the caller reports out of memory and *addr is untouched.
 * align (a power of two) applies to the address, not the offset. */
bool
sim_arena_alloc_aligned(struct sim_arena *a, size_t bytes, size_t align, uint32_t owner,
			uint32_t kind, uintptr_t *addr)
{
	size_t len = sim_arena_round(bytes), start = 0;
	size_t i = len && len <= a->limit - a->used ? first_fit(a, len, align < SIM_ARENA_GRANULE ? SIM_ARENA_GRANULE : align,
				   &start) : SIZE_MAX;
	struct sim_block b;

	if (i == SIZE_MAX)
		return false;
	b = (struct sim_block){ .addr = a->base + start, .size = len, .owner = owner,
				.kind = kind };
	if (!sim_blockmap_insert(&a->live, &b))
		return false;
	if (!take(a, i, start, len)) {
		sim_blockmap_remove(&a->live, b.addr, NULL);
		return false;
	}
	a->used += len;
	*addr = b.addr;
	return true;
}

bool
sim_arena_alloc(struct sim_arena *a, size_t bytes, uint32_t owner,
		uint32_t kind, uintptr_t *addr)
{
	return sim_arena_alloc_aligned(a, bytes, SIM_ARENA_GRANULE, owner, kind, addr);
}

/* Beyond the limit, in the address space above it: managed memory
 * oversubscribes the device (its pages live on the host while the device
 * is full), so it is not charged to used; a later sim_arena_free of it
 * takes it off over. False when the address space is used up too. */
bool
sim_arena_alloc_over(struct sim_arena *a, size_t bytes, uint32_t owner, uint32_t kind,
		     uintptr_t *addr)
{
	size_t limit = a->limit, used = a->used;
	struct sim_block b;
	bool ok;

	a->limit = a->size;
	ok = sim_arena_alloc(a, bytes, owner, kind, addr);
	a->limit = limit;
	if (!ok)
		return false;
	b = *sim_arena_find(a, *addr);
	if (!sim_blockmap_insert(&a->overmap, &b)) {
		sim_arena_free(a, *addr);
		return false;
	}
	a->over += a->used - used;
	a->used = used;
	return true;
}

/* Index of the first hole that starts after off. */
static size_t
hole_after(const struct sim_arena *a, size_t off)
{
	size_t lo = 0, hi = a->nholes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->holes[mid].off > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static bool
merge_with_neighbours(struct sim_arena *a, size_t i, size_t off, size_t len)
{
	bool prev = i > 0 && a->holes[i - 1].off + a->holes[i - 1].len == off;
	bool next = i < a->nholes && off + len == a->holes[i].off;

	if (prev && next) {
		a->holes[i - 1].len += len + a->holes[i].len;
		remove_hole(a, i);
	} else if (prev) {
		a->holes[i - 1].len += len;
	} else if (next) {
		a->holes[i].off = off;
		a->holes[i].len += len;
	}
	return prev || next;
}

/* Give a block's range back to the free list. */
static bool
add_hole(struct sim_arena *a, size_t off, size_t len)
{
	size_t i = hole_after(a, off);

	if (merge_with_neighbours(a, i, off, len))
		return true;
	if (!reserve_holes(a, a->nholes + 1))
		return false;
	memmove(&a->holes[i + 1], &a->holes[i], (a->nholes - i) * sizeof(*a->holes));
	a->holes[i] = (struct sim_extent){ .off = off, .len = len };
	a->nholes++;
	return true;
}

/* False for an address that is not the start of a live block. */
bool
sim_arena_free(struct sim_arena *a, uintptr_t addr)
{
	struct sim_block b;

	if (!sim_blockmap_remove(&a->live, addr, &b))
		return false;
	if (sim_blockmap_remove(&a->overmap, addr, NULL)) {
		a->over -= b.size;
		a->used += b.size; /* taken off below */
	}
	/* If the hole array cannot grow, the range is lost to the arena but
	 * the bookkeeping stays consistent; only a host OOM gets here. */
	(void)add_hole(a, b.addr - a->base, b.size);
	a->used -= b.size;
	return true;
}

/* Free every block of one context (it was destroyed). Returns the count. */
size_t
sim_arena_release_owner(struct sim_arena *a, uint32_t owner)
{
	uintptr_t *addrs;
	size_t n = sim_blockmap_owned(&a->live, owner, &addrs);

	for (size_t i = 0; i < n; i++)
		sim_arena_free(a, addrs[i]);
	free(addrs);
	return n;
}

/* The live block that starts at addr, or NULL. */
const struct sim_block *
sim_arena_find(const struct sim_arena *a, uintptr_t addr)
{
	return sim_blockmap_find(&a->live, addr);
}

/* Whether [addr, addr + bytes) lies inside this arena. */
bool
sim_arena_contains(const struct sim_arena *a, uintptr_t addr, size_t bytes)
{
	return addr >= a->base && addr - a->base <= a->size &&
	       bytes <= a->size - (addr - a->base);
}
