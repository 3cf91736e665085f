/* The latest tensors a framework's allocator made, in the order made, for
 * the answer on stderr at its OOM: the growth the reporter finds from the
 * tensors with no mark (trace/trace-reps.h; report/render/diagnose.c,
 * rule_growth_tensors), found the same way as the events arrive. A ring
 * of the last MT_REPS_KEPT tensors: a leak shows within it, and memory
 * stays bounded however long the run (16 bytes a tensor, 4 MiB at most). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-reps.h"
#include "util-map.h"

#define MT_REPS_KEPT (1u << 18)

struct mt_rep {
	uint32_t stack;
	bool live;
	uint64_t bytes; /* its block: what the allocator counts */
};

struct mt_reps {
	struct mt_rep *ring; /* MT_REPS_KEPT, made at the first tensor */
	uint64_t made;	     /* tensors made so far: the next one's number */
	struct map at;	     /* a live tensor's address -> its number */
	bool failed;	     /* out of memory once: no answer from here on */
};

void mt_reps_init(struct mt_reps *r);
void mt_reps_fini(struct mt_reps *r);
/* A tensor made at address, of bytes, by stack; one released. */
void mt_reps_made(struct mt_reps *r, uint64_t address, uint32_t stack, uint64_t bytes);
void mt_reps_gone(struct mt_reps *r, uint64_t address);

/* The user's Python frames of stack, outermost first, as ids (equal
 * frames, equal ids), into chain (at most cap); how many. */
typedef uint32_t (*mt_reps_chain_fn)(void *ctx, uint32_t stack, uint64_t *chain, uint32_t cap);

/* Whether stack passes through a module's forward (a Python frame named
 * ...forward). */
typedef bool (*mt_reps_forward_fn)(void *ctx, uint32_t stack);

/* What grew at an OOM (the pass in progress not counted): trace-reps.h's
 * growth, the stack of its largest kept tensor and of the first tensor of
 * the repeated line, and whether a tensor the line keeps was made in a
 * forward (an activation kept with its graph: diagnose.c's
 * kept_in_forward). False when nothing grew, or memory ran out. */
struct mt_reps_growth {
	struct trace_rep_growth g;
	uint32_t largest_stack, rep_stack;
	bool graph;
};
bool mt_reps_growth(const struct mt_reps *r, mt_reps_chain_fn chain, mt_reps_forward_fn forward,
		    void *ctx, uint64_t floor, struct mt_reps_growth *out);
