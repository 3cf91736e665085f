/* The answer on the program's stderr at an out-of-memory failure: when
 * it is due (the first OOM of an episode; a CUDA OOM inside torch's
 * allocator waits for torch's own, or for its retry to work) and what it
 * says: what failed, what the device had, the largest holders by the
 * user's line, the cause and what to try (live-cause.h), the command for
 * the whole story; at PyTorch's own OOM, the tensor view of its cache
 * (trace/trace-cache.h). The holders are the live state's (trace-live.c
 * gathers them when an answer is due). Writer thread only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live-cause.h"
#include "live-reps.h"
#include "trace-cache.h"
#include "trace-schema.h"
#include "writer.h"

/* What the answers name stacks with, and the trace they point to. */
struct mt_answer {
	const char *path; /* the trace */
	struct mt_stack_table *stacks;
	bool (*op_name)(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
	bool (*pyframe)(uintptr_t token, const char **function, const char **file,
			unsigned *line);
	struct mt_cause *cause; /* what the cause is judged from */

	/* when an answer is due (zero at the start) */
	bool had_oom;
	uint64_t last_oom_ns;
	struct trace_cache cache; /* PyTorch's cache, for the answer at its OOM */
	bool has_cache, cache_failed;
	/* the latest tensors, for the growth told at the allocator's OOM
	 * (mt_reps_init'ed by the caller), and the device's peak so far (the
	 * caller's, before each event: trace_growth_floor's) */
	struct mt_reps reps;
	uint64_t peak;
	/* a CUDA OOM inside torch's allocator: its answer waits for the
	 * allocator's own OOM, which names the tensor */
	struct mt_event pending;
	uint64_t pending_ns;
	bool has_pending;
	uint64_t retries; /* CUDA OOMs torch recovered from (retried) */
};

/* The kinds of event mt_answer_event reads. */
static inline bool mt_answer_wants(unsigned kind)
{
	return kind == MT_EV_OOM || kind == MT_EV_OOM_RAISED || kind == MT_EV_GRAPH_LAUNCH ||
	       (kind >= MT_EV_TENSOR_FIRST && kind <= MT_EV_TENSOR_LAST);
}

/* The event ev at time_ns, in the trace's order, while a CUDA OOM waits
 * (has_pending): the one waiting when ev shows torch gave up without an
 * OOM of its own, if its answer is due (the caller gives it, with the
 * holders: mt_answer_oom); NULL when none is, or the retry worked (said
 * once). */
const struct mt_event *mt_answer_settle(struct mt_answer *a, const struct mt_event *ev);
/* An event of a kind mt_answer_wants: what it tells is told (torch's OOM
 * with its cache, where a failure was raised), what it is of torch's
 * cache kept; returns ev when it is an OOM whose answer with the holders
 * is due now, else NULL. */
const struct mt_event *mt_answer_event(struct mt_answer *a, const struct mt_event *ev,
				       uint64_t time_ns);
void mt_answer_fini(struct mt_answer *a);

/* Device memory live at the OOM held by one stack (its sites summed). */
struct mt_answer_holder {
	uint32_t stack, op;
	uint64_t bytes, count;
};

/* The process's device memory at the OOM: live bytes and allocations of
 * the peak's kinds, their peak, the graph memory live. */
struct mt_answer_live {
	uint64_t live, count, peak, graph_live;
};

/* The answer at the first OOM of an episode (ev: the failed call, a graph
 * launch included); h: its n holders, in any order (sorted here). */
void mt_answer_oom(const struct mt_answer *a, const struct mt_event *ev,
		   struct mt_answer_holder *h, size_t n, const struct mt_answer_live *live);
/* PyTorch's allocator gave up on the tensor of ev: cuda, the CUDA call
 * that failed for it (NULL: none did, a cap of its own); c, its cache. */
void mt_answer_tensor(const struct mt_answer *a, const struct mt_event *ev,
		      const struct mt_event *cuda, const struct trace_cache *c);
/* TensorFlow's BFC allocator refused the tensor of ev (its own OOM)
 * inside the arena whose tensors c holds: the arena's figures, the
 * tensors by line, the cause when it can be told here
 * (mt_cause_arena_answer). */
void mt_answer_arena(const struct mt_answer *a, const struct mt_event *ev,
		     const struct trace_cache *c);
/* The CUDA call ev failed inside torch's allocator and its retry worked:
 * one line, no OOM (trace-live.c tells it once). */
void mt_answer_retried(const struct mt_answer *a, const struct mt_event *ev);
/* The OOM told failed on a thread with no line of the program's: where
 * it reached the program (ev: the oom_raised event). */
void mt_answer_raised(const struct mt_answer *a, const struct mt_event *ev);
