/* The model: what one ordered pass over a trace's events establishes —
 * the live set, the device peak and who held it, every out-of-memory
 * failure with the live set at that moment, and what was live at the end.
 * Renderers only read it. Fed event by event (model_feed), so tests build
 * models from hand-written sequences without a trace file.
 *
 * Memory kinds (docs/trace-format.md) fall in three classes: device-side
 * (device, managed, pool, vmm_physical, array), counted in `device`, the
 * peak, the sites and the OOM holders; pinned host, counted in `host`; and
 * the kinds listed apart (vmm_reserved, imported, host_registered), which
 * are not memory this process allocated. Every kind also has its own
 * totals in `kinds`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "util-map.h"

/* OOMs whose live set is kept: the first MODEL_OOM_SNAPSHOTS - 1 and the
 * most recent one (the failure the program usually died of). */
#define MODEL_OOM_SNAPSHOTS 64
/* Frees (and unmaps) remembered in case an error event says they did not
 * happen. */
#define MODEL_RECENT_FREES 64
/* Memory kinds are 1..MODEL_MEM_KINDS - 1 (enum mt_mem_kind). */
#define MODEL_MEM_KINDS 10
/* The preallocation note looks at this many first device-side allocations
 * of each device, for one of at least half the device (docs/report-json.md). */
#define MODEL_EARLY_ALLOCS 16

/* Allocations grouped by stack (and memory kind, for leaks). */
struct model_group {
	int64_t stack;
	uint64_t bytes;
	uint64_t count;
	int mem; /* enum mt_mem_kind; 0 for OOM holders, which mix device-side kinds */
};

struct model_site {
	uint64_t key;	/* model_site_key() */
	int64_t stack;	/* stack of its first allocation; all of them for now */
	uint64_t live;	/* device bytes live now (at the end, after model_finish) */
	uint64_t at_peak;
	uint64_t total_bytes;
	uint64_t count;
	uint64_t maps, mapped_bytes; /* cuMemMap calls made here, of handles seen created */
	uint64_t epoch; /* peak epoch at_peak was last brought up to date for */
};

struct model_oom {
	int64_t seq, time_ns, api, stack;
	int device; /* -1: unknown */
	uint64_t requested;
	int mem;
	uint64_t live_bytes, live_count; /* device memory live at the failure */
	bool has_device_free, has_device_total;
	int64_t device_free, device_total;
	/* in use on the device beyond what the process's own allocations
	 * explain; known when device_free and device_total are */
	bool has_unexplained;
	uint64_t unexplained_bytes;
	bool has_holders; /* false when past the snapshot cap */
	struct model_group *holders; /* by bytes, largest first */
	size_t n_holders;
};

struct model_mem {
	uint64_t allocations, frees, bytes_allocated;
	uint64_t live_bytes, live_count;
	uint64_t peak_bytes;
	int64_t peak_time_ns;
};

struct model_pool {
	uint64_t handle;
	bool created, destroyed; /* a pool_create / pool_destroy was seen */
	int64_t created_stack;	 /* 0 when not created in the trace */
	uint64_t allocations, bytes_allocated, trims;
	uint64_t live_bytes, live_count;
};

struct model_early_alloc {
	int64_t seq, time_ns, api, stack;
	uint64_t bytes;
};

struct model_device {
	int id;
	bool has_info; /* from a device event or the devices table */
	bool has_total, has_free;
	uint64_t total, free_at_first_use; /* total may come from an OOM */
	uint64_t live_bytes; /* device-side bytes live on it */
	struct model_early_alloc early[MODEL_EARLY_ALLOCS];
	size_t n_early;
};

enum model_note_kind {
	MODEL_NOTE_PREALLOCATION = 1,
};

struct model_note {
	enum model_note_kind kind;
	int64_t seq, time_ns, api, stack;
	int device;
	uint64_t bytes, device_total;
};

/* private to model*.c */
struct model_live;
struct model_stack_live {
	int64_t stack;
	uint64_t bytes, count;
};
struct model_recent_free;
struct model_recent_unmap;

struct model {
	struct model_mem device; /* device-side kinds together */
	struct model_mem host;	 /* pinned host */
	struct model_mem kinds[MODEL_MEM_KINDS]; /* each kind, by enum mt_mem_kind */
	uint64_t events;
	uint64_t unmatched_frees;  /* frees of addresses not live (and not failed) */
	uint64_t alloc_errors;	   /* failed allocations other than OOM */
	uint64_t free_errors;
	uint64_t reused_addresses; /* allocations (or mappings) at an address still live */
	uint64_t untracked_allocs; /* allocations without address or memory kind */
	uint64_t unknown_events;   /* event kinds this version does not know */
	uint64_t unmatched_maps;   /* maps of a handle not live (or no handle) */
	uint64_t unmatched_unmaps; /* unmaps of a range not mapped (and not failed) */
	uint64_t unmap_errors;
	uint64_t unknown_device_live; /* device-side bytes live on an unknown device */
	int64_t last_time_ns;

	struct model_site *sites; /* sorted by at_peak after model_finish */
	size_t n_sites, cap_sites;
	struct mt_map site_index; /* site key -> index in sites */
	uint64_t peak_epoch;

	/* device bytes live per stack, kept up to date so an OOM snapshot costs
	 * one walk over stacks rather than over all live allocations */
	struct model_stack_live *stacks;
	size_t n_stacks, cap_stacks;
	struct mt_map stack_index;

	struct mt_map live; /* address -> struct model_live */
	struct model_recent_free *recent;
	size_t recent_next;

	/* VMM (model-vmm.c) */
	struct mt_map vmm;  /* handle -> struct model_vmm, for vmm_physical */
	struct mt_map maps; /* virtual address -> struct model_mapping */
	struct model_recent_unmap *recent_unmaps;
	size_t recent_unmap_next;

	/* pools and devices (model-device.c), in the order first seen */
	struct model_pool *pools;
	size_t n_pools, cap_pools;
	struct mt_map pool_index; /* handle -> index of its latest pool */
	struct model_device *devices; /* by id after model_finish */
	size_t n_devices, cap_devices;
	struct mt_map device_index; /* id -> index in devices */

	struct model_oom *ooms;
	size_t n_ooms, cap_ooms;
	size_t oom_snapshots_dropped;
	size_t last_snapshot; /* index of the OOM in the rolling last slot */

	struct model_group *leaks; /* after model_finish, by bytes */
	size_t n_leaks;
	struct model_note *notes; /* after model_finish, by time */
	size_t n_notes;
	bool finished;
	/* optional: fed before each event when set (model-timeline.h); the caller owns it */
	struct model_timeline *timeline;
};

void model_init(struct model *m);
void model_fini(struct model *m);

/* The key allocations are grouped into sites by. For now a site is its
 * stack; grouping by the user's own frame comes later. */
uint64_t model_site_key(const struct model *m, int64_t stack);

/* True for the kinds counted as device memory (device, managed, pool,
 * vmm_physical, array). */
bool model_mem_is_device(int mem);

/* A row of the devices table; device events say the same. */
void model_device_info(struct model *m, int device, uint64_t total, bool has_free,
		       uint64_t free_at_first_use);

/* Events must come in seq order. */
void model_feed(struct model *m, const struct mt_event *ev);

/* Settle per-site peak values, group leaks, make notes, sort. No
 * model_feed after it. */
void model_finish(struct model *m);
