/* Flight mode and a framework allocator's actions (PyTorch's: the
 * MT_EV_TENSOR_* and MT_EV_CACHE_* rows of other_events): which of them
 * must outlive the ring so that the reporter, replaying what is left,
 * still finds the cache as it was (docs/usage.md, "What it keeps").
 *
 * An action is in effect from its row until the row that ends it: a
 * block's alloc and its free request until the block's free, a segment's
 * alloc or map until the free or unmap of its range. One in effect when
 * its chunk of the ring goes is kept; one that ended is kept until the
 * chunk of the row that ended it goes (so that no row of the ring ends an
 * action the reporter never saw). At an OOM the actions in effect are
 * pinned: kept for good, with the rows that end them, so that the tensor
 * view at that OOM stays exact after the ring has passed it.
 *
 * The writer thread's alone; no SQL here: the caller keeps and releases
 * the rows. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "util-map.h"

struct mt_tensor_keep {
	struct map block;   /* address -> seq of its alloc (| MT_TKEEP_PIN) */
	struct map request; /* address -> seq of its free request */
	struct map segment; /* address -> seq of its segment alloc or map */
};

#define MT_TKEEP_PIN (1ull << 63)

/* What an action did to the rows of earlier ones: seq ended (its row may
 * go once the chunk of the row that ended it goes); or, for the event's
 * own row, that it must stay for good (it ends a pinned action). */
typedef bool (*mt_tkeep_fn)(void *ctx, uint64_t seq);

bool mt_tkeep_init(struct mt_tensor_keep *k);
void mt_tkeep_fini(struct mt_tensor_keep *k);
/* The action ev, row seq. ended(ctx, s) for each action it ends that is
 * not pinned; keep(ctx, seq) when it ends a pinned one. False when a
 * callback failed or the maps could not grow. */
bool mt_tkeep_event(struct mt_tensor_keep *k, uint64_t seq, const struct mt_event *ev,
		    mt_tkeep_fn ended, mt_tkeep_fn keep, void *ctx);
/* keep(ctx, s) for each action in effect whose row s is in [from, to]; with
 * pin, each is pinned as well. */
bool mt_tkeep_in_effect(struct mt_tensor_keep *k, uint64_t from, uint64_t to, bool pin,
			mt_tkeep_fn keep, void *ctx);
