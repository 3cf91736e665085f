/* The model: what one ordered pass over a trace's events establishes —
 * the live set, the device peak and who held it, every out-of-memory
 * failure with the live set at that moment, and what was live at the end.
 * Renderers only read it. Fed event by event (model_feed), so tests build
 * models from hand-written sequences without a trace file.
 *
 * Memory kinds (docs/trace-format.md) fall in three classes: device-side
 * (device, managed, pool, vmm_physical, array, and graph memory while a
 * launch has made it physical), counted in `device`, the peak, the sites
 * and the OOM holders; pinned host, counted in `host`; and the kinds
 * listed apart (vmm_reserved, imported, host_registered), which are not
 * memory this process allocated. Every kind also has its own totals in
 * `kinds`.
 *
 * Beyond memory: sites by the user's frame (the reader resolves them,
 * model-site.c), NVTX ops, marks and growth (model-points.c), CUDA graph
 * lifetimes (model-graph.c) and CUPTI's records checked against the
 * hooks' (model-cupti.c); docs/report-json.md states each rule. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-cause.h"
#include "trace-event.h"
#include "trace-live-set.h"
#include "trace-schema.h"
#include "util-map.h"

struct trace;

/* OOMs whose live set is kept: the first MODEL_OOM_SNAPSHOTS - 1 and the
 * most recent one (the failure the program usually died of); the
 * writer's live_at_oom keeps the same (trace-live-set.h). */
#define MODEL_OOM_SNAPSHOTS TRACE_LIVE_OOMS_KEPT
/* Memory kinds are 1..MODEL_MEM_KINDS - 1 (MT_MEM_*). */
#define MODEL_MEM_KINDS 11
/* The preallocation note looks at this many first device-side allocations
 * of each device, for one of at least MODEL_ARENA_SHARE of the device
 * (docs/report-json.md). */
#define MODEL_EARLY_ALLOCS TRACE_EARLY_ALLOCS
#define MODEL_ARENA_SHARE TRACE_ARENA_SHARE

/* Rounds (trace/trace-cause.h, shared with the library's answer on
 * stderr): what a stack kept from round to round, judged by events alone
 * (model.c, charge), for the cause of an OOM or of leaks
 * (report/render/diagnose.c). */
/* Allocations grouped by stack (and memory kind, for leaks). */
struct model_group {
	int64_t stack;
	uint64_t bytes;
	uint64_t count;
	int mem; /* MT_MEM_*; 0 for OOM holders, which mix device-side kinds */
	/* leaks only: segments a framework's allocator still held at the end
	 * (PyTorch's cache, TensorFlow's BFC arena), its cache and not the
	 * program's leak (model_torch_holds) */
	bool cache;
	struct trace_rounds rounds; /* its stack's, device-side memory */
};

/* The live bytes of a site from point `first` on (model-points.c). */
struct model_run {
	size_t first;
	uint64_t value;
};

struct model_site {
	/* first, the 64 bytes each allocation and free of the site changes
	 * (model.c, charge): in one or two cache lines */
	uint64_t live; /* device bytes live now (at the end, after model_finish) */
	uint64_t at_peak;
	uint64_t live_count, at_peak_count; /* its allocations live now, at the peak */
	uint64_t total_bytes;
	uint64_t count;
	uint64_t epoch; /* peak epoch at_peak was last brought up to date for */
	/* its live bytes at each point: runs, and the points they cover */
	size_t points_saved;
	struct model_run *runs;
	size_t n_runs, cap_runs;

	uint64_t key;	/* unique, stable across the sort: model_site_key() */
	int kind;	/* enum site_kind: what groups its allocations */
	int64_t id;	/* a frame index, an op id, a stack id or a module index */
	uint32_t depth; /* of its frame in `stack` (python, native) */
	int64_t caller; /* python, native: the caller's frame index + 1 it is
			 * told apart by (struct site_ref), or 0 */
	int64_t stack;	/* stack of its first allocation */
	uint64_t stacks; /* distinct stacks among its allocations */
	uint64_t maps, mapped_bytes; /* cuMemMap calls made here, of handles seen created */
	/* the op it allocated the most bytes under */
	bool has_op;
	int64_t op;
	uint64_t op_bytes;
};

/* Device memory by the innermost NVTX range it was allocated under. */
struct model_op {
	int64_t id; /* ops.id */
	uint64_t live, at_peak, total_bytes, count;
	uint64_t epoch;
};

/* Moments the live set is looked at: marks, the end of each range of a
 * per-build series, graph instantiations, and the ends of
 * MODEL_SPAN_POINTS spans of the trace, of as many events each
 * (model-points.c). */
enum model_point_kind {
	MODEL_POINT_MARK = 1,
	MODEL_POINT_RANGE,
	MODEL_POINT_INSTANTIATION,
	MODEL_POINT_SPAN,
};

/* The span points: the ends of this many spans of the trace's events. */
#define MODEL_SPAN_POINTS 8

struct model_point {
	int kind;
	int64_t seq, time_ns, api, stack;
	bool has_op;
	int64_t op;	/* mark: its label; range: the range that ended */
	int mark_kind;	/* enum mark_kind */
	uint64_t exec, graph; /* instantiation */
	uint64_t live_bytes, live_count; /* device memory */
};

struct model_site_bytes {
	uint32_t site; /* index in sites after model_finish */
	uint64_t bytes;
};

/* Marks whose live sites are kept: the first MODEL_MARK_SNAPSHOTS - 1
 * and the last. Growth looks at MODEL_GROWTH_POINTS points at most. */
#define MODEL_MARK_SNAPSHOTS TRACE_LIVE_MARKS_KEPT
#define MODEL_GROWTH_POINTS 1024

/* After model_finish: each mark, with the sites live then, largest first. */
struct model_mark {
	size_t point; /* index in points */
	bool has_sites; /* false past the snapshot cap */
	struct model_site_bytes *sites;
	size_t n_sites;
};

struct model_growth_site {
	uint32_t site;
	uint64_t *live;	    /* at each growth point */
	int64_t per_point;  /* the median step */
	bool growing;
};

struct model_growth {
	int basis; /* enum model_point_kind; 0: fewer than two points of any kind */
	size_t *points; /* indices in model.points */
	size_t n_points;
	size_t thinned_from; /* candidates, when there were more than MODEL_GROWTH_POINTS; else 0 */
	struct model_growth_site *sites; /* growing first, then by per_point */
	size_t n_sites;
	size_t n_moving; /* sites whose live bytes are not the same at every point */
};

/* CUDA graphs (model-graph.c). */
enum model_orphan_kind { MODEL_ORPHAN_GRAPH, MODEL_ORPHAN_EXEC };

struct model_orphan {
	int kind; /* enum model_orphan_kind */
	uint64_t handle;
	uint64_t graph; /* an exec's graph */
	int64_t stack;	/* that created it */
	int64_t time_ns;
	/* graph memory it keeps reachable on its own: its graph's live
	 * allocations, and its transient ones while the graph is mapped; 0 for
	 * a graph whose exec is an orphan too (the exec's row has them) */
	uint64_t pinned_bytes;
	/* of pinned_bytes, its graph's capture segments that are live: device
	 * memory its capture's thread allocated while it ran (model-graph.c) */
	uint64_t segment_bytes;
	bool pinned_by_exec; /* a graph with an orphaned exec: pinned_bytes is 0 */
	uint64_t launches;
};

struct model_graph_leak {
	int64_t stack;
	uint64_t graph;
	uint64_t bytes, count;
};

struct model_graph_priv;

struct model_graphs {
	uint64_t created, destroyed, execs_created, execs_destroyed;
	uint64_t launches, uploads, failed_launches;
	uint64_t alloc_nodes, captured_allocs, free_nodes, captured_frees;
	uint64_t unattached; /* captured memory nodes of a capture that made no graph */
	/* device allocations made by a capturing thread during captures that
	 * made a graph (capture segments, model-graph.c), and their bytes */
	uint64_t capture_segments, capture_segment_bytes;
	bool capturing; /* a capture is running: allocations may be segments */
	bool segments;	/* some allocation was: frees may end one */
	/* physical memory the graph pools hold, live graph memory included; of
	 * it, what no live allocation uses */
	uint64_t pool_bytes, pool_peak, pool_reserved;
	uint64_t trims;
	/* orphans as of the --at-mark mark when it was seen, else the end */
	bool at_mark;
	int64_t at_seq, at_time_ns;
	struct model_orphan *orphans; /* after model_finish */
	size_t n_orphans;
	/* what the orphaned execs, and all orphans, keep reachable together:
	 * each graph once, and the transient memory of graphs mapped at once
	 * no more than the pool holds beyond live memory (they share it) */
	uint64_t orphan_execs_pinned, orphans_pinned;
	struct model_graph_leak *never_freed; /* after model_finish, by bytes */
	size_t n_never_freed;
	struct model_graph_priv *priv;
};

/* CUPTI's records checked against the hooks' (model-cupti.c). */
struct model_cupti_module {
	int64_t module; /* trace module index, -1 unknown */
	uint64_t count, bytes;
};

struct model_cupti_priv;

struct model_cupti {
	bool on; /* CUPTI's "on" mark: it watched (docs/cupti.md) */
	uint64_t records, allocs; /* its events; its compared allocations */
	uint64_t matched, matched_bytes;
	uint64_t alone_count, alone_bytes, alone_live_bytes; /* seen by CUPTI alone */
	struct model_cupti_module *by_module; /* after model_finish, by bytes */
	size_t n_by_module, cap_by_module;
	uint64_t unconfirmed, unconfirmed_bytes; /* hooked, no CUPTI record */
	uint64_t graphs_matched, graphs_alone, graphs_alone_never_destroyed;
	uint64_t execs_alone, execs_alone_never_destroyed;
	struct model_cupti_priv *priv;
};

/* A block of a framework's segment, as torch's memory_snapshot() lists
 * them: the blocks cover their segment end to end, a free range between
 * two blocks in use being one block (torch merges free neighbours). */
enum model_fw_state {
	MODEL_FW_ALLOCATED, /* held by a tensor: "active_allocated" */
	MODEL_FW_PENDING,   /* freed, its free not completed: "active_pending_free" */
	MODEL_FW_FREE,	    /* "inactive" */
};

struct model_fw_block {
	uint64_t address, size;
	uint64_t requested; /* what the tensor asked for; 0 when free */
	int64_t stack;	    /* 0: none (a free range) */
	int state;	    /* enum model_fw_state */
};

struct model_fw_segment {
	uint64_t address, size, stream;
	int64_t stack;	 /* the segment's allocation (its first mapping) */
	int device;
	bool expandable; /* made of mappings (expandable_segments) */
	size_t first, n; /* its blocks in model_framework.blocks */
};

/* A tensor a framework's allocator made (model-torch.c): its stack, its
 * block's bytes, the seqs of the event that made it and of the one that
 * released it (INT64_MAX while live). */
/* A device (or managed) allocation of the process while the tensors
 * were traced (model-torch.c): cache says it became one of the cache's
 * segments; the others are memory beside the cache (libraries'
 * handles). */
struct model_outside {
	int64_t seq, gone; /* gone: INT64_MAX while live */
	uint64_t bytes;
	bool cache;
};

struct model_tensor {
	int64_t stack;
	uint64_t bytes, requested; /* the block's; what the tensor asked for */
	int64_t made, gone;
};


/* A framework's cache at one moment (model-torch.c): what its tensors
 * hold inside the segments it took from the device (PyTorch's caching
 * allocator, from its own actions in the trace). */
struct model_framework {
	bool has; /* the trace has the allocator's actions up to here */
	bool has_request; /* requested is known (the allocator's own OOM) */
	bool bfc; /* TensorFlow's BFC arena (frameworks/tensorflow-bfc.c), not PyTorch's cache */
	uint64_t requested; /* the block the allocator was asked for */
	uint64_t allocated; /* bytes of blocks held by tensors: memory_allocated() */
	uint64_t reserved; /* bytes of its segments: memory_reserved() */
	uint64_t peak_allocated; /* allocated at its highest so far: max_memory_allocated() */
	uint64_t largest_free; /* the largest free range inside a segment */
	uint64_t tensors; /* blocks held by tensors */
	/* At the end only: tensors were released after the last one was made
	 * (as the program's functions returned, or at Python's exit; nothing
	 * in the trace tells those apart): the figures right after that last
	 * tensor, the moment a user's last line of figures usually reads. */
	bool has_last;
	int64_t last_seq, last_time_ns, last_stack;
	uint64_t last_allocated, last_reserved, last_tensors;
	struct model_group *holders; /* by the tensor's stack, largest first */
	size_t n_holders; /* shown: at most HOLDERS_KEPT (model-torch.c) */
	size_t n_groups;  /* all of them, holders[n_holders..] too: roles add them all */
	/* every segment by address, with its blocks; blocks_cut: past
	 * MODEL_FW_BLOCKS_KEPT, the segments after it have none listed */
	struct model_fw_segment *segments;
	size_t n_segments;
	struct model_fw_block *blocks;
	size_t n_blocks;
	bool blocks_cut;
};

#define MODEL_FW_BLOCKS_KEPT 200000 /* per moment */

struct model_oom {
	int64_t seq, time_ns, api, stack;
	/* The stack of the thread that failed, when the failure reached the
	 * program on another thread (an MT_EV_OOM_RAISED: TensorFlow's
	 * executor threads); stack is then where it was raised. 0: none. */
	int64_t failed_stack;
	int device; /* -1: unknown */
	uint64_t requested;
	int mem;
	uint64_t live_bytes, live_count; /* device memory live at the failure */
	uint64_t round; /* the round in progress (struct trace_rounds) */
	uint64_t round_bytes; /* device bytes allocated in it and still live */
	bool has_request_rounds; /* the failing stack allocated before */
	struct trace_rounds request_rounds; /* the failing stack's */
	bool has_device_free, has_device_total;
	int64_t device_free, device_total;
	/* in use on the device beyond what the process's own allocations
	 * explain; known when device_free and device_total are */
	bool has_unexplained;
	uint64_t unexplained_bytes;
	uint64_t cupti_alone_bytes; /* of live_bytes, seen by CUPTI alone */
	bool has_holders; /* false when past the snapshot cap */
	struct model_group *holders; /* by bytes, largest first */
	size_t n_holders;
	/* A retry: the same request failed before on this thread with no
	 * allocation of the thread's between, as a framework retries after
	 * emptying its cache (one episode). retry_of is the seq of the
	 * episode's first failure, 0 when this one starts an episode;
	 * released_*: device memory freed since the failure before it. */
	int64_t retry_of;
	uint64_t released_bytes, released_count;
	/* The episode's request then succeeded: its next allocation on the
	 * thread was the same call, and no framework raised an OOM for it
	 * (PyTorch's allocator flushed its cache and retried). The program
	 * saw no OOM. Set on each failure of the episode; recovered_* on the
	 * last: device memory freed between it and the success. */
	bool recovered;
	uint64_t recovered_bytes, recovered_count;
	struct model_framework framework; /* the cache's tensors at the failure */
	/* A framework allocator refused the request by a cap of its own, no
	 * CUDA call failing (PyTorch's set_per_process_memory_fraction):
	 * limit_bytes the cap (0: not in the trace), own_device_free what the
	 * device had free as the allocator read it. */
	bool allocator_own, has_own_device_free;
	uint64_t limit_bytes;
	int64_t own_device_free;
};

struct model_mem {
	uint64_t allocations, frees, bytes_allocated;
	uint64_t live_bytes, live_count;
	uint64_t peak_bytes;
	int64_t peak_time_ns;
};

struct model_pool {
	uint64_t handle;
	bool created, destroyed; /* a pool_create / pool_destroy was seen */
	int64_t created_stack;	 /* 0 when not created in the trace */
	uint64_t allocations, bytes_allocated, trims;
	uint64_t live_bytes, live_count;
};

struct model_early_alloc {
	int64_t seq, time_ns, api, stack;
	uint64_t bytes;
	int mem; /* its kind: an arena is the first of its kind */
};

struct model_device {
	int id;
	bool has_info; /* from a device event or the devices table */
	bool has_total, has_free;
	uint64_t total, free_at_first_use; /* total may come from an OOM */
	uint64_t live_bytes; /* device-side bytes live on it */
	struct model_early_alloc early[MODEL_EARLY_ALLOCS];
	size_t n_early;
};

enum model_note_kind {
	MODEL_NOTE_PREALLOCATION = 1,
};

struct model_note {
	enum model_note_kind kind;
	int64_t seq, time_ns, api, stack;
	int device;
	uint64_t bytes, device_total;
};

/* private to model*.c */
struct model_live;
struct model_stack_live {
	int64_t stack;
	uint64_t bytes, count;
	uint64_t site_key; /* the site of its first allocation */
	/* its rounds (trace/trace-cause.h); its live bytes are `bytes` */
	struct trace_round_stack rounds;
	/* the device of its device-side allocations: MODEL_DEVICE_NONE before
	 * the first, MODEL_DEVICE_MIXED once two devices are seen */
	int device;
};
#define MODEL_DEVICE_NONE (-2)
#define MODEL_DEVICE_MIXED (-3)
struct model_stack_memo;
struct model_site_memo;

/* The live set at one moment and the changes that led to it
 * (model-moment.c), for the torch-snapshot export: device-side memory
 * that has an address (allocations, graph memory while a launch made it
 * live, VMM mappings), not pinned host memory, not VMM handles (their
 * mappings stand for them), not what CUPTI alone saw. Off unless wanted
 * is set before the pass. */
enum model_action_kind {
	MODEL_ACTION_ALLOC, /* became live */
	MODEL_ACTION_FREE,  /* stopped being live */
	MODEL_ACTION_MAP,   /* a VMM mapping */
	MODEL_ACTION_UNMAP,
	MODEL_ACTION_OOM, /* bytes: the request; device_free as the OOM said */
};

struct model_action {
	int64_t seq, time_ns;
	uint64_t address, bytes, stream;
	int64_t stack;
	uint64_t device_free;
	int kind; /* enum model_action_kind */
	int mem, device;
	bool has_device_free;
};

struct model_block {
	uint64_t address, bytes, stream;
	int64_t stack;
	int mem, device;
	uint64_t graph; /* graph memory: its graph's handle (0: none known) */
	bool mapping;	/* a VMM mapping */
};

/* actions kept: the most recent ones before the moment */
#define MODEL_MOMENT_ACTIONS 100000

struct model_moment {
	/* set before the pass: take it after the event seq, or at the first
	 * --at-mark mark when at_mark, else at the end */
	bool wanted, at_mark;
	int64_t seq; /* -1: not by seq */
	/* after the pass */
	bool taken;
	int64_t at_seq, time_ns;
	struct model_block *blocks; /* by address */
	size_t n_blocks;
	struct model_action *actions; /* a ring: the oldest at head */
	size_t n_actions, head;
	uint64_t actions_dropped;
	struct model_framework framework; /* the framework's cache then */
};

struct model {
	struct model_mem device; /* device-side kinds together */
	struct model_mem host;	 /* pinned host */
	struct model_mem kinds[MODEL_MEM_KINDS]; /* each kind, by MT_MEM_* */
	uint64_t events;
	uint64_t unmatched_frees;  /* frees of addresses not live (and not failed) */
	uint64_t alloc_errors;	   /* failed allocations other than OOM */
	uint64_t free_errors;
	uint64_t reused_addresses; /* allocations (or mappings) at an address still live */
	uint64_t untracked_allocs; /* allocations without address or memory kind */
	uint64_t unknown_events;   /* event kinds this version does not know */
	uint64_t tensor_events;    /* a framework allocator's actions (MT_EV_TENSOR_*, MT_EV_CACHE_*) */
	/* JAX's arrays in XLA's arena (api XlaPjrt, interpose/frameworks/
	 * xla-pjrt.c): not modelled yet, only counted; the caller sets the
	 * api's id before the events (-1: the trace has none) */
	int64_t xla_arrays_api;
	uint64_t xla_array_events;
	struct model_torch *torch; /* their state (model-torch.c); NULL: none */
	struct model_framework framework_peak; /* when its reserved bytes peaked (a BFC arena: its allocated bytes) */
	struct model_framework framework_end;
	uint64_t unmatched_maps;   /* maps of a handle not live (or no handle) */
	uint64_t unmatched_unmaps; /* unmaps of a range not mapped (and not failed) */
	uint64_t unmap_errors;
	uint64_t unknown_device_live; /* device-side bytes live on an unknown device */
	int64_t last_time_ns;
	/* rounds (struct trace_rounds): the one in progress; memory given
	 * back since its last device-side allocation */
	struct trace_round_run rounds;

	struct model_site *sites; /* sorted by at_peak after model_finish */
	size_t n_sites, cap_sites;
	struct map site_index[SITE_KINDS]; /* site id -> index in sites, per kind */
	struct map site_stacks; /* site << 32 | stack index, during the pass */
	struct map site_ops;    /* site << 32 | op index -> bytes, during the pass */
	uint64_t peak_epoch;

	struct model_op *ops; /* sorted like sites after model_finish */
	size_t n_ops, cap_ops;
	struct map op_index; /* op id -> index in ops */

	struct model_point *points; /* in seq order */
	size_t n_points, cap_points;
	struct model_mark *marks; /* after model_finish */
	size_t n_marks;
	struct model_growth growth; /* after model_finish */
	bool in_build, builds_revisited; /* the series of per-build ranges */
	int64_t build, build_op;
	struct map builds_seen;
	int64_t last_seq;
	/* the trace's events (its last seq + 1), for the span points: set
	 * before the pass; 0 (a flight trace) makes none */
	int64_t span_events;
	size_t n_span_points; /* made so far */

	struct model_graphs graphs;
	struct model_cupti cupti;

	/* device bytes live per stack, kept up to date so an OOM snapshot costs
	 * one walk over stacks rather than over all live allocations */
	struct model_stack_live *stacks;
	size_t n_stacks, cap_stacks;
	struct map stack_index;
	/* parallel to stacks, during the pass: the site its last allocation
	 * resolved to, so that the next one from the same stack and op costs
	 * no lookup in site_index or site_stacks */
	struct model_stack_memo *stack_memo;
	size_t cap_stack_memo;
	/* by the reader's site (trace_event.site_slot): what its allocations
	 * resolve to, which is the same for all of them */
	struct model_site_memo *site_memo;
	size_t cap_site_memo;

	struct model_moment moment; /* model-moment.c */
	/* the live set (trace/trace-live-set.h): its rules, the frees
	 * remembered, VMM handles and mappings; each entry's payload is a
	 * struct model_live (model-internal.h), told of changes through its
	 * hooks (model.c) */
	struct trace_live_set live;
	int64_t live_time_ns; /* the time of the change being made */
	bool live_unmap_error; /* the change is an unmap_error's */
	struct model_live *just_live; /* the entry the last change made live */

	/* VMM (model-vmm.c): handle -> the address the moment shows its
	 * memory at (its first live mapping's), while it has one */
	struct map vmm_shown;

	/* pools and devices (model-device.c), in the order first seen */
	struct model_pool *pools;
	size_t n_pools, cap_pools;
	struct map pool_index; /* handle -> index of its latest pool */
	struct model_device *devices; /* by id after model_finish */
	size_t n_devices, cap_devices;
	struct map device_index; /* id -> index in devices */
	/* the same for ids below MODEL_DEVICE_MEMO: index + 1, 0 when not seen */
#define MODEL_DEVICE_MEMO 64
	uint32_t device_memo[MODEL_DEVICE_MEMO];

	struct model_oom *ooms;
	size_t n_ooms, cap_ooms;
	size_t n_oom_episodes; /* ooms that are no retry, nor recovered */
	size_t n_recovered_episodes; /* episodes whose request then succeeded */
	/* the last OOM while its episode may go on: its thread, and what was
	 * freed since (model.c, on_oom) */
	bool oom_open;
	int64_t oom_thread;
	uint64_t oom_released_bytes, oom_released_count;
	size_t oom_snapshots_dropped;
	size_t last_snapshot; /* index of the OOM in the rolling last slot */

	struct model_group *leaks; /* after model_finish, by bytes */
	size_t n_leaks;
	struct model_note *notes; /* after model_finish, by time */
	size_t n_notes;
	bool finished;
	/* optional: fed before each event when set (model-timeline.h); the caller owns it */
	struct model_timeline *timeline;
	int64_t timeline_from_seq; /* events before it are not fed to the timeline */
	bool timeline_on;	   /* the event being fed is the timeline's */
	/* a flight-mode trace (model-flight.c): what left its ring is added at
	 * model_finish. Set before the pass; NULL for a full trace. */
	const struct trace *flight;
};

/* The device a stack's device-side allocations were made on: an ordinal,
 * -1 unknown, MODEL_DEVICE_NONE (no allocation) or MODEL_DEVICE_MIXED. */
int model_stack_device(const struct model *m, int64_t stack);

void model_init(struct model *m);
void model_fini(struct model *m);

/* The key of the site the allocations of stack went to (the first one's,
 * when its allocations went to several sites by their op); 0 when the
 * stack allocated nothing on the device. */
uint64_t model_site_key(const struct model *m, int64_t stack);

/* What stack kept round after round (struct trace_rounds); open: count
 * the round in progress as ended (at the end of the run), else leave it
 * out and give what it added in open_bytes (at an OOM). False when the
 * stack made no device-side allocation. */
bool model_stack_rounds(const struct model *m, int64_t stack, bool open,
			struct trace_rounds *out);

/* Bytes a site held live at point k (an index in points). */
uint64_t model_site_at_point(const struct model_site *s, size_t k);

/* True for the kinds counted as device memory: the live set's peak kinds
 * (trace-live-set.h: device, managed, pool, vmm_physical, array) and
 * graph memory while it is physical (model-graph.c). Inline: several
 * calls an event. */
#define MODEL_DEVICE_KINDS (TRACE_LIVE_PEAK_KINDS | 1u << MT_MEM_GRAPH)

static inline bool model_mem_is_device(int mem)
{
	return (unsigned)mem < 32 && (MODEL_DEVICE_KINDS >> mem & 1);
}

/* A row of the devices table; device events say the same. */
void model_device_info(struct model *m, int device, uint64_t total, bool has_free,
		       uint64_t free_at_first_use);

/* Events must come in seq order. */
void model_feed(struct model *m, const struct trace_event *ev);

/* ev comes soon: ask the memory for what model_feed will look up of it.
 * Called twice (trace_ahead_fn): first for the live set's slot and the
 * site's memo, then (near) for what they point to. */
void model_prefetch(const struct model *m, const struct trace_event *ev, bool near);

/* Settle per-site peak values, group leaks, make notes, sort. No
 * model_feed after it. */
void model_finish(struct model *m);
/* Every tensor made, in order, and the seq at which the tensors' bytes
 * (memory_allocated()) were at their peak; none when there were more
 * than the model keeps (model-torch.c). */
const struct model_outside *model_torch_outside(const struct model *m, size_t *n);
const struct model_tensor *model_torch_tensors(const struct model *m, size_t *n,
					       int64_t *peak_seq);
