/* The cause in the out-of-memory answer on stderr (trace-live.c's
 * summary): the writer's side of trace/trace-cause.h. It keeps, as the
 * events go, what the reporter's model keeps for the same rule: each
 * stack's rounds, the run's round, each device's first allocations, the
 * executable graphs not yet destroyed; at an OOM it judges the cause the
 * report would give and words it in two lines.
 *
 * What the library cannot know, and says: whether executable graphs alive
 * at the OOM are ever destroyed (the report judges at the end of the run),
 * and marks or NVTX ranges as steps (the report's growth by points).
 *
 * Writer thread only. Bounded: one record per stack (at most
 * MT_CAUSE_MAX_STACKS), constant work per event, a pass over the stacks
 * holding memory at an OOM. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-role.h"

#include "trace-cause.h"

struct mt_cause;

/* NULL when out of memory: then no cause is told. */
struct mt_cause *mt_cause_new(void);
void mt_cause_free(struct mt_cause *c);

/* A device-side allocation (the kinds of the device peak) of `bytes` of
 * kind mem on stack, device; its release. */
void mt_cause_alloc(struct mt_cause *c, uint32_t stack, int device, int mem, uint64_t bytes);
void mt_cause_release(struct mt_cause *c, uint32_t stack, uint64_t bytes);
/* An executable graph made (created) or destroyed. */
void mt_cause_exec(struct mt_cause *c, bool created);

/* An OOM as the summary knows it. */
struct mt_cause_oom {
	uint32_t stack;	    /* the failed request's */
	uint64_t requested; /* 0: a graph launch, whose need is not known */
	bool has_device;    /* device_free and device_total known */
	uint64_t device_free, device_total;
	int device;
	uint64_t live;		 /* device-side bytes the process holds */
	uint64_t peak;		 /* the device peak so far */
	uint64_t graph_live;	 /* graph memory not freed */
	const uint32_t *holders; /* stacks holding device-side memory now */
	size_t n_holders;
	/* TensorFlow's BFC allocator refused it before its arena took any
	 * region, the device having room: more than TensorFlow's memory
	 * limit for the GPU (the report's render_bfc_beyond_limit) */
	bool bfc_beyond_limit;
};

/* Names a stack for the answer (the summary's naming rule). */
typedef void (*mt_cause_name_fn)(void *ctx, uint32_t stack, char *out, size_t n);

/* A framework allocator's own OOM (PyTorch's caching allocator, no CUDA
 * call failing since its last): cuda_failed says whether one did. */
struct mt_cause_own_oom {
	bool cuda_failed;
	uint64_t requested; /* the block asked for */
	uint64_t limit;	    /* the allocator's cap, 0: not known */
	uint64_t reserved;  /* what the allocator held (memory_reserved()) */
	bool has_device_free;
	uint64_t device_free;  /* as the allocator read it */
	uint64_t cache_free;   /* reserved less allocated */
	uint64_t largest_free; /* the cache's largest free block */
};

/* The cause's two lines at such an OOM when its own cap refused it
 * (allocator_limit, trace_cause_allocator_limit), else when the cache's
 * free memory is in pieces (trace_cause_cache_fragmentation, the rule the
 * reports give); "" otherwise. */
void mt_cause_own_answer(const struct mt_cause_own_oom *o, char *out, size_t n);

/* TensorFlow's BFC arena at its own OOM, its tensors seen: the cause
 * judged inside the arena (trace/trace-cause.h): fragmentation
 * (trace_cause_arena_fragmentation), or too_big
 * when the step (the request and what the line that failed holds) is
 * more than the arena's limit (trace_cause_beyond_arena); "" otherwise (the report judges the rest
 * from the tensors' repetitions, which the writer does not keep). */
struct mt_cause_arena_oom {
	uint64_t requested;    /* the tensor asked for */
	uint64_t step;	       /* its tensors made at the line that failed */
	uint64_t limit;	       /* trace_cause_arena_limit: 0 when not known */
	uint64_t reserved;     /* its regions */
	uint64_t arena_free;   /* its regions less its tensors */
	uint64_t largest_free; /* its largest free chunk */
	uint64_t allocated, tensors; /* its tensors */
	/* what the refused tensor is for (trace_tf_variable_of), and the
	 * bytes the model's weights and its optimizer's slots held */
	enum trace_tf_variable variable;
	uint64_t weights, slots;
};
void mt_cause_arena_answer(const struct mt_cause_arena_oom *o, char *out, size_t n);

/* The cause's two lines ("memtrace:   cause (growth): ...\n" and
 * "memtrace:   try: ...\n") into out; "" when no cause can be told. */
void mt_cause_answer(struct mt_cause *c, const struct mt_cause_oom *o, mt_cause_name_fn name,
		     void *ctx, char *out, size_t n);
