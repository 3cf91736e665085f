/* The live set, one model for both halves (docs/architecture.md, "The
 * live-set contract"): what is live at each address, which allocation a
 * free releases and a failed free puts back, VMM handles kept while
 * mapped and held by their mapping, which memory kinds count toward the
 * device peak, the lazy-epoch peak, and how many live sets at OOMs and
 * marks are kept. The writer (interpose/writer/trace-live.c: flight mode, the
 * live_at_* and site_totals tables, the out-of-memory answer on stderr)
 * and the reporter (report/model*.c) both keep their live set here, the
 * reporter its richer record of each allocation as the entry's payload
 * (trace_live_init_payload), and tests/unit/test-live-diff.c feeds both
 * the same events.
 *
 * One thread. No SQLite, no CUDA, no exit: an allocation that fails is
 * TRACE_LIVE_NOMEM, and the caller decides. The work per event is a few
 * map operations and a scan of at most TRACE_LIVE_RECENT recent frees. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-schema.h"
#include "util-map.h"
#include "util-math.h"

/* OOMs whose live set is kept: the first TRACE_LIVE_OOMS_KEPT - 1 and
 * the latest; marks likewise. The writer's live_at_oom and live_at_mark
 * rows and the reporter's snapshots keep the same ones. */
#define TRACE_LIVE_OOMS_KEPT 64
#define TRACE_LIVE_MARKS_KEPT 1024
/* Frees and unmaps remembered, newest first, in case an error event says
 * they did not happen. */
#define TRACE_LIVE_RECENT 64

/* The kinds the device peak counts: device-side memory this process
 * allocated. Graph memory is not among them: it is memory only while a
 * launch has made it physical, which the reporter's graph model knows
 * (report/model/model-graph.c) and the live set does not. The live set knows
 * its address (a free of it names its allocation in the trace), but it
 * is held by no one: trace_live_holds() is false (case E). */
#define TRACE_LIVE_PEAK_KINDS                                                       \
	(1u << MT_MEM_DEVICE | 1u << MT_MEM_MANAGED | 1u << MT_MEM_POOL |           \
	 1u << MT_MEM_VMM_PHYSICAL | 1u << MT_MEM_ARRAY)

static inline bool trace_live_peak_kind(int mem)
{
	return (unsigned)mem < 32 && (TRACE_LIVE_PEAK_KINDS >> mem & 1);
}

/* Whether an allocation of kind mem is memory someone holds: in the live
 * sets by holder (live_at_*, the OOM answer), all but graph memory. */
static inline bool trace_live_holds(int mem)
{
	return mem != MT_MEM_GRAPH;
}

/* The lazy epoch: a new device peak bumps the epoch instead of copying
 * what every holder had. A holder whose epoch is older has not changed
 * since that peak, so what it holds now is what it held then: it saves
 * it before its first change (trace_live_touch) and at the end. */
struct trace_live_peak {
	uint64_t live, count; /* device bytes and allocations of the peak's kinds */
	uint64_t peak, peak_seq, peak_time_ns;
	uint64_t epoch;
};

/* Before a holder's bytes change: true when its epoch is older than now
 * (the caller then saves what it holds as what it held at the peak). */
static inline bool trace_live_touch(uint64_t now, uint64_t *epoch)
{
	if (*epoch >= now)
		return false;
	*epoch = now;
	return true;
}

/* bytes of a peak kind became live at seq: true when that is a new peak
 * (the epoch moved on). */
static inline bool trace_live_peak_add(struct trace_live_peak *p, uint64_t bytes, uint64_t seq,
				       uint64_t time_ns)
{
	p->live = sat_add(p->live, bytes);
	p->count++;
	if (p->live <= p->peak)
		return false;
	p->peak = p->live;
	p->peak_seq = seq;
	p->peak_time_ns = time_ns;
	p->epoch++;
	return true;
}

static inline void trace_live_peak_sub(struct trace_live_peak *p, uint64_t bytes)
{
	p->live = sat_sub(p->live, bytes);
	p->count -= p->count > 0;
}

/* Who holds memory: a stack, and the caller's name for it (the writer's
 * site id). */
struct trace_live_holder {
	int64_t stack;
	uint64_t owner;
};

/* A live allocation. A VMM handle (vmm_physical, at its handle) is held
 * by its first live mapping while it has one, else by its creator. */
struct trace_live_alloc {
	uint64_t seq, time_ns, address, bytes;
	struct trace_live_holder holder;
	uint32_t site; /* the caller's id of the allocation's own site */
	uint8_t mem;
	uint8_t user; /* the caller's (the writer: a row of allocs) */
};

enum trace_live_why {
	TRACE_LIVE_ALLOCATED,
	TRACE_LIVE_FREED,
	TRACE_LIVE_REUSED,   /* allocated again at its address: a free not seen */
	TRACE_LIVE_RESTORED, /* a free_error or unmap_error put it back */
	TRACE_LIVE_UNMAPPED, /* a released handle's last mapping went */
	TRACE_LIVE_DROPPED,  /* the caller took it out (trace_live_drop) */
};

/* What the caller keeps beside the live set (its sites, peak holders,
 * flight ring) hears of every change, after it happened. */
struct trace_live_hooks {
	void *ctx;
	void (*live)(void *ctx, struct trace_live_alloc *a, enum trace_live_why why);
	void (*gone)(void *ctx, const struct trace_live_alloc *a, enum trace_live_why why);
	/* a's holder changed from before (a mapped handle) */
	void (*moved)(void *ctx, const struct trace_live_alloc *a,
		      const struct trace_live_holder *before);
	/* a live handle's first live mapping is at va now (0: it has none);
	 * called whenever its mappings change, after moved */
	void (*first_map)(void *ctx, const struct trace_live_alloc *a, uint64_t va);
};

/* What a free did. */
enum trace_live_free {
	TRACE_LIVE_FREE_DONE,	  /* *out was live and is gone */
	TRACE_LIVE_FREE_KEPT,	  /* a mapped handle released: *out lives on while mapped */
	TRACE_LIVE_FREE_UNMATCHED, /* nothing live there (or a handle released twice) */
	TRACE_LIVE_NOMEM,
};

struct trace_live_recent {
	uint64_t address;
	struct trace_live_alloc *a; /* with its payload: storage the set owns */
	uint8_t state; /* 0: unused */
	bool freed; /* an unmap that freed its released handle, a */
	struct trace_live_holder holder; /* an unmap: the mapping's */
	uint64_t handle, bytes, seq; /* an unmap: the mapping's */
	bool counted;
};

/* The address index: a slot says which slab entry lives at an address.
 * 16 bytes, four to a cache line, at a load of at most 3/4: the set's
 * most frequent lookup (trace-live-set.c, "the address index"). */
struct trace_live_slot {
	uint64_t address; /* 0: empty (no allocation is live at 0) */
	uint32_t idx;	  /* index + 1 in slab */
	uint32_t hash;	  /* the address's hash, low bits: its home slot */
};

struct trace_live_index {
	struct trace_live_slot *slots;
	size_t cap; /* a power of two, at most 2^32; or 0 */
	size_t len;
};

struct trace_live_set {
	struct trace_live_hooks hooks;
	struct trace_live_index by_address;
	unsigned char *slab; /* entries of stride bytes: an alloc, its payload */
	size_t stride, payload;
	size_t cap, used;
	uint64_t free_head; /* unused slab entries, chained through seq */
	struct map handles; /* handle -> its struct trace_live_vmm (a uint64_t) */
	struct trace_live_vmm *vmm;
	size_t cap_vmm, used_vmm;
	uint64_t vmm_free;
	struct map maps; /* va -> its struct trace_live_mapping (a uint64_t) */
	struct trace_live_mapping *mappings;
	size_t cap_mappings, used_mappings;
	uint64_t mappings_free;
	struct trace_live_recent frees[TRACE_LIVE_RECENT], unmaps[TRACE_LIVE_RECENT];
	unsigned char *spare; /* the rings' entries, then one to take into */
	unsigned frees_next, unmaps_next;
	struct trace_live_peak peak;
	bool peak_off; /* trace_live_peak_off: peak stays zero */
	uint64_t unmatched_frees, unmatched_maps, unmatched_unmaps, reused;
};

bool trace_live_init(struct trace_live_set *s, const struct trace_live_hooks *h);
/* Each allocation carries payload bytes of the caller's (8-aligned, at
 * trace_live_payload), copied with it wherever the set keeps it: into
 * the frees remembered, and back when a free_error restores it. */
bool trace_live_init_payload(struct trace_live_set *s, const struct trace_live_hooks *h,
			     size_t payload);

/* The caller keeps its own device peak (the reporter's counts graph
 * memory while physical, report/model/model-charge.h): the set keeps
 * none, and s->peak stays zero. Before the first event. */
static inline void trace_live_peak_off(struct trace_live_set *s)
{
	s->peak_off = true;
}

/* The payload of an entry the set gave (a hook's, trace_live_get's). */
static inline void *trace_live_payload(const struct trace_live_alloc *a)
{
	return (unsigned char *)(uintptr_t)a + sizeof(*a);
}
void trace_live_fini(struct trace_live_set *s);

/* The allocation at address, NULL when none is live. */
struct trace_live_alloc *trace_live_get(const struct trace_live_set *s, uint64_t address);
/* Iterate: for (size_t i = 0; (a = trace_live_next(s, &i));) */
struct trace_live_alloc *trace_live_next(const struct trace_live_set *s, size_t *pos);
/* How many allocations are live. */
size_t trace_live_count(const struct trace_live_set *s);
/* A mapping live at va. */
bool trace_live_mapped(const struct trace_live_set *s, uint64_t va);

/* An allocation (a->address; at NULL, none), with its payload (NULL:
 * zeros). False when out of memory (nothing changed but a free not
 * seen). */
bool trace_live_alloc(struct trace_live_set *s, const struct trace_live_alloc *a,
		      const void *payload);
/* The caller takes the allocation at address out of the live set (graph
 * memory a graph freed): no free to remember. */
bool trace_live_drop(struct trace_live_set *s, uint64_t address);
/* Whether a map of handle at va would count (the handle is live memory
 * once a mapping already at va has gone), so the caller can name its
 * holder first. */
bool trace_live_map_counts(const struct trace_live_set *s, uint64_t va, uint64_t handle);
/* Ask the memory for the slot of address, a few events ahead. */
void trace_live_prefetch(const struct trace_live_set *s, uint64_t address);
/* A free of address: *out is what it releases (DONE, KEPT). */
enum trace_live_free trace_live_free(struct trace_live_set *s, uint64_t address,
				     struct trace_live_alloc *out);
/* The allocation at address and its place in the set (*at), for a
 * trace_live_free_at that follows with nothing changed in between; NULL
 * (and *at SIZE_MAX) when none is live. */
struct trace_live_alloc *trace_live_find(const struct trace_live_set *s, uint64_t address,
					 size_t *at);
/* trace_live_free of address where trace_live_find found it: one lookup
 * for a caller that looks before it frees. */
enum trace_live_free trace_live_free_at(struct trace_live_set *s, uint64_t address, size_t at,
					struct trace_live_alloc *out);
/* The free of address recorded just before failed: the newest free of it
 * is undone, unless the address is live again (the newer stays). False
 * when no free of it is remembered; else *found is what that free
 * released (its mem 0 when it released nothing). */
bool trace_live_free_error(struct trace_live_set *s, uint64_t address, uint64_t seq,
			   uint64_t time_ns, struct trace_live_alloc *found);
/* cuMemMap of handle at va by holder; a mapping already at va is an
 * unmap not seen. False when out of memory. */
bool trace_live_map(struct trace_live_set *s, uint64_t va, uint64_t handle, uint64_t bytes,
		    uint64_t seq, const struct trace_live_holder *holder);
void trace_live_unmap(struct trace_live_set *s, uint64_t va, uint64_t seq);
void trace_live_unmap_error(struct trace_live_set *s, uint64_t va, uint64_t seq,
			    uint64_t time_ns);
