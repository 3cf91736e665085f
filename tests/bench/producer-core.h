/* producer-core.c: the application-thread steps of an event (the record
 * path's own), callable from a benchmark without preload or CUDA. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(default)

/* A queue of 2^queue_log2 events, drained by a discarding consumer thread,
 * or by nobody when stalled (then the queue must hold every event); an
 * allocation's stack keeps up to depth native frames (MEMTRACE_DEPTH). */
bool bp_start(unsigned queue_log2, bool stalled, unsigned depth);
/* Stops the consumer; returns the events it took (stalled: pushed). */
uint64_t bp_stop(void);
uint64_t bp_wait_ns(void);
uint32_t bp_stack_count(void);

/* One step each, as the hot path does them. */
unsigned bp_unwind(unsigned depth);
unsigned bp_capture(uintptr_t *ips, unsigned depth);
uint32_t bp_intern(const uintptr_t *ips, unsigned n);
void bp_push(uint64_t address);

/* A whole allocation event (clock, tid, unwind, intern, device, push)
 * and a whole free event (clock, tid, push): mt_record_alloc and
 * mt_record_free themselves. */
void bp_alloc_event(uint64_t address, uint64_t bytes);
void bp_free_event(uint64_t address);

#pragma GCC visibility pop
