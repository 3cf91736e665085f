/* The rules of diagnose.h. The cause is judged from the events, never
 * from wall time: what a stack kept round after round (struct
 * trace_rounds: the run cut where memory is given back), what marks, NVTX
 * ranges and graph instantiations show (model-points.c), graphs left
 * behind (model-graph.c), the failure's own numbers. Each rule words its
 * evidence with the numbers it decided on; thresholds are named so a
 * reader can argue with them. See docs/report.md, "The cause". */
#include "diagnose.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "trace-reps.h"
#include "trace-user-frame.h"
#include "util-map.h"
#include "util-math.h"
#include "util-mem.h"
#include "util-str.h"

/* The thresholds and the order of the causes are trace/trace-cause.h's,
 * shared with the library's answer on stderr. */

const char *diagnose_cause_name(enum diag_kind kind)
{
	return trace_cause_name((enum trace_cause)kind);
}

static struct diagnosis *add(struct diagnoses *d, enum diag_kind kind, const char *title,
			     char *evidence, char *remedy)
{
	d->items = xrealloc(d->items, d->n + 1, sizeof(*d->items));
	d->items[d->n] = (struct diagnosis){
		.kind = kind, .title = title, .evidence = evidence, .remedy = remedy,
	};
	return &d->items[d->n++];
}

/* The request alone is more than the device (trace_cause_beyond_device). */
static bool beyond_device(const struct model_oom *o)
{
	return o->has_device_total && o->device_total > 0 &&
	       trace_cause_beyond_device(o->requested, (uint64_t)o->device_total);
}

/* The call that failed mapped a piece of PyTorch's expandable segments:
 * the allocator maps them in pieces of its own size (2 MiB for small
 * tensors, 20 MiB for the others) whatever a tensor asks, so the sizes
 * of the device-side allocations say nothing of the program's: twenty
 * pieces of 20 MiB kept are no twenty equal requests, and pieces of 2 and
 * 20 MiB are no batch that grew. The tensor's own request is the
 * framework's (f->requested). */
static bool expandable_piece(const struct model_oom *o)
{
	const struct model_framework *f = &o->framework;

	if (!f->has || f->bfc)
		return false;
	for (size_t i = 0; i < f->n_segments; i++)
		if (f->segments[i].expandable)
			return true;
	return false;
}

static uint64_t oom_total(const struct model *m, const struct model_oom *o)
{
	if (o->has_device_total && o->device_total > 0)
		return (uint64_t)o->device_total;
	for (size_t i = 0; i < m->n_devices; i++) {
		if (m->devices[i].id == o->device && m->devices[i].has_total)
			return m->devices[i].total;
	}
	return 0;
}

static void rule_preallocated(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	for (size_t i = 0; i < m->n_notes; i++) {
		const struct model_note *n = &m->notes[i];
		_autofree_ char *where = NULL;
		struct diagnosis *x;

		if (n->kind != MODEL_NOTE_PREALLOCATION)
			continue;
		where = render_stack_label(t, n->stack, true);
		x = add(d, DIAG_PREALLOCATED, "A framework preallocated the device",
			xasprintf("one allocation of %s (%.0f%% of device %d) by %s, among the "
				  "first on it: a framework's arena, whose tensors memtrace does not "
				  "see",
				  fmt_size(n->bytes).s, render_note_fraction(n) * 100, n->device,
				  where),
			xasprintf("the tensors must fit the arena's limit: JAX: raise it with "
				  "XLA_PYTHON_CLIENT_MEM_FRACTION (0.75 of the device by default) where "
				  "the device has room, else a smaller batch, jax.checkpoint, "
				  "donate_argnums; rerun with `memtrace run --per-tensor` to see each "
				  "tensor. XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX) and "
				  "TF_FORCE_GPU_ALLOW_GROWTH=true (TensorFlow) leave the device to "
				  "other processes until the arena grows, but keep the same limit"));
		x->stack = n->stack;
		x->bytes = n->bytes;
		return; /* one is enough: the remedy is the same */
	}
}

static void rule_fragmentation(const struct model_oom *o, struct diagnoses *d)
{
	struct diagnosis *x;

	if (!o->has_device_free || o->device_free <= 0 ||
	    !trace_cause_fragmentation((uint64_t)o->device_free, o->requested))
		return;
	/* the two may round alike: then exact, or it reads as no difference */
	bool alike = strcmp(fmt_size((uint64_t)o->device_free).s, fmt_size(o->requested).s) == 0;

	x = add(d, DIAG_FRAGMENTATION, "Fragmentation",
		xasprintf("the device had %s free at the failure, more than the %s asked for: "
			  "the free memory is in pieces, none large enough",
			  alike ? fmt_bytes((uint64_t)o->device_free).s
				: fmt_size((uint64_t)o->device_free).s,
			  alike ? fmt_bytes(o->requested).s : fmt_size(o->requested).s),
		xasprintf("PyTorch: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or the "
			  "asynchronous allocator (backend:cudaMallocAsync); see which tensors sit "
			  "in the cached segments with `memtrace run --per-tensor`; elsewhere, "
			  "allocate the large buffers first and keep them"));
	x->bytes = (uint64_t)o->device_free;
}

static void rule_not_ours(const struct model *m, const struct model_oom *o, struct diagnoses *d)
{
	uint64_t total = oom_total(m, o);
	struct diagnosis *x;

	if (!o->has_unexplained ||
	    !trace_cause_not_ours(o->unexplained_bytes, o->requested, total))
		return;
	x = add(d, DIAG_NOT_OURS, "Memory the process did not allocate",
		xasprintf("the device had %s in use at the failure, of which %s is not this "
			  "process's allocations (%s live)",
			  fmt_size(render_oom_device_used(o)).s, fmt_size(o->unexplained_bytes).s,
			  fmt_size(o->live_bytes).s),
		xasprintf("look for other processes on the device (nvidia-smi) and one rank per "
			  "device (CUDA_VISIBLE_DEVICES); the rest is CUDA contexts (a few hundred "
			  "MiB each), libraries' workspaces (cuBLAS, cuDNN, NCCL) or a framework's "
			  "cache memtrace cannot see (rerun with --per-tensor)"));
	x->bytes = o->unexplained_bytes;
}

/* Not_ours leads when, without what others hold, the request would have
 * fit and others hold more than the process. */
static bool not_ours_leads(const struct model_oom *o)
{
	return o->has_unexplained &&
	       trace_cause_not_ours_leads(o->unexplained_bytes, o->requested, o->live_bytes);
}

/* The group that kept the most memory round after round, up to the
 * failure or the end (struct trace_rounds): at least TRACE_GROWTH_MIN_ROUNDS
 * rounds in a row that each ended with more of it live, the last of them
 * in the second half of the rounds since the first (a load at the start,
 * then a burst of rounds that keep nothing, is no growth). */
static const struct model_group *kept_most(const struct model *m, const struct model_group *g,
					   size_t n, uint64_t round)
{
	const struct model_group *best = NULL;
	uint64_t floor = trace_growth_floor(m->device.peak_bytes);

	for (size_t i = 0; i < n; i++) {
		const struct trace_rounds *r = &g[i].rounds;

		if (g[i].mem && !model_mem_is_device(g[i].mem))
			continue;
		if (!trace_rounds_grew(r, round, floor))
			continue;
		if (!best || r->kept_bytes > best->rounds.kept_bytes)
			best = &g[i];
	}
	return best;
}

static bool rule_growth_rounds(const struct trace *t, const struct model *m,
			       const struct model_oom *o, struct diagnoses *d)
{
	const struct model_group *g = o ? kept_most(m, o->holders, o->n_holders, o->round)
					 : kept_most(m, m->leaks, m->n_leaks, m->rounds.round);
	const struct trace_rounds *r;
	_autofree_ char *where = NULL, *held = NULL;
	struct diagnosis *x;

	if (!g)
		return false;
	r = &g->rounds;
	where = render_stack_label(t, g->stack, true);
	held = o ? xasprintf("; it held %s in %" PRIu64 " allocations at the failure",
			     fmt_size(g->bytes).s, g->count)
		 : xasprintf("; %s of it still live at the end", fmt_size(g->bytes).s);
	x = add(d, DIAG_GROWTH, "Memory kept across iterations",
		xasprintf("%s kept %s in each of %" PRIu64 " repetitions in a row (%s "
			  "together), while the rest of each repetition's memory was given back%s",
			  where, fmt_size(r->kept_bytes / r->kept).s, r->kept,
			  fmt_size(r->kept_bytes).s, held),
		NULL);
	x->remedy = xasprintf("find what keeps the memory allocated at %s alive from one "
			      "iteration to the next (a list or cache of tensors, a loss kept with "
			      "its graph: use loss.item(), detach() what is logged)",
			      where);
	x->stack = g->stack;
	x->bytes = r->kept_bytes / r->kept;
	x->rounds = r->kept;
	return true;
}

/* A frame's id for the repetitions: its function, file and line (the
 * trace may list one Python frame twice). */
static uint64_t frame_key(const struct trace_frame *f)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = f->function ? f->function : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = f->file ? f->file : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (h ^ (uint64_t)f->line) * 1099511628211ull;
}

/* The user's Python frames of a stack, outermost first, into chain (at
 * most cap); how many. */
static uint32_t user_chain(const struct trace *t, int64_t stack, uint64_t *chain, uint32_t cap)
{
	const struct trace_stack *s = trace_find_stack(t, stack);
	uint32_t n = 0;

	for (uint32_t i = s ? s->depth : 0; i-- > 0 && n < cap;) {
		uint32_t fi = t->stack_frames[s->first + i];
		const struct trace_frame *f = fi < t->n_frames ? &t->frames[fi] : NULL;

		if (f && f->kind == MT_FRAME_PYTHON && trace_python_frame_is_user(f->file))
			chain[n++] = frame_key(f);
	}
	return n;
}

#define CHAIN_MAX 64

/* A tensor made inside a module's forward (any Python frame named
 * forward): an activation, kept with its graph when it stays live. */
static bool made_in_forward(const struct trace *t, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(t, stack);

	for (uint32_t i = 0; s && i < s->depth; i++) {
		uint32_t fi = t->stack_frames[s->first + i];
		const char *fn = fi < t->n_frames && t->frames[fi].kind == MT_FRAME_PYTHON
					 ? t->frames[fi].function
					 : NULL;
		size_t len = fn ? strlen(fn) : 0;

		if (len >= 7 && strcmp(fn + len - 7, "forward") == 0)
			return true;
	}
	return false;
}

/* The tensors made up to seq, live there or not, each with its stack's
 * user frames (one chain per stack, kept in *pool: CHAIN_MAX + 1 words
 * each, its length first; chains maps a stack to its place there). */
static struct trace_rep_tensor *rep_tensors(const struct trace *t, const struct model_tensor *log,
					    size_t n, int64_t seq, struct map *chains,
					    uint64_t **pool, size_t *out)
{
	struct trace_rep_tensor *r = xcalloc(n ? n : 1, sizeof(*r));
	size_t k = 0, used = 0, cap = 0;
	uint64_t *at;
	bool inserted;

	for (; k < n && log[k].made <= seq; k++) {
		at = xmap_put(chains, (uint64_t)log[k].stack, &inserted);
		if (inserted) {
			*at = used;
			grow_array(pool, &cap, used + CHAIN_MAX + 1, sizeof(**pool));
			(*pool)[used] = user_chain(t, log[k].stack, *pool + used + 1, CHAIN_MAX);
			used += CHAIN_MAX + 1;
		}
		r[k] = (struct trace_rep_tensor){ .bytes = log[k].bytes, .live = log[k].gone > seq,
						  .depth = (uint32_t)*at };
	}
	/* the pool has stopped moving: point each tensor at its chain */
	for (size_t i = 0; i < k; i++) {
		const uint64_t *place = map_get_u64(chains, (uint64_t)log[i].stack);
		const uint64_t *c;

		if (!place) /* never: each stack was put in the loop above */
			abort();
		c = *pool + *place;
		r[i].chain = c + 1;
		r[i].depth = (uint32_t)c[0];
	}
	*out = k;
	return r;
}

/* Some tensor the growing line keeps was made inside a module's forward:
 * an activation kept with its graph (a model kept per build keeps its
 * parameters, made by .to() or .cuda(), and gradients). */
static bool kept_in_forward(const struct trace *t, const struct model_tensor *log,
			    const struct trace_rep_tensor *r, size_t n,
			    const struct trace_rep_growth *g)
{
	int64_t last = 0; /* a stack asked already */

	for (size_t i = 0; i < n; i++) {
		uint32_t d = g->level < r[i].depth ? g->level : r[i].depth - 1;

		if (!r[i].live || !r[i].depth || r[i].chain[d] != g->key || log[i].stack == last)
			continue;
		if (made_in_forward(t, log[i].stack))
			return true;
		last = log[i].stack;
	}
	return false;
}

/* The label of the repeated line: the frame of that id in stack. */
static const struct trace_frame *rep_frame(const struct trace *t, int64_t stack, uint64_t key)
{
	const struct trace_stack *s = trace_find_stack(t, stack);

	for (uint32_t i = 0; s && i < s->depth; i++) {
		uint32_t fi = t->stack_frames[s->first + i];

		if (fi < t->n_frames && t->frames[fi].kind == MT_FRAME_PYTHON &&
		    frame_key(&t->frames[fi]) == key)
			return &t->frames[fi];
	}
	return NULL;
}

/* Growth found from the tensors, no mark needed (trace/trace-reps.h): a
 * line of the program that, pass after pass (a build, a step), left
 * tensors live. At an OOM, the live tensors at its failure (the pass in
 * progress not counted); else at the peak of the tensors' bytes (after
 * it, the interpreter's teardown frees them). */
static bool rule_growth_tensors(const struct trace *t, const struct model *m,
				const struct model_oom *o, struct diagnoses *d)
{
	size_t n, k;
	int64_t peak;
	const struct model_tensor *log = model_torch_tensors(m, &n, &peak);
	struct trace_rep_growth g;
	struct map chains;
	struct trace_rep_tensor *r;
	bool grew;

	if (!n)
		return false;
	uint64_t *pool = NULL;

	map_init(&chains, sizeof(uint64_t));
	r = rep_tensors(t, log, n, o ? o->seq : peak, &chains, &pool, &k);
	grew = trace_reps_growth(r, k, true, trace_growth_floor(m->device.peak_bytes), &g);
	bool graph = grew && kept_in_forward(t, log, r, k, &g);
	free(r);
	free(pool);
	map_fini(&chains);
	if (!grew)
		return false;
	const struct model_tensor *big = &log[g.largest]; /* r's index is log's */
	_autofree_ char *line = render_frame_label(t, rep_frame(t, big->stack, g.key), true);
	_autofree_ char *made = render_stack_label(t, big->stack, true);
	_autofree_ char *loop = NULL, *rep = NULL;

	if (g.rep_key != g.key) {
		rep = render_frame_label(t, rep_frame(t, log[g.rep_tensor].stack, g.rep_key), true);
		loop = xasprintf(" of the loop (from %s to its next)", rep);
	}
	struct diagnosis *x = add(
		d, DIAG_GROWTH, "Memory kept across iterations",
		xasprintf("%s came round %" PRIu64 " times and %" PRIu64 " of them left tensors "
			  "live: each repetition%s kept %s (the median of %" PRIu64 "; %s together), "
			  "the largest made at %s%s; the rest of each repetition's tensors were freed",
			  line, g.passes, g.kept, loop ? loop : ", from it to its next,",
			  fmt_size(g.per_pass).s, g.cycles, fmt_size(g.cycles_bytes).s, made,
			  graph ? "; some were made in a forward pass: a result kept with its graph"
				: ""),
		NULL);
	if (m->framework_end.bfc) /* TensorFlow's tensors, in Keras's words */
		x->remedy = xasprintf("free what %s keeps from one repetition to the next: between "
				      "model builds, del model; tf.keras.backend.clear_session(); "
				      "gc.collect(); keep float(loss) or .numpy() of what is logged, "
				      "not the tensors",
				      line);
	else if (graph)
		x->remedy = xasprintf("what %s keeps holds its autograd graph: keep loss.item() (or "
				      "detach()) of what is logged or appended, and evaluate under "
				      "torch.no_grad()",
				      line);
	else
		x->remedy = xasprintf("free what %s keeps from one repetition to the next (a model "
				      "or tensors kept in a list): del model; gc.collect(); "
				      "torch.cuda.empty_cache() between builds",
				      line);
	x->stack = big->stack;
	x->bytes = g.per_pass;
	x->rounds = g.cycles;
	return true;
}

uint64_t diagnose_orphaned_execs(const struct model_graphs *g, uint64_t *pinned)
{
	uint64_t n = 0;

	for (size_t i = 0; i < g->n_orphans; i++)
		n += g->orphans[i].kind == MODEL_ORPHAN_EXEC;
	*pinned = g->orphan_execs_pinned; /* together: not the sum of the rows */
	return n;
}

bool diagnose_graphs_story(const struct model *m)
{
	uint64_t pinned;

	return (diagnose_orphaned_execs(&m->graphs, &pinned) && pinned) || m->graphs.n_never_freed;
}

/* Growth by spans of the trace alone (no marks, ranges or instantiations)
 * is the story only of a run without an OOM: a working set allocated bit
 * by bit grows by spans too, and at an OOM the other rules know better. */
bool diagnose_growth_story(const struct model *m)
{
	if (m->growth.basis == MODEL_POINT_SPAN && render_headline_oom(m))
		return false;
	return m->growth.n_sites && m->growth.sites[0].growing && m->growth.sites[0].per_point > 0;
}

/* The leak of site that one stack made most often, all of its allocations
 * of one size and at least TRACE_GROWTH_MIN_ROUNDS of them: memory kept call
 * after call (an output kept per batch under a caching allocator, which
 * frees nothing, so there are no rounds). NULL when there is none. */
static const struct model_group *repeated_leak(const struct model *m, uint32_t site)
{
	const struct model_group *best = NULL;

	for (size_t i = 0; i < m->n_leaks; i++) {
		const struct model_group *g = &m->leaks[i];
		const struct trace_rounds *r = &g->rounds;

		if ((g->mem && !model_mem_is_device(g->mem)) || g->count < TRACE_GROWTH_MIN_ROUNDS)
			continue;
		if (r->min_alloc != r->max_alloc || r->allocs != g->count)
			continue;
		if (model_site_key(m, g->stack) != m->sites[site].key)
			continue;
		if (!best || g->count > best->count)
			best = g;
	}
	return best;
}

/* What grows from mark to mark, NVTX range to range or build to build
 * (model-points.c): the leaking site, its step. */
static bool rule_growth_points(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	const struct model_growth *g = &m->growth;
	const struct model_growth_site *gs;
	const struct model_group *kept;
	_autofree_ char *site = NULL;
	struct diagnosis *x;

	if (!diagnose_growth_story(m))
		return false;
	gs = &g->sites[0];
	site = render_model_site_label(t, &m->sites[gs->site], true);
	if (g->basis == MODEL_POINT_SPAN && (kept = repeated_leak(m, gs->site))) {
		/* spans are cuts of the trace, not repetitions: the
		 * repetition is an allocation the site made again and again
		 * from one stack and kept; named by that stack, as the
		 * rounds' rule names its */
		free(site);
		site = render_stack_label(t, kept->stack, true);
		x = add(d, DIAG_GROWTH, "Memory kept across iterations",
			xasprintf("%s kept %s in each of %" PRIu64 " allocations from one stack, "
				  "all still live at the end (%s together); it grew from %s to "
				  "%s over the run, and nothing it kept was given back",
				  site, fmt_size(kept->bytes / kept->count).s, kept->count,
				  fmt_size(kept->bytes).s, fmt_size(gs->live[0]).s,
				  fmt_size(gs->live[g->n_points - 1]).s),
			xasprintf("find what keeps the memory allocated at %s alive from one "
				  "iteration to the next (a list or cache of tensors, outputs kept "
				  "on the device: move them to the host or keep .item())",
				  site));
		x->stack = kept->stack;
		x->bytes = kept->bytes / kept->count;
		x->rounds = kept->count;
		return true;
	}
	x = add(d, DIAG_GROWTH, "Memory growing build after build",
		xasprintf("%s grows by %s per point over %zu %s (%s to %s)", site,
			  fmt_size((uint64_t)gs->per_point).s, g->n_points,
			  render_growth_basis(g->basis), fmt_size(gs->live[0]).s,
			  fmt_size(gs->live[g->n_points - 1]).s),
		xasprintf("free what %s keeps from one build or step to the next: "
			  "tf.keras.backend.clear_session() (Keras), torch._dynamo.reset() "
			  "(torch.compile), a list or cache of tensors kept by mistake",
			  site));
	x->stack = m->sites[gs->site].stack;
	x->bytes = (uint64_t)gs->per_point;
	x->rounds = g->n_points;
	return true;
}

static bool rule_orphaned_graphs(const struct model *m, struct diagnoses *d)
{
	uint64_t pinned, execs = diagnose_orphaned_execs(&m->graphs, &pinned);
	uint64_t never = render_graph_never_freed_bytes(&m->graphs);
	_autofree_ char *left = NULL, *unfreed = NULL;
	struct diagnosis *x;

	if (!diagnose_graphs_story(m))
		return false;
	if (execs)
		left = xasprintf("%" PRIu64 " executable graph%s never destroyed, pinning %s", execs,
				 execs == 1 ? "" : "s", fmt_size(pinned).s);
	if (never)
		unfreed = xasprintf("%s of graph memory never freed", fmt_size(never).s);
	x = add(d, DIAG_ORPHANED_GRAPHS, "CUDA graphs left behind",
		xasprintf("%s%s%s", left ? left : "", left && unfreed ? "; " : "",
			  unfreed ? unfreed : ""),
		xasprintf("destroy graph execs no longer used (cudaGraphExecDestroy, "
			  "cudaGraphDestroy) and free graph memory (cudaFree, or instantiate with "
			  "cudaGraphInstantiateFlagAutoFreeOnLaunch); torch.compile: "
			  "torch._dynamo.reset() between models"));
	x->bytes = pinned > never ? pinned : never;
	return true;
}

/* At an OOM, the holder whose stack made the failing request and kept
 * every allocation it made before, all of the request's size and at least
 * TRACE_GROWTH_MIN_ROUNDS of them: a result kept call after call (an output per
 * batch kept on the device) when no memory is ever given back, as under a
 * caching allocator; a model of equal parts loaded until it no longer fits
 * looks the same. NULL when there is none. */
static const struct model_group *repeated_holder(const struct trace *t,
						       const struct model_oom *o)
{
	const struct trace_stack *failed = trace_find_stack(t, o->stack);
	const struct trace_frame *user;
	uint32_t depth;

	if (!failed || expandable_piece(o))
		return NULL;
	/* the same user's frame: a failing call's native stack differs from
	 * the successful ones' (an allocator's retry path) */
	user = render_user_frame(t, failed, &depth);
	for (size_t i = 0; o->has_holders && i < o->n_holders; i++) {
		const struct model_group *g = &o->holders[i];
		const struct trace_rounds *r = &g->rounds;
		const struct trace_stack *s = trace_find_stack(t, g->stack);

		if (!s || render_user_frame(t, s, &depth) != user || g->count < TRACE_GROWTH_MIN_ROUNDS ||
		    r->allocs != g->count || r->min_alloc != o->requested ||
		    r->max_alloc != o->requested)
			continue;
		return g;
	}
	return NULL;
}

static void rule_growth_repeated(const struct trace *t, const struct model_oom *o,
				 struct diagnoses *d)
{
	const struct model_group *g = repeated_holder(t, o);
	_autofree_ char *where = NULL;
	struct diagnosis *x;

	if (!g)
		return;
	where = render_stack_label(t, g->stack, true);
	x = add(d, DIAG_GROWTH, "Memory kept across iterations",
		xasprintf("%s made %" PRIu64 " allocations of %s before, kept every one (%s "
			  "together) and failed asking for one more of the same: a result kept "
			  "call after call, unless these are the equal parts of a model being "
			  "loaded", where, g->count, fmt_size(o->requested).s,
			  fmt_size(g->bytes).s),
		xasprintf("find what keeps the memory allocated at %s alive from one iteration "
			  "to the next (outputs or losses kept on the device: move them to the "
			  "host, keep .item(), detach() what is logged)", where));
	x->stack = g->stack;
	x->bytes = o->requested;
	x->rounds = g->count;
	x->weak = true;
}

/* What the step in progress needs (what it allocated since memory was
 * last given back, and the request) against what was left for it beside
 * what was held from before, and which part scales with the input. */
static void rule_too_big(const struct trace *t, const struct model *m, const struct model_oom *o,
			 struct diagnoses *d)
{
	uint64_t total = oom_total(m, o);
	uint64_t before = o->live_bytes > o->round_bytes ? o->live_bytes - o->round_bytes : 0;
	uint64_t need = o->round_bytes + o->requested;
	uint64_t others = o->has_unexplained ? o->unexplained_bytes : 0;
	uint64_t room = total > before + others ? total - before - others : 0;
	const struct model_group *held = NULL, *grew = NULL, *top = NULL;
	_autofree_ char *held_s = NULL, *scale = NULL, *where = NULL, *fit = NULL, *top_s = NULL;
	_autofree_ char *beyond = NULL;
	struct diagnosis *x;

	for (size_t i = 0; o->has_holders && i < o->n_holders; i++) {
		const struct model_group *g = &o->holders[i];
		uint64_t old = g->bytes - g->rounds.open_bytes;

		if (old && (!held || old > held->bytes - held->rounds.open_bytes))
			held = g;
		if (g->rounds.open_bytes && (!top || g->rounds.open_bytes > top->rounds.open_bytes))
			top = g;
		if (g->rounds.open_bytes && g->rounds.min_alloc < g->rounds.max_alloc &&
		    (!grew || g->rounds.open_bytes > grew->rounds.open_bytes))
			grew = g;
	}
	if (beyond_device(o))
		beyond = xasprintf("the %s asked for is more than the device's %s: it cannot fit, "
				   "whatever else is freed; ", fmt_size(o->requested).s,
				   fmt_size((uint64_t)o->device_total).s);
	if (top) {
		_autofree_ char *w = render_stack_label(t, top->stack, true);

		top_s = xasprintf(", the most of it by %s (%s)", w, fmt_size(top->rounds.open_bytes).s);
	}
	if (held) {
		_autofree_ char *w = render_stack_label(t, held->stack, true);

		held_s = xasprintf(" (the most by %s: %s)", w,
				   fmt_size(held->bytes - held->rounds.open_bytes).s);
	}
	if (o->has_request_rounds && o->request_rounds.max_alloc < o->requested) {
		where = render_stack_label(t, o->stack, true);
		scale = xasprintf("; the failing request scales with the batch or input: %s asked "
				  "for at most %s before, %s now",
				  where, fmt_size(o->request_rounds.max_alloc).s,
				  fmt_size(o->requested).s);
	} else if (grew) {
		where = render_stack_label(t, grew->stack, true);
		scale = xasprintf("; %s allocated from %s to %s at a time over the run: that part "
				  "scales with the batch or input",
				  where, fmt_size(grew->rounds.min_alloc).s,
				  fmt_size(grew->rounds.max_alloc).s);
	} else if (repeated_holder(t, o)) {
		scale = xasprintf("; no allocation grew over the run");
	} else {
		scale = xasprintf("; no allocation grew over the run: the model or the input as "
				  "given is too large for the device");
	}
	fit = total ? xasprintf(" but only %s was left for it, beside %s held from before%s%s%s",
				fmt_size(room).s, fmt_size(before).s, held_s ? held_s : "",
				others ? " and memory the process did not allocate: " : "",
				others ? fmt_size(others).s : "")
		    : xstrdup(" (the device's size is unknown)");
	if (m->flight) { /* the rounds before the ring are not in the trace */
		x = add(d, DIAG_TOO_BIG, "The working set does not fit",
			xasprintf("the %s asked for did not fit beside the %s held (a flight "
				  "trace: what each step allocated before its ring is not known)",
				  fmt_size(o->requested).s, fmt_size(o->live_bytes).s),
			xasprintf("a smaller batch or input, gradient (activation) checkpointing, "
				  "mixed precision (bf16 or fp16), or sharding the model over more "
				  "devices"));
		x->stack = o->stack;
		x->bytes = o->requested;
		x->room = total > o->live_bytes + others ? total - o->live_bytes - others : 0;
		return;
	}
	x = add(d, DIAG_TOO_BIG, "The working set does not fit",
		xasprintf("%sthe step in progress needed %s (%s allocated since memory was last "
			  "given back%s, and the %s asked for)%s; %s%s",
			  beyond ? beyond : "", fmt_size(need).s, fmt_size(o->round_bytes).s, top_s ? top_s : "",
			  fmt_size(o->requested).s, fit,
			  repeated_holder(t, o) ? "no memory was given back, so no repetition shows "
					       "what it kept (see Also)"
					     : "nothing was kept from one repetition to the next",
			  scale),
		xasprintf("a smaller batch or input, gradient (activation) checkpointing, mixed "
			  "precision (bf16 or fp16), or sharding the model over more devices"));
	x->stack = o->stack;
	x->bytes = need;
	x->room = room;
}

/* Inside TensorFlow's BFC arena (render_arena_oom): its free bytes in
 * pieces, none large enough (trace_cause_cache_fragmentation, the
 * device left out). */
static void rule_arena_fragmentation(const struct trace *t, const struct model_oom *o,
				     struct diagnoses *d)
{
	const struct model_framework *f = &o->framework;
	struct diagnosis *x;

	if (!render_cache_fragmentation(t, o))
		return;
	x = add(d, DIAG_FRAGMENTATION, "Fragmentation inside the arena",
		xasprintf("TensorFlow's BFC arena had %s free at the failure, more than the %s "
			  "asked for, but its largest free chunk was %s: the free memory is in "
			  "pieces",
			  fmt_size(sat_sub(f->reserved, f->allocated)).s, fmt_size(o->requested).s,
			  fmt_size(f->largest_free).s),
		xasprintf("fewer distinct tensor sizes (a fixed batch and input shape: "
			  "drop_remainder=True in tf.data, the last batch padded), or the same work "
			  "in smaller pieces (a smaller batch_size)"));
	x->bytes = sat_sub(f->reserved, f->allocated);
}

/* The label of the user's frame of a stack: the line, not the stack (a
 * tensor made on an executor thread and one made on the launching thread
 * at the same line are one line). */
static char *line_of(const struct trace *t, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(t, stack);
	uint32_t depth;

	return s ? render_frame_label(t, render_user_frame(t, s, &depth), true) : NULL;
}

/* An arena's tensors at its OOM, split by line: those made at the line
 * that failed (the step in progress: its batch) and the rest. */
struct arena_split {
	uint64_t step, step_tensors, others, top_bytes;
	uint64_t weights, slots; /* held by variables: a model's, an optimizer's */
	const struct model_group *top; /* the other line's holder that holds the most */
};

static void arena_split(const struct trace *t, const struct model_oom *o, struct arena_split *a)
{
	const struct model_framework *f = &o->framework;
	_autofree_ char *line = line_of(t, o->stack);

	*a = (struct arena_split){ 0 };
	for (size_t i = 0; i < f->n_holders; i++) {
		const struct model_group *g = &f->holders[i];
		_autofree_ char *l = line_of(t, g->stack);

		switch (render_variable_of(t, g->stack)) {
		case RENDER_WEIGHT: a->weights += g->bytes; break;
		case RENDER_OPTIMIZER_SLOT: a->slots += g->bytes; break;
		default: break;
		}
		if (line && l && strcmp(l, line) == 0) {
			a->step += g->bytes;
			a->step_tensors += g->count;
		} else if (g->bytes > a->top_bytes) {
			a->top = g;
			a->top_bytes = g->bytes;
		}
	}
	/* the holders kept are the largest (HOLDERS_KEPT): the rest is others' */
	a->others = sat_sub(f->allocated, a->step);
}

/* The user's Python frames of a stack, innermost first (at most n). */
#define STEP_FRAMES 16
static size_t user_frames(const struct trace *t, int64_t stack, const struct trace_frame **out,
			  size_t n)
{
	const struct trace_stack *s = trace_find_stack(t, stack);
	size_t k = 0;

	for (uint32_t i = 0; s && i < s->depth && k < n; i++) {
		const struct trace_frame *f = trace_stack_frame(t, s, i);

		if (f && f->kind == MT_FRAME_PYTHON && trace_python_frame_is_user(f->file))
			out[k++] = f;
	}
	return k;
}

static bool same_place(const struct trace_frame *a, const struct trace_frame *b)
{
	return a->line == b->line && a->file && b->file && strcmp(a->file, b->file) == 0;
}

/* Whether frames g (ng) run through the failing stack's frames f from
 * level outward: their outermost nf - level frames are those. */
static bool under(const struct trace_frame **f, size_t nf, size_t level,
		  const struct trace_frame **g, size_t ng)
{
	size_t len = nf - level;

	if (ng < len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!same_place(f[nf - 1 - i], g[ng - 1 - i]))
			return false;
	return true;
}

/* PyTorch's cache at its OOM, its tensors split as a step and the rest:
 * the step is the tensors made at the line that failed or, when it holds
 * none (a forward whose last line failed, its activations made by the
 * lines before), under the innermost caller of it that holds some (the
 * call of the model in the training loop), never the script's outermost
 * frame alone. *level: 0 for the line, else the caller's frame. */
static const struct trace_frame *cache_split(const struct trace *t, const struct model_oom *o,
					     struct arena_split *a)
{
	const struct model_framework *f = &o->framework;
	const struct trace_frame *fail[STEP_FRAMES], *g[STEP_FRAMES];
	size_t nf = user_frames(t, o->stack, fail, STEP_FRAMES);

	*a = (struct arena_split){ 0 };
	for (size_t level = 0; level < nf && (level == 0 || level + 1 < nf); level++) {
		*a = (struct arena_split){ 0 };
		for (size_t i = 0; i < f->n_holders; i++) {
			const struct model_group *h = &f->holders[i];
			size_t ng = user_frames(t, h->stack, g, STEP_FRAMES);

			if (under(fail, nf, level, g, ng)) {
				a->step += h->bytes;
				a->step_tensors += h->count;
			} else if (h->bytes > a->top_bytes) {
				a->top = h;
				a->top_bytes = h->bytes;
			}
		}
		a->others = sat_sub(f->allocated, a->step);
		if (a->step)
			return fail[level];
	}
	return NULL;
}

/* PyTorch's cache at an OOM where the model's state (its parameters,
 * their gradients, the optimizer's state) holds half the device or more
 * (trace_role_model_state): a smaller batch frees only the step's own
 * tensors; the model and its optimizer are what to change. */
static bool rule_cache_model_state(const struct trace *t, const struct model *m,
				   const struct model_oom *o, struct diagnoses *d)
{
	uint64_t roles[TRACE_ROLES], total = oom_total(m, o);

	if (!render_roles(t, &o->framework, o, roles) || !trace_role_model_state(roles, total))
		return false;
	uint64_t params = roles[TRACE_ROLE_PARAMETERS], grads = roles[TRACE_ROLE_GRADIENTS];
	uint64_t state = roles[TRACE_ROLE_OPTIMIZER_STATE];
	uint64_t model = params + grads + state;
	uint64_t step = roles[TRACE_ROLE_ACTIVATIONS] + roles[TRACE_ROLE_TEMPORARIES] +
			roles[TRACE_ROLE_DATA];
	enum trace_role asked = render_role_of(t, o->stack);
	_autofree_ char *line = line_of(t, o->stack);
	struct diagnosis *x;

	x = add(d, DIAG_TOO_BIG,
		state ? "The model and its optimizer's state do not fit the device"
		: grads ? "The model and its gradients do not fit the device"
			: "The model does not fit the device",
		xasprintf("its parameters (%s), their gradients (%s) and the optimizer's state (%s) "
			  "hold %s of the device's %s (%.0f%%), before any of the step's own "
			  "tensors (activations and temporaries: %s); the %s asked for (%s, at %s) "
			  "was refused",
			  fmt_size(params).s, fmt_size(grads).s, fmt_size(state).s,
			  fmt_size(model).s, fmt_size(total).s, 100.0 * (double)model / (double)total,
			  fmt_size(step).s, fmt_size(o->requested).s, render_role_words[asked],
			  line ? line : "?"),
		xasprintf("a smaller model; %sthe parameters in bf16 (model.to(torch.bfloat16)); or "
			  "sharding the parameters, gradients and optimizer state over more devices "
			  "(FSDP, DeepSpeed ZeRO). A smaller batch frees only the step's %s",
			  state ? "an optimizer that keeps less per parameter (Adam and AdamW keep "
				  "two tensors of each parameter's size, SGD with momentum one: "
				  "torch.optim.SGD, Adafactor, or bitsandbytes' 8-bit Adam); "
				: "",
			  fmt_size(step).s));
	x->stack = o->stack;
	x->bytes = model + o->requested;
	x->room = sat_sub(total, sat_sub(o->live_bytes, model));
	return true;
}

/* Inside PyTorch's cache with its tensors seen (the tensor view): the
 * step from the tensors, not from when memory was last given back (the
 * allocator's own flush and retry gives memory back in the middle of a
 * step): the tensors made at the line that failed and the request,
 * against what the device left beside the tensors of other lines, the
 * cache's free blocks and memory the process did not allocate. */
static void rule_cache_too_big(const struct trace *t, const struct model *m,
			       const struct model_oom *o, const struct arena_split *a,
			       const struct trace_frame *at, struct diagnoses *d)
{
	const struct model_framework *f = &o->framework;
	uint64_t total = oom_total(m, o);
	uint64_t others = o->has_unexplained ? o->unexplained_bytes : 0;
	uint64_t cached = sat_sub(f->reserved, f->allocated);
	/* the tensor's request, not the piece of it that failed to map */
	uint64_t asked = f->has_request ? f->requested : o->requested;
	uint64_t need = a->step + asked;
	bool pieces = expandable_piece(o);
	/* the process's device memory but the line's tensors: the other
	 * lines' tensors, the cache's free blocks, the rest (workspaces) */
	uint64_t held_else = sat_sub(o->live_bytes, a->step);
	uint64_t rest = sat_sub(held_else, a->others + cached);
	uint64_t room = sat_sub(total, held_else + others);
	_autofree_ char *line = line_of(t, o->stack), *held = NULL, *scale = NULL;
	_autofree_ char *beyond = NULL, *outside = NULL, *where = NULL;
	_autofree_ char *caller = render_frame_label(t, at, true);
	struct diagnosis *x;

	if (line && caller && strcmp(line, caller) == 0)
		where = xasprintf("at %s, the line that failed", line);
	else
		where = xasprintf("under %s, the call the line that failed (%s) was in", caller,
				  line ? line : "?");
	if (beyond_device(o))
		beyond = xasprintf("the %s asked for is more than the device's %s: it cannot fit, "
				   "whatever else is freed; ", fmt_size(o->requested).s,
				   fmt_size((uint64_t)o->device_total).s);
	if (a->top) {
		_autofree_ char *w = render_stack_label(t, a->top->stack, true);

		held = xasprintf(" (the most by %s: %s)", w, fmt_size(a->top_bytes).s);
	}
	if (others)
		outside = xasprintf("; and %s in use on the device the process did not allocate",
				    fmt_size(others).s);
	if (pieces) {
		/* the device-side sizes are the allocator's pieces */
	} else if (o->has_request_rounds && o->request_rounds.max_alloc < o->requested) {
		_autofree_ char *w = render_stack_label(t, o->stack, true);

		scale = xasprintf("; the failing request scales with the batch or input: %s asked "
				  "for at most %s before, %s now",
				  w, fmt_size(o->request_rounds.max_alloc).s, fmt_size(o->requested).s);
	} else {
		const struct model_group *grew = NULL;

		for (size_t i = 0; o->has_holders && i < o->n_holders; i++) {
			const struct model_group *g = &o->holders[i];

			if (g->rounds.min_alloc < g->rounds.max_alloc &&
			    (!grew || g->bytes > grew->bytes))
				grew = g;
		}
		if (grew) {
			_autofree_ char *w = render_stack_label(t, grew->stack, true);

			scale = xasprintf("; %s allocated from %s to %s at a time over the run: that "
					  "part scales with the batch or input",
					  w, fmt_size(grew->rounds.min_alloc).s,
					  fmt_size(grew->rounds.max_alloc).s);
		}
	}
	x = add(d, DIAG_TOO_BIG, "The working set does not fit",
		xasprintf("%s%s of PyTorch's tensors were made %s (in a training step, its "
			  "activations saved for backward and temporaries, which scale with the "
			  "batch; in a model's build, its parameters): with the %s asked for, %s "
			  "for it, but only %s of the device's %s was left "
			  "for it beside %s the process held otherwise: %s in its other "
			  "tensors%s, %s free in PyTorch's cache (its largest free block %s), %s "
			  "besides (workspaces)%s%s",
			  beyond ? beyond : "", fmt_size(a->step).s, where,
			  fmt_size(asked).s, fmt_size(need).s, fmt_size(room).s,
			  fmt_size(total).s, fmt_size(held_else).s, fmt_size(a->others).s,
			  held ? held : "", fmt_size(cached).s, fmt_size(f->largest_free).s,
			  fmt_size(rest).s, outside ? outside : "", scale ? scale : ""),
		xasprintf("a smaller batch or input, gradient (activation) checkpointing "
			  "(torch.utils.checkpoint), mixed precision (torch.autocast with bf16), or "
			  "sharding the model over more devices"));
	x->stack = o->stack;
	x->bytes = need;
	x->room = room;
}

/* TensorFlow's words for a working set that does not fit, by what the
 * tensor asked for is for (render_variable_of): its title and the remedy
 * (trace-role.h: stderr's too), a clause of evidence. */
static const char *tf_title(enum render_variable v)
{
	return trace_tf_title((enum trace_tf_variable)v);
}

static const char *tf_what(enum render_variable v)
{
	switch (v) {
	case RENDER_WEIGHT:
		return "; the tensor asked for is for a model weight (its layer's build and "
		       "initializer), which the batch does not change";
	case RENDER_OPTIMIZER_SLOT:
		return "; the tensor asked for is an optimizer slot (Adam keeps two of each "
		       "weight's size), which the batch does not change";
	case RENDER_DATA:
		return "; the tensor asked for is host data copied to the GPU whole (tf.constant "
		       "or tf.convert_to_tensor of an array), which the batch does not change";
	case RENDER_NOT_VARIABLE: break;
	}
	return "";
}

static char *tf_remedy(enum render_variable v)
{
	return xstrdup(trace_tf_remedy((enum trace_tf_variable)v));
}

/* TensorFlow's BFC allocator refused a request more than the memory
 * limit it set for the GPU before its arena took any region
 * (render_bfc_beyond_limit): the request alone cannot fit, whatever the
 * device had free outside the limit. */
static void rule_bfc_beyond_limit(const struct trace *t, const struct model_oom *o,
				  struct diagnoses *d)
{
	enum render_variable v = render_variable_of(t, o->stack);
	_autofree_ char *line = line_of(t, o->stack);
	struct diagnosis *x;

	x = add(d, DIAG_TOO_BIG,
		v == RENDER_NOT_VARIABLE ? "The tensor is more than TensorFlow's memory limit"
					 : tf_title(v),
		xasprintf("TensorFlow's BFC allocator refused the %s asked for at %s before its arena "
			  "took any memory: the tensor is more than the memory limit TensorFlow "
			  "set for the GPU (below the %s the device had free); it cannot fit, "
			  "whatever else is freed%s",
			  fmt_size(o->requested).s, line ? line : "?",
			  fmt_size((uint64_t)o->device_free).s, tf_what(v)),
		tf_remedy(v));
	x->stack = o->stack;
	x->bytes = o->requested;
}

/* A full arena, judged inside it (render_arena_oom): what its tensors
 * held, how much of it the line that failed made (with the request: what
 * scales with the batch or input) and what other lines hold (weights,
 * the optimizer's slots, tensors kept), against its limit. */
static void rule_arena_too_big(const struct trace *t, const struct model_oom *o,
			       const struct arena_split *a, struct diagnoses *d)
{
	const struct model_framework *f = &o->framework;
	uint64_t limit = render_arena_limit(o), step = a->step, others = a->others;
	uint64_t step_tensors = a->step_tensors, top_bytes = a->top_bytes;
	const struct model_group *top = a->top;
	_autofree_ char *line = line_of(t, o->stack), *size = NULL, *cannot = NULL;
	_autofree_ char *held = NULL, *scale = NULL;
	const char *title, *what;
	char *remedy;
	struct diagnosis *x;

	size = limit ? xasprintf("TensorFlow's BFC arena, %s (its memory limit),", fmt_size(limit).s)
		     : xasprintf("TensorFlow's BFC arena, grown to %s (its limit is not in the "
				 "trace),", fmt_size(f->reserved).s);
	if (trace_cause_beyond_arena(o->requested, 0, limit))
		cannot = xasprintf("; the %s asked for is more than the arena's %s: it cannot fit, "
				   "whatever else is freed", fmt_size(o->requested).s,
				   fmt_size(limit).s);
	else if (trace_cause_beyond_arena(o->requested, step, limit))
		cannot = xasprintf("; the step alone needs more than the arena's %s, whatever "
				   "else is freed", fmt_size(limit).s);
	enum render_variable variable = render_variable_of(t, o->stack);
	/* a step's tensor refused in an arena that the model's weights and
	 * its optimizer's slots fill half of: the model, not the batch */
	uint64_t arena_bytes = limit ? limit : f->reserved;
	_autofree_ char *state = NULL;
	if (variable == RENDER_NOT_VARIABLE &&
	    trace_tf_model_state(a->weights, a->slots, arena_bytes)) {
		variable = a->slots ? RENDER_OPTIMIZER_SLOT : RENDER_WEIGHT;
		state = xasprintf("; %s of it is the model's weights (%s) and its optimizer's slots "
				  "(%s), which the batch does not change",
				  fmt_size(a->weights + a->slots).s, fmt_size(a->weights).s,
				  fmt_size(a->slots).s);
	}
	if (step)
		scale = xasprintf("; %s of it in %" PRIu64 " %s made at %s, the line that failed: "
				  "with the request, %s for that line (%s)",
				  fmt_size(step).s, step_tensors,
				  step_tensors == 1 ? "tensor" : "tensors", line ? line : "?",
				  fmt_size(step + o->requested).s,
				  variable == RENDER_NOT_VARIABLE
					  ? "in a training step, its inputs, activations and "
					    "temporaries, which scale with the batch size; in a model's "
					    "build, its weights"
					  : "the model's weights and the optimizer's slots made so far");
	if (top) {
		_autofree_ char *w = render_stack_label(t, top->stack, true);

		held = xasprintf("; %s held by other lines (the most by %s: %s; weights, optimizer "
				 "slots, tensors kept), which the batch does not change",
				 fmt_size(others).s, w, fmt_size(top_bytes).s);
	}
	title = tf_title(variable);
	what = state ? state : tf_what(variable);
	remedy = tf_remedy(variable);
	x = add(d, DIAG_TOO_BIG, title,
		xasprintf("%s held %s in %" PRIu64 " %s when the %s asked for failed, %s of it "
			  "free (its largest free chunk %s)%s%s%s%s",
			  size, fmt_size(f->allocated).s, f->tensors,
			  f->tensors == 1 ? "tensor" : "tensors", fmt_size(o->requested).s,
			  fmt_size(sat_sub(f->reserved, f->allocated)).s, fmt_size(f->largest_free).s,
			  cannot ? cannot : "", what, scale ? scale : "", held ? held : ""),
		remedy);
	x->stack = o->stack;
	x->bytes = step + o->requested;
	x->room = limit > others ? limit - others : 0;
}

/* The allocator refused the request by its own cap, no CUDA call failing
 * (trace_cause_allocator_limit): the cap, what torch held under it and
 * what was left, and that the device had room. */
static bool rule_allocator_limit(const struct model_oom *o, struct diagnoses *d)
{
	const struct model_framework *f = &o->framework;
	uint64_t reserved = f->has ? f->reserved : 0;
	uint64_t room = trace_cause_limit_room(o->limit_bytes, reserved);
	_autofree_ char *cap = NULL, *device = NULL;
	struct diagnosis *x;

	if (!trace_cause_allocator_limit(false, o->allocator_own))
		return false;
	cap = o->limit_bytes
		      ? xasprintf("its cap is %s (%s): it had %s (%s) reserved, so %s (%s) was left "
				  "under the cap",
				  fmt_size(o->limit_bytes).s, fmt_bytes(o->limit_bytes).s,
				  fmt_size(reserved).s, fmt_bytes(reserved).s, fmt_size(room).s,
				  fmt_bytes(room).s)
		      : xasprintf("its cap is not known; it had %s (%s) reserved",
				  fmt_size(reserved).s, fmt_bytes(reserved).s);
	if (o->has_own_device_free && o->own_device_free >= 0)
		device = xasprintf(", while the device itself had %s free",
				   fmt_size((uint64_t)o->own_device_free).s);
	x = add(d, DIAG_ALLOCATOR_LIMIT, "The process's own memory cap was reached",
		xasprintf("PyTorch's caching allocator refused the %s (%s) asked for with no CUDA "
			  "call failing: the cap it was given "
			  "(torch.cuda.set_per_process_memory_fraction, or per_process_memory_fraction "
			  "in PYTORCH_CUDA_ALLOC_CONF) was reached; %s%s",
			  fmt_size(o->requested).s, fmt_bytes(o->requested).s, cap,
			  device ? device : ""),
		xasprintf("raise or remove torch.cuda.set_per_process_memory_fraction (or "
			  "per_process_memory_fraction in PYTORCH_CUDA_ALLOC_CONF) if the process "
			  "may use more of the device; else hold fewer or smaller tensors under the "
			  "cap: free what is no longer needed, a smaller batch or input, mixed "
			  "precision"));
	x->stack = o->stack;
	x->bytes = o->limit_bytes;
	x->room = room;
	return true;
}

/* Which cause leads when several apply: memory kept (graphs left
 * behind, growth), which also cuts the free memory into pieces; then the
 * pieces (fragmentation); then whose memory filled the device. */
static int rank(const struct diagnosis *x, const struct model_oom *o, bool beyond)
{
	if (x->weak)	/* after every cause the events tell */
		return 7;
	return trace_cause_rank((enum trace_cause)x->kind, o && not_ours_leads(o), beyond);
}

void diagnose_oom(const struct trace *t, const struct model *m, const struct model_oom *o,
		  struct diagnoses *d)
{
	*d = (struct diagnoses){ 0 };
	/* the allocator's own cap refused it: the device's causes
	 * (fragmentation, others' memory, a working set too big for it) do
	 * not apply */
	bool own = o && rule_allocator_limit(o, d);
	/* inside an arena whose tensors are seen: the device outside it is
	 * the framework's limit at work, not a cause (trace-cause.h) */
	bool arena = o && render_arena_oom(t, o);
	/* before the arena took any region: more than TensorFlow's limit */
	bool tf_limit = o && !arena && !own && render_bfc_beyond_limit(t, o);
	/* it cannot fit, and too_big leads: the request is more than the
	 * device, or inside an arena the step is more than its limit */
	bool beyond = o && (beyond_device(o) || tf_limit);

	/* PyTorch's cache, its tensors seen: the step from its tensors */
	bool cache = o && !arena && o->framework.has && !o->framework.bfc && o->framework.n_holders &&
		     !m->flight;
	struct arena_split split = { 0 };
	const struct trace_frame *step_at = NULL;
	if (arena) {
		arena_split(t, o, &split);
		beyond |= trace_cause_beyond_arena(o->requested, split.step, render_arena_limit(o));
	} else if (cache) {
		step_at = cache_split(t, o, &split);
	}

	if (arena)
		rule_arena_fragmentation(t, o, d);
	else if (o && !own && !tf_limit)
		rule_fragmentation(o, d);
	rule_orphaned_graphs(m, d);
	/* at an OOM, what its live set kept round after round; else (and
	 * failing that) what grew from mark to mark */
	if (!rule_growth_tensors(t, m, o, d) && !rule_growth_rounds(t, m, o, d))
		rule_growth_points(t, m, d);
	/* an arena whose tensors are seen is no cause of its own: they are */
	if (!arena && !m->framework_end.bfc)
		rule_preallocated(t, m, d);
	if (tf_limit) {
		rule_bfc_beyond_limit(t, o, d);
	} else if (o && !own) {
		if (!arena)
			rule_not_ours(m, o, d);
		bool explained = false;

		/* pieces or memory kept explain the failure; else the step did
		 * not fit */
		for (size_t i = 0; i < d->n; i++)
			explained |= rank(&d->items[i], o, beyond) <= TRACE_CAUSE_EXPLAINS;
		if (arena && (!explained || beyond)) {
			rule_arena_too_big(t, o, &split, d);
		} else if (!explained || beyond) {
			/* the model's state first; no tensor of the line that
			 * failed: the rounds tell more */
			if (cache && rule_cache_model_state(t, m, o, d)) {
				/* said: the model, not the step */
			} else if (cache && step_at)
				rule_cache_too_big(t, m, o, &split, step_at, d);
			else
				rule_too_big(t, m, o, d);
			rule_growth_repeated(t, o, d);
		}
	}
	/* a stable insertion sort by rank: the few items keep their order */
	for (size_t i = 1; i < d->n; i++) {
		struct diagnosis x = d->items[i];
		size_t j = i;

		for (; j > 0 && rank(&d->items[j - 1], o, beyond) > rank(&x, o, beyond); j--)
			d->items[j] = d->items[j - 1];
		d->items[j] = x;
	}
}

void diagnose(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	diagnose_oom(t, m, render_headline_oom(m), d);
}

void diagnoses_fini(struct diagnoses *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->items[i].evidence);
		free(d->items[i].remedy);
	}
	free(d->items);
	*d = (struct diagnoses){ 0 };
}
