/* The rules of diagnose.h. Each rule reads the model, decides, and words
 * its evidence with the numbers it decided on; thresholds are named so a
 * reader can argue with them. See docs/report.md, "What to try". */
#include "diagnose.h"

#include <inttypes.h>
#include <string.h>

#include "model-timeline.h"
#include "render.h"
#include "util-mem.h"
#include "util-str.h"

/* working set: the process's own allocations filled at least this share
 * of the device at the failure */
#define WORKING_SET_SHARE 0.5
/* growth: the floor of the last quarter is above the first's by this share
 * of the peak (and by GROWTH_MIN_BYTES) */
#define GROWTH_SHARE 0.10
#define GROWTH_MIN_BYTES (1u << 20)
/* unexplained: at least the request, or this share of the device */
#define UNEXPLAINED_SHARE 0.10

static void add(struct diagnoses *d, enum diag_kind kind, const char *title, char *evidence,
		char *remedy)
{
	d->items = xrealloc(d->items, d->n + 1, sizeof(*d->items));
	d->items[d->n++] = (struct diagnosis){
		.kind = kind, .title = title, .evidence = evidence, .remedy = remedy,
	};
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

static void rule_preallocation(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	for (size_t i = 0; i < m->n_notes; i++) {
		const struct model_note *n = &m->notes[i];
		_autofree_ char *where = NULL;

		if (n->kind != MODEL_NOTE_PREALLOCATION)
			continue;
		where = render_stack_label(t, n->stack, true);
		add(d, DIAG_PREALLOCATION, "A framework preallocated the device",
		    xasprintf("one allocation of %s (%.0f%% of device %d) at %s by %s, among the "
			      "first: memtrace sees that pool, not the tensors in it",
			      fmt_size(n->bytes).s, render_note_fraction(n) * 100, n->device,
			      fmt_seconds(n->time_ns).s, where),
		    xasprintf("rerun with `memtrace run --per-tensor` to see each tensor; "
			      "TensorFlow: TF_FORCE_GPU_ALLOW_GROWTH=true (allow growth); JAX: "
			      "XLA_PYTHON_CLIENT_PREALLOCATE=false"));
		return; /* one is enough: the remedy is the same */
	}
}

static void rule_fragmentation(const struct model_oom *o, struct diagnoses *d)
{
	if (!o->has_device_free || o->device_free <= 0 || (uint64_t)o->device_free <= o->requested)
		return;
	/* the two may round alike: then exact, or it reads as no difference */
	bool alike = strcmp(fmt_size((uint64_t)o->device_free).s, fmt_size(o->requested).s) == 0;

	add(d, DIAG_FRAGMENTATION, "Fragmentation",
	    xasprintf("the device had %s free at the failure, more than the %s asked for: "
		      "the free memory is in pieces, none large enough",
		      alike ? fmt_bytes((uint64_t)o->device_free).s
			    : fmt_size((uint64_t)o->device_free).s,
		      alike ? fmt_bytes(o->requested).s : fmt_size(o->requested).s),
	    xasprintf("PyTorch: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or the "
		      "asynchronous allocator (backend:cudaMallocAsync); elsewhere, allocate the "
		      "large buffers first and keep them"));
}

static void rule_unexplained(const struct model *m, const struct model_oom *o,
			     struct diagnoses *d)
{
	uint64_t total = oom_total(m, o);

	if (!o->has_unexplained || o->unexplained_bytes == 0)
		return;
	if (o->unexplained_bytes < o->requested &&
	    (double)o->unexplained_bytes < UNEXPLAINED_SHARE * (double)total)
		return;
	add(d, DIAG_UNEXPLAINED, "Memory the process did not allocate",
	    xasprintf("the device had %s in use at the failure, of which %s is not this "
		      "process's allocations (%s live)",
		      fmt_size(render_oom_device_used(o)).s, fmt_size(o->unexplained_bytes).s,
		      fmt_size(o->live_bytes).s),
	    xasprintf("look for other processes on the device (nvidia-smi) and one rank per "
		      "device (CUDA_VISIBLE_DEVICES); the rest is CUDA contexts (a few hundred "
		      "MiB each), libraries' workspaces (cuBLAS, cuDNN, NCCL) or a framework's "
		      "cache memtrace cannot see (rerun with --per-tensor)"));
}

/* Bytes stack held in a snapshot (0 when not among its stacks). */
static uint64_t snap_bytes(const struct timeline_snapshot *s, int64_t stack)
{
	for (size_t i = 0; i < s->n_stacks; i++) {
		if (s->stacks[i].stack == stack)
			return s->stacks[i].bytes;
	}
	return 0;
}

/* The first snapshot at or after time_ns, else the last one. */
static const struct timeline_snapshot *snap_from(const struct model_timeline *tl,
						 int64_t time_ns)
{
	for (size_t i = 0; i < tl->n_snaps; i++) {
		if (tl->snaps[i].time_ns >= time_ns)
			return &tl->snaps[i];
	}
	return tl->n_snaps ? &tl->snaps[tl->n_snaps - 1] : NULL;
}

/* Of the groups live at the end (or at the failure), the stack that grew
 * most since the snapshot early; its growth in *grew. 0 when none grew. */
static int64_t grew_most(const struct timeline_snapshot *early, const struct model_group *g,
			 size_t n, uint64_t *grew)
{
	int64_t best = 0;

	*grew = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t before = early ? snap_bytes(early, g[i].stack) : 0;

		if (g[i].bytes > before && g[i].bytes - before > *grew) {
			*grew = g[i].bytes - before;
			best = g[i].stack;
		}
	}
	return best;
}

/* The floor of device memory (its lowest point) in each quarter of the run
 * up to the failure: when it only rises, and by enough, memory is kept
 * across iterations. */
static bool rule_growth(const struct trace *t, const struct model *m, const struct model_oom *o,
			struct diagnoses *d)
{
	const struct model_timeline *tl = m->timeline;
	int64_t end = o ? o->time_ns : m->last_time_ns;
	int64_t start = tl ? tl->first_ns : 0, span;
	uint64_t floor[4], grew;
	int64_t stack;
	_autofree_ char *where = NULL;

	if (!tl || end - start < 4)
		return false;
	span = end - start;
	/* a rising floor with memory given back in every quarter: iterations
	 * that each keep something; a plain ramp (loading, one long forward
	 * pass) gives nothing back and is no leak */
	for (int q = 0; q < 4; q++) {
		int64_t from = start + span / 4 * q, to = start + span / 4 * (q + 1) - 1;

		floor[q] = model_timeline_floor(tl, from, to);
		if ((q > 0 && floor[q] < floor[q - 1]) || model_timeline_drops(tl, from, to) == 0)
			return false;
	}
	if (floor[3] - floor[0] < GROWTH_MIN_BYTES ||
	    (double)(floor[3] - floor[0]) < GROWTH_SHARE * (double)m->device.peak_bytes)
		return false;
	if (o && o->has_holders)
		stack = grew_most(snap_from(tl, start + span / 4), o->holders, o->n_holders, &grew);
	else
		stack = grew_most(snap_from(tl, start + span / 4), m->leaks, m->n_leaks, &grew);
	where = stack ? render_stack_label(t, stack, true) : xstrdup("(no single site)");
	add(d, DIAG_GROWTH, "Memory kept across iterations",
	    xasprintf("device memory never went below %s in the first quarter of the run and "
		      "%s in the last%s; %s grew the most (+%s)",
		      fmt_size(floor[0]).s, fmt_size(floor[3]).s, o ? " before the failure" : "",
		      where, fmt_size(grew).s),
	    xasprintf("find what keeps the memory of %s alive (a list or cache of tensors, a "
		      "loss kept with its graph: use loss.item()); when it builds models or "
		      "graphs: tf.keras.backend.clear_session(), torch._dynamo.reset(), destroy "
		      "CUDA graph execs no longer used",
		      where));
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
	if (m->growth.basis == MODEL_POINT_SPAN && m->n_ooms)
		return false;
	return m->growth.n_sites && m->growth.sites[0].growing && m->growth.sites[0].per_point > 0;
}

/* What grows build after build (model-points.c) and what graphs left
 * behind pin (model-graph.c): the leaking site, its step, the execs. */
static char *builds_evidence(const struct trace *t, const struct model *m)
{
	const struct model_growth *g = &m->growth;
	uint64_t pinned, execs = diagnose_orphaned_execs(&m->graphs, &pinned);
	uint64_t never = render_graph_never_freed_bytes(&m->graphs);
	_autofree_ char *grow = NULL, *left = NULL, *unfreed = NULL;

	if (diagnose_growth_story(m)) {
		const struct model_growth_site *gs = &g->sites[0];
		_autofree_ char *site = render_model_site_label(t, &m->sites[gs->site], true);

		grow = xasprintf("%s grows by %s per point over %zu %s (%s to %s)", site,
				 fmt_size((uint64_t)gs->per_point).s, g->n_points,
				 render_growth_basis(g->basis), fmt_size(gs->live[0]).s,
				 fmt_size(gs->live[g->n_points - 1]).s);
	}
	if (execs)
		left = xasprintf("%" PRIu64 " executable graph%s never destroyed, pinning %s", execs,
				 execs == 1 ? "" : "s", fmt_size(pinned).s);
	if (never)
		unfreed = xasprintf("%s of graph memory never freed", fmt_size(never).s);
	return xasprintf("%s%s%s%s%s", grow ? grow : "", grow && (left || unfreed) ? "; " : "",
			 left ? left : "", left && unfreed ? "; " : "", unfreed ? unfreed : "");
}

static bool rule_builds(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	const char *what;

	if (!diagnose_growth_story(m) && !diagnose_graphs_story(m))
		return false;
	what = diagnose_growth_story(m) ? "the growing site" : "the code that builds the graphs";
	add(d, DIAG_BUILDS,
	    diagnose_growth_story(m) ? "Memory growing build after build" : "CUDA graphs left behind",
	    builds_evidence(t, m),
	    xasprintf("free what %s keeps from one build to the next: "
		      "tf.keras.backend.clear_session() (Keras), torch._dynamo.reset() "
		      "(torch.compile), and destroy graph execs no longer used "
		      "(cudaGraphExecDestroy, cudaGraphDestroy)",
		      what));
	return true;
}

static void rule_working_set(const struct trace *t, const struct model *m,
			     const struct model_oom *o, struct diagnoses *d)
{
	uint64_t total = oom_total(m, o);
	_autofree_ char *top = NULL, *where = NULL;

	if (total == 0 || (double)o->live_bytes < WORKING_SET_SHARE * (double)total)
		return;
	if (o->has_holders && o->n_holders) {
		top = render_stack_label(t, o->holders[0].stack, true);
		where = xasprintf("%s holds the most (%s)", top, fmt_size(o->holders[0].bytes).s);
	} else {
		where = xstrdup("");
	}
	add(d, DIAG_WORKING_SET, "The working set does not fit",
	    xasprintf("%s live in %" PRIu64 " allocations at the failure, %.0f%% of the "
		      "device, with no growth over the run%s%s",
		      fmt_size(o->live_bytes).s, o->live_count,
		      100.0 * (double)o->live_bytes / (double)total, *where ? "; " : "", where),
	    xasprintf("a smaller batch, gradient (activation) checkpointing, mixed precision "
		      "(bf16 or fp16), or sharding the model over more devices"));
}

void diagnose(const struct trace *t, const struct model *m, struct diagnoses *d)
{
	const struct model_oom *o = render_headline_oom(m);
	bool growth;

	*d = (struct diagnoses){ 0 };
	rule_preallocation(t, m, d);
	if (o)
		rule_fragmentation(o, d);
	/* one remedy for memory kept: by builds when the model saw them,
	 * else by the timeline's rising floor */
	growth = rule_builds(t, m, d) || rule_growth(t, m, o, d);
	if (o && !growth && m->n_notes == 0)
		rule_working_set(t, m, o, d);
	if (o)
		rule_unexplained(m, o, d);
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
