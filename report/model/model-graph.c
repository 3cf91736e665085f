/* CUDA graphs: graph and exec lifetimes, and graph memory, by the rules
 * of the CUDA programming guide as docs/report-json.md ("graphs") states
 * them:
 *
 * - a graph allocation (an alloc node, or an allocation made on a stream
 *   being captured, which belongs to the graph that stream's next
 *   capture_end makes) is only an address until an exec of its graph is
 *   launched or uploaded: then it is live device memory, at its site;
 * - an allocation freed by a free node of its own graph is transient: it
 *   is never live after a launch, but the launch needed its memory;
 * - live graph memory is freed by a free outside the graph (cudaFree,
 *   cudaFreeAsync), by a free node of another graph when that graph is
 *   launched, or by relaunching an exec made with auto-free-on-launch;
 * - the physical memory comes from the device's graph pool, which reuses
 *   it from graph to graph: a launched (or uploaded) graph stays mapped
 *   while an exec of it lives, until a trim, and keeps its allocations
 *   that are not live mapped; graphs that do not run at once map the same
 *   memory, so a launch grows the pool to the graph memory live on the
 *   device plus the largest mapping there (which covers the launch's own
 *   need: the live memory and its graph's transient allocations at once);
 *   frees leave the pool as it is, and only graph_mem_trim on the device
 *   gives back what live allocations do not use (the CUDA documentation:
 *   what no running or scheduled graph uses; a trace cannot tell that a
 *   launch has finished, so at a trim none is running).
 *
 * Device memory allocated by the thread that began a capture, while it
 * runs (cudaMalloc is allowed there in relaxed mode: PyTorch's caching
 * allocator makes the segments of a graph's private pool so), is a
 * "capture segment" of the graph that capture makes: ordinary device
 * memory, counted as such, that its graph keeps reachable while it lives.
 *
 * Graphs and execs never destroyed are "orphans", with the memory their
 * graph keeps reachable: its live allocations and capture segments, and
 * its others while it is mapped. Together, orphans keep each graph's live memory once and the
 * largest mapping once, no more than the pool holds. */
#include "model-internal.h"

#include <stdlib.h>

#include "trace-schema.h"
#include "util-mem.h"

enum graph_how { HOW_SEEN, HOW_CREATE, HOW_CLONE, HOW_CAPTURE, HOW_CUPTI };

struct gmem {
	uint64_t address, bytes;
	int64_t stack, api;
	int device;
	uint32_t graph;	 /* index in graphs; MODEL_NONE while its capture runs */
	uint64_t stream; /* the capture's stream */
	struct site_ref site;
	bool has_op;
	int64_t op;
	bool live;	/* physical and allocated: in model.live */
	bool transient; /* freed by a free node of its own graph */
	bool uploaded;	/* made live by an upload, not launched since */
	bool dropped;	/* captured by a capture that made no graph */
};

struct graph {
	uint64_t handle;
	int how; /* enum graph_how */
	int64_t stack, time_ns;
	bool destroyed;
	/* launched or uploaded since the last trim, with an exec left: its
	 * execs keep its allocations that are not live mapped in the pool */
	bool mapped;
	uint64_t nonlive; /* bytes of its allocations that are not live */
	uint64_t seg_live; /* bytes of its capture segments that are live */
	uint32_t live_execs;
	uint64_t launches;
	uint32_t *mem; /* its allocations, indices in mem */
	size_t n_mem, cap_mem;
	uint64_t *frees; /* addresses its free nodes free */
	size_t n_frees, cap_frees;
};

struct exec {
	uint64_t handle;
	uint32_t graph;
	bool auto_free, destroyed;
	int64_t stack, time_ns;
	uint64_t launches;
};

struct pending_free {
	uint64_t stream, address; /* stream: the capture's origin */
};

/* A stream that joined a capture (capture_join), until its origin's
 * capture ends: its captured work is the origin's. */
struct join {
	uint64_t stream, origin;
};

/* A device's graph pool: the physical memory it holds, of which live. */
struct gpool {
	int device;
	uint64_t held, live;
};

/* Device memory allocated on a capturing thread (the comment at the top). */
struct segment {
	uint64_t address, bytes;
	uint64_t stream; /* the capture's */
	uint32_t graph;	 /* index in graphs; MODEL_NONE while its capture runs */
	bool live, dropped;
};

/* A capture running: the thread that began it, on its stream. */
struct open_capture {
	int64_t thread;
	uint64_t stream;
};

struct model_graph_priv {
	struct graph *graphs;
	size_t n_graphs, cap_graphs;
	struct map graph_index; /* handle -> index of its latest graph */
	struct exec *execs;
	size_t n_execs, cap_execs;
	struct map exec_index;
	struct gmem *mem;
	size_t n_mem, cap_mem;
	struct map mem_index; /* address -> index of its latest allocation */
	struct pending_free *pfree;
	size_t n_pfree, cap_pfree;
	struct join *joins;
	size_t n_joins, cap_joins;
	struct gpool *pools;
	size_t n_pools, cap_pools;
	struct segment *segs;
	size_t n_segs, cap_segs;
	struct map seg_index; /* address -> index of its latest segment */
	struct open_capture *open;
	size_t n_open, cap_open;
};

void model_graph_init(struct model *m)
{
	struct model_graph_priv *p = xcalloc(1, sizeof(*p));

	map_init(&p->graph_index, sizeof(uint32_t));
	map_init(&p->exec_index, sizeof(uint32_t));
	map_init(&p->mem_index, sizeof(uint32_t));
	map_init(&p->seg_index, sizeof(uint32_t));
	m->graphs.priv = p;
}

void model_graph_fini(struct model *m)
{
	struct model_graph_priv *p = m->graphs.priv;

	if (p) {
		for (size_t i = 0; i < p->n_graphs; i++) {
			free(p->graphs[i].mem);
			free(p->graphs[i].frees);
		}
		free(p->graphs);
		free(p->execs);
		free(p->mem);
		free(p->pfree);
		free(p->joins);
		free(p->pools);
		free(p->segs);
		free(p->open);
		map_fini(&p->seg_index);
		map_fini(&p->graph_index);
		map_fini(&p->exec_index);
		map_fini(&p->mem_index);
		free(p);
	}
	free(m->graphs.orphans);
	free(m->graphs.never_freed);
}

/* ---- records ---------------------------------------------------------- */

static uint32_t graph_new(struct model_graph_priv *p, uint64_t handle, int how,
			  const struct trace_event *ev)
{
	grow_array(&p->graphs, &p->cap_graphs, p->n_graphs + 1, sizeof(*p->graphs));
	p->graphs[p->n_graphs] = (struct graph){
		.handle = handle, .how = how, .stack = how ? ev->stack : 0,
		.time_ns = ev->time_ns,
	};
	*(uint32_t *)xmap_put(&p->graph_index, handle, NULL) = (uint32_t)p->n_graphs;
	return (uint32_t)p->n_graphs++;
}

/* The graph a handle names now; one only named (its creation was not in
 * the trace) is added, uncounted. */
static uint32_t graph_for(struct model_graph_priv *p, uint64_t handle, const struct trace_event *ev)
{
	const uint32_t *idx = map_get(&p->graph_index, handle);

	return idx ? *idx : graph_new(p, handle, HOW_SEEN, ev);
}

static struct exec *exec_find(struct model_graph_priv *p, uint64_t handle)
{
	const uint32_t *idx = map_get(&p->exec_index, handle);

	return idx ? &p->execs[*idx] : NULL;
}

static struct gmem *mem_find(const struct model_graph_priv *p, uint64_t address)
{
	const uint32_t *idx = map_get(&p->mem_index, address);

	return idx ? &p->mem[*idx] : NULL;
}

static void attach_mem(struct model_graph_priv *p, uint32_t graph, uint32_t mem)
{
	struct graph *g = &p->graphs[graph];

	grow_array(&g->mem, &g->cap_mem, g->n_mem + 1, sizeof(*g->mem));
	g->mem[g->n_mem++] = mem;
	p->mem[mem].graph = graph;
	if (!p->mem[mem].live)
		g->nonlive = sat_add(g->nonlive, p->mem[mem].bytes);
}

/* gm becomes live or stops being live: its graph's not-live bytes follow. */
static void set_live(struct model_graph_priv *p, struct gmem *gm, bool live)
{
	struct graph *g = gm->graph < p->n_graphs ? &p->graphs[gm->graph] : NULL;

	if (gm->live == live)
		return;
	gm->live = live;
	if (g)
		g->nonlive = live ? sat_sub(g->nonlive, gm->bytes) : sat_add(g->nonlive, gm->bytes);
}

static void attach_free(struct model_graph_priv *p, uint32_t graph, uint64_t address)
{
	struct graph *g = &p->graphs[graph];
	struct gmem *gm = mem_find(p, address);

	grow_array(&g->frees, &g->cap_frees, g->n_frees + 1, sizeof(*g->frees));
	g->frees[g->n_frees++] = address;
	if (gm && gm->graph == graph)
		gm->transient = true;
}

/* The capture a stream's captured work belongs to: its own, or the one
 * it joined. */
static uint64_t capture_of(const struct model_graph_priv *p, uint64_t stream)
{
	for (size_t i = 0; i < p->n_joins; i++) {
		if (p->joins[i].stream == stream)
			return p->joins[i].origin;
	}
	return stream;
}

static void on_join(struct model_graph_priv *p, const struct trace_event *ev)
{
	if (!ev->stream || !ev->has_address || !ev->address)
		return;
	grow_array(&p->joins, &p->cap_joins, p->n_joins + 1, sizeof(*p->joins));
	p->joins[p->n_joins++] = (struct join){ ev->stream, capture_of(p, ev->address) };
}

/* The capture begun on origin is over: the streams that joined it leave. */
static void joins_end(struct model_graph_priv *p, uint64_t origin)
{
	size_t out = 0;

	for (size_t i = 0; i < p->n_joins; i++) {
		if (p->joins[i].origin != origin && p->joins[i].stream != origin)
			p->joins[out++] = p->joins[i];
	}
	p->n_joins = out;
}

void model_graph_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	uint32_t idx = (uint32_t)p->n_mem;

	grow_array(&p->mem, &p->cap_mem, p->n_mem + 1, sizeof(*p->mem));
	p->mem[idx] = (struct gmem){
		.address = ev->address, .bytes = ev->bytes, .stack = ev->stack, .api = ev->api,
		.device = ev->device, .graph = MODEL_NONE, .stream = capture_of(p, ev->stream),
		.site = ev->site,
		.has_op = ev->has_op, .op = ev->op,
	};
	p->n_mem++;
	*(uint32_t *)xmap_put(&p->mem_index, ev->address, NULL) = idx;
	if (ev->stream) {
		m->graphs.captured_allocs++; /* its graph comes with capture_end */
		return;
	}
	m->graphs.alloc_nodes++;
	attach_mem(p, graph_for(p, ev->handle, ev), idx);
}

/* ---- physical memory -------------------------------------------------- */

static struct gpool *pool_of(struct model_graph_priv *p, int device)
{
	for (size_t i = 0; i < p->n_pools; i++) {
		if (p->pools[i].device == device)
			return &p->pools[i];
	}
	grow_array(&p->pools, &p->cap_pools, p->n_pools + 1, sizeof(*p->pools));
	p->pools[p->n_pools] = (struct gpool){ .device = device };
	return &p->pools[p->n_pools++];
}

/* The totals over all pools, after one changed. */
static void pools_changed(struct model *m)
{
	struct model_graph_priv *p = m->graphs.priv;
	uint64_t held = 0, unused = 0;

	for (size_t i = 0; i < p->n_pools; i++) {
		held = sat_add(held, p->pools[i].held);
		unused = sat_add(unused, sat_sub(p->pools[i].held, p->pools[i].live));
	}
	m->graphs.pool_bytes = held;
	m->graphs.pool_reserved = unused;
	if (held > m->graphs.pool_peak)
		m->graphs.pool_peak = held;
}

/* Live graph memory on gm's device changes by bytes (up or down). */
static void pool_live(struct model *m, const struct gmem *gm, bool up)
{
	struct gpool *pl = pool_of(m->graphs.priv, gm->device);

	pl->live = up ? sat_add(pl->live, gm->bytes) : sat_sub(pl->live, gm->bytes);
	if (pl->held < pl->live)
		pl->held = pl->live;
	pools_changed(m);
}

/* A launch makes gm an allocation: counted as one each time. */
static void materialize(struct model *m, struct gmem *gm, const struct trace_event *launch)
{
	struct trace_event a = {
		.seq = launch->seq, .time_ns = launch->time_ns, .kind = MT_EV_ALLOC, .api = gm->api,
		.device = gm->device, .address = gm->address, .has_address = true,
		.bytes = gm->bytes, .mem = MT_MEM_GRAPH, .stack = gm->stack,
		.has_op = gm->has_op, .op = gm->op,
	};
	struct model_live rec = {
		.bytes = gm->bytes, .stream = gm->stream, .stack = gm->stack, .mem = MT_MEM_GRAPH,
		.device = gm->device,
		.site = MODEL_NONE, .holder = MODEL_NONE, .pool = MODEL_NONE, .op = MODEL_NONE,
	};

	model_count_alloc(m, &a, &gm->site, &rec);
	model_live_insert(m, gm->address, &rec, launch->time_ns);
	set_live(m->graphs.priv, gm, true);
	pool_live(m, gm, true);
}

/* Freed inside graphs (auto-free, another graph's free node): back to
 * the pool. */
static void dematerialize(struct model *m, struct gmem *gm)
{
	/* out of the live set, a free of no one's (model.c, became_gone) */
	m->live_time_ns = m->last_time_ns;
	trace_live_drop(&m->live, gm->address);
	set_live(m->graphs.priv, gm, false);
	gm->uploaded = false;
	pool_live(m, gm, false);
}

void model_graph_freed(struct model *m, uint64_t address, bool freed)
{
	struct gmem *gm = mem_find(m->graphs.priv, address);

	if (!gm || gm->live == !freed)
		return;
	set_live(m->graphs.priv, gm, !freed);
	gm->uploaded = false;
	pool_live(m, gm, !freed);
}

uint64_t model_graph_of(const struct model *m, uint64_t address)
{
	const struct model_graph_priv *p = m->graphs.priv;
	const struct gmem *gm = mem_find(p, address);

	return gm && gm->graph < p->n_graphs ? p->graphs[gm->graph].handle : 0;
}

bool model_graph_known(const struct model *m, uint64_t address)
{
	return mem_find(m->graphs.priv, address) != NULL;
}

uint64_t model_graph_reserved_on(const struct model *m, int device)
{
	const struct model_graph_priv *p = m->graphs.priv;
	uint64_t n = 0;

	for (size_t i = 0; i < p->n_pools; i++) {
		const struct gpool *pl = &p->pools[i];

		if (device < 0 || pl->device < 0 || pl->device == device)
			n = sat_add(n, sat_sub(pl->held, pl->live));
	}
	return n;
}

/* ---- events ----------------------------------------------------------- */

/* After a launch or upload, a device's graph pool holds at least what is
 * in use there: the live graph memory, and what the mapped graphs keep
 * mapped besides, shared (graphs that do not run at once map the same
 * memory: the largest mapping counts, once). That covers the launch's own
 * need, the live memory plus its graph's transient allocations at once. */
static void grow_pools(struct model *m, struct graph *g)
{
	struct model_graph_priv *p = m->graphs.priv;

	g->mapped = true;
	for (size_t i = 0; i < g->n_mem; i++) {
		int device = p->mem[g->mem[i]].device;
		struct gpool *pl = pool_of(p, device);
		uint64_t mapped = 0;

		for (size_t j = 0; j < p->n_graphs; j++) {
			const struct graph *o = &p->graphs[j];

			if (o->mapped && o->n_mem && p->mem[o->mem[0]].device == device &&
			    o->nonlive > mapped)
				mapped = o->nonlive;
		}
		if (pl->held < sat_add(pl->live, mapped))
			pl->held = sat_add(pl->live, mapped);
	}
	pools_changed(m);
}

static void on_launch(struct model *m, const struct trace_event *ev, bool upload)
{
	struct model_graph_priv *p = m->graphs.priv;
	struct exec *e = ev->has_handle ? exec_find(p, ev->handle) : NULL;
	struct graph *g;

	if (ev->status != 0) {
		m->graphs.failed_launches++; /* e.g. its memory from the last launch not freed */
		return;
	}
	if (upload)
		m->graphs.uploads++;
	else
		m->graphs.launches++;
	if (!e)
		return;
	g = &p->graphs[e->graph];
	if (!upload) {
		e->launches++;
		g->launches++;
	}
	for (size_t i = 0; i < g->n_mem; i++) {
		struct gmem *gm = &p->mem[g->mem[i]];

		if (gm->transient) {
			continue;
		} else if (!gm->live) {
			materialize(m, gm, ev);
			gm->uploaded = upload;
		} else if (!upload && gm->uploaded) {
			gm->uploaded = false; /* the launch the upload prepared */
		} else if (!upload && e->auto_free) {
			dematerialize(m, gm);
			materialize(m, gm, ev);
		}
	}
	grow_pools(m, g);
	for (size_t i = 0; !upload && i < g->n_frees; i++) {
		struct gmem *gm = mem_find(p, g->frees[i]);

		if (gm && gm->graph != e->graph && gm->live)
			dematerialize(m, gm);
	}
}

static void on_exec_create(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	uint32_t graph = graph_for(p, ev->address, ev);

	grow_array(&p->execs, &p->cap_execs, p->n_execs + 1, sizeof(*p->execs));
	p->execs[p->n_execs] = (struct exec){
		.handle = ev->handle, .graph = graph, .auto_free = ev->bytes & 1,
		.stack = ev->stack, .time_ns = ev->time_ns,
	};
	*(uint32_t *)xmap_put(&p->exec_index, ev->handle, NULL) = (uint32_t)p->n_execs++;
	p->graphs[graph].live_execs++;
	m->graphs.execs_created++;
	model_points_add(m, MODEL_POINT_INSTANTIATION, ev);
}

static void on_exec_destroy(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	struct exec *e = exec_find(p, ev->handle);

	if (!e || e->destroyed)
		return;
	e->destroyed = true;
	/* the graph's memory is mapped by its execs: with the last gone, the
	 * pool keeps the physical memory (until a trim) for any graph */
	if (--p->graphs[e->graph].live_execs == 0)
		p->graphs[e->graph].mapped = false;
	m->graphs.execs_destroyed++;
}

static void on_graph_destroy(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	uint32_t idx = graph_for(p, ev->handle, ev); /* may move p->graphs */
	struct graph *g = &p->graphs[idx];

	/* its live memory stays live: only a free gives it back */
	if (!g->destroyed && g->how != HOW_SEEN)
		m->graphs.destroyed++;
	g->destroyed = true;
}

/* ---- capture segments ------------------------------------------------- */

static const struct open_capture *open_of_thread(const struct model_graph_priv *p, int64_t thread)
{
	for (size_t i = 0; i < p->n_open; i++) {
		if (p->open[i].thread == thread)
			return &p->open[i];
	}
	return NULL;
}

/* The capture on stream is over (or begins again). */
static void open_end(struct model *m, uint64_t stream)
{
	struct model_graph_priv *p = m->graphs.priv;
	size_t out = 0;

	for (size_t i = 0; i < p->n_open; i++) {
		if (p->open[i].stream != stream)
			p->open[out++] = p->open[i];
	}
	p->n_open = out;
	m->graphs.capturing = out > 0;
}

static void open_begin(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;

	open_end(m, ev->stream);
	if (!ev->thread || !ev->stream)
		return;
	grow_array(&p->open, &p->cap_open, p->n_open + 1, sizeof(*p->open));
	p->open[p->n_open++] = (struct open_capture){ ev->thread, ev->stream };
	m->graphs.capturing = true;
}

void model_graph_device_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	const struct open_capture *c = open_of_thread(p, ev->thread);
	uint32_t idx = (uint32_t)p->n_segs;

	if (!ev->thread || !c)
		return;
	grow_array(&p->segs, &p->cap_segs, p->n_segs + 1, sizeof(*p->segs));
	p->segs[idx] = (struct segment){
		.address = ev->address, .bytes = ev->bytes, .stream = c->stream,
		.graph = MODEL_NONE, .live = true,
	};
	p->n_segs++;
	*(uint32_t *)xmap_put(&p->seg_index, ev->address, NULL) = idx;
	m->graphs.segments = true;
}

void model_graph_device_freed(struct model *m, uint64_t address, bool freed)
{
	struct model_graph_priv *p = m->graphs.priv;
	const uint32_t *idx = map_get(&p->seg_index, address);
	struct segment *sg = idx ? &p->segs[*idx] : NULL;

	if (!sg || sg->live == !freed)
		return;
	sg->live = !freed;
	if (sg->graph < p->n_graphs) {
		struct graph *g = &p->graphs[sg->graph];

		g->seg_live = freed ? sat_sub(g->seg_live, sg->bytes) : sat_add(g->seg_live, sg->bytes);
	}
}

/* The capture on stream made graph (MODEL_NONE: it failed): the segments
 * allocated while it ran are that graph's, or nobody's. */
static void settle_segments(struct model *m, uint64_t stream, uint32_t graph)
{
	struct model_graph_priv *p = m->graphs.priv;

	for (size_t i = 0; i < p->n_segs; i++) {
		struct segment *sg = &p->segs[i];

		if (sg->graph != MODEL_NONE || sg->dropped || sg->stream != stream)
			continue;
		if (graph == MODEL_NONE) {
			sg->dropped = true;
			continue;
		}
		sg->graph = graph;
		m->graphs.capture_segments++;
		m->graphs.capture_segment_bytes = sat_add(m->graphs.capture_segment_bytes, sg->bytes);
		if (sg->live)
			p->graphs[graph].seg_live = sat_add(p->graphs[graph].seg_live, sg->bytes);
	}
}

/* The capture on ev's stream is over: what it allocated and freed is the
 * graph's it made (an existing graph's, for a capture into one), or
 * nobody's when it failed. */
static void settle_capture(struct model *m, const struct trace_event *ev, bool made)
{
	struct model_graph_priv *p = m->graphs.priv;
	uint32_t graph = MODEL_NONE;
	size_t out = 0;

	if (made) {
		const uint32_t *idx = map_get(&p->graph_index, ev->handle);

		if (idx && !p->graphs[*idx].destroyed && p->graphs[*idx].how != HOW_SEEN) {
			graph = *idx;
		} else {
			graph = graph_new(p, ev->handle, HOW_CAPTURE, ev);
			m->graphs.created++;
		}
	}
	for (size_t i = 0; i < p->n_mem; i++) {
		struct gmem *gm = &p->mem[i];

		if (gm->graph != MODEL_NONE || gm->dropped || gm->stream != ev->stream)
			continue;
		if (made) {
			attach_mem(p, graph, (uint32_t)i);
		} else {
			gm->dropped = true;
			m->graphs.unattached++;
		}
	}
	settle_segments(m, ev->stream, graph);
	for (size_t i = 0; i < p->n_pfree; i++) {
		if (p->pfree[i].stream != ev->stream)
			p->pfree[out++] = p->pfree[i];
		else if (made)
			attach_free(p, graph, p->pfree[i].address);
		else
			m->graphs.unattached++;
	}
	p->n_pfree = out;
}

static void on_free_node(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;

	if (!ev->has_address)
		return;
	if (!ev->stream) {
		m->graphs.free_nodes++;
		attach_free(p, graph_for(p, ev->handle, ev), ev->address);
		return;
	}
	m->graphs.captured_frees++;
	grow_array(&p->pfree, &p->cap_pfree, p->n_pfree + 1, sizeof(*p->pfree));
	p->pfree[p->n_pfree++] = (struct pending_free){ capture_of(p, ev->stream), ev->address };
}

/* The pool gives back to the device what no live allocation uses; the
 * graphs there are no longer mapped. */
static void on_trim(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;
	int device = ev->bytes <= INT32_MAX ? (int)ev->bytes : -1;

	m->graphs.trims++;
	for (size_t i = 0; i < p->n_pools; i++) {
		if (p->pools[i].device < 0 || p->pools[i].device == device)
			p->pools[i].held = p->pools[i].live;
	}
	for (size_t i = 0; i < p->n_graphs; i++) {
		const struct graph *g = &p->graphs[i];
		int d = g->n_mem ? p->mem[g->mem[0]].device : -1;

		if (d < 0 || d == device)
			p->graphs[i].mapped = false;
	}
	pools_changed(m);
}

void model_graph_event(struct model *m, const struct trace_event *ev)
{
	struct model_graph_priv *p = m->graphs.priv;

	switch (ev->kind) {
	case MT_EV_GRAPH_CREATE:
	case MT_EV_GRAPH_CLONE:
		graph_new(p, ev->handle, ev->kind == MT_EV_GRAPH_CREATE ? HOW_CREATE : HOW_CLONE, ev);
		m->graphs.created++;
		break;
	case MT_EV_GRAPH_DESTROY: on_graph_destroy(m, ev); break;
	case MT_EV_EXEC_CREATE: on_exec_create(m, ev); break;
	case MT_EV_EXEC_DESTROY: on_exec_destroy(m, ev); break;
	case MT_EV_GRAPH_LAUNCH: on_launch(m, ev, false); break;
	case MT_EV_GRAPH_UPLOAD: on_launch(m, ev, true); break;
	case MT_EV_CAPTURE_BEGIN: /* a capture left open */
		settle_capture(m, ev, false);
		joins_end(p, ev->stream);
		open_begin(m, ev);
		break;
	case MT_EV_CAPTURE_END:
		settle_capture(m, ev, ev->status == 0 && ev->handle);
		joins_end(p, ev->stream);
		open_end(m, ev->stream);
		break;
	case MT_EV_CAPTURE_JOIN: on_join(p, ev); break;
	case MT_EV_GRAPH_MEM_TRIM: on_trim(m, ev); break;
	case MT_EV_GRAPH_FREE_NODE: on_free_node(m, ev); break;
	}
}

/* Lifetimes only CUPTI saw (model-cupti.c, at the end): no stack, no
 * memory, no launches; an orphan if alive at the end (or at the mark). */
void model_graph_alone(struct model *m, bool exec, uint64_t handle, uint64_t graph, int64_t time,
		       int64_t until)
{
	struct model_graph_priv *p = m->graphs.priv;
	struct trace_event ev = { .time_ns = time, .handle = handle, .address = graph };
	bool destroyed = until >= 0;
	uint32_t g;

	if (!exec) {
		g = graph_new(p, handle, HOW_CUPTI, &ev);
		p->graphs[g].destroyed = destroyed;
		m->graphs.created++;
		m->graphs.destroyed += destroyed;
	} else {
		g = graph_for(p, graph, &ev);
		grow_array(&p->execs, &p->cap_execs, p->n_execs + 1, sizeof(*p->execs));
		p->execs[p->n_execs++] = (struct exec){
			.handle = handle, .graph = g, .destroyed = destroyed, .time_ns = time,
		};
		p->graphs[g].live_execs += !destroyed;
		m->graphs.execs_created++;
		m->graphs.execs_destroyed += destroyed;
	}
	if (m->graphs.at_mark && time <= m->graphs.at_time_ns &&
	    (!destroyed || until > m->graphs.at_time_ns)) {
		struct model_graphs *gs = &m->graphs;

		gs->orphans = xrealloc(gs->orphans, gs->n_orphans + 1, sizeof(*gs->orphans));
		gs->orphans[gs->n_orphans++] = (struct model_orphan){
			.kind = exec ? MODEL_ORPHAN_EXEC : MODEL_ORPHAN_GRAPH, .handle = handle,
			.graph = exec ? graph : 0, .time_ns = time,
		};
	}
}

/* ---- orphans and what was never freed --------------------------------- */

/* What a graph keeps reachable: its live allocations, its own; the others
 * while it is mapped, shared with every graph mapped on the device
 * (graphs that do not run at once use the same physical memory). */
struct reach {
	uint64_t live, mapped;
	int device;
};

static struct reach reach_of(const struct model_graph_priv *p, const struct graph *g)
{
	struct reach r = { .device = g->n_mem ? p->mem[g->mem[0]].device : -1 };

	for (size_t i = 0; i < g->n_mem; i++) {
		const struct gmem *gm = &p->mem[g->mem[i]];

		if (gm->live)
			r.live = sat_add(r.live, gm->bytes);
	}
	r.live = sat_add(r.live, g->seg_live);
	r.mapped = g->mapped ? g->nonlive : 0;
	return r;
}

/* The reach of a set of graphs together: live bytes added, each graph
 * once; per device the largest mapping, no more than what the pool holds
 * beyond live memory. */
struct reach_sum {
	uint64_t live;
	uint64_t *mapped; /* per pool, index as in p->pools */
	bool *counted;	  /* per graph */
};

static void reach_add(const struct model_graph_priv *p, struct reach_sum *sum, uint32_t graph)
{
	struct reach r;

	if (sum->counted[graph])
		return;
	sum->counted[graph] = true;
	r = reach_of(p, &p->graphs[graph]);
	sum->live = sat_add(sum->live, r.live);
	for (size_t i = 0; i < p->n_pools; i++) {
		if (p->pools[i].device == r.device && r.mapped > sum->mapped[i])
			sum->mapped[i] = r.mapped;
	}
}

static uint64_t reach_total(const struct model_graph_priv *p, const struct reach_sum *sum)
{
	uint64_t n = sum->live;

	for (size_t i = 0; i < p->n_pools; i++) {
		uint64_t spare = sat_sub(p->pools[i].held, p->pools[i].live);

		n = sat_add(n, sum->mapped[i] < spare ? sum->mapped[i] : spare);
	}
	return n;
}

static uint64_t pinned(const struct model_graph_priv *p, const struct graph *g)
{
	struct reach r = reach_of(p, g);

	return sat_add(r.live, r.mapped);
}

static int cmp_orphan(const void *a, const void *b)
{
	const struct model_orphan *x = a, *y = b;

	if (x->pinned_bytes != y->pinned_bytes)
		return x->pinned_bytes > y->pinned_bytes ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1; /* execs first: they hold the pool */
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static void find_orphans(struct model *m)
{
	struct model_graph_priv *p = m->graphs.priv;
	struct model_orphan *o = xcalloc(p->n_graphs + p->n_execs + 1, sizeof(*o));
	_autofree_ uint64_t *mapped_e = xcalloc(p->n_pools + 1, sizeof(uint64_t));
	_autofree_ uint64_t *mapped_a = xcalloc(p->n_pools + 1, sizeof(uint64_t));
	_autofree_ bool *counted_e = xcalloc(p->n_graphs + 1, sizeof(bool));
	_autofree_ bool *counted_a = xcalloc(p->n_graphs + 1, sizeof(bool));
	struct reach_sum execs = { .mapped = mapped_e, .counted = counted_e };
	struct reach_sum all = { .mapped = mapped_a, .counted = counted_a };
	size_t n = 0;

	for (size_t i = 0; i < p->n_execs; i++) {
		const struct exec *e = &p->execs[i];
		const struct graph *g = &p->graphs[e->graph];

		if (e->destroyed)
			continue;
		o[n++] = (struct model_orphan){
			.kind = MODEL_ORPHAN_EXEC, .handle = e->handle, .graph = g->handle,
			.stack = e->stack, .time_ns = e->time_ns, .pinned_bytes = pinned(p, g),
			.segment_bytes = g->seg_live, .launches = e->launches,
		};
		reach_add(p, &execs, e->graph);
		reach_add(p, &all, e->graph);
	}
	for (size_t i = 0; i < p->n_graphs; i++) {
		const struct graph *g = &p->graphs[i];

		if (g->how == HOW_SEEN || g->destroyed)
			continue;
		/* an exec of it that is an orphan too has its row */
		o[n++] = (struct model_orphan){
			.kind = MODEL_ORPHAN_GRAPH, .handle = g->handle, .stack = g->stack,
			.time_ns = g->time_ns, .pinned_bytes = g->live_execs ? 0 : pinned(p, g),
			.segment_bytes = g->live_execs ? 0 : g->seg_live,
			.pinned_by_exec = g->live_execs > 0, .launches = g->launches,
		};
		reach_add(p, &all, (uint32_t)i);
	}
	qsort(o, n, sizeof(*o), cmp_orphan);
	free(m->graphs.orphans);
	m->graphs.orphans = o;
	m->graphs.n_orphans = n;
	m->graphs.orphan_execs_pinned = reach_total(p, &execs);
	m->graphs.orphans_pinned = reach_total(p, &all);
}

void model_graph_at_mark(struct model *m, const struct trace_event *ev)
{
	if (m->graphs.at_mark)
		return; /* the first mark with the label */
	find_orphans(m);
	m->graphs.at_mark = true;
	m->graphs.at_seq = ev->seq;
	m->graphs.at_time_ns = ev->time_ns;
}

static int cmp_leak(const void *a, const void *b)
{
	const struct model_graph_leak *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->graph < y->graph ? -1 : x->graph > y->graph;
}

static int cmp_leak_key(const void *a, const void *b)
{
	const struct model_graph_leak *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->graph < y->graph ? -1 : x->graph > y->graph;
}

/* Live graph memory at the end, by (stack, graph): sort, merge runs. */
static void find_never_freed(struct model *m)
{
	struct model_graph_priv *p = m->graphs.priv;
	struct model_graph_leak *l = xcalloc(p->n_mem + 1, sizeof(*l));
	size_t n = 0, out = 0;

	for (size_t i = 0; i < p->n_mem; i++) {
		const struct gmem *gm = &p->mem[i];

		if (gm->live)
			l[n++] = (struct model_graph_leak){
				.stack = gm->stack, .bytes = gm->bytes, .count = 1,
				.graph = gm->graph < p->n_graphs ? p->graphs[gm->graph].handle : 0,
			};
	}
	qsort(l, n, sizeof(*l), cmp_leak_key);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && cmp_leak_key(&l[out - 1], &l[i]) == 0) {
			l[out - 1].bytes = sat_add(l[out - 1].bytes, l[i].bytes);
			l[out - 1].count++;
		} else {
			l[out++] = l[i];
		}
	}
	qsort(l, out, sizeof(*l), cmp_leak);
	m->graphs.never_freed = l;
	m->graphs.n_never_freed = out;
}

void model_graph_finish(struct model *m)
{
	if (!m->graphs.at_mark)
		find_orphans(m);
	else if (m->graphs.n_orphans)
		qsort(m->graphs.orphans, m->graphs.n_orphans, sizeof(*m->graphs.orphans), cmp_orphan);
	find_never_freed(m);
}
