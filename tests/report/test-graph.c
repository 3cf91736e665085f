/* CUDA graphs (model-graph.c) and CUPTI's records (model-cupti.c): the
 * model fed hand-built events, each rule of docs/report-json.md
 * ("graphs", "cupti") on its own. */
#include <check.h>
#include <stdint.h>

#include "model.h"
#include "suites.h"
#include "trace-schema.h"

#define MiB (1024ull * 1024)

static int64_t next_seq;

static struct trace_event ev(int kind, int64_t t)
{
	return (struct trace_event){
		.seq = next_seq++, .time_ns = t, .kind = kind, .api = 1, .device = 0, .module = -1,
		.stack = 1,
	};
}

static void feed(struct model *m, struct trace_event e)
{
	model_feed(m, &e);
}

/* kind with handle (and address) */
static void gev(struct model *m, int kind, int64_t t, uint64_t handle, uint64_t address,
		uint64_t bytes)
{
	struct trace_event e = ev(kind, t);

	e.handle = handle;
	e.has_handle = true;
	e.address = address;
	e.has_address = true;
	e.bytes = bytes;
	feed(m, e);
}

/* An alloc node of graph, or (stream != 0) an allocation captured on stream. */
static void gmem(struct model *m, int64_t t, uint64_t graph, uint64_t stream, uint64_t addr,
		 uint64_t bytes, int64_t stack)
{
	struct trace_event e = ev(MT_EV_ALLOC, t);

	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = MT_MEM_GRAPH;
	e.stack = stack;
	e.stream = stream;
	e.handle = graph;
	e.has_handle = !stream;
	feed(m, e);
}

static void free_node(struct model *m, int64_t t, uint64_t graph, uint64_t stream, uint64_t addr)
{
	struct trace_event e = ev(MT_EV_GRAPH_FREE_NODE, t);

	e.address = addr;
	e.has_address = true;
	e.stream = stream;
	e.handle = graph;
	e.has_handle = true;
	feed(m, e);
}

static void launch(struct model *m, int kind, int64_t t, uint64_t exec, int64_t status)
{
	struct trace_event e = ev(kind, t);

	e.handle = exec;
	e.has_handle = true;
	e.status = status;
	e.stack = 0;
	feed(m, e);
}

static void capture(struct model *m, int kind, int64_t t, uint64_t stream, uint64_t graph,
		    int64_t status)
{
	struct trace_event e = ev(kind, t);

	e.stream = stream;
	e.handle = graph;
	e.has_handle = true;
	e.status = status;
	feed(m, e);
}

static void plain_free(struct model *m, int64_t t, uint64_t addr)
{
	struct trace_event e = ev(MT_EV_FREE, t);

	e.address = addr;
	e.has_address = true;
	e.stack = 0;
	feed(m, e);
}

static void trim(struct model *m, int64_t t, int device)
{
	struct trace_event e = ev(MT_EV_GRAPH_MEM_TRIM, t);

	e.bytes = (uint64_t)device;
	feed(m, e);
}

static void setup(struct model *m)
{
	next_seq = 0;
	model_init(m);
}

/* An alloc node is no memory until a launch; then it is live until a free
 * outside the graph; a relaunch while it is live fails (the trace says
 * so); the pool keeps the memory until a trim. */
START_TEST(test_graph_node_lifecycle)
{
	struct model m;

	setup(&m);
	gev(&m, MT_EV_GRAPH_CREATE, 1, 0xa1, 0, 0);
	gmem(&m, 2, 0xa1, 0, 0x1000, 4 * MiB, 2);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	gev(&m, MT_EV_EXEC_CREATE, 3, 0xe1, 0xa1, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 4, 0xe1, 0);
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB);
	ck_assert_uint_eq(m.kinds[MT_MEM_GRAPH].allocations, 1);
	launch(&m, MT_EV_GRAPH_LAUNCH, 5, 0xe1, 1); /* not freed: the driver refuses */
	ck_assert_uint_eq(m.graphs.failed_launches, 1);
	ck_assert_uint_eq(m.kinds[MT_MEM_GRAPH].allocations, 1);
	plain_free(&m, 6, 0x1000);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.graphs.pool_bytes, 4 * MiB);
	ck_assert_uint_eq(m.graphs.pool_reserved, 4 * MiB);
	launch(&m, MT_EV_GRAPH_LAUNCH, 7, 0xe1, 0); /* freed: runs again */
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB);
	ck_assert_uint_eq(m.graphs.pool_reserved, 0);
	plain_free(&m, 8, 0x1000);
	trim(&m, 9, 0);
	ck_assert_uint_eq(m.graphs.pool_bytes, 0);
	model_finish(&m);

	ck_assert_uint_eq(m.device.allocations, 2);
	ck_assert_uint_eq(m.device.frees, 2);
	ck_assert_uint_eq(m.device.peak_bytes, 4 * MiB);
	ck_assert_uint_eq(m.graphs.launches, 2);
	ck_assert_uint_eq(m.graphs.alloc_nodes, 1);
	ck_assert_uint_eq(m.graphs.pool_peak, 4 * MiB);
	ck_assert_uint_eq(m.n_sites, 1);
	ck_assert_uint_eq(m.sites[0].count, 2);
	ck_assert_int_eq(m.sites[0].stack, 2);
	ck_assert_uint_eq(m.unmatched_frees, 0);
	/* a graph and an exec never destroyed, pinning nothing now */
	ck_assert_uint_eq(m.graphs.n_orphans, 2);
	ck_assert_uint_eq(m.graphs.orphans[0].pinned_bytes, 0);
	model_fini(&m);
}
END_TEST

/* Freed by its own graph's free node: transient, never live; the launch
 * needs it from the pool; the exec pins it until a trim. */
START_TEST(test_graph_transient)
{
	struct model m;

	setup(&m);
	gev(&m, MT_EV_GRAPH_CREATE, 1, 0xa1, 0, 0);
	gmem(&m, 2, 0xa1, 0, 0x1000, 8 * MiB, 2);
	free_node(&m, 3, 0xa1, 0, 0x1000);
	gmem(&m, 4, 0xa1, 0, 0x2000, 1 * MiB, 3);
	gev(&m, MT_EV_EXEC_CREATE, 5, 0xe1, 0xa1, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 6, 0xe1, 0);
	ck_assert_uint_eq(m.device.live_bytes, 1 * MiB);
	ck_assert_uint_eq(m.graphs.pool_bytes, 9 * MiB);
	ck_assert_uint_eq(m.graphs.pool_reserved, 8 * MiB);
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.n_orphans, 2);
	ck_assert_int_eq(m.graphs.orphans[0].kind, MODEL_ORPHAN_EXEC);
	ck_assert_uint_eq(m.graphs.orphans[0].pinned_bytes, 9 * MiB);
	ck_assert_uint_eq(m.graphs.orphans[0].launches, 1);
	ck_assert_uint_eq(m.graphs.n_never_freed, 1);
	ck_assert_uint_eq(m.graphs.never_freed[0].bytes, 1 * MiB);
	ck_assert_uint_eq(m.graphs.never_freed[0].graph, 0xa1);
	ck_assert_int_eq(m.graphs.never_freed[0].stack, 3);
	model_fini(&m);

	/* after a trim the transient memory is no longer mapped */
	setup(&m);
	gev(&m, MT_EV_GRAPH_CREATE, 1, 0xa1, 0, 0);
	gmem(&m, 2, 0xa1, 0, 0x1000, 8 * MiB, 2);
	free_node(&m, 3, 0xa1, 0, 0x1000);
	gev(&m, MT_EV_EXEC_CREATE, 5, 0xe1, 0xa1, 0);
	launch(&m, MT_EV_GRAPH_UPLOAD, 6, 0xe1, 0);
	ck_assert_uint_eq(m.graphs.pool_bytes, 8 * MiB);
	trim(&m, 7, 0);
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.pool_bytes, 0);
	ck_assert_uint_eq(m.graphs.pool_peak, 8 * MiB);
	ck_assert_uint_eq(m.graphs.orphans[0].pinned_bytes, 0);
	ck_assert_uint_eq(m.device.allocations, 0);
	model_fini(&m);
}
END_TEST

/* Auto-free on launch: a relaunch frees the last launch's memory and
 * makes it again; an upload makes it live and the launch after it does
 * not count it twice. */
START_TEST(test_graph_auto_free_upload)
{
	struct model m;

	setup(&m);
	gev(&m, MT_EV_GRAPH_CREATE, 1, 0xa1, 0, 0);
	gmem(&m, 2, 0xa1, 0, 0x1000, 2 * MiB, 2);
	gev(&m, MT_EV_EXEC_CREATE, 3, 0xe1, 0xa1, 1);
	launch(&m, MT_EV_GRAPH_UPLOAD, 4, 0xe1, 0);
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	launch(&m, MT_EV_GRAPH_LAUNCH, 5, 0xe1, 0);
	ck_assert_uint_eq(m.device.allocations, 1);
	launch(&m, MT_EV_GRAPH_LAUNCH, 6, 0xe1, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 7, 0xe1, 0);
	model_finish(&m);
	ck_assert_uint_eq(m.device.allocations, 3);
	ck_assert_uint_eq(m.device.frees, 2);
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	ck_assert_uint_eq(m.device.peak_bytes, 2 * MiB);
	ck_assert_uint_eq(m.graphs.launches, 3);
	ck_assert_uint_eq(m.graphs.uploads, 1);
	model_fini(&m);
}
END_TEST

/* Captured allocations and frees belong to the graph the stream's
 * capture_end makes; a capture that fails makes them nobody's. A free
 * node of another graph frees live memory when that graph runs. */
START_TEST(test_graph_capture_cross_free)
{
	struct model m;

	setup(&m);
	capture(&m, MT_EV_CAPTURE_BEGIN, 1, 5, 0, 0);
	gmem(&m, 2, 0, 5, 0x1000, 8 * MiB, 2);
	free_node(&m, 3, 0, 5, 0x1000);
	gmem(&m, 4, 0, 5, 0x2000, 1 * MiB, 3);
	capture(&m, MT_EV_CAPTURE_BEGIN, 5, 6, 0, 0); /* another stream, failing */
	gmem(&m, 6, 0, 6, 0x3000, 16 * MiB, 4);
	capture(&m, MT_EV_CAPTURE_END, 7, 6, 0, 900);
	capture(&m, MT_EV_CAPTURE_END, 8, 5, 0xa3, 0);
	gev(&m, MT_EV_EXEC_CREATE, 9, 0xe3, 0xa3, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 10, 0xe3, 0);
	ck_assert_uint_eq(m.device.live_bytes, 1 * MiB);
	gev(&m, MT_EV_GRAPH_CREATE, 11, 0xa4, 0, 0);
	free_node(&m, 12, 0xa4, 0, 0x2000);
	gev(&m, MT_EV_EXEC_CREATE, 13, 0xe4, 0xa4, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 14, 0xe4, 0);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.created, 2);
	ck_assert_uint_eq(m.graphs.captured_allocs, 3);
	ck_assert_uint_eq(m.graphs.captured_frees, 1);
	ck_assert_uint_eq(m.graphs.free_nodes, 1);
	ck_assert_uint_eq(m.graphs.unattached, 1);
	ck_assert_uint_eq(m.device.frees, 1);
	ck_assert_uint_eq(m.graphs.pool_peak, 9 * MiB);
	ck_assert_uint_eq(m.graphs.n_never_freed, 0);
	model_fini(&m);
}
END_TEST

/* A device allocation of thread th (PyTorch's cudaMalloc of a segment). */
static void dev_alloc(struct model *m, int64_t t, int64_t th, uint64_t addr, uint64_t bytes)
{
	struct trace_event e = ev(MT_EV_ALLOC, t);

	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = MT_MEM_DEVICE;
	e.thread = th;
	feed(m, e);
}

/* Device memory the capturing thread allocates while its capture runs
 * belongs to the graph made (a framework's pool for it): an orphaned exec
 * of that graph pins it while it is live; other threads' allocations, a
 * failed capture's and those after the capture are nobody's. */
START_TEST(test_graph_capture_segments)
{
	struct model m;

	setup(&m);
	capture(&m, MT_EV_CAPTURE_BEGIN, 1, 5, 0, 0); /* thread 0: ev()'s */
	dev_alloc(&m, 1, 0, 0x10000, 4 * MiB);	      /* no thread: nobody's */
	{
		struct trace_event e = ev(MT_EV_CAPTURE_BEGIN, 2);

		e.stream = 5;
		e.thread = 7;
		feed(&m, e);
	}
	dev_alloc(&m, 3, 7, 0x100000, 20 * MiB);
	dev_alloc(&m, 4, 8, 0x200000, 2 * MiB); /* another thread */
	dev_alloc(&m, 5, 7, 0x300000, 26 * MiB);
	{
		struct trace_event e = ev(MT_EV_CAPTURE_END, 6);

		e.stream = 5;
		e.thread = 7;
		e.handle = 0xa1;
		e.has_handle = true;
		feed(&m, e);
	}
	dev_alloc(&m, 7, 7, 0x400000, 8 * MiB); /* after the capture */
	gev(&m, MT_EV_EXEC_CREATE, 8, 0xe1, 0xa1, 0);
	gev(&m, MT_EV_GRAPH_DESTROY, 9, 0xa1, 0, 0);
	{
		struct trace_event e = ev(MT_EV_CAPTURE_BEGIN, 10); /* fails */

		e.stream = 6;
		e.thread = 7;
		feed(&m, e);
	}
	dev_alloc(&m, 11, 7, 0x500000, 2 * MiB);
	capture(&m, MT_EV_CAPTURE_END, 12, 6, 0, 900);
	plain_free(&m, 13, 0x100000); /* the graph's first segment given back */
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.capture_segments, 2);
	ck_assert_uint_eq(m.graphs.capture_segment_bytes, 46 * MiB);
	ck_assert_uint_eq(m.graphs.n_orphans, 1);
	ck_assert_uint_eq(m.graphs.orphans[0].kind, MODEL_ORPHAN_EXEC);
	ck_assert_uint_eq(m.graphs.orphans[0].pinned_bytes, 26 * MiB);
	ck_assert_uint_eq(m.graphs.orphans[0].segment_bytes, 26 * MiB);
	ck_assert_uint_eq(m.graphs.orphan_execs_pinned, 26 * MiB);
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB + 2 * MiB + 26 * MiB + 8 * MiB + 2 * MiB);
	model_fini(&m);
}
END_TEST

/* Orphans as of the first mark --at-mark names; destroyed ones are not. */
START_TEST(test_graph_at_mark)
{
	struct model m;
	struct trace_event e;

	setup(&m);
	gev(&m, MT_EV_GRAPH_CREATE, 1, 0xa1, 0, 0);
	gev(&m, MT_EV_EXEC_CREATE, 2, 0xe1, 0xa1, 0);
	e = ev(MT_EV_MARK, 3);
	e.has_op = true;
	e.op = 9;
	e.at_mark = true;
	feed(&m, e);
	e.seq = next_seq++;
	e.time_ns = 4;
	feed(&m, e); /* a second one with the label: not it */
	gev(&m, MT_EV_EXEC_DESTROY, 5, 0xe1, 0, 0);
	gev(&m, MT_EV_GRAPH_DESTROY, 6, 0xa1, 0, 0);
	model_finish(&m);
	ck_assert(m.graphs.at_mark);
	ck_assert_int_eq(m.graphs.at_time_ns, 3);
	ck_assert_uint_eq(m.graphs.n_orphans, 2);
	ck_assert_uint_eq(m.graphs.destroyed, 1);
	ck_assert_uint_eq(m.graphs.execs_destroyed, 1);
	model_fini(&m);
}
END_TEST

/* Growth by instantiation when there are no marks. */
START_TEST(test_graph_instantiation_points)
{
	struct model m;

	setup(&m);
	for (uint64_t i = 0; i < 4; i++) {
		gev(&m, MT_EV_GRAPH_CREATE, 10 * (int64_t)i, 0xa0 + i, 0, 0);
		gmem(&m, 10 * (int64_t)i + 1, 0xa0 + i, 0, 0x1000 * (i + 1), MiB, 2);
		gev(&m, MT_EV_EXEC_CREATE, 10 * (int64_t)i + 2, 0xe0 + i, 0xa0 + i, 0);
		launch(&m, MT_EV_GRAPH_LAUNCH, 10 * (int64_t)i + 3, 0xe0 + i, 0);
	}
	model_finish(&m);
	ck_assert_int_eq(m.growth.basis, MODEL_POINT_INSTANTIATION);
	ck_assert_uint_eq(m.growth.n_points, 4);
	ck_assert_uint_eq(m.growth.n_sites, 1);
	ck_assert(m.growth.sites[0].growing); /* 0, 1, 2, 3 MiB */
	ck_assert_int_eq(m.growth.sites[0].per_point, (int64_t)MiB);
	ck_assert_uint_eq(m.points[m.growth.points[3]].exec, 0xe3);
	ck_assert_uint_eq(m.points[m.growth.points[3]].graph, 0xa3);
	model_fini(&m);
}
END_TEST

/* stream joins the capture of origin (it waited on an event recorded in
 * it): capture_join. */
static void join(struct model *m, int64_t t, uint64_t stream, uint64_t origin)
{
	struct trace_event e = ev(MT_EV_CAPTURE_JOIN, t);

	e.stream = stream;
	e.address = origin;
	e.has_address = true;
	e.stack = 0;
	feed(m, e);
}

/* Fork/join: streams 6 and 7 join the capture begun on 5 (7 through 6):
 * an allocation on 6 and a free on 7 of an allocation made on 5 are the
 * graph's that 5's capture_end makes; after the capture they are plain
 * streams again. */
START_TEST(test_graph_capture_joined_streams)
{
	struct model m;

	setup(&m);
	capture(&m, MT_EV_CAPTURE_BEGIN, 1, 5, 0, 0);
	gmem(&m, 2, 0, 5, 0x1000, 8 * MiB, 2);
	join(&m, 3, 6, 5);
	gmem(&m, 4, 0, 6, 0x2000, 4 * MiB, 3);
	join(&m, 5, 7, 6);
	free_node(&m, 6, 0, 7, 0x1000);
	capture(&m, MT_EV_CAPTURE_END, 7, 5, 0xa1, 0);
	gev(&m, MT_EV_EXEC_CREATE, 8, 0xe1, 0xa1, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 9, 0xe1, 0);
	/* 0x1000 lives and dies in the launch; 0x2000 stays */
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB);
	ck_assert_uint_eq(m.graphs.pool_bytes, 12 * MiB);
	/* after the capture, stream 6 is a plain stream: its capture's own */
	capture(&m, MT_EV_CAPTURE_BEGIN, 10, 6, 0, 0);
	gmem(&m, 11, 0, 6, 0x3000, 1 * MiB, 4);
	capture(&m, MT_EV_CAPTURE_END, 12, 6, 0xa2, 0);
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.captured_allocs, 3);
	ck_assert_uint_eq(m.graphs.captured_frees, 1);
	ck_assert_uint_eq(m.graphs.unattached, 0);
	ck_assert_uint_eq(m.graphs.created, 2);
	ck_assert_uint_eq(m.graphs.n_never_freed, 1);
	ck_assert_uint_eq(m.graphs.never_freed[0].bytes, 4 * MiB);
	ck_assert_uint_eq(m.graphs.never_freed[0].graph, 0xa1);
	ck_assert_uint_eq(m.device.allocations, 1);
	model_fini(&m);
}
END_TEST

/* Three graphs launched one after another over one pool, each exec kept:
 * each alone keeps its graph's 34 MiB mapped, together they keep one
 * graph's worth (graphs that do not run at once share the pool's
 * memory); the pool grew to the 2 MiB live during the second launch plus
 * the first graph's mapping; a graph whose exec is an orphan claims
 * nothing of its own. */
START_TEST(test_graph_orphans_share_the_pool)
{
	struct model m;

	setup(&m);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t work = 0x100000 * (2 * i + 1), out = 0x100000 * (2 * i + 2);
		int64_t t = 10 * (int64_t)i;

		capture(&m, MT_EV_CAPTURE_BEGIN, t, 5, 0, 0);
		gmem(&m, t + 1, 0, 5, work, 32 * MiB, 2);
		free_node(&m, t + 2, 0, 5, work);
		gmem(&m, t + 3, 0, 5, out, 2 * MiB, 3);
		capture(&m, MT_EV_CAPTURE_END, t + 4, 5, 0xa0 + i, 0);
		gev(&m, MT_EV_EXEC_CREATE, t + 5, 0xe0 + i, 0xa0 + i, 0);
		launch(&m, MT_EV_GRAPH_LAUNCH, t + 6, 0xe0 + i, 0);
		plain_free(&m, t + 7, out);
		if (i < 2)
			gev(&m, MT_EV_GRAPH_DESTROY, t + 8, 0xa0 + i, 0, 0);
	}
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.pool_bytes, 36 * MiB);
	ck_assert_uint_eq(m.graphs.pool_peak, 36 * MiB);
	ck_assert_uint_eq(m.graphs.n_orphans, 4);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(m.graphs.orphans[i].kind, MODEL_ORPHAN_EXEC);
		ck_assert_uint_eq(m.graphs.orphans[i].pinned_bytes, 34 * MiB);
	}
	ck_assert_int_eq(m.graphs.orphans[3].kind, MODEL_ORPHAN_GRAPH);
	ck_assert_uint_eq(m.graphs.orphans[3].handle, 0xa2);
	ck_assert(m.graphs.orphans[3].pinned_by_exec);
	ck_assert_uint_eq(m.graphs.orphans[3].pinned_bytes, 0);
	ck_assert_uint_eq(m.graphs.orphan_execs_pinned, 34 * MiB);
	ck_assert_uint_eq(m.graphs.orphans_pinned, 34 * MiB);
	ck_assert_uint_le(m.graphs.orphans_pinned, m.graphs.pool_bytes);
	model_fini(&m);

	/* the last exec destroyed: its graph is mapped no more, and pins
	 * nothing; a trim then unmaps the rest */
	setup(&m);
	capture(&m, MT_EV_CAPTURE_BEGIN, 1, 5, 0, 0);
	gmem(&m, 2, 0, 5, 0x1000, 8 * MiB, 2);
	free_node(&m, 3, 0, 5, 0x1000);
	capture(&m, MT_EV_CAPTURE_END, 4, 5, 0xa1, 0);
	gev(&m, MT_EV_EXEC_CREATE, 5, 0xe1, 0xa1, 0);
	launch(&m, MT_EV_GRAPH_LAUNCH, 6, 0xe1, 0);
	gev(&m, MT_EV_EXEC_DESTROY, 7, 0xe1, 0, 0);
	model_finish(&m);
	ck_assert_uint_eq(m.graphs.n_orphans, 1);
	ck_assert(!m.graphs.orphans[0].pinned_by_exec);
	ck_assert_uint_eq(m.graphs.orphans[0].pinned_bytes, 0);
	ck_assert_uint_eq(m.graphs.orphans_pinned, 0);
	ck_assert_uint_eq(m.graphs.pool_bytes, 8 * MiB); /* kept until a trim */
	model_fini(&m);
}
END_TEST

/* Marks over which nothing changes: growth has the site, none moving, so
 * the renderers have no section to show. */
START_TEST(test_growth_flat)
{
	struct model m;
	struct trace_event e;

	setup(&m);
	e = ev(MT_EV_ALLOC, 1);
	e.address = 0x1000;
	e.has_address = true;
	e.bytes = MiB;
	e.mem = MT_MEM_DEVICE;
	feed(&m, e);
	for (int64_t i = 0; i < 3; i++) {
		e = ev(MT_EV_MARK, 2 + i);
		e.has_op = true;
		e.op = 9 + i;
		feed(&m, e);
	}
	model_finish(&m);
	ck_assert_int_eq(m.growth.basis, MODEL_POINT_MARK);
	ck_assert_uint_eq(m.growth.n_sites, 1);
	ck_assert_uint_eq(m.growth.n_moving, 0);
	ck_assert(!m.growth.sites[0].growing);
	model_fini(&m);
}
END_TEST

/* ---- CUPTI ------------------------------------------------------------ */

static void hooked(struct model *m, int kind, int64_t t, uint64_t addr, uint64_t bytes, int mem)
{
	struct trace_event e = ev(kind, t);

	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = mem;
	feed(m, e);
}

static void cupti(struct model *m, int kind, int64_t t, uint64_t addr, uint64_t bytes, int mem,
		  int64_t module)
{
	struct trace_event e = ev(kind, t);

	e.source = MT_SOURCE_CUPTI;
	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = mem;
	e.module = module;
	e.stack = 0;
	feed(m, e);
}

static void cupti_mark(struct model *m, int64_t t, int kind)
{
	struct trace_event e = ev(MT_EV_MARK, t);

	e.source = MT_SOURCE_CUPTI;
	e.mark_kind = kind;
	e.has_op = true;
	e.op = kind;
	feed(m, e);
}

/* docs/cupti.md: same address, same bytes, CUPTI's time inside the
 * hooked allocation's window (previous end there, its own end); never
 * counted twice; the rest is CUPTI's alone, live until CUPTI's free. */
START_TEST(test_cupti_match)
{
	struct model m;

	setup(&m);
	cupti_mark(&m, 0, MARK_CUPTI_ON);
	hooked(&m, MT_EV_ALLOC, 100, 0x1000, 64, MT_MEM_DEVICE);
	hooked(&m, MT_EV_FREE, 200, 0x1000, 64, MT_MEM_DEVICE);
	hooked(&m, MT_EV_ALLOC, 300, 0x1000, 64, MT_MEM_POOL); /* the address again */
	hooked(&m, MT_EV_ALLOC, 310, 0x2000, 32, MT_MEM_HOST_PINNED);
	/* CUPTI's batch: stamped before each hooked twin */
	cupti(&m, MT_EV_ALLOC, 90, 0x1000, 64, MT_MEM_DEVICE, 3);  /* the first life */
	cupti(&m, MT_EV_FREE, 210, 0x1000, 64, MT_MEM_DEVICE, -1); /* dropped */
	cupti(&m, MT_EV_ALLOC, 290, 0x1000, 64, MT_MEM_DEVICE, 3); /* the second: (200, inf) */
	cupti(&m, MT_EV_ALLOC, 305, 0x2000, 32, MT_MEM_HOST_PINNED, 3);
	cupti(&m, MT_EV_ALLOC, 320, 0x3000, 100, MT_MEM_DEVICE, 5); /* alone */
	cupti(&m, MT_EV_ALLOC, 330, 0x4000, 7, MT_MEM_MANAGED, 5);  /* alone */
	cupti(&m, MT_EV_ALLOC, 340, 0x5000, 9, MT_MEM_ARRAY, 5);    /* not compared */
	ck_assert_uint_eq(m.device.live_bytes, 64 + 100 + 7);
	cupti(&m, MT_EV_FREE, 350, 0x3000, 100, MT_MEM_DEVICE, -1);
	hooked(&m, MT_EV_FREE, 360, 0x4000, 7, MT_MEM_MANAGED); /* not the hooks' to free */
	model_finish(&m);

	ck_assert(m.cupti.on);
	ck_assert_uint_eq(m.cupti.records, 8);
	ck_assert_uint_eq(m.cupti.allocs, 5);
	ck_assert_uint_eq(m.cupti.matched, 3);
	ck_assert_uint_eq(m.cupti.matched_bytes, 64 + 64 + 32);
	ck_assert_uint_eq(m.cupti.alone_count, 2);
	ck_assert_uint_eq(m.cupti.alone_bytes, 107);
	ck_assert_uint_eq(m.cupti.alone_live_bytes, 7);
	ck_assert_uint_eq(m.cupti.unconfirmed, 0);
	ck_assert_uint_eq(m.cupti.n_by_module, 1);
	ck_assert_int_eq(m.cupti.by_module[0].module, 5);
	ck_assert_uint_eq(m.cupti.by_module[0].count, 2);
	/* each allocation once: 3 hooked + 2 alone device-side */
	ck_assert_uint_eq(m.device.allocations, 4);
	ck_assert_uint_eq(m.host.allocations, 1);
	ck_assert_uint_eq(m.device.live_bytes, 64 + 7);
	ck_assert_uint_eq(m.unmatched_frees, 1); /* the hooked free of 0x4000 */
	model_fini(&m);
}
END_TEST

/* Different bytes, or a time outside the window: no match. The nearest
 * in time wins when two lives qualify. */
START_TEST(test_cupti_window)
{
	struct model m;

	setup(&m);
	cupti_mark(&m, 0, MARK_CUPTI_ON);
	hooked(&m, MT_EV_ALLOC, 100, 0x1000, 64, MT_MEM_DEVICE);
	hooked(&m, MT_EV_FREE, 200, 0x1000, 64, MT_MEM_DEVICE);
	cupti(&m, MT_EV_ALLOC, 250, 0x1000, 64, MT_MEM_DEVICE, 1); /* after its life: alone */
	cupti(&m, MT_EV_ALLOC, 90, 0x1000, 65, MT_MEM_DEVICE, 1);  /* other bytes: alone */
	hooked(&m, MT_EV_ALLOC, 400, 0x9000, 8, MT_MEM_DEVICE);
	hooked(&m, MT_EV_ALLOC, 500, 0x9100, 8, MT_MEM_DEVICE);
	model_finish(&m);
	ck_assert_uint_eq(m.cupti.matched, 0);
	ck_assert_uint_eq(m.cupti.alone_count, 2);
	/* no CUPTI record for the three hooked ones */
	ck_assert_uint_eq(m.cupti.unconfirmed, 3);
	ck_assert_uint_eq(m.cupti.unconfirmed_bytes, 64 + 8 + 8);
	model_fini(&m);
}
END_TEST

/* Not confirmed: only between CUPTI's on and off marks; without an on
 * mark nothing is flagged. A CUPTI record that comes before its hooked
 * twin (CUPTI flushed in between) is taken back by it. */
START_TEST(test_cupti_unconfirmed_and_claim)
{
	struct model m;

	setup(&m);
	hooked(&m, MT_EV_ALLOC, 100, 0x1000, 64, MT_MEM_DEVICE); /* before CUPTI watched */
	cupti_mark(&m, 150, MARK_CUPTI_ON);
	hooked(&m, MT_EV_ALLOC, 200, 0x2000, 16, MT_MEM_DEVICE);
	cupti(&m, MT_EV_ALLOC, 295, 0x3000, 8, MT_MEM_DEVICE, 1);
	hooked(&m, MT_EV_ALLOC, 300, 0x3000, 8, MT_MEM_DEVICE); /* its record came first */
	cupti_mark(&m, 400, MARK_CUPTI_OFF);
	hooked(&m, MT_EV_ALLOC, 500, 0x4000, 4, MT_MEM_DEVICE); /* after */
	model_finish(&m);
	ck_assert_uint_eq(m.cupti.matched, 1);
	ck_assert_uint_eq(m.cupti.alone_count, 0);
	ck_assert_uint_eq(m.cupti.alone_live_bytes, 0);
	ck_assert_uint_eq(m.cupti.unconfirmed, 1);
	ck_assert_uint_eq(m.cupti.unconfirmed_bytes, 16);
	ck_assert_uint_eq(m.device.allocations, 4);
	ck_assert_uint_eq(m.device.live_bytes, 64 + 16 + 8 + 4);
	ck_assert_uint_eq(m.reused_addresses, 0);
	model_fini(&m);

	setup(&m);
	hooked(&m, MT_EV_ALLOC, 100, 0x1000, 64, MT_MEM_DEVICE);
	cupti(&m, MT_EV_ALLOC, 200, 0x5000, 8, MT_MEM_DEVICE, 1);
	model_finish(&m);
	ck_assert(!m.cupti.on);
	ck_assert_uint_eq(m.cupti.unconfirmed, 0);
	ck_assert_uint_eq(m.cupti.alone_count, 1);
	model_fini(&m);
}
END_TEST

/* Graphs by handle: CUPTI's callback comes before the hook's event; a
 * graph or exec only CUPTI saw joins the lifetimes. */
START_TEST(test_cupti_graphs)
{
	struct model m;
	struct trace_event e;

	setup(&m);
	e = ev(MT_EV_GRAPH_CREATE, 10);
	e.source = MT_SOURCE_CUPTI;
	e.handle = 0xa1;
	feed(&m, e);
	gev(&m, MT_EV_GRAPH_CREATE, 11, 0xa1, 0, 0);
	e = ev(MT_EV_GRAPH_CREATE, 20);
	e.source = MT_SOURCE_CUPTI;
	e.handle = 0xb1;
	feed(&m, e);
	e = ev(MT_EV_EXEC_CREATE, 21);
	e.source = MT_SOURCE_CUPTI;
	e.handle = 0xb2;
	e.address = 0xb1;
	feed(&m, e);
	e = ev(MT_EV_EXEC_DESTROY, 22);
	e.source = MT_SOURCE_CUPTI;
	e.handle = 0xb2;
	feed(&m, e);
	model_finish(&m);
	ck_assert_uint_eq(m.cupti.graphs_matched, 1);
	ck_assert_uint_eq(m.cupti.graphs_alone, 1);
	ck_assert_uint_eq(m.cupti.graphs_alone_never_destroyed, 1);
	ck_assert_uint_eq(m.cupti.execs_alone, 1);
	ck_assert_uint_eq(m.cupti.execs_alone_never_destroyed, 0);
	ck_assert_uint_eq(m.graphs.created, 2);
	ck_assert_uint_eq(m.graphs.execs_created, 1);
	ck_assert_uint_eq(m.graphs.execs_destroyed, 1);
	ck_assert_uint_eq(m.graphs.n_orphans, 2); /* 0xa1 and 0xb1 */
	model_fini(&m);
}
END_TEST

Suite *graph_suite(void)
{
	Suite *s = suite_create("graph");
	TCase *tc = tcase_create("graph");

	tcase_add_test(tc, test_graph_node_lifecycle);
	tcase_add_test(tc, test_graph_transient);
	tcase_add_test(tc, test_graph_auto_free_upload);
	tcase_add_test(tc, test_graph_capture_cross_free);
	tcase_add_test(tc, test_graph_at_mark);
	tcase_add_test(tc, test_graph_instantiation_points);
	tcase_add_test(tc, test_graph_orphans_share_the_pool);
	tcase_add_test(tc, test_graph_capture_joined_streams);
	tcase_add_test(tc, test_graph_capture_segments);
	tcase_add_test(tc, test_growth_flat);
	tcase_add_test(tc, test_cupti_match);
	tcase_add_test(tc, test_cupti_window);
	tcase_add_test(tc, test_cupti_unconfirmed_and_claim);
	tcase_add_test(tc, test_cupti_graphs);
	suite_add_tcase(s, tc);
	return s;
}
