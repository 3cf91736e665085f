/* One ordered pass over the events (see model.h). Per event this does a
 * constant number of hash-map operations and no allocation beyond the
 * amortized growth of the maps, so 10M-event traces stay fast. VMM
 * mappings are in model-vmm.c, devices and pools in model-device.c, CUDA
 * graphs in model-graph.c, CUPTI's records in model-cupti.c, marks and
 * growth in model-points.c; the lookups and counts they all share in
 * model-base.c, below them. This file is on top: it calls them all, and
 * none calls it (the live set's hooks here are handed to the set). */
#include "model-charge.h"
#include "model-timeline.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"


void model_init(struct model *m)
{
	*m = (struct model){ .xla_arrays_api = -1 };
	for (size_t i = 0; i < SITE_KINDS; i++)
		map_init(&m->site_index[i], sizeof(uint32_t));
	map_init(&m->site_stacks, 0);
	map_init(&m->site_ops, sizeof(uint64_t));
	map_init(&m->stack_index, sizeof(uint32_t));
	map_init(&m->op_index, sizeof(uint32_t));
	model_live_init(m);
	model_vmm_init(m);
	model_device_init(m);
	model_points_init(m);
	model_graph_init(m);
	model_cupti_init(m);
}

void model_fini(struct model *m)
{
	model_moment_fini(m);
	for (size_t i = 0; i < m->n_ooms; i++) {
		free(m->ooms[i].holders);
		model_framework_free(&m->ooms[i].framework);
	}
	free(m->ooms);
	model_torch_fini(m);
	for (size_t i = 0; i < m->n_sites; i++)
		free(m->sites[i].runs);
	free(m->sites);
	free(m->stacks);
	free(m->stack_memo);
	free(m->site_memo);
	free(m->ops);
	free(m->leaks);
	free(m->notes);
	model_vmm_fini(m);
	model_device_fini(m);
	model_points_fini(m);
	model_graph_fini(m);
	model_cupti_fini(m);
	for (size_t i = 0; i < SITE_KINDS; i++)
		map_fini(&m->site_index[i]);
	map_fini(&m->site_stacks);
	map_fini(&m->site_ops);
	map_fini(&m->stack_index);
	map_fini(&m->op_index);
	trace_live_fini(&m->live);
	*m = (struct model){ 0 };
}

/* ---- the live set's changes (trace/trace-live-set.h's hooks) ---- */

static inline struct model_live *rec_of(const struct trace_live_alloc *a)
{
	return trace_live_payload(a);
}

static void became_live(void *ctx, struct trace_live_alloc *a, enum trace_live_why why)
{
	struct model *m = ctx;
	struct model_live *rec = rec_of(a);

	m->just_live = rec;
	if (why == TRACE_LIVE_RESTORED)
		model_count_free(m, rec->mem, -1);
	charge_live_add(m, rec, m->live_time_ns);
	if (m->live_unmap_error)
		return; /* a handle an unmap had freed: its mappings show it */
	model_moment_live(m, a->address, rec, true, m->live_time_ns);
	if (why != TRACE_LIVE_RESTORED)
		return;
	/* a free_error: what the free did is undone */
	if (rec->mem == MT_MEM_GRAPH)
		model_graph_freed(m, a->address, false);
	else if (rec->mem == MT_MEM_DEVICE && m->graphs.segments)
		model_graph_device_freed(m, a->address, false);
	model_cupti_hooked_free(m, a->address, m->live_time_ns, true);
}

static void became_gone(void *ctx, const struct trace_live_alloc *a, enum trace_live_why why)
{
	struct model *m = ctx;
	struct model_live rec = *rec_of(a);

	if (rec.mem == MT_MEM_VMM_PHYSICAL)
		map_remove(&m->vmm_shown, a->address, NULL);
	if (why == TRACE_LIVE_REUSED) {
		/* a free memtrace did not see: out of the timeline's tables
		 * here (a free seen left them before the free) */
		if (m->timeline)
			model_timeline_forget(m->timeline, &rec);
	} else {
		model_count_free(m, rec.mem, 1);
	}
	if (why == TRACE_LIVE_FREED && m->oom_open && model_mem_is_device(rec.mem)) {
		m->oom_released_bytes += rec.bytes;
		m->oom_released_count++;
	}
	charge_live_sub(m, &rec);
	if (why == TRACE_LIVE_UNMAPPED)
		return;
	model_moment_live(m, a->address, &rec, false, m->live_time_ns);
	if (why == TRACE_LIVE_DROPPED)
		return; /* graph memory its graph freed (model-graph.c) */
	if (rec.mem == MT_MEM_GRAPH)
		model_graph_freed(m, a->address, true);
	else if (rec.mem == MT_MEM_DEVICE && m->graphs.segments)
		model_graph_device_freed(m, a->address, true);
	if (why == TRACE_LIVE_FREED)
		model_cupti_hooked_free(m, a->address, m->live_time_ns, false);
}

/* A mapped handle's bytes go to the stack of its first live mapping, or
 * back to its creator: the totals and the peak do not change, the sites
 * and stacks do. */
static void moved(void *ctx, const struct trace_live_alloc *a,
		  const struct trace_live_holder *before)
{
	(void)before;
	model_live_move(ctx, rec_of(a), a->holder.stack, (uint32_t)(a->holder.owner >> 32),
			(uint32_t)a->holder.owner);
}

void model_live_init(struct model *m)
{
	const struct trace_live_hooks hooks = {
		.ctx = m, .live = became_live, .gone = became_gone, .moved = moved,
		.first_map = model_vmm_first_map,
	};

	if (!trace_live_init_payload(&m->live, &hooks, sizeof(struct model_live)))
		out_of_memory(sizeof(struct model_live));
	trace_live_peak_off(&m->live); /* the model's own: model-charge.h */
}

/* The set's counters are the model's: what a free or map found. */
static void live_counts(struct model *m)
{
	m->unmatched_frees = m->live.unmatched_frees;
	m->unmatched_maps = m->live.unmatched_maps;
	m->unmatched_unmaps = m->live.unmatched_unmaps;
	m->reused_addresses = m->live.reused;
}


/* The thread's first allocation after an episode: when it is the request
 * that failed, made again by PyTorch's caching allocator, and no
 * framework told the program of an OOM (PyTorch's allocator names the
 * tensor, TensorFlow raises), the episode was recovered from: no OOM
 * reached the program. */
static void oom_recovered(struct model *m, const struct trace_event *ev)
{
	struct model_oom *last = &m->ooms[m->n_ooms - 1];
	int64_t first = last->retry_of ? last->retry_of : last->seq;

	/* only inside a framework's allocator that records its own OOMs
	 * (PyTorch's, the tensor view): a bare cudaMalloc's failure is the
	 * program's to see */
	if (!m->torch || ev->api != last->api || ev->bytes != last->requested ||
	    ev->device != last->device || ev->mem != last->mem || last->framework.has_request ||
	    last->failed_stack || last->allocator_own)
		return;
	for (size_t i = m->n_ooms; i-- > 0 && m->ooms[i].seq >= first;)
		m->ooms[i].recovered = true;
	last->recovered_bytes = m->oom_released_bytes;
	last->recovered_count = m->oom_released_count;
	m->n_oom_episodes--;
	m->n_recovered_episodes++;
	model_torch_oom_recovered(m);
}

static void on_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_live rec = {
		.bytes = ev->bytes, .stream = ev->stream, .stack = ev->stack, .mem = ev->mem,
		.device = ev->device, .site = MODEL_NONE, .holder = MODEL_NONE, .pool = MODEL_NONE,
		.op = MODEL_NONE,
	};
	struct model_live *live;

	/* cudaMalloc of 0 bytes returns NULL: nothing to track */
	if (!ev->has_address || ev->address == 0 || model_mem_class(ev->mem) == MODEL_MEM_UNTRACKED) {
		if (ev->bytes > 0)
			m->untracked_allocs++;
		return;
	}
	if (ev->mem == MT_MEM_GRAPH) {
		model_graph_alloc(m, ev); /* not memory until a launch */
		return;
	}
	if (m->oom_open && ev->thread == m->oom_thread) {
		oom_recovered(m, ev);
		m->oom_open = false; /* the thread went on: the episode ended */
	}
	model_count_alloc(m, ev, &ev->site, &rec);
	live = model_live_insert(m, ev->address, &rec, ev->time_ns);
	if (m->torch && (ev->mem == MT_MEM_DEVICE || ev->mem == MT_MEM_MANAGED))
		model_torch_device_alloc(m, ev);
	if (m->timeline_on)
		model_timeline_alloc(m->timeline, live, ev);
	if (ev->mem == MT_MEM_DEVICE && m->graphs.capturing)
		model_graph_device_alloc(m, ev);
	model_cupti_hooked(m, ev);
}

static void on_free(struct model *m, const struct trace_event *ev)
{
	struct trace_live_alloc *live, out;
	size_t at;

	/* cudaFree(NULL) is a no-op (and a common way to create a context) */
	if (!ev->has_address || ev->address == 0)
		return;
	live = trace_live_find(&m->live, ev->address, &at);
	if (!live && model_graph_known(m, ev->address))
		return; /* graph memory that no launch made physical */
	/* out of the timeline's tables at its free, even a VMM handle whose
	 * memory lives on while mapped (the tables count allocations) */
	if (live && m->timeline)
		model_timeline_forget(m->timeline, rec_of(live));
	/* the rest is the live set's rules and hooks (became_gone): a
	 * mapped handle's release keeps its memory until unmapped */
	m->live_time_ns = ev->time_ns;
	trace_live_free_at(&m->live, ev->address, at, &out);
	if (m->torch)
		model_torch_device_free(m, ev);
}

/* The free recorded just before (on that thread) failed: the live set
 * undoes it (became_live). */
static void on_free_error(struct model *m, const struct trace_event *ev)
{
	struct trace_live_alloc found;

	m->free_errors++;
	if (!ev->has_address || ev->address == 0)
		return;
	m->live_time_ns = ev->time_ns;
	trace_live_free_error(&m->live, ev->address, (uint64_t)ev->seq, (uint64_t)ev->time_ns,
			      &found);
}

static int cmp_group(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

static void snapshot_holders(struct model *m, struct model_oom *o)
{
	size_t n = 0;

	o->holders = xcalloc(m->n_stacks, sizeof(*o->holders));
	for (size_t i = 0; i < m->n_stacks; i++) {
		const struct model_stack_live *st = &m->stacks[i];

		if (st->count == 0)
			continue;
		o->holders[n] = (struct model_group){
			.stack = st->stack, .bytes = st->bytes, .count = st->count,
		};
		model_stack_rounds(m, st->stack, false, &o->holders[n].rounds);
		o->round_bytes = sat_add(o->round_bytes, o->holders[n].rounds.open_bytes);
		n++;
	}
	qsort(o->holders, n, sizeof(*o->holders), cmp_group);
	o->n_holders = n;
	o->has_holders = true;
}

/* Keep the first SNAPSHOTS - 1 live sets and the latest one. */
static void maybe_snapshot(struct model *m, size_t idx)
{
	if (idx >= MODEL_OOM_SNAPSHOTS - 1) {
		if (idx > MODEL_OOM_SNAPSHOTS - 1) {
			struct model_oom *prev = &m->ooms[m->last_snapshot];

			free(prev->holders);
			prev->holders = NULL;
			prev->n_holders = 0;
			prev->has_holders = false;
			m->oom_snapshots_dropped++;
		}
		m->last_snapshot = idx;
	}
	snapshot_holders(m, &m->ooms[idx]);
}

/* What the device had in use that the process's own device-side
 * allocations on it do not explain: contexts, other processes, libraries'
 * workspaces. Allocations on an unknown device count as on this one. */
static void oom_unexplained(struct model *m, struct model_oom *o)
{
	uint64_t used, ours;

	if (!o->has_device_free || !o->has_device_total || o->device_total < 0)
		return;
	used = sat_sub((uint64_t)o->device_total,
		       o->device_free < 0 ? 0 : (uint64_t)o->device_free);
	if (o->device >= 0)
		ours = sat_add(*model_device_live(m, o->device), m->unknown_device_live);
	else
		ours = m->device.live_bytes;
	/* the graph pools' physical memory is the process's too */
	ours = sat_add(ours, model_graph_reserved_on(m, o->device));
	o->has_unexplained = true;
	o->unexplained_bytes = sat_sub(used, ours);
}

static void on_oom(struct model *m, const struct trace_event *ev)
{
	struct model_oom *o;

	grow_array(&m->ooms, &m->cap_ooms, m->n_ooms + 1, sizeof(*m->ooms));
	o = &m->ooms[m->n_ooms];
	*o = (struct model_oom){
		.seq = ev->seq, .time_ns = ev->time_ns, .api = ev->api, .device = ev->device,
		.stack = ev->stack, .requested = ev->bytes, .mem = ev->mem,
		.live_bytes = m->device.live_bytes, .live_count = m->device.live_count,
		.cupti_alone_bytes = m->cupti.alone_live_bytes,
		.has_device_free = ev->has_device_free, .device_free = ev->device_free,
		.has_device_total = ev->has_device_total, .device_total = ev->device_total,
	};
	if (m->n_ooms > 0 && m->oom_open && ev->thread == m->oom_thread) {
		const struct model_oom *prev = &m->ooms[m->n_ooms - 1];

		if (prev->api == o->api && prev->requested == o->requested &&
		    prev->device == o->device && prev->mem == o->mem) {
			o->retry_of = prev->retry_of ? prev->retry_of : prev->seq;
			o->released_bytes = m->oom_released_bytes;
			o->released_count = m->oom_released_count;
		}
	}
	if (!o->retry_of)
		m->n_oom_episodes++;
	m->oom_open = true;
	m->oom_thread = ev->thread;
	m->oom_released_bytes = m->oom_released_count = 0;
	o->round = trace_round_at_oom(&m->rounds);
	o->has_request_rounds = model_stack_rounds(m, ev->stack, false, &o->request_rounds);
	oom_unexplained(m, o);
	model_device_oom(m, ev);
	maybe_snapshot(m, m->n_ooms);
	model_moment_oom(m, ev);
	model_torch_at_oom(m, o);
	m->n_ooms++;
}

/* The allocator gave up with no CUDA call failing since its last OOM (a
 * limit of its own: set_per_process_memory_fraction): an OOM of its own,
 * of the tensor's request, with its cap when the trace has it. The
 * device's free memory as torch read it (the ooms row) is kept apart: the
 * device did not refuse anything, so the device's causes do not apply. */
static void on_tensor_oom(struct model *m, const struct trace_event *ev)
{
	if (model_torch_oom_alone(m)) {
		struct trace_event o = *ev;

		o.mem = MT_MEM_DEVICE;
		o.has_device_free = o.has_device_total = false;
		on_oom(m, &o);
		struct model_oom *own = &m->ooms[m->n_ooms - 1];
		own->allocator_own = true;
		own->limit_bytes = ev->limit;
		own->has_own_device_free = ev->has_device_free && ev->has_device_total;
		own->own_device_free = ev->device_free;
	}
	model_torch_event(m, ev);
}

/* The last OOM reached the program on this thread (TensorFlow raising
 * what its executor thread's allocator logged, or what its CUDA call
 * failed): this is its stack from now on, the user's line in it, and
 * that of the failures before it in its episode; the failing thread's is
 * kept. */
static void on_oom_raised(struct model *m, const struct trace_event *ev)
{
	int64_t first;

	if (!m->n_ooms || !ev->stack)
		return;
	first = m->ooms[m->n_ooms - 1].retry_of;
	for (size_t i = m->n_ooms; i-- > 0;) {
		struct model_oom *o = &m->ooms[i];

		if (o->failed_stack)
			break;
		o->failed_stack = o->stack;
		o->stack = ev->stack;
		if (!first || o->seq <= first)
			break;
	}
}

static void on_mark(struct model *m, const struct trace_event *ev)
{
	model_points_add(m, MODEL_POINT_MARK, ev);
	model_cupti_mark(m, ev);
	if (ev->at_mark)
		model_graph_at_mark(m, ev);
}

void model_feed(struct model *m, const struct trace_event *ev)
{
	if (m->finished)
		return;
	m->events++;
	/* a flight trace's timeline starts with its ring */
	m->timeline_on = m->timeline && ev->seq >= m->timeline_from_seq;
	if (m->timeline_on)
		model_timeline_feed(m->timeline, m, ev);
	else if (m->timeline)
		model_timeline_mark(m->timeline, ev); /* the writer kept it */
	if (ev->time_ns > m->last_time_ns)
		m->last_time_ns = ev->time_ns;
	m->last_seq = ev->seq;
	if (ev->source == MT_SOURCE_CUPTI && ev->kind != MT_EV_MARK) {
		model_cupti_event(m, ev); /* a witness, not an event of its own */
		return;
	}
	model_points_feed(m, ev);
	switch (ev->kind) {
	case MT_EV_ALLOC: on_alloc(m, ev); break;
	case MT_EV_FREE: on_free(m, ev); break;
	case MT_EV_OOM: on_oom(m, ev); break;
	case MT_EV_OOM_RAISED: on_oom_raised(m, ev); break;
	case MT_EV_ALLOC_ERROR: m->alloc_errors++; break;
	case MT_EV_FREE_ERROR: on_free_error(m, ev); break;
	case MT_EV_MAP: model_vmm_map(m, ev); break;
	case MT_EV_UNMAP: model_vmm_unmap(m, ev); break;
	case MT_EV_UNMAP_ERROR: model_vmm_unmap_error(m, ev); break;
	case MT_EV_POOL_CREATE:
	case MT_EV_POOL_DESTROY:
	case MT_EV_POOL_TRIM: model_pool_event(m, ev); break;
	case MT_EV_DEVICE: model_device_event(m, ev); break;
	case MT_EV_MARK: on_mark(m, ev); break;
	case MT_EV_GRAPH_CREATE:
	case MT_EV_GRAPH_CLONE:
	case MT_EV_GRAPH_DESTROY:
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
		model_cupti_graph_hooked(m, ev);
		model_graph_event(m, ev);
		break;
	case MT_EV_GRAPH_LAUNCH:
	case MT_EV_GRAPH_UPLOAD:
	case MT_EV_CAPTURE_BEGIN:
	case MT_EV_CAPTURE_END:
	case MT_EV_GRAPH_MEM_TRIM:
	case MT_EV_GRAPH_FREE_NODE:
	case MT_EV_CAPTURE_JOIN: model_graph_event(m, ev); break;
	case MT_EV_TENSOR_ALLOC:
	case MT_EV_TENSOR_FREE_REQUESTED:
	case MT_EV_TENSOR_FREE:
		if (ev->api == m->xla_arrays_api) {
			m->xla_array_events++; /* not PyTorch's tensors: not modelled yet */
			break;
		}
		model_torch_event(m, ev);
		break;
	case MT_EV_CACHE_SEGMENT_ALLOC:
	case MT_EV_CACHE_SEGMENT_FREE:
	case MT_EV_CACHE_SEGMENT_MAP:
	case MT_EV_CACHE_SEGMENT_UNMAP: model_torch_event(m, ev); break;
	case MT_EV_TENSOR_OOM: on_tensor_oom(m, ev); break;
	default: m->unknown_events++; break;
	}
	live_counts(m);
	if (m->moment.wanted)
		model_moment_after(m, ev);
}

static void prefetch_charged(const struct model *m, uint32_t site, uint32_t holder)
{
	if (site < m->n_sites) {
		/* the fields charge changes, at the struct's start */
		__builtin_prefetch(&m->sites[site]);
		__builtin_prefetch((const char *)&m->sites[site] + 63);
	}
	if (holder < m->n_stacks) {
		__builtin_prefetch(&m->stacks[holder]);
		__builtin_prefetch((const char *)&m->stacks[holder] + sizeof(*m->stacks) - 1);
	}
}

void model_prefetch(const struct model *m, const struct trace_event *ev, bool near)
{
	const struct model_site_memo *memo;

	if (!ev->has_address)
		return;
	if (!near) {
		trace_live_prefetch(&m->live, ev->address);
		if (ev->site_slot < m->cap_site_memo)
			__builtin_prefetch(&m->site_memo[ev->site_slot]);
		if (m->timeline && ev->site_slot < m->timeline->cap_site_slots)
			__builtin_prefetch(&m->timeline->site_slots[ev->site_slot]);
		return;
	}
	if (ev->kind == MT_EV_FREE) {
		const struct trace_live_alloc *a = trace_live_get(&m->live, ev->address);

		if (a) {
			__builtin_prefetch(a);
			__builtin_prefetch((const char *)a + m->live.stride - 1);
		}
		return;
	}
	if (ev->site_slot >= m->cap_site_memo)
		return;
	memo = &m->site_memo[ev->site_slot];
	if (memo->valid)
		prefetch_charged(m, memo->site, memo->holder);
}

static int cmp_live_by_stack(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (int)x->cache - (int)y->cache;
}

/* Group what is still live by (memory kind, stack, a framework's cache or
 * not): sort, then merge runs. */
static void build_leaks(struct model *m)
{
	struct model_group *g =
		xcalloc(trace_live_count(&m->live) + model_cupti_alone_live(m) + 1, sizeof(*g));
	struct trace_live_alloc *a;
	size_t n = 0, out = 0;

	for (size_t pos = 0; (a = trace_live_next(&m->live, &pos));) {
		const struct model_live *rec = rec_of(a);

		if (model_mem_class(rec->mem) != MODEL_MEM_UNTRACKED)
			g[n++] = (struct model_group){
				.stack = rec->stack, .bytes = rec->bytes, .count = 1, .mem = rec->mem,
				.cache = model_torch_holds(m, a->address),
			};
	}
	n += model_cupti_leaks(m, g + n);
	qsort(g, n, sizeof(*g), cmp_live_by_stack);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && cmp_live_by_stack(&g[out - 1], &g[i]) == 0) {
			g[out - 1].bytes = sat_add(g[out - 1].bytes, g[i].bytes);
			g[out - 1].count++;
		} else {
			g[out++] = g[i];
		}
	}
	for (size_t i = 0; i < out; i++)
		model_stack_rounds(m, g[i].stack, true, &g[i].rounds);
	qsort(g, out, sizeof(*g), cmp_group);
	m->leaks = g;
	m->n_leaks = out;
}

static int cmp_site(const void *a, const void *b)
{
	const struct model_site *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	if (x->total_bytes != y->total_bytes)
		return x->total_bytes > y->total_bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

static int cmp_op(const void *a, const void *b)
{
	const struct model_op *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	if (x->total_bytes != y->total_bytes)
		return x->total_bytes > y->total_bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void model_finish(struct model *m)
{
	if (m->finished)
		return;
	live_counts(m);
	model_moment_finish(m); /* the live set as the trace left it */
	model_torch_finish(m);
	model_cupti_finish(m); /* before the graphs: CUPTI's own go to them */
	model_graph_finish(m);
	model_points_close(m);
	for (size_t i = 0; i < m->n_sites; i++) {
		model_site_touch(m, &m->sites[i]);
		model_points_touch(m, &m->sites[i]);
	}
	for (size_t i = 0; i < m->n_ops; i++)
		model_op_touch(m, &m->ops[i]);
	if (m->flight)
		model_flight_finish(m); /* what left a flight trace's ring */
	/* indices into sites and ops held by live records are dead from here on */
	if (m->n_sites) /* qsort wants an array, even an empty one */
		qsort(m->sites, m->n_sites, sizeof(*m->sites), cmp_site);
	if (m->n_ops)
		qsort(m->ops, m->n_ops, sizeof(*m->ops), cmp_op);
	map_fini(&m->site_stacks);
	map_fini(&m->site_ops);
	build_leaks(m);
	model_device_finish(m);
	model_points_finish(m);
	m->finished = true;
}
