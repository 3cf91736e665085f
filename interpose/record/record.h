/* The record path (layer 4, interpose/record/): the hook-path rules,
 * the events, the capture-stream table. Calls the carry, the writer and
 * the core; the device questions and CUPTI's flush come through callbacks
 * (struct mt_record_options). See core/core.h. */
#pragma once

#include "core.h"

/* ---- record.c: the record path and the hook-path rules ---- */
/* What the record path writes into and what it asks, given at start. */
struct mt_record_options {
	struct mt_queue *queue;
	struct mt_stack_table *stacks;
	struct mt_writer *writer; /* an OOM waits for its commit (NULL: no wait) */
	const char *path; /* the trace's, for messages */
	int depth; /* native frames */
	/* The device current on this thread (-1: unknown), and its free and
	 * total memory, asked of the library the call api went to. */
	int16_t (*device)(unsigned api);
	bool (*mem_info)(unsigned api, uint64_t *free_b, uint64_t *total_b);
	/* Queues another witness's records so far (CUPTI) before an OOM
	 * (NULL: none). */
	void (*flush)(void);
};
/* At load: what the first recorded call runs, under the start lock, to
 * start the trace. It calls mt_record_begin once the trace runs; if it
 * does not, tracing is off. */
void mt_record_set_start(void (*start)(void));
/* The trace runs: the marks made before it go first, then every hook
 * records. */
void mt_record_begin(const struct mt_record_options *opt);
bool mt_record_running(void);
/* No more events (exit). */
void mt_record_stop(void);
/* The start lock: held while the trace starts, at exit and across fork. */
void mt_record_lock(void);
void mt_record_unlock(void);
/* The child of a fork: no trace, no capture; follow: it starts its own at
 * its first CUDA call. */
void mt_record_after_fork_child(bool follow);

/* The guard (record.c, rule 1), inline in every wrapper: a thread-local
 * flag and the trace's state. */
enum mt_record_state { MT_RECORD_IDLE, MT_RECORD_RUNNING, MT_RECORD_OFF };
extern _Atomic int mt_record_state;
extern MT_TLS int mt_in_hook;
bool mt_enter_slow(void);
/* false: pass the call straight through (nested call, or tracing off). */
static inline bool mt_enter(void)
{
	if (mt_in_hook)
		return false;
	mt_in_hook = 1;
	if (MT_LIKELY(atomic_load_explicit(&mt_record_state, memory_order_acquire) ==
		      MT_RECORD_RUNNING))
		return true;
	return mt_enter_slow();
}
static inline void mt_leave(void)
{
	mt_in_hook = 0;
}

/* What a wrapper knows about one call. */
struct mt_rec {
	unsigned api;
	int status; /* the CUDA result (0: success, in both APIs) */
	bool oom; /* status says: out of memory */
	uint8_t kind; /* mt_record_event only */
	bool no_stack; /* mt_record_event: a frequent call (launches) */
	uint8_t mem;
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;
	uint64_t handle;
	/* mt_record_tensor, a tensor_oom: the allocator's own cap (0: none)
	 * and the device's total memory (0: not known) */
	uint64_t limit, device_total;
};
/* An event's ordering point: its ticket (its place in the trace's order)
 * and its time. Two words: returned and passed in registers. */
struct mt_order {
	uint64_t ticket;
	uint64_t time_ns;
};
/* The ordering point of an allocation, just before its call: the device
 * may hand out the memory at any moment of the call, so it counts from
 * the start (docs/trace-format.md, "seq across threads"). */
struct mt_order mt_record_order(void);
/* After an allocation returned: alloc, oom or alloc_error by status. */
void mt_record_alloc(const struct mt_rec *r, struct mt_order at);
/* OOM events recorded so far (by mt_record_alloc), on any thread. */
extern _Atomic uint64_t mt_record_ooms;
/* A release (free, unmap) counts until its call returned, and its address
 * is in flight while it runs: mt_record_release_begin before the call
 * names it in this thread's slot (inline: one store), the release's
 * events after the call, then mt_record_release_done. mt_record_free
 * records a free (and a free_error when r->status says it failed) and
 * ends the release. */
extern MT_TLS _Atomic uint64_t *mt_release_mine; /* this thread's slot; NULL: none yet */
unsigned mt_record_release_begin_slow(uint64_t address);
void mt_record_release_done_slow(void);
static inline unsigned mt_record_release_begin(uint64_t address)
{
	_Atomic uint64_t *slot = mt_release_mine;
	if (MT_UNLIKELY(!slot))
		return mt_record_release_begin_slow(address);
	atomic_store_explicit(slot, address, memory_order_release);
	return 0;
}
/* After the release's events are pushed: the writer that sees the slot
 * empty finds them in the queue. */
static inline void mt_record_release_done(unsigned release)
{
	if (MT_LIKELY(!release))
		atomic_store_explicit(mt_release_mine, 0, memory_order_release);
	else
		mt_record_release_done_slow();
}
void mt_record_free(const struct mt_rec *r, unsigned release);
/* Any other kind (map, unmap, pools), with a stack. */
void mt_record_event(const struct mt_rec *r);
/* A framework allocator's action (r->kind: MT_EV_TENSOR_* and
 * MT_EV_CACHE_SEGMENT_*), on device; r->no_stack for frees. */
void mt_record_tensor(const struct mt_rec *r, int16_t device);
/* A mark (memtrace_mark, nvtxMark): label is an interned name id. */
void mt_record_mark(unsigned api, uint32_t label);
/* An event another witness saw (CUPTI), already filled in; it is queued
 * as it is (no stack: it was not seen on the thread that made it).
 * Returns false when the trace is not running. */
bool mt_record_external(const struct mt_event *ev);

/* The capture-stream table: which streams are being captured into a
 * graph, kept by the graph wrappers after their real calls. */
void mt_capture_begin(uint64_t stream);
/* The capture begun on origin is over: on every stream that joined it. */
void mt_capture_end(uint64_t origin);
/* event was recorded on stream: a capture event if stream is capturing
 * (and the record is not an external one), else no longer one. */
void mt_capture_event_recorded(uint64_t event, uint64_t stream, bool external);
/* stream waited on event: it joins the capture event was recorded in, if
 * that capture is still open and stream is in none. Returns the origin it
 * joined, or 0. */
uint64_t mt_capture_join(uint64_t stream, uint64_t event);
/* Streams in the table. The wrappers that matter only during a capture
 * (event records, stream waits) look at it first: one load. */
extern atomic_int mt_capture_streams;
static inline bool mt_capture_none(void)
{
	return atomic_load_explicit(&mt_capture_streams, memory_order_relaxed) == 0;
}
