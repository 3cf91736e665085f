/* The rule of trace/trace-cause.h on the writer's side (live-cause.h):
 * the same rounds as report/model/model.c, the same order of causes as
 * report/render/diagnose.c, worded for two lines of stderr. */
#include "live-cause.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util-grow.h"
#include "util-size.h"

/* Stack ids are dense from 1 (stack-table.c); past this many, the stacks
 * have no rounds and no growth is told for them. */
#define MT_CAUSE_MAX_STACKS (1u << 20)
/* Devices whose first allocations are kept (preallocated) */
#define CAUSE_DEVICES 16

struct cause_stack {
	struct trace_round_stack rounds;
	uint64_t bytes; /* device-side bytes live */
};

struct cause_early {
	int device;
	unsigned n;
	uint64_t bytes[TRACE_EARLY_ALLOCS];
	uint32_t stack[TRACE_EARLY_ALLOCS];
	uint8_t mem[TRACE_EARLY_ALLOCS]; /* an arena is the first of its kind */
};

struct mt_cause {
	struct trace_round_run run;
	struct cause_stack *stacks; /* by stack id */
	size_t cap;
	struct cause_early early[CAUSE_DEVICES];
	unsigned n_devices;
	uint64_t execs; /* executable graphs made and not destroyed */
};

struct mt_cause *mt_cause_new(void)
{
	return calloc(1, sizeof(struct mt_cause));
}

void mt_cause_free(struct mt_cause *c)
{
	if (!c)
		return;
	free(c->stacks);
	free(c);
}

static struct cause_stack *stack_at(struct mt_cause *c, uint32_t id)
{
	if (id >= MT_CAUSE_MAX_STACKS)
		return NULL;
	struct cause_stack *p = trace_grow(c->stacks, &c->cap, (size_t)id + 1, sizeof(*p), 256, true);
	if (!p)
		return NULL;
	c->stacks = p;
	return &c->stacks[id];
}

static void early(struct mt_cause *c, uint32_t stack, int device, int mem, uint64_t bytes)
{
	unsigned i;

	for (i = 0; i < c->n_devices && c->early[i].device != device; i++)
		;
	if (i == c->n_devices) {
		if (c->n_devices == CAUSE_DEVICES)
			return;
		c->early[c->n_devices++] = (struct cause_early){ .device = device };
	}
	struct cause_early *e = &c->early[i];
	if (e->n < TRACE_EARLY_ALLOCS) {
		e->bytes[e->n] = bytes;
		e->mem[e->n] = (uint8_t)mem;
		e->stack[e->n++] = stack;
	}
}

void mt_cause_alloc(struct mt_cause *c, uint32_t stack, int device, int mem, uint64_t bytes)
{
	struct cause_stack *s;

	if (!c)
		return;
	early(c, stack, device, mem, bytes);
	trace_round_next(&c->run);
	if (!(s = stack_at(c, stack)))
		return;
	trace_round_alloc(&c->run, &s->rounds, s->bytes, bytes);
	s->bytes += bytes;
}

void mt_cause_release(struct mt_cause *c, uint32_t stack, uint64_t bytes)
{
	struct cause_stack *s;

	if (!c)
		return;
	trace_round_given_back(&c->run);
	if (!(s = stack < c->cap ? &c->stacks[stack] : NULL))
		return;
	trace_round_free(&c->run, &s->rounds, s->bytes);
	s->bytes = s->bytes > bytes ? s->bytes - bytes : 0;
}

void mt_cause_exec(struct mt_cause *c, bool created)
{
	if (!c)
		return;
	if (created)
		c->execs++;
	else if (c->execs)
		c->execs--;
}

/* ---- the judgement ---- */

struct verdict {
	enum trace_cause cause;
	int rank;
	uint32_t stack;		    /* growth: what kept; preallocated: the arena's */
	struct trace_rounds rounds; /* growth's */
	uint64_t bytes;		    /* preallocated: the arena; not_ours: unexplained */
};

static void consider(struct verdict *v, enum trace_cause cause, bool leads, bool beyond)
{
	int rank = trace_cause_rank(cause, leads, beyond);

	if (!v->cause || rank < v->rank)
		*v = (struct verdict){ .cause = cause, .rank = rank };
}

/* The stack that kept the most round after round (diagnose.c, kept_most). */
static bool growth(struct mt_cause *c, const struct mt_cause_oom *o, struct verdict *best)
{
	uint64_t floor = trace_growth_floor(o->peak), round = trace_round_at_oom(&c->run);
	bool found = false;

	for (size_t i = 0; i < o->n_holders; i++) {
		uint32_t id = o->holders[i];
		struct trace_rounds r;

		if (id >= c->cap || !trace_round_view(&c->run, &c->stacks[id].rounds,
						      c->stacks[id].bytes, false, &r))
			continue;
		if (!trace_rounds_grew(&r, round, floor))
			continue;
		if (!found || r.kept_bytes > best->rounds.kept_bytes) {
			best->stack = id;
			best->rounds = r;
			found = true;
		}
	}
	return found;
}

/* An arena is the first allocation of its kind on its device: one that
 * grew region by region to its limit (JAX with
 * XLA_PYTHON_CLIENT_PREALLOCATE=false) took smaller ones first. */
static bool first_of_kind(const struct cause_early *e, unsigned j)
{
	for (unsigned i = 0; i < j; i++) {
		if (e->mem[i] == e->mem[j])
			return false;
	}
	return true;
}

static bool preallocated(const struct mt_cause *c, const struct mt_cause_oom *o, uint32_t *stack,
			 uint64_t *bytes)
{
	for (unsigned i = 0; o->has_device && i < c->n_devices; i++) {
		const struct cause_early *e = &c->early[i];

		for (unsigned j = 0; e->device == o->device && j < e->n; j++) {
			if (trace_cause_arena(e->bytes[j], o->device_total)) {
				if (!first_of_kind(e, j))
					return false; /* grown region by region */
				*stack = e->stack[j];
				*bytes = e->bytes[j];
				return true;
			}
		}
	}
	return false;
}

/* Graph memory the live execs may pin, worth telling: at least the
 * request, or a tenth of the device. */
static bool graphs_hold(const struct mt_cause *c, const struct mt_cause_oom *o)
{
	if (!c->execs || !o->graph_live)
		return false;
	return o->graph_live >= o->requested ||
	       (o->has_device && (double)o->graph_live >= 0.10 * (double)o->device_total);
}

static void judge(struct mt_cause *c, const struct mt_cause_oom *o, struct verdict *v)
{
	uint64_t used = o->has_device && o->device_total > o->device_free
				? o->device_total - o->device_free
				: 0;
	uint64_t unexplained = used > o->live + o->graph_live ? used - o->live - o->graph_live : 0;
	bool leads = trace_cause_not_ours_leads(unexplained, o->requested, o->live);
	bool beyond = o->has_device && trace_cause_beyond_device(o->requested, o->device_total);
	struct verdict g = { 0 };
	uint32_t arena_stack = 0;
	uint64_t arena = 0;

	*v = (struct verdict){ 0 };
	if (o->has_device && o->requested &&
	    trace_cause_fragmentation(o->device_free, o->requested))
		consider(v, TRACE_CAUSE_FRAGMENTATION, leads, beyond);
	if (graphs_hold(c, o))
		consider(v, TRACE_CAUSE_ORPHANED_GRAPHS, leads, beyond);
	if (growth(c, o, &g)) {
		consider(v, TRACE_CAUSE_GROWTH, leads, beyond);
		if (v->cause == TRACE_CAUSE_GROWTH) {
			v->stack = g.stack;
			v->rounds = g.rounds;
		}
	}
	if (preallocated(c, o, &arena_stack, &arena)) {
		consider(v, TRACE_CAUSE_PREALLOCATED, leads, beyond);
		if (v->cause == TRACE_CAUSE_PREALLOCATED) {
			v->stack = arena_stack;
			v->bytes = arena;
		}
	}
	if (o->has_device && trace_cause_not_ours(unexplained, o->requested, o->device_total)) {
		consider(v, TRACE_CAUSE_NOT_OURS, leads, beyond);
		if (v->cause == TRACE_CAUSE_NOT_OURS)
			v->bytes = unexplained;
	}
	/* nothing that explains the failure by itself, or a request beyond
	 * the device: the step did not fit (it leads unless others or an
	 * arena rank before it, and always beyond the device) */
	if (!v->cause || v->rank > TRACE_CAUSE_EXPLAINS || beyond)
		consider(v, TRACE_CAUSE_TOO_BIG, leads, beyond);
}

/* ---- the words ---- */

/* A size as the report writes it (trace/util-size.h). */
static void size_into(char *out, size_t n, uint64_t b)
{
	snprintf(out, n, "%s", fmt_size(b).s);
}

struct too_big {
	uint64_t step, need, before, room;
	uint32_t top; /* the holder that allocated the most of the step */
	uint64_t top_bytes;
	bool request_scales; /* the failing stack asked for less before */
	uint64_t asked_before;
};

static void step_of(struct mt_cause *c, const struct mt_cause_oom *o, struct too_big *t)
{
	struct trace_rounds r;

	*t = (struct too_big){ 0 };
	for (size_t i = 0; i < o->n_holders; i++) {
		uint32_t id = o->holders[i];

		if (id >= c->cap || !trace_round_view(&c->run, &c->stacks[id].rounds,
						      c->stacks[id].bytes, false, &r))
			continue;
		t->step += r.open_bytes;
		if (r.open_bytes > t->top_bytes) {
			t->top = id;
			t->top_bytes = r.open_bytes;
		}
	}
	t->before = o->live > t->step ? o->live - t->step : 0;
	t->need = t->step + o->requested;
	t->room = o->device_total > t->before ? o->device_total - t->before : 0;
	if (o->stack < c->cap &&
	    trace_round_view(&c->run, &c->stacks[o->stack].rounds, c->stacks[o->stack].bytes, false,
			     &r) &&
	    r.max_alloc < o->requested) {
		t->request_scales = true;
		t->asked_before = r.max_alloc;
	}
}

#define SAY(...)                                                                  \
	do {                                                                      \
		if (len < n)                                                      \
			len += (size_t)snprintf(out + len, n - len, __VA_ARGS__); \
	} while (0)

static size_t say_too_big(struct mt_cause *c, const struct mt_cause_oom *o, mt_cause_name_fn name,
			  void *ctx, char *out, size_t n)
{
	char need[32], step[32], req[32], room[32], before[32], a[32], where[512];
	struct too_big t;
	size_t len = 0;

	step_of(c, o, &t);
	size_into(need, sizeof(need), t.need);
	size_into(step, sizeof(step), t.step);
	size_into(req, sizeof(req), o->requested);
	size_into(room, sizeof(room), t.room);
	size_into(before, sizeof(before), t.before);
	SAY("memtrace:   cause (too_big): ");
	if (o->has_device && trace_cause_beyond_device(o->requested, o->device_total)) {
		size_into(a, sizeof(a), o->device_total);
		SAY("the %s asked for is more than the device's %s: it cannot fit, whatever "
		    "else is freed; ", req, a);
	}
	SAY("the step in progress needed %s (%s allocated since memory was last given back",
	    need, step);
	if (t.top_bytes) {
		name(ctx, t.top, where, sizeof(where));
		size_into(a, sizeof(a), t.top_bytes);
		SAY(", the most of it by %s (%s)", where, a);
	}
	SAY(", and the %s asked for)", req);
	if (o->has_device)
		SAY(" but only %s was left for it beside %s held from before", room, before);
	SAY("; nothing was kept from one repetition to the next");
	if (t.request_scales) {
		name(ctx, o->stack, where, sizeof(where));
		size_into(a, sizeof(a), t.asked_before);
		SAY("; %s asked for at most %s before: it scales with the batch or input", where,
		    a);
	}
	SAY("\nmemtrace:   try: a smaller batch or input, gradient (activation) checkpointing, "
	    "mixed precision (bf16 or fp16), or sharding the model over more devices\n");
	return len;
}

/* The cache's free memory in pieces: the same rule, and the same
 * figures, as the report's "Fragmentation" under PyTorch's cache. */
static void cache_fragmentation(const struct mt_cause_own_oom *o, char *out, size_t n)
{
	uint64_t device_free = o->has_device_free ? o->device_free : 0;
	size_t len = 0;

	if (!trace_cause_cache_fragmentation(o->requested, o->cache_free, o->largest_free,
					     device_free))
		return;
	SAY("memtrace:   cause (fragmentation): %s of the cache is free, in pieces: its "
	    "largest free block is smaller than the tensor",
	    fmt_size(o->cache_free).s);
	SAY("\nmemtrace:   try: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
	    "torch.cuda.empty_cache() before the step, fewer distinct tensor sizes\n");
	if (len >= n && n > 1) {
		out[n - 2] = '\n';
		out[n - 1] = '\0';
	}
}

void mt_cause_arena_answer(const struct mt_cause_arena_oom *o, char *out, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	out[0] = '\0';
	if (trace_cause_arena_fragmentation(o->requested, o->arena_free, o->largest_free,
					    o->reserved)) {
		SAY("memtrace:   cause (fragmentation): %s of the arena is free, in pieces: its "
		    "largest free chunk (%s) is smaller than the tensor",
		    fmt_size(o->arena_free).s, fmt_size(o->largest_free).s);
		SAY("\nmemtrace:   try: fewer distinct tensor sizes (a fixed batch and input shape: "
		    "drop_remainder=True in tf.data), or the same work in smaller pieces (a smaller "
		    "batch_size)\n");
	} else {
		/* the report's rule_arena_too_big: what the tensor is for, or
		 * the model's state when it fills half the arena */
		enum trace_tf_variable v = o->variable;
		uint64_t arena = o->limit ? o->limit : o->reserved;

		if (v == TRACE_TF_NOT_VARIABLE && trace_tf_model_state(o->weights, o->slots, arena))
			v = o->slots ? TRACE_TF_OPTIMIZER_SLOT : TRACE_TF_WEIGHT;
		if (trace_cause_beyond_arena(o->requested, 0, o->limit))
			SAY("memtrace:   cause (too_big): the %s asked for is more than the arena's "
			    "%s (its memory limit): it cannot fit, whatever else is freed",
			    fmt_size(o->requested).s, fmt_size(o->limit).s);
		else if (trace_cause_beyond_arena(o->requested, o->step, o->limit))
			SAY("memtrace:   cause (too_big): the step needs %s (%s made at the line "
			    "that failed and the %s asked for), more than the arena's %s (its "
			    "memory limit): it cannot fit, whatever else is freed",
			    fmt_size(o->step + o->requested).s, fmt_size(o->step).s,
			    fmt_size(o->requested).s, fmt_size(o->limit).s);
		else if (v == TRACE_TF_NOT_VARIABLE)
			return; /* a step that would fit alone, or kept tensors: the report's */
		else
			SAY("memtrace:   cause (too_big): %s: its %s held %s in %llu tensors when "
			    "the %s asked for failed, %s of it free (its largest free chunk %s); the "
			    "model's weights %s, its optimizer's slots %s",
			    trace_tf_title(v), o->limit ? "memory limit" : "regions so far",
			    fmt_size(o->allocated).s, (unsigned long long)o->tensors,
			    fmt_size(o->requested).s, fmt_size(o->arena_free).s,
			    fmt_size(o->largest_free).s, fmt_size(o->weights).s,
			    fmt_size(o->slots).s);
		SAY("\nmemtrace:   try: %s\n", trace_tf_remedy(v));
	}
	if (len >= n && n > 1) {
		out[n - 2] = '\n';
		out[n - 1] = '\0';
	}
}

void mt_cause_own_answer(const struct mt_cause_own_oom *o, char *out, size_t n)
{
	uint64_t room = trace_cause_limit_room(o->limit, o->reserved);
	size_t len = 0;

	if (n)
		out[0] = '\0';
	if (!n)
		return;
	if (!trace_cause_allocator_limit(o->cuda_failed, true)) {
		cache_fragmentation(o, out, n);
		return;
	}
	/* each figure with its exact bytes, as the report's evidence has them */
	SAY("memtrace:   cause (allocator_limit): PyTorch's caching allocator refused the %s (%s) "
	    "asked for with no CUDA call failing: the cap it was given "
	    "(torch.cuda.set_per_process_memory_fraction, or per_process_memory_fraction "
	    "in PYTORCH_CUDA_ALLOC_CONF) was reached; ",
	    fmt_size(o->requested).s, fmt_bytes(o->requested).s);
	if (o->limit)
		SAY("its cap is %s (%s): ", fmt_size(o->limit).s, fmt_bytes(o->limit).s);
	else
		SAY("its cap is not known; ");
	SAY("it had %s (%s) reserved", fmt_size(o->reserved).s, fmt_bytes(o->reserved).s);
	if (o->limit)
		SAY(", so %s (%s) was left under the cap", fmt_size(room).s, fmt_bytes(room).s);
	if (o->has_device_free)
		SAY(", while the device itself had %s free", fmt_size(o->device_free).s);
	SAY("\nmemtrace:   try: raise or remove torch.cuda.set_per_process_memory_fraction (or "
	    "per_process_memory_fraction in PYTORCH_CUDA_ALLOC_CONF) if the process may use more "
	    "of the device; else hold fewer or smaller tensors under the cap\n");
	if (len >= n && n > 1) {
		out[n - 2] = '\n';
		out[n - 1] = '\0';
	}
}

void mt_cause_answer(struct mt_cause *c, const struct mt_cause_oom *o, mt_cause_name_fn name,
		     void *ctx, char *out, size_t n)
{
	char a[32], b[32], where[512];
	struct verdict v;
	size_t len = 0;

	if (n)
		out[0] = '\0';
	if (!c || !n)
		return;
	if (o->bfc_beyond_limit) {
		size_into(a, sizeof(a), o->requested);
		size_into(b, sizeof(b), o->device_free);
		SAY("memtrace:   cause (too_big): TensorFlow's BFC allocator refused the %s asked "
		    "for before its arena took any memory: more than the memory limit TensorFlow "
		    "set for the GPU (below the %s the device had free): it cannot fit, whatever "
		    "else is freed\n",
		    a, b);
		SAY("memtrace:   try: a smaller tensor: host data copied whole (tf.constant) stays "
		    "on the host, fed in batches (model.fit on the NumPy arrays, tf.data); a "
		    "smaller batch_size or model\n");
		return;
	}
	judge(c, o, &v);
	switch (v.cause) {
	case TRACE_CAUSE_GROWTH:
		name(ctx, v.stack, where, sizeof(where));
		size_into(a, sizeof(a), v.rounds.kept_bytes / v.rounds.kept);
		size_into(b, sizeof(b), v.rounds.kept_bytes);
		SAY("memtrace:   cause (growth): memory kept across iterations: %s kept %s in each "
		    "of %llu repetitions in a row (%s together), while the rest of each "
		    "repetition's memory was given back\n",
		    where, a, (unsigned long long)v.rounds.kept, b);
		SAY("memtrace:   try: find what keeps the memory allocated at %s alive from one "
		    "iteration to the next (a list or cache of tensors, a loss kept with its "
		    "graph: use loss.item(), detach() what is logged)\n",
		    where);
		break;
	case TRACE_CAUSE_TOO_BIG:
		len = say_too_big(c, o, name, ctx, out, n);
		break;
	case TRACE_CAUSE_FRAGMENTATION:
		size_into(a, sizeof(a), o->device_free);
		size_into(b, sizeof(b), o->requested);
		SAY("memtrace:   cause (fragmentation): the device had %s free, more than the %s "
		    "asked for: the free memory is in pieces, none large enough\n",
		    a, b);
		SAY("memtrace:   try: PyTorch: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; "
		    "see the tensors in the cached segments with `memtrace run --per-tensor`\n");
		break;
	case TRACE_CAUSE_ORPHANED_GRAPHS:
		size_into(a, sizeof(a), o->graph_live);
		/* whether they are left behind shows only at the end of the run */
		SAY("memtrace:   cause (orphaned_graphs): %llu executable graph%s not destroyed so "
		    "far and %s of graph memory not freed (the report tells which are never "
		    "destroyed)\n",
		    (unsigned long long)c->execs, c->execs == 1 ? "" : "s", a);
		SAY("memtrace:   try: destroy graph execs no longer used (cudaGraphExecDestroy) "
		    "and free graph memory, or instantiate with "
		    "cudaGraphInstantiateFlagAutoFreeOnLaunch; torch.compile: "
		    "torch._dynamo.reset() between models\n");
		break;
	case TRACE_CAUSE_PREALLOCATED:
		name(ctx, v.stack, where, sizeof(where));
		size_into(a, sizeof(a), v.bytes);
		SAY("memtrace:   cause (preallocated): one allocation of %s by %s, among the first "
		    "on device %d: a framework's arena, whose tensors memtrace does not see\n",
		    a, where, o->device);
		SAY("memtrace:   try: the tensors must fit the arena's limit: JAX: raise it with "
		    "XLA_PYTHON_CLIENT_MEM_FRACTION where the device has room, else a smaller "
		    "batch, jax.checkpoint, donate_argnums (`memtrace run --per-tensor` shows each "
		    "tensor); PREALLOCATE=false and allow_growth keep the same limit\n");
		break;
	case TRACE_CAUSE_NOT_OURS:
		size_into(a, sizeof(a), v.bytes);
		SAY("memtrace:   cause (not_ours): %s in use on the device is not this process's "
		    "allocations\n",
		    a);
		SAY("memtrace:   try: look for other processes on the device (nvidia-smi), one rank "
		    "per device (CUDA_VISIBLE_DEVICES); the rest is contexts and libraries' "
		    "workspaces\n");
		break;
	case TRACE_CAUSE_ALLOCATOR_LIMIT: /* the allocator's own OOM: mt_cause_own_answer */
		break;
	}
	if (len >= n && n > 1) {
		out[n - 2] = '\n';
		out[n - 1] = '\0';
	}
}
