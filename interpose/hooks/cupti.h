/* CUPTI: the driver's own account of what was allocated, whatever route
 * the program took to the driver. Found and started at the start of the
 * trace, never linked; its records become events with source = CUPTI.
 * The matching of those events with the hooked ones is the reporter's
 * work: docs/cupti.md. */
#pragma once

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* ---- the three calls the rest of the library makes ---- */

/* What CUPTI's events go to and what finds its functions, given at start. */
struct mt_cupti_options {
	/* Where the program counter of a CUPTI record becomes a one-frame
	 * stack (NULL: no stacks). */
	struct mt_stack_table *stacks;
	/* Queues an event; false when the trace no longer takes events. */
	bool (*sink)(const struct mt_event *ev);
	/* The real dlsym (our exported one would hand back our wrappers). */
	void *(*dlsym)(void *handle, const char *name);
};

/* Loads and starts CUPTI as MEMTRACE_CUPTI (auto|on|off) and
 * MEMTRACE_CUPTI_PATH say. Call once the trace takes events (at the first
 * CUDA call); later calls do nothing. When CUPTI cannot be used it says
 * why, once, and the hooks go on alone. */
void mt_cupti_start(const struct mt_cupti_options *opt);
/* Has CUPTI hand over every record it holds; they are queued before this
 * returns. Call before waiting for an out-of-memory event to be
 * committed, and at exit. Cheap and harmless when CUPTI is not running. */
void mt_cupti_flush(void);
/* Flushes, then stops CUPTI. Idempotent; also runs from an atexit
 * handler that mt_cupti_start registers. */
void mt_cupti_stop(void);

/* ---- records to events, without CUPTI loaded (unit-tested) ---- */

struct mt_cupti_parse {
	int64_t clock_offset_ns; /* CUPTI timestamp + offset = CLOCK_MONOTONIC */
	struct mt_stack_table *stacks; /* NULL: no stack for the pc */
	bool (*sink)(const struct mt_event *ev); /* mt_cupti_drain's events */
};

/* What one record is to memtrace. */
enum mt_cupti_verdict {
	MT_CUPTI_EVENT, /* ev is filled in */
	MT_CUPTI_IGNORED, /* a kind or memory kind memtrace does not keep */
};
enum mt_cupti_verdict mt_cupti_record_event(const CUpti_Activity *rec,
					    const struct mt_cupti_parse *p, struct mt_event *ev);

/* Walks a buffer CUPTI handed back, with CUPTI's own record iterator,
 * and hands an event for each record memtrace keeps to p->sink. Returns
 * the number handed over. */
typedef CUptiResult (*mt_cupti_next_fn)(uint8_t *buffer, size_t valid, CUpti_Activity **rec);
size_t mt_cupti_drain(uint8_t *buffer, size_t valid, mt_cupti_next_fn next,
		      const struct mt_cupti_parse *p);

/* The event of a resource callback (graph and graph-exec lifetimes);
 * id is CUPTI's id of the graph or exec (0: unknown). Returns false for
 * the callbacks memtrace does not keep. */
bool mt_cupti_graph_event(CUpti_CallbackId cbid, const CUpti_GraphData *g, uint32_t id,
			  uint64_t now_ns, struct mt_event *ev);
