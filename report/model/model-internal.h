/* What the model's files share and renderers do not see: the live
 * record, the accounting every kind goes through, and the entry points of
 * model-vmm.c (mappings, handle lifetime) and model-device.c (devices,
 * pools, the preallocation note). */
#pragma once

#include <assert.h>

#include "model.h"
#include "util-math.h"

#define MODEL_NONE UINT32_MAX

/* The payload of each entry of the live set (trace/trace-live-set.h),
 * which keeps the address, the bytes, the kind and the holder itself;
 * this is the reporter's domain. 48 bytes: with the set's 56, an entry
 * is 104 (two cache lines). */
struct model_live {
	uint64_t bytes;
	uint64_t stream; /* the allocation's stream, 0 when none */
	/* who holds it now: the allocating stack, or for a mapped VMM handle
	 * the stack of its first live mapping (model-vmm.c) */
	int64_t stack;
	uint32_t site, holder; /* that stack's indices in sites / stacks */
	uint32_t pool;	       /* index in pools, or MODEL_NONE */
	uint32_t op;	       /* index in ops, or MODEL_NONE */
	int32_t device;
	uint8_t mem; /* enum mt_mem_kind: only kinds the model tracks are ever live */
	bool cupti : 1; /* seen by CUPTI alone (model-cupti.c) */
	/* counted in the timeline's tables by stream and by thread
	 * (model-timeline.c), in these slots of them */
	bool tl_live : 1;
	uint8_t tl_stream, tl_thread;
};

static_assert(sizeof(struct model_live) == 48, "a live set entry is two cache lines");

/* What the last allocation of a stack resolved to (model.stack_memo). */
struct model_stack_memo {
	int kind; /* its site's kind and id, as model_site_for keys them */
	int64_t id;
	uint32_t site; /* index in sites; MODEL_NONE before the stack's first */
};

/* What every allocation of one of the reader's sites resolves to
 * (model.site_memo), once the first has. */
struct model_site_memo {
	bool valid;
	uint32_t site, holder, op; /* as model_live's */
};

/* Which totals a memory kind adds to: device-side (the device's, its
 * site's, its stack's), the host's, listed apart (reserves, imports,
 * registered host memory), or none. */
enum model_mem_class {
	MODEL_MEM_UNTRACKED,
	MODEL_MEM_DEVICE_SIDE,
	MODEL_MEM_HOST,
	MODEL_MEM_APART
};

static inline enum model_mem_class model_mem_class(int mem)
{
	if (model_mem_is_device(mem)) /* graph memory: live only while physical (model-graph.c) */
		return MODEL_MEM_DEVICE_SIDE;
	switch (mem) {
	case MT_MEM_HOST_PINNED:
		return MODEL_MEM_HOST;
	case MT_MEM_VMM_RESERVED:
	case MT_MEM_IMPORTED:
	case MT_MEM_HOST_REGISTERED:
		return MODEL_MEM_APART;
	}
	return MODEL_MEM_UNTRACKED;
}

/* ---- model-base.c: below every other file of the model ---- */

/* The site of an allocation at stack, as the reader resolved it (an
 * unset site: its stack). */
uint32_t model_site_for(struct model *m, const struct site_ref *site, int64_t stack);
uint32_t model_stack_for(struct model *m, int64_t stack);
/* The first site a stack's memory went to (model_site_key). */
void model_stack_site(struct model *m, uint32_t holder, uint32_t site);
/* A stack allocated at site: counted in its distinct stacks, once. */
void model_site_add_stack(struct model *m, uint32_t site, uint32_t holder);
uint32_t model_op_for(struct model *m, int64_t op);
/* What an allocation counts towards before it is live, and its site,
 * holder and op in rec: its kind, class, site, pool, device. */
void model_count_alloc(struct model *m, const struct trace_event *ev, const struct site_ref *site,
		       struct model_live *rec);
/* Put rec live at address (what was live there is dropped: a free memtrace
 * did not see). Returns the record in the live set, valid until the next
 * change of it. */
struct model_live *model_live_insert(struct model *m, uint64_t address,
				     const struct model_live *rec, int64_t time_ns);
/* Count rec as live / no longer live in every total it belongs to. */
void model_live_add(struct model *m, const struct model_live *rec, int64_t time_ns);
void model_live_sub(struct model *m, const struct model_live *rec);
/* Move the bytes of a live device-side rec to another holder: the totals
 * and the peak do not change, the sites and stacks do. */
void model_live_move(struct model *m, struct model_live *rec, int64_t stack, uint32_t site,
		     uint32_t holder);
/* Take back what model_count_alloc counted for rec's kind and class. */
void model_uncount_alloc(struct model *m, const struct model_live *rec);
/* A free of rec's kind happened (delta 1) or was undone (delta -1). */
void model_count_free(struct model *m, int mem, int delta);
/* Allocations and frees a flight trace summed (model-flight.c): counted
 * in their kind and class, never live. */
void model_count_trimmed(struct model *m, int mem, uint64_t allocs, uint64_t bytes, uint64_t frees);
/* Before a site's (an op's) live bytes are read or change: what it held
 * at the last peak saved, if the peak came after its last change (the
 * lazy epoch, trace_live_touch). */
void model_site_touch(struct model *m, struct model_site *s);
void model_op_touch(struct model *m, struct model_op *op);

/* ---- model.c: the pass, on top ---- */
/* The live set, its payload a struct model_live (model.h, live), with
 * the hooks that reach the graphs, CUPTI and the moment. */
void model_live_init(struct model *m);

/* ---- model-flight.c ---- */
/* In model_finish, the site peaks settled: add what left the ring of
 * m->flight; the peak, OOMs and marks before it from the writer's live
 * sets. */
void model_flight_finish(struct model *m);

/* ---- model-vmm.c ---- */

/* ---- model-actions.c: the changes before the moment ---- */
/* The moment is wanted and not yet taken. */
static inline bool model_moment_recording(const struct model *m)
{
	return m->moment.wanted && !m->moment.taken;
}
/* What the moment shows: device-side memory with an address. */
bool model_moment_shown(const struct model_live *rec);
/* An entry of m->live becomes live (live) or stops being live. */
void model_moment_live(struct model *m, uint64_t address, const struct model_live *rec,
		       bool live, int64_t time_ns);
/* A VMM handle's memory is shown at va from now on (mapped), or no more. */
void model_moment_map(struct model *m, uint64_t va, const struct model_live *handle,
		      bool mapped);
void model_moment_oom(struct model *m, const struct trace_event *ev);

/* ---- model-moment.c: the moment taken ---- */
void model_moment_fini(struct model *m);
/* After each event: take the moment when it is due. */
void model_moment_after(struct model *m, const struct trace_event *ev);
/* At the end: take it now if it is still due. */
void model_moment_finish(struct model *m);

/* ---- model-graph.c, for the moment ---- */
/* The handle of the graph whose allocation is at address, 0 when none. */
uint64_t model_graph_of(const struct model *m, uint64_t address);

/* A live VMM handle the moment shows, at the address of its first live
 * mapping; iterate with pos = 0 first. */
bool model_vmm_next_shown(const struct model *m, size_t *pos, uint64_t *va,
			  const struct model_live **rec);

void model_vmm_init(struct model *m);
void model_vmm_fini(struct model *m);
/* The live set's hook: the handle a's first live mapping is at va now
 * (0: none), where the moment shows its memory. */
void model_vmm_first_map(void *ctx, const struct trace_live_alloc *a, uint64_t va);
void model_vmm_map(struct model *m, const struct trace_event *ev);
void model_vmm_unmap(struct model *m, const struct trace_event *ev);
void model_vmm_unmap_error(struct model *m, const struct trace_event *ev);

/* ---- model-device.c ---- */

void model_device_init(struct model *m);
void model_device_fini(struct model *m);
/* The device with ordinal id, added when first asked for; NULL for id < 0. */
struct model_device *model_device_for(struct model *m, int id);
/* The counter of device-side bytes live on device id (or on no known device). */
uint64_t *model_device_live(struct model *m, int id);
/* A device-side allocation succeeded: remember the first few per device. */
void model_device_alloc(struct model *m, const struct trace_event *ev);
/* An OOM: its device's total, when nothing else gave it. */
void model_device_oom(struct model *m, const struct trace_event *ev);

/* model_device_live for a device already seen with a small id, inline
 * (twice an allocation); the rest through model_device_live. */
static inline uint64_t *model_device_live_fast(struct model *m, int id)
{
	if (id >= 0 && id < MODEL_DEVICE_MEMO && m->device_memo[id])
		return &m->devices[m->device_memo[id] - 1].live_bytes;
	return model_device_live(m, id);
}
void model_device_event(struct model *m, const struct trace_event *ev);
/* The pool with this handle (the latest one, after a destroy), added when
 * first seen. */
uint32_t model_pool_for(struct model *m, uint64_t handle);
void model_pool_event(struct model *m, const struct trace_event *ev);
/* Once every event is in: sort the devices, make the notes (model.notes). */
void model_device_finish(struct model *m);

/* ---- model-points.c ---- */

void model_points_init(struct model *m);
void model_points_fini(struct model *m);
/* Before a site's live bytes change: save what it held at the points
 * taken since it last changed. */
void model_points_touch(struct model *m, struct model_site *s);
/* A point now (marks, instantiations); ranges are found in model_points_feed. */
void model_points_add(struct model *m, int kind, const struct trace_event *ev);
/* Every event, before it is applied: the end of a per-build range. */
void model_points_feed(struct model *m, const struct trace_event *ev);
/* After the last event: the end of the last per-build range. */
void model_points_close(struct model *m);
/* After the sites are sorted: marks and growth. */
void model_points_finish(struct model *m);

/* ---- model-graph.c ---- */

void model_graph_init(struct model *m);
void model_graph_fini(struct model *m);
/* An allocation of graph memory (mem graph): an alloc node or a capture's. */
void model_graph_alloc(struct model *m, const struct trace_event *ev);
/* Graph events (graph_create ... graph_free_node). */
void model_graph_event(struct model *m, const struct trace_event *ev);
/* A free outside the graph released live graph memory at address
 * (freed) or a free_error put it back (!freed). */
void model_graph_freed(struct model *m, uint64_t address, bool freed);
/* A device allocation (mem device) while graphs.capturing: a capture
 * segment when its thread is capturing. */
void model_graph_device_alloc(struct model *m, const struct trace_event *ev);
/* A free of device memory at address (freed) or a free_error that put it
 * back (!freed), when graphs.segments: a capture segment's ends. */
void model_graph_device_freed(struct model *m, uint64_t address, bool freed);
/* A free of graph memory that is not live (never launched): true when
 * the address is graph memory at all. */
bool model_graph_known(const struct model *m, uint64_t address);
/* The --at-mark mark. */
void model_graph_at_mark(struct model *m, const struct trace_event *ev);
/* A graph (or exec, of graph) only CUPTI saw, created at time, destroyed
 * at until (-1: never). */
void model_graph_alone(struct model *m, bool exec, uint64_t handle, uint64_t graph, int64_t time,
		       int64_t until);
/* Physical bytes held by the graph pools of device (any device: -1). */
uint64_t model_graph_reserved_on(const struct model *m, int device);
void model_graph_finish(struct model *m);

/* ---- model-cupti.c ---- */

void model_cupti_init(struct model *m);
void model_cupti_fini(struct model *m);
/* An event CUPTI saw (source = CUPTI). */
void model_cupti_event(struct model *m, const struct trace_event *ev);
/* A hooked allocation is live: it waits for its CUPTI record. True when
 * that record came first (it was counted as CUPTI's alone, and no longer
 * is). */
bool model_cupti_hooked(struct model *m, const struct trace_event *ev);
/* A hooked free of live memory at address, or (undo) its free_error. */
void model_cupti_hooked_free(struct model *m, uint64_t address, int64_t time_ns, bool undo);
/* A hooked graph or exec event (graph_create ... exec_destroy). */
void model_cupti_graph_hooked(struct model *m, const struct trace_event *ev);
/* Live allocations seen by CUPTI alone: how many, and as leak groups. */
size_t model_cupti_alone_live(const struct model *m);
size_t model_cupti_leaks(const struct model *m, struct model_group *out);
void model_cupti_mark(struct model *m, const struct trace_event *ev);
void model_cupti_finish(struct model *m);

/* model-torch.c: a framework allocator's actions (MT_EV_TENSOR_*,
 * MT_EV_CACHE_*): its segments and the tensors' blocks inside them. */
void model_torch_event(struct model *m, const struct trace_event *ev);
void model_torch_device_alloc(struct model *m, const struct trace_event *ev);
void model_torch_device_free(struct model *m, const struct trace_event *ev);
/* A CUDA OOM: the cache as it was then, into o->framework. */
void model_torch_at_oom(struct model *m, struct model_oom *o);
void model_torch_finish(struct model *m);
/* No CUDA OOM since the allocator's last OOM (or its first). */
bool model_torch_oom_alone(const struct model *m);
void model_torch_oom_recovered(struct model *m);
/* A segment of the allocator's (PyTorch's cache, TensorFlow's BFC arena
 * region) begins at address and is still held: what is live there is
 * the framework's cache, not the program's leak. */
bool model_torch_holds(const struct model *m, uint64_t address);
/* The cache now into f (freeing what f held). */
void model_torch_moment(const struct model *m, struct model_framework *f);
void model_framework_free(struct model_framework *f);
void model_torch_fini(struct model *m);
