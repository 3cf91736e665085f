/* The observed driver: tests/sim's libcuda.so.1, linked again from the
 * same objects, with the arena and block-map calls that allocate and
 * release memory wrapped (ld --wrap, see meson.build) so that an observer
 * hears of each one. Nothing in tests/sim changes: a call from one of
 * its objects to sim_arena_alloc reaches __wrap_sim_arena_alloc here,
 * which calls the real one and reports what it did.
 *
 * Reported: device, managed and array memory (the device arenas), blocks
 * of stream-ordered pools (their chunks' arenas), pinned host memory.
 * Not reported, as the real CUPTI's MEMORY2 does not report them either:
 * pool chunks, cuMemCreate's physical memory, address reservations,
 * imported IPC memory, host registrations. */
#include "cudasim-observer.h"
#include "observe.h"
#include "sim-driver.h"

#include <stdatomic.h>
#include <stdlib.h>

bool __real_sim_arena_alloc(struct sim_arena *a, size_t bytes, uint32_t owner, uint32_t kind,
			    uintptr_t *addr);
bool __real_sim_arena_free(struct sim_arena *a, uintptr_t addr);
size_t __real_sim_arena_release_owner(struct sim_arena *a, uint32_t owner);
bool __real_sim_blockmap_insert(struct sim_blockmap *m, const struct sim_block *b);
bool __real_sim_blockmap_remove(struct sim_blockmap *m, uintptr_t addr, struct sim_block *out);

bool __wrap_sim_arena_alloc(struct sim_arena *a, size_t bytes, uint32_t owner, uint32_t kind,
			    uintptr_t *addr);
bool __wrap_sim_arena_free(struct sim_arena *a, uintptr_t addr);
size_t __wrap_sim_arena_release_owner(struct sim_arena *a, uint32_t owner);
bool __wrap_sim_blockmap_insert(struct sim_blockmap *m, const struct sim_block *b);
bool __wrap_sim_blockmap_remove(struct sim_blockmap *m, uintptr_t addr, struct sim_block *out);

static _Atomic(cudasim_observer_fn) observer;

/* The live reported blocks, by address, with the bytes the program asked
 * for (the arena keeps them rounded up) and what they are. Driver lock
 * held, like every function here. */
static struct sim_blockmap reported;

void cudasim_set_observer(cudasim_observer_fn fn)
{
	atomic_store(&observer, fn);
}


void observe_notify(const struct cudasim_event *ev)
{
	cudasim_observer_fn fn = atomic_load(&observer);
	if (fn)
		fn(ev);
}

static enum cudasim_mem reported_mem(uint32_t kind)
{
	switch (kind) {
	case SIM_KIND_DEVICE:
	case SIM_KIND_POOL_ALLOC:
		return CUDASIM_MEM_DEVICE;
	case SIM_KIND_MANAGED:
		return CUDASIM_MEM_MANAGED;
	case SIM_KIND_ARRAY:
		return CUDASIM_MEM_ARRAY;
	case SIM_KIND_PINNED:
		return CUDASIM_MEM_PINNED;
	default:
		return 0;
	}
}

static int device_of(uintptr_t addr)
{
	struct sim_device *d = sim_device_of(addr, 0);
	return d ? (int)(d - sim_drv.dev) : 0;
}

static void note_alloc(const struct sim_arena *a, uintptr_t addr, size_t bytes, uint32_t owner,
		       uint32_t kind)
{
	enum cudasim_mem mem = reported_mem(kind);
	struct sim_block b = { .addr = addr, .size = bytes, .owner = owner, .kind = kind };
	if (!mem || !__real_sim_blockmap_insert(&reported, &b))
		return;
	struct cudasim_event ev = {
		.op = CUDASIM_ALLOC,
		.mem = mem,
		.device = mem == CUDASIM_MEM_PINNED ? 0 : device_of(addr),
		.context = owner,
		.address = addr,
		.bytes = bytes,
		.from_pool = kind == SIM_KIND_POOL_ALLOC,
	};
	if (ev.from_pool && a) {
		ev.pool_base = a->base;
		ev.pool_size = a->size;
		ev.pool_used = a->used;
	}
	observe_notify(&ev);
}

static void note_free(uintptr_t addr)
{
	struct sim_block b;
	if (!__real_sim_blockmap_remove(&reported, addr, &b))
		return;
	struct cudasim_event ev = {
		.op = CUDASIM_FREE,
		.mem = reported_mem(b.kind),
		.device = b.kind == SIM_KIND_PINNED ? 0 : device_of(addr),
		.context = b.owner,
		.address = addr,
		.bytes = b.size,
		.from_pool = b.kind == SIM_KIND_POOL_ALLOC,
	};
	observe_notify(&ev);
}

bool __wrap_sim_arena_alloc(struct sim_arena *a, size_t bytes, uint32_t owner, uint32_t kind,
			    uintptr_t *addr)
{
	bool ok = __real_sim_arena_alloc(a, bytes, owner, kind, addr);
	if (ok)
		note_alloc(a, *addr, bytes, owner, kind);
	return ok;
}

bool __wrap_sim_arena_free(struct sim_arena *a, uintptr_t addr)
{
	bool ok = __real_sim_arena_free(a, addr);
	if (ok)
		note_free(addr);
	return ok;
}

/* A context's end frees its blocks inside sim-arena.c, where the wrap
 * does not reach: they are reported here, before they go. */
size_t __wrap_sim_arena_release_owner(struct sim_arena *a, uint32_t owner)
{
	uintptr_t *addrs;
	size_t n = sim_blockmap_owned(&a->live, owner, &addrs);
	for (size_t i = 0; i < n; i++)
		note_free(addrs[i]);
	free(addrs);
	return __real_sim_arena_release_owner(a, owner);
}

/* Pinned host memory lives in its own block map, not in an arena. */
bool __wrap_sim_blockmap_insert(struct sim_blockmap *m, const struct sim_block *b)
{
	bool ok = __real_sim_blockmap_insert(m, b);
	if (ok && m == &sim_drv.pinned)
		note_alloc(NULL, b->addr, b->size, b->owner, SIM_KIND_PINNED);
	return ok;
}

bool __wrap_sim_blockmap_remove(struct sim_blockmap *m, uintptr_t addr, struct sim_block *out)
{
	bool ok = __real_sim_blockmap_remove(m, addr, out);
	if (ok && m == &sim_drv.pinned)
		note_free(addr);
	return ok;
}
