/* The model: what one ordered pass over a trace's events establishes —
 * the live set, the device peak and who held it, every out-of-memory
 * failure with the live set at that moment, and what was live at the end.
 * Renderers only read it. Fed event by event (model_feed), so tests build
 * models from hand-written sequences without a trace file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "util-map.h"

/* OOMs whose live set is kept: the first MODEL_OOM_SNAPSHOTS - 1 and the
 * most recent one (the failure the program usually died of). */
#define MODEL_OOM_SNAPSHOTS 64
/* Frees remembered in case a free_error event says they did not happen. */
#define MODEL_RECENT_FREES 64

/* Allocations grouped by stack (and memory kind, for leaks). */
struct model_group {
	int64_t stack;
	uint64_t bytes;
	uint64_t count;
	int mem; /* enum mt_mem_kind; 0 for OOM holders, which mix device and managed */
};

struct model_site {
	uint64_t key;	/* model_site_key() */
	int64_t stack;	/* stack of its first allocation; all of them for now */
	uint64_t live;	/* device bytes live now (at the end, after model_finish) */
	uint64_t at_peak;
	uint64_t total_bytes;
	uint64_t count;
	uint64_t epoch; /* peak epoch at_peak was last brought up to date for */
};

struct model_oom {
	int64_t seq, time_ns, api, stack;
	uint64_t requested;
	int mem;
	uint64_t live_bytes, live_count; /* device memory live at the failure */
	bool has_device_free, has_device_total;
	int64_t device_free, device_total;
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

/* private to model.c */
struct model_live;
struct model_stack_live {
	int64_t stack;
	uint64_t bytes, count;
};
struct model_recent_free;

struct model {
	struct model_mem device; /* device + managed */
	struct model_mem host;	 /* pinned host */
	uint64_t events;
	uint64_t unmatched_frees;  /* frees of addresses not live (and not failed) */
	uint64_t alloc_errors;	   /* failed allocations other than OOM */
	uint64_t free_errors;
	uint64_t reused_addresses; /* allocations at an address still live */
	uint64_t untracked_allocs; /* allocations without address or memory kind */
	uint64_t unknown_events;   /* event kinds this version does not know */
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

	struct model_oom *ooms;
	size_t n_ooms, cap_ooms;
	size_t oom_snapshots_dropped;
	size_t last_snapshot; /* index of the OOM in the rolling last slot */

	struct model_group *leaks; /* after model_finish, by bytes */
	size_t n_leaks;
	bool finished;
};

void model_init(struct model *m);
void model_fini(struct model *m);

/* The key allocations are grouped into sites by. For now a site is its
 * stack; grouping by the user's own frame comes later. */
uint64_t model_site_key(const struct model *m, int64_t stack);

/* Events must come in seq order. */
void model_feed(struct model *m, const struct mt_event *ev);

/* Settle per-site peak values, group leaks, sort. No model_feed after it. */
void model_finish(struct model *m);
