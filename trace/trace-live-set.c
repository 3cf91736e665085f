/* The live set both halves keep (trace-live-set.h). The rules, each the
 * reporter's since version 1 (docs/report-json.md, docs/architecture.md
 * "The live-set contract"):
 *
 * - an allocation at an address the set holds releases what was there
 *   (a free memtrace did not see);
 * - a free_error undoes the newest free of its address, unless the
 *   address is live again, when the newer allocation stays (case A);
 * - cuMemRelease of a mapped handle keeps its memory until its last
 *   mapping goes; a failed release (free_error) takes the release back
 *   (case B); an unmap_error puts the mapping just removed back, and the
 *   memory too if that unmap had freed it (case C); a mapping at an
 *   address already mapped is an unmap not seen (case D);
 * - a mapped handle is held by its first live mapping (the stack that
 *   mapped it), else by the stack that created it (case F);
 * - graph memory is known by its address but held by no one (case E). */
#include "trace-live-set.h"

#include <stdlib.h>
#include <string.h>

struct vmm_ref {
	uint64_t seq, va;
};

struct trace_live_vmm {
	struct trace_live_holder creator;
	bool released;
	struct vmm_ref *maps; /* its live mappings, oldest first */
	size_t n_maps, cap_maps;
};

struct trace_live_mapping {
	uint64_t handle, bytes, seq;
	struct trace_live_holder holder;
	bool counted; /* its handle was a live vmm_physical allocation */
};

enum { RECENT_FREED = 1, RECENT_UNMATCHED, RECENT_RELEASED };

/* The rings' entries, then the one take() fills before a hook sees it. */
#define SPARE_ENTRIES (2 * TRACE_LIVE_RECENT + 1)

static inline struct trace_live_alloc *spare(const struct trace_live_set *s, size_t i)
{
	return (struct trace_live_alloc *)(void *)(s->spare + i * s->stride);
}

static inline struct trace_live_alloc *entry(const struct trace_live_set *s, uint64_t idx)
{
	return (struct trace_live_alloc *)(void *)(s->slab + (idx - 1) * s->stride);
}

static inline void copy_entry(const struct trace_live_set *s, struct trace_live_alloc *to,
			      const struct trace_live_alloc *from)
{
	memcpy(to, from, s->stride);
}

bool trace_live_init_payload(struct trace_live_set *s, const struct trace_live_hooks *h,
			     size_t payload)
{
	*s = (struct trace_live_set){ .hooks = *h, .payload = (payload + 7) & ~(size_t)7 };
	s->stride = sizeof(struct trace_live_alloc) + s->payload;
	map_init(&s->handles, sizeof(uint64_t));
	map_init(&s->maps, sizeof(uint64_t));
	if ((s->spare = calloc(SPARE_ENTRIES, s->stride))) {
		for (size_t i = 0; i < TRACE_LIVE_RECENT; i++) {
			s->frees[i].a = spare(s, i);
			s->unmaps[i].a = spare(s, TRACE_LIVE_RECENT + i);
		}
		return true;
	}
	trace_live_fini(s);
	return false;
}

bool trace_live_init(struct trace_live_set *s, const struct trace_live_hooks *h)
{
	return trace_live_init_payload(s, h, 0);
}

static void vmm_free(struct trace_live_vmm *v)
{
	if (v) {
		free(v->maps);
		free(v);
	}
}

void trace_live_fini(struct trace_live_set *s)
{
	void *v;

	for (size_t pos = 0; map_next(&s->handles, &pos, NULL, &v);)
		vmm_free((struct trace_live_vmm *)(uintptr_t)*(uint64_t *)v);
	for (size_t pos = 0; map_next(&s->maps, &pos, NULL, &v);)
		free((void *)(uintptr_t)*(uint64_t *)v);
	free(s->by_address.slots);
	map_fini(&s->handles);
	map_fini(&s->maps);
	free(s->slab);
	free(s->spare);
	*s = (struct trace_live_set){ 0 };
}

/* ---- the address index ----
 *
 * Every event looks its address up here, most of them in a live set of
 * thousands, so a slot is what the lookup needs and no more: the address
 * and the slab entry's index (16 bytes, no value copied on a move), the
 * load up to 3/4 (u64map's before the one map, which this matches). The
 * hash's low 32 bits ride in the slot's spare half, so a removal's
 * backward shift never hashes again. Open addressing, linear probing,
 * backward-shift deletion, as util-map.h; unlike it, no exit and no
 * growth but by an insert that can report its failure. */

#define INDEX_FIRST_CAP 64
#define INDEX_MAX_CAP ((size_t)1 << 32) /* a slot's hash says the home slot */

/* murmur3's finalizer, its first multiply: addresses are multiples of 256
 * and more, so the high bits are folded in before the multiply and the
 * product's high bits down after it */
static inline uint32_t index_hash(uint64_t address)
{
	address ^= address >> 33;
	address *= 0xff51afd7ed558ccdULL;
	address ^= address >> 33;
	return (uint32_t)address;
}

/* Where address is (true), or the empty slot that ends its probe (false).
 * The index must have slots. */
static inline bool index_find(const struct trace_live_index *x, uint64_t address, size_t *at)
{
	size_t mask = x->cap - 1;
	size_t i = index_hash(address) & mask;

	for (;; i = (i + 1) & mask) {
		if (x->slots[i].address == address) {
			*at = i;
			return true;
		}
		if (x->slots[i].address == 0) {
			*at = i;
			return false;
		}
	}
}

/* cap slots, the old ones moved in; false (the index as it was) when
 * there is no memory for them. */
static bool index_rehash(struct trace_live_index *x, size_t cap)
{
	struct trace_live_slot *slots;
	size_t mask = cap - 1;

	if (cap > INDEX_MAX_CAP || !(slots = calloc(cap, sizeof(*slots))))
		return false;
	for (size_t i = 0; i < x->cap; i++) {
		size_t j = x->slots[i].hash & mask;

		if (!x->slots[i].address)
			continue;
		while (slots[j].address)
			j = (j + 1) & mask;
		slots[j] = x->slots[i];
	}
	free(x->slots);
	x->slots = slots;
	x->cap = cap;
	return true;
}

/* Room for one more entry at a load of at most 3/4. */
static inline bool index_room(struct trace_live_index *x)
{
	if ((x->len + 1) * 4 <= x->cap * 3)
		return true;
	return index_rehash(x, x->cap ? x->cap * 2 : INDEX_FIRST_CAP);
}

/* Is home position h outside the cyclic interval (hole, j]? Then the
 * entry at j may move back into the hole and stay reachable. */
static inline bool index_may_fill(size_t hole, size_t j, size_t h)
{
	if (hole <= j)
		return h <= hole || h > j;
	return h <= hole && h > j;
}

static void index_remove_at(struct trace_live_index *x, size_t at)
{
	size_t mask = x->cap - 1;
	size_t hole = at;

	for (size_t j = (hole + 1) & mask; x->slots[j].address; j = (j + 1) & mask) {
		if (!index_may_fill(hole, j, x->slots[j].hash & mask))
			continue;
		x->slots[hole] = x->slots[j];
		hole = j;
	}
	x->slots[hole].address = 0;
	x->len--;
}

/* The slot of address: true and *at when it is live. */
static inline bool index_get(const struct trace_live_set *s, uint64_t address, size_t *at)
{
	return address && s->by_address.len && index_find(&s->by_address, address, at);
}

struct trace_live_alloc *trace_live_get(const struct trace_live_set *s, uint64_t address)
{
	size_t at;

	return index_get(s, address, &at) ? entry(s, s->by_address.slots[at].idx) : NULL;
}

struct trace_live_alloc *trace_live_next(const struct trace_live_set *s, size_t *pos)
{
	for (size_t i = *pos; i < s->by_address.cap; i++) {
		if (s->by_address.slots[i].address) {
			*pos = i + 1;
			return entry(s, s->by_address.slots[i].idx);
		}
	}
	*pos = s->by_address.cap;
	return NULL;
}

size_t trace_live_count(const struct trace_live_set *s)
{
	return s->by_address.len;
}

bool trace_live_mapped(const struct trace_live_set *s, uint64_t va)
{
	return va && map_get(&s->maps, va) != NULL;
}

/* An unused slab entry: back on the free chain (through seq). */
static void unuse(struct trace_live_set *s, uint64_t idx)
{
	*entry(s, idx) = (struct trace_live_alloc){ .seq = s->free_head };
	s->free_head = idx;
}

/* An unused slab entry's index, 0 when out of memory. */
static uint64_t slab_entry(struct trace_live_set *s)
{
	uint64_t idx = s->free_head;

	if (idx) {
		s->free_head = entry(s, idx)->seq;
		return idx;
	}
	if (s->used == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		unsigned char *p;

		if (cap > UINT32_MAX || !(p = realloc(s->slab, cap * s->stride)))
			return 0; /* a slot's idx is 32 bits */
		s->slab = p;
		s->cap = cap;
	}
	return ++s->used;
}

/* a live, with its payload (NULL: zeros), at an address not live. at is
 * the empty slot that ended a probe for it (index_find) just before, or
 * SIZE_MAX. */
static struct trace_live_alloc *put_at(struct trace_live_set *s, const struct trace_live_alloc *a,
				       const void *payload, size_t at)
{
	struct trace_live_index *x = &s->by_address;
	struct trace_live_alloc *e;
	uint64_t idx;

	if (!a->address || !(idx = slab_entry(s)))
		return NULL;
	if ((x->len + 1) * 4 > x->cap * 3) {
		if (!index_room(x)) {
			unuse(s, idx);
			return NULL;
		}
		at = SIZE_MAX; /* the slots moved */
	}
	if (at == SIZE_MAX)
		index_find(x, a->address, &at);
	x->slots[at] = (struct trace_live_slot){
		.address = a->address, .idx = (uint32_t)idx, .hash = index_hash(a->address),
	};
	x->len++;
	e = entry(s, idx);
	*e = *a;
	if (payload)
		memcpy(trace_live_payload(e), payload, s->payload);
	else
		memset(trace_live_payload(e), 0, s->payload);
	return e;
}

/* An entry with its payload, put back where a copy of it was kept (its
 * address not live). */
static struct trace_live_alloc *put_back(struct trace_live_set *s,
					 const struct trace_live_alloc *a)
{
	return put_at(s, a, trace_live_payload(a), SIZE_MAX);
}

/* The allocation in slot at leaves the set: into out (stride bytes). */
static void take_at(struct trace_live_set *s, size_t at, struct trace_live_alloc *out)
{
	uint64_t idx = s->by_address.slots[at].idx;

	index_remove_at(&s->by_address, at);
	copy_entry(s, out, entry(s, idx));
	unuse(s, idx);
}

/* The allocation at address leaves the set: into out (stride bytes). */
static bool take(struct trace_live_set *s, uint64_t address, struct trace_live_alloc *out)
{
	size_t at;

	if (!index_get(s, address, &at))
		return false;
	take_at(s, at, out);
	return true;
}

/* The entry take() fills when the caller keeps no copy. */
static struct trace_live_alloc *scratch(const struct trace_live_set *s)
{
	return spare(s, 2 * TRACE_LIVE_RECENT);
}

void trace_live_prefetch(const struct trace_live_set *s, uint64_t address)
{
	const struct trace_live_index *x = &s->by_address;

	if (x->cap)
		__builtin_prefetch(&x->slots[index_hash(address) & (x->cap - 1)]);
}

/* a is live now: the caller's holders first (their epoch is the old
 * one), then the peak. */
static void became_live(struct trace_live_set *s, struct trace_live_alloc *a,
			enum trace_live_why why, uint64_t seq, uint64_t time_ns)
{
	if (s->hooks.live)
		s->hooks.live(s->hooks.ctx, a, why);
	if (!s->peak_off && trace_live_peak_kind(a->mem))
		trace_live_peak_add(&s->peak, a->bytes, seq, time_ns);
}

static void became_gone(struct trace_live_set *s, const struct trace_live_alloc *a,
			enum trace_live_why why)
{
	if (!s->peak_off && trace_live_peak_kind(a->mem))
		trace_live_peak_sub(&s->peak, a->bytes);
	if (s->hooks.gone)
		s->hooks.gone(s->hooks.ctx, a, why);
}

/* ---- VMM handles ---- */

static struct trace_live_vmm *vmm_of(const struct trace_live_set *s, uint64_t handle)
{
	uint64_t *p = handle ? map_get_u64(&s->handles, handle) : NULL;
	return p ? (struct trace_live_vmm *)(uintptr_t)*p : NULL;
}

static struct trace_live_mapping *mapping_at(const struct trace_live_set *s, uint64_t va)
{
	uint64_t *p = va ? map_get_u64(&s->maps, va) : NULL;
	return p ? (struct trace_live_mapping *)(uintptr_t)*p : NULL;
}

/* A vmm_physical allocation a is live at its handle (made, or put back). */
static bool vmm_created(struct trace_live_set *s, const struct trace_live_alloc *a, bool released)
{
	struct trace_live_vmm *v = calloc(1, sizeof(*v)), *old = vmm_of(s, a->address);
	if (!v)
		return false;
	*v = (struct trace_live_vmm){ .creator = a->holder, .released = released };
	if (!a->address || !map_put_u64(&s->handles, a->address, (uint64_t)(uintptr_t)v)) {
		free(v);
		return false;
	}
	vmm_free(old);
	return true;
}

static void vmm_forget(struct trace_live_set *s, uint64_t handle)
{
	uint64_t p;
	if (handle && map_remove(&s->handles, handle, &p))
		vmm_free((struct trace_live_vmm *)(uintptr_t)p);
}

/* The handle's bytes go to its first live mapping, or to its creator. */
static void update_holder(struct trace_live_set *s, uint64_t handle, struct trace_live_vmm *v)
{
	struct trace_live_alloc *a = trace_live_get(s, handle);
	const struct trace_live_mapping *mp = v->n_maps ? mapping_at(s, v->maps[0].va) : NULL;
	struct trace_live_holder to = mp ? mp->holder : v->creator, before;

	if (!a || a->mem != MT_MEM_VMM_PHYSICAL)
		return;
	if (a->holder.stack != to.stack || a->holder.owner != to.owner) {
		before = a->holder;
		a->holder = to;
		if (s->hooks.moved)
			s->hooks.moved(s->hooks.ctx, a, &before);
	}
	if (s->hooks.first_map)
		s->hooks.first_map(s->hooks.ctx, a, mp ? v->maps[0].va : 0);
}

static bool attach(struct trace_live_set *s, uint64_t handle, uint64_t va, uint64_t seq)
{
	struct trace_live_vmm *v = vmm_of(s, handle);
	size_t i;

	if (!v)
		return true;
	if (v->n_maps == v->cap_maps) {
		size_t cap = v->cap_maps ? v->cap_maps * 2 : 2;
		struct vmm_ref *p = realloc(v->maps, cap * sizeof(*p));
		if (!p)
			return false;
		v->maps = p;
		v->cap_maps = cap;
	}
	/* in seq order: an unmap_error puts an older mapping back */
	for (i = v->n_maps; i > 0 && v->maps[i - 1].seq > seq; i--)
		v->maps[i] = v->maps[i - 1];
	v->maps[i] = (struct vmm_ref){ .seq = seq, .va = va };
	v->n_maps++;
	update_holder(s, handle, v);
	return true;
}

/* The mapping at va leaves its handle: true when that freed the handle's
 * memory (released, and its last mapping), then *freed. */
static bool detach(struct trace_live_set *s, uint64_t handle, uint64_t va,
		   struct trace_live_alloc *freed)
{
	struct trace_live_vmm *v = vmm_of(s, handle);
	size_t i;

	if (!v)
		return false;
	for (i = 0; i < v->n_maps && v->maps[i].va != va; i++)
		;
	if (i == v->n_maps)
		return false;
	v->n_maps--;
	memmove(&v->maps[i], &v->maps[i + 1], (v->n_maps - i) * sizeof(*v->maps));
	update_holder(s, handle, v);
	if (!v->released || v->n_maps > 0 || !take(s, handle, freed))
		return false;
	vmm_forget(s, handle);
	became_gone(s, freed, TRACE_LIVE_UNMAPPED);
	return true;
}

/* ---- allocations and frees ---- */

/* What was live at address goes: a free not seen (REUSED) or seen. */
static void release(struct trace_live_set *s, struct trace_live_alloc *old,
		    enum trace_live_why why)
{
	if (old->mem == MT_MEM_VMM_PHYSICAL)
		vmm_forget(s, old->address);
	became_gone(s, old, why);
}

bool trace_live_alloc(struct trace_live_set *s, const struct trace_live_alloc *a,
		      const void *payload)
{
	struct trace_live_alloc *old = scratch(s), *live;
	size_t at = SIZE_MAX;

	if (!a->address)
		return true;
	/* one probe: a miss ends at the slot the insert takes */
	if (s->by_address.len && index_find(&s->by_address, a->address, &at)) {
		take_at(s, at, old);
		at = SIZE_MAX;
		s->reused++;
		release(s, old, TRACE_LIVE_REUSED);
	}
	if (!(live = put_at(s, a, payload, at)))
		return false;
	if (a->mem == MT_MEM_VMM_PHYSICAL && !vmm_created(s, a, false)) {
		take(s, a->address, old);
		return false;
	}
	became_live(s, live, TRACE_LIVE_ALLOCATED, a->seq, a->time_ns);
	return true;
}

static struct trace_live_recent *remember(struct trace_live_recent *ring, unsigned *next,
					  uint64_t address, uint8_t state)
{
	struct trace_live_recent *r = &ring[*next % TRACE_LIVE_RECENT];
	*next = (*next + 1) % TRACE_LIVE_RECENT;
	*r = (struct trace_live_recent){ .address = address, .state = state, .a = r->a };
	return r;
}

/* The newest remembered entry of address (case A: the ring is searched
 * from the last one written back). */
static struct trace_live_recent *recent(struct trace_live_recent *ring, unsigned next,
					uint64_t address)
{
	for (unsigned i = 1; i <= TRACE_LIVE_RECENT; i++) {
		struct trace_live_recent *r =
			&ring[(next + TRACE_LIVE_RECENT - i) % TRACE_LIVE_RECENT];
		if (r->state && r->address == address)
			return r;
	}
	return NULL;
}

struct trace_live_alloc *trace_live_find(const struct trace_live_set *s, uint64_t address,
					 size_t *at)
{
	if (index_get(s, address, at))
		return entry(s, s->by_address.slots[*at].idx);
	*at = SIZE_MAX;
	return NULL;
}

enum trace_live_free trace_live_free(struct trace_live_set *s, uint64_t address,
				     struct trace_live_alloc *out)
{
	size_t at;

	trace_live_find(s, address, &at);
	return trace_live_free_at(s, address, at, out);
}

enum trace_live_free trace_live_free_at(struct trace_live_set *s, uint64_t address, size_t at,
					struct trace_live_alloc *out)
{
	struct trace_live_alloc *live;
	struct trace_live_vmm *v;

	if (!address)
		return TRACE_LIVE_FREE_UNMATCHED;
	live = at != SIZE_MAX ? entry(s, s->by_address.slots[at].idx) : NULL;
	if (!live) {
		s->unmatched_frees++;
		remember(s->frees, &s->frees_next, address, RECENT_UNMATCHED);
		return TRACE_LIVE_FREE_UNMATCHED;
	}
	*out = *live;
	/* cuMemRelease of a mapped handle: the memory lives until unmapped */
	if (live->mem == MT_MEM_VMM_PHYSICAL && (v = vmm_of(s, address)) && v->n_maps) {
		if (v->released) {
			s->unmatched_frees++;
			remember(s->frees, &s->frees_next, address, RECENT_UNMATCHED);
			return TRACE_LIVE_FREE_UNMATCHED;
		}
		v->released = true;
		remember(s->frees, &s->frees_next, address, RECENT_RELEASED);
		return TRACE_LIVE_FREE_KEPT;
	}
	/* straight into the entry that remembers it: one copy, not two */
	live = remember(s->frees, &s->frees_next, address, RECENT_FREED)->a;
	take_at(s, at, live);
	release(s, live, TRACE_LIVE_FREED);
	*out = *live;
	return TRACE_LIVE_FREE_DONE;
}

bool trace_live_drop(struct trace_live_set *s, uint64_t address)
{
	if (!take(s, address, scratch(s)))
		return false;
	release(s, scratch(s), TRACE_LIVE_DROPPED);
	return true;
}

bool trace_live_free_error(struct trace_live_set *s, uint64_t address, uint64_t seq,
			   uint64_t time_ns, struct trace_live_alloc *found)
{
	struct trace_live_recent *r = address ? recent(s->frees, s->frees_next, address) : NULL;
	struct trace_live_alloc *back;
	struct trace_live_vmm *v;
	uint8_t state;

	if (!r)
		return false;
	state = r->state;
	r->state = 0;
	*found = (struct trace_live_alloc){ .address = address };
	switch (state) {
	case RECENT_UNMATCHED:
		/* a bad pointer the program passed, not a free memtrace missed */
		s->unmatched_frees -= s->unmatched_frees > 0;
		return true;
	case RECENT_RELEASED:
		/* the release did not happen: the handle is not released (B) */
		if ((v = vmm_of(s, address)))
			v->released = false;
		if ((back = trace_live_get(s, address)))
			*found = *back;
		return true;
	}
	*found = *r->a;
	if (trace_live_get(s, address))
		return true; /* allocated again already: the newer one stays */
	if (!(back = put_back(s, r->a)))
		return true;
	if (back->mem == MT_MEM_VMM_PHYSICAL && !vmm_created(s, back, false)) {
		take(s, address, scratch(s));
		return true;
	}
	became_live(s, back, TRACE_LIVE_RESTORED, seq, time_ns);
	return true;
}

/* ---- mappings ---- */

bool trace_live_map_counts(const struct trace_live_set *s, uint64_t va, uint64_t handle)
{
	const struct trace_live_alloc *h = trace_live_get(s, handle);
	const struct trace_live_mapping *old = mapping_at(s, va);
	const struct trace_live_vmm *v;

	if (!va || !h || h->mem != MT_MEM_VMM_PHYSICAL)
		return false;
	/* the mapping it replaces was the released handle's last: gone first */
	if (old && old->counted && old->handle == handle && (v = vmm_of(s, handle)) &&
	    v->released && v->n_maps == 1 && v->maps[0].va == va)
		return false;
	return true;
}

bool trace_live_map(struct trace_live_set *s, uint64_t va, uint64_t handle, uint64_t bytes,
		    uint64_t seq, const struct trace_live_holder *holder)
{
	struct trace_live_mapping *mp, *old = mapping_at(s, va);
	struct trace_live_alloc *h;
	uint64_t p;

	if (!va) {
		s->unmatched_maps++;
		return true;
	}
	if (old) {
		/* an unmap memtrace did not see (case D) */
		map_remove(&s->maps, va, &p);
		s->reused++;
		if (old->counted)
			detach(s, old->handle, va, scratch(s));
		free(old);
	}
	if (!(mp = malloc(sizeof(*mp))))
		return false;
	h = trace_live_get(s, handle);
	*mp = (struct trace_live_mapping){ .handle = handle, .bytes = bytes, .seq = seq,
					   .holder = *holder,
					   .counted = h && h->mem == MT_MEM_VMM_PHYSICAL };
	if (!mp->counted)
		s->unmatched_maps++;
	if (!map_put_u64(&s->maps, va, (uint64_t)(uintptr_t)mp)) {
		free(mp);
		return false;
	}
	return !mp->counted || attach(s, handle, va, seq);
}

void trace_live_unmap(struct trace_live_set *s, uint64_t va, uint64_t seq)
{
	struct trace_live_recent *r;
	struct trace_live_mapping *mp;
	uint64_t p;

	(void)seq;
	if (!va)
		return;
	r = remember(s->unmaps, &s->unmaps_next, va, RECENT_UNMATCHED);
	if (!map_remove(&s->maps, va, &p)) {
		s->unmatched_unmaps++;
		return;
	}
	mp = (struct trace_live_mapping *)(uintptr_t)p;
	r->state = RECENT_FREED;
	r->handle = mp->handle;
	r->bytes = mp->bytes;
	r->seq = mp->seq;
	r->holder = mp->holder;
	r->counted = mp->counted;
	free(mp);
	if (r->counted)
		r->freed = detach(s, r->handle, va, r->a);
}

void trace_live_unmap_error(struct trace_live_set *s, uint64_t va, uint64_t seq,
			    uint64_t time_ns)
{
	struct trace_live_recent *r = va ? recent(s->unmaps, s->unmaps_next, va) : NULL;
	struct trace_live_mapping *mp;
	struct trace_live_alloc *back;

	if (!r)
		return;
	if (r->state == RECENT_UNMATCHED) {
		r->state = 0;
		s->unmatched_unmaps -= s->unmatched_unmaps > 0;
		return;
	}
	r->state = 0;
	if (r->freed) {
		/* the unmap had freed the released handle: it is back (case C) */
		if (!trace_live_get(s, r->handle) && (back = put_back(s, r->a))) {
			if (vmm_created(s, back, true))
				became_live(s, back, TRACE_LIVE_RESTORED, seq, time_ns);
			else
				take(s, r->handle, r->a);
		} else {
			r->counted = false; /* the handle is another allocation now */
		}
	}
	if (mapping_at(s, va))
		return; /* mapped again already: the newer one stays */
	if (!(mp = malloc(sizeof(*mp))))
		return;
	*mp = (struct trace_live_mapping){ .handle = r->handle, .bytes = r->bytes, .seq = r->seq,
					   .holder = r->holder, .counted = r->counted };
	if (!map_put_u64(&s->maps, va, (uint64_t)(uintptr_t)mp)) {
		free(mp);
		return;
	}
	if (mp->counted)
		attach(s, mp->handle, va, mp->seq);
}
