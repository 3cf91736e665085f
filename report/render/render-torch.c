/* PyTorch's memory snapshot, as torch.cuda.memory._snapshot() returns it
 * and _dump_snapshot() pickles it, for PyTorch's memory viewer
 * (pytorch.org/memory_viz, python -m torch.cuda._memory_viz). The fields
 * follow torch/csrc/cuda/memory_snapshot.cpp (_memory_snapshot_pickled)
 * of PyTorch 2.x, as read by torch/utils/viz/MemoryViz.js:
 *
 *   {"segments": [{"device", "address", "total_size", "allocated_size",
 *                  "active_size", "requested_size", "stream",
 *                  "segment_type", "segment_pool_id", "is_expandable",
 *                  "frames", "blocks": [{"address", "size",
 *                  "requested_size", "state", "frames"}]}],
 *    "device_traces": [[{"action", "addr", "size", "stream", "time_us",
 *                        "frames"} or, for an OOM, "device_free" for
 *                        "addr"], one list per device]}
 *
 * The segments are those live at the moment (model.moment: the last OOM,
 * the end, or the --at-mark mark). Where the trace has PyTorch's caching
 * allocator's actions, its segments are written as torch lists them, with
 * their blocks end to end (model-torch.c: active_allocated, a tensor's;
 * active_pending_free; inactive, a free range), each with its tensor's
 * stack. Every other allocation live then (or each one, without the
 * allocator's actions) is a segment holding one block of its size,
 * active_allocated, so a segment's blocks add up to it; a VMM mapping is
 * an expandable segment; graph memory has its graph's pool id.
 * The traces are the CUDA calls that led to the moment (the most recent
 * MODEL_MOMENT_ACTIONS), each allocation as segment_alloc + alloc
 * (segment_map for a mapping), each free as free_requested +
 * free_completed + segment_free (segment_unmap), so that the viewer,
 * which replays them backwards from the segments, always finds a block's
 * segment; for a segment of the caching allocator still live at the
 * moment, only segment_alloc (segment_map): its blocks are the tensors'.
 * Frames are innermost first, as PyTorch writes them. */
#include <inttypes.h>

#include "render.h"
#include "trace-schema.h"
#include "util-map.h"
#include "util-mem.h"
#include "util-pickle.h"

/* Keys: memoized by the pointer, so each is written once. */
static const char K_SEGMENTS[] = "segments", K_TRACES[] = "device_traces",
		  K_DEVICE[] = "device", K_ADDRESS[] = "address", K_TOTAL[] = "total_size",
		  K_ALLOCATED[] = "allocated_size", K_ACTIVE[] = "active_size",
		  K_REQUESTED[] = "requested_size", K_STREAM[] = "stream",
		  K_SEGMENT_TYPE[] = "segment_type", K_POOL[] = "segment_pool_id",
		  K_EXPANDABLE[] = "is_expandable", K_FRAMES[] = "frames", K_BLOCKS[] = "blocks",
		  K_SIZE[] = "size", K_STATE[] = "state", K_ACTION[] = "action",
		  K_ADDR[] = "addr", K_TIME[] = "time_us", K_DEVICE_FREE[] = "device_free",
		  K_FILENAME[] = "filename", K_LINE[] = "line", K_NAME[] = "name",
		  V_LARGE[] = "large", V_SMALL[] = "small", V_ACTIVE[] = "active_allocated",
		  V_PENDING[] = "active_pending_free", V_INACTIVE[] = "inactive";

/* PyTorch's caching allocator: allocations of at most 1 MiB come from its
 * small pool. */
#define SMALL_SEGMENT (1u << 20)

struct torch {
	const struct trace *t;
	const struct model *m;
	struct pickle p;
	struct map frame_memo; /* frame index + 1 -> memo index of its dict */
	struct map stack_memo; /* stack id -> memo index of its frames list */
	struct map graph_pool; /* graph handle -> its pool's number */
	int64_t start_us;
};

static void frame_dict(struct torch *tr, const struct trace_frame *f)
{
	const struct trace_module *mod = trace_frame_module(tr->t, f);
	_autofree_ char *name = render_frame_name(tr->t, f);

	pickle_dict(&tr->p);
	pickle_key(&tr->p, K_FILENAME);
	pickle_str(&tr->p, f->file ? f->file : mod ? mod->path : "??");
	pickle_key(&tr->p, K_LINE);
	pickle_int(&tr->p, f->line > 0 ? f->line : 0);
	pickle_key(&tr->p, K_NAME);
	pickle_str(&tr->p, name);
	pickle_close_dict(&tr->p);
}

/* A stack's frames, written once and memoized, as PyTorch shares them. */
static void frames(struct torch *tr, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(tr->t, stack);
	bool added;
	uint32_t *memo = xmap_put(&tr->stack_memo, (uint64_t)stack, &added);

	if (!added) {
		pickle_get(&tr->p, *memo);
		return;
	}
	pickle_list(&tr->p);
	for (uint32_t i = 0; s && i < s->depth; i++) {
		const struct trace_frame *f = trace_stack_frame(tr->t, s, i);
		uint32_t *fm;

		if (!f)
			continue;
		fm = xmap_put(&tr->frame_memo, (uint64_t)(f - tr->t->frames) + 1, &added);
		if (added) {
			frame_dict(tr, f);
			*fm = pickle_memoize(&tr->p);
		} else {
			pickle_get(&tr->p, *fm);
		}
	}
	pickle_close_list(&tr->p);
	*memo = pickle_memoize(&tr->p); /* only frame_memo grew meanwhile */
}

/* Graph memory's pool: one per graph, numbered from 1 as they come; 0 for
 * everything else (PyTorch's default pool id is (0, 0)). */
static uint32_t pool_of(struct torch *tr, const struct model_block *b)
{
	bool added;
	uint32_t *n;

	if (b->mem != MT_MEM_GRAPH)
		return 0;
	n = xmap_put(&tr->graph_pool, b->graph, &added);
	if (added)
		*n = (uint32_t)tr->graph_pool.len;
	return *n;
}

static void segment(struct torch *tr, const struct model_block *b)
{
	struct pickle *p = &tr->p;

	pickle_dict(p);
	pickle_key(p, K_DEVICE);
	pickle_int(p, b->device >= 0 ? b->device : 0);
	pickle_key(p, K_ADDRESS);
	pickle_uint(p, b->address);
	pickle_key(p, K_TOTAL);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_ALLOCATED);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_ACTIVE);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_REQUESTED);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_STREAM);
	pickle_uint(p, b->stream);
	pickle_key(p, K_SEGMENT_TYPE);
	pickle_key(p, b->bytes > SMALL_SEGMENT ? V_LARGE : V_SMALL);
	pickle_key(p, K_POOL);
	pickle_int_pair(p, 0, pool_of(tr, b));
	pickle_key(p, K_EXPANDABLE);
	pickle_bool(p, b->mapping);
	pickle_key(p, K_FRAMES);
	frames(tr, b->stack);
	pickle_key(p, K_BLOCKS);
	pickle_list(p);
	pickle_dict(p);
	pickle_key(p, K_ADDRESS);
	pickle_uint(p, b->address);
	pickle_key(p, K_SIZE);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_REQUESTED);
	pickle_uint(p, b->bytes);
	pickle_key(p, K_STATE);
	pickle_key(p, V_ACTIVE);
	pickle_key(p, K_FRAMES);
	frames(tr, b->stack);
	pickle_close_dict(p);
	pickle_close_list(p);
	pickle_close_dict(p);
}

/* The caching allocator's segment that holds address, at the moment. */
static const struct model_fw_segment *fw_segment(const struct torch *tr, uint64_t address)
{
	const struct model_framework *f = &tr->m->moment.framework;
	size_t lo = 0, hi = f->n_segments;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct model_fw_segment *s = &f->segments[mid];

		if (address < s->address)
			hi = mid;
		else if (address - s->address >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

static void fw_block(struct torch *tr, const struct model_fw_block *b)
{
	static const char *const state[] = { V_ACTIVE, V_PENDING, V_INACTIVE };
	struct pickle *p = &tr->p;

	pickle_dict(p);
	pickle_key(p, K_ADDRESS);
	pickle_uint(p, b->address);
	pickle_key(p, K_SIZE);
	pickle_uint(p, b->size);
	pickle_key(p, K_REQUESTED);
	pickle_uint(p, b->requested);
	pickle_key(p, K_STATE);
	pickle_key(p, state[b->state]);
	pickle_key(p, K_FRAMES);
	frames(tr, b->stack);
	pickle_close_dict(p);
}

/* A segment of the caching allocator, with its blocks. */
static void fw_segment_write(struct torch *tr, const struct model_fw_segment *s)
{
	const struct model_framework *f = &tr->m->moment.framework;
	struct pickle *p = &tr->p;
	uint64_t allocated = 0, active = 0, requested = 0;

	for (size_t i = s->first; i < s->first + s->n; i++) {
		const struct model_fw_block *b = &f->blocks[i];

		allocated += b->state == MODEL_FW_ALLOCATED ? b->size : 0;
		active += b->state != MODEL_FW_FREE ? b->size : 0;
		requested += b->state != MODEL_FW_FREE ? b->requested : 0;
	}
	pickle_dict(p);
	pickle_key(p, K_DEVICE);
	pickle_int(p, s->device >= 0 ? s->device : 0);
	pickle_key(p, K_ADDRESS);
	pickle_uint(p, s->address);
	pickle_key(p, K_TOTAL);
	pickle_uint(p, s->size);
	pickle_key(p, K_ALLOCATED);
	pickle_uint(p, allocated);
	pickle_key(p, K_ACTIVE);
	pickle_uint(p, active);
	pickle_key(p, K_REQUESTED);
	pickle_uint(p, requested);
	pickle_key(p, K_STREAM);
	pickle_uint(p, s->stream);
	pickle_key(p, K_SEGMENT_TYPE);
	/* the small pool's segments are 2 MiB; the large pool's are bigger,
	 * or expandable */
	pickle_key(p, s->size > 2 * SMALL_SEGMENT || s->expandable ? V_LARGE : V_SMALL);
	pickle_key(p, K_POOL);
	pickle_int_pair(p, 0, 0);
	pickle_key(p, K_EXPANDABLE);
	pickle_bool(p, s->expandable);
	pickle_key(p, K_FRAMES);
	frames(tr, s->stack);
	pickle_key(p, K_BLOCKS);
	pickle_list(p);
	for (size_t i = s->first; i < s->first + s->n; i++)
		fw_block(tr, &f->blocks[i]);
	pickle_close_list(p);
	pickle_close_dict(p);
}

static void entry(struct torch *tr, const char *action, const struct model_action *a)
{
	struct pickle *p = &tr->p;

	pickle_dict(p);
	pickle_key(p, K_ACTION);
	pickle_key(p, action);
	if (a->kind == MODEL_ACTION_OOM) {
		pickle_key(p, K_DEVICE_FREE);
		pickle_uint(p, a->device_free);
	} else {
		pickle_key(p, K_ADDR);
		pickle_uint(p, a->address);
	}
	pickle_key(p, K_SIZE);
	pickle_uint(p, a->bytes);
	pickle_key(p, K_STREAM);
	pickle_uint(p, a->stream);
	pickle_key(p, K_TIME);
	pickle_int(p, tr->start_us + a->time_ns / 1000);
	pickle_key(p, K_FRAMES);
	frames(tr, a->stack);
	pickle_close_dict(p);
}

static void trace_entries(struct torch *tr, const struct model_action *a)
{
	static const char seg_alloc[] = "segment_alloc", seg_free[] = "segment_free",
			  seg_map[] = "segment_map", seg_unmap[] = "segment_unmap", alloc[] = "alloc",
			  free_req[] = "free_requested", free_done[] = "free_completed",
			  oom[] = "oom";

	switch (a->kind) {
	case MODEL_ACTION_ALLOC:
	case MODEL_ACTION_MAP:
		entry(tr, a->kind == MODEL_ACTION_MAP ? seg_map : seg_alloc, a);
		if (!fw_segment(tr, a->address))
			entry(tr, alloc, a);
		break;
	case MODEL_ACTION_FREE:
	case MODEL_ACTION_UNMAP:
		entry(tr, free_req, a);
		entry(tr, free_done, a);
		entry(tr, a->kind == MODEL_ACTION_UNMAP ? seg_unmap : seg_free, a);
		break;
	case MODEL_ACTION_OOM: entry(tr, oom, a); break;
	}
}

/* The device an action is on: a mapping says none; the trace lists put
 * those on device 0, as the segments do. */
static int action_device(const struct model_action *a)
{
	return a->device >= 0 ? a->device : 0;
}

static void device_traces(struct torch *tr)
{
	const struct model_moment *mo = &tr->m->moment;
	int devices = 1;

	for (size_t i = 0; i < mo->n_blocks; i++) {
		if (mo->blocks[i].device + 1 > devices)
			devices = mo->blocks[i].device + 1;
	}
	for (size_t i = 0; i < mo->n_actions; i++) {
		const struct model_action *a = &mo->actions[(mo->head + i) % MODEL_MOMENT_ACTIONS];

		if (action_device(a) + 1 > devices)
			devices = action_device(a) + 1;
	}
	pickle_list(&tr->p);
	for (int d = 0; d < devices && d < 1024; d++) {
		pickle_list(&tr->p);
		for (size_t i = 0; i < mo->n_actions; i++) {
			const struct model_action *a =
				&mo->actions[(mo->head + i) % MODEL_MOMENT_ACTIONS];

			if (action_device(a) == d && (a->bytes || a->kind == MODEL_ACTION_OOM))
				trace_entries(tr, a);
		}
		pickle_close_list(&tr->p);
	}
	pickle_close_list(&tr->p);
}

void render_torch_snapshot(FILE *f, const struct trace *t, const struct model *m,
			   const struct render_opts *o)
{
	struct torch tr = { .t = t, .m = m };
	int64_t start_ns = 0;

	(void)o;
	if (render_meta_int(t, "start_realtime_ns", &start_ns))
		tr.start_us = start_ns / 1000;
	map_init(&tr.frame_memo, sizeof(uint32_t));
	map_init(&tr.stack_memo, sizeof(uint32_t));
	map_init(&tr.graph_pool, sizeof(uint32_t));
	pickle_begin(&tr.p, f);
	pickle_dict(&tr.p);
	pickle_key(&tr.p, K_SEGMENTS);
	pickle_list(&tr.p);
	for (size_t i = 0; i < m->moment.framework.n_segments; i++)
		fw_segment_write(&tr, &m->moment.framework.segments[i]);
	/* a zero-byte allocation is no range the viewer can place a block in */
	for (size_t i = 0; i < m->moment.n_blocks; i++) {
		const struct model_block *b = &m->moment.blocks[i];

		if (b->bytes && !fw_segment(&tr, b->address))
			segment(&tr, b);
	}
	pickle_close_list(&tr.p);
	pickle_key(&tr.p, K_TRACES);
	device_traces(&tr);
	pickle_close_dict(&tr.p);
	pickle_end(&tr.p);
	map_fini(&tr.frame_memo);
	map_fini(&tr.stack_memo);
	map_fini(&tr.graph_pool);
}
