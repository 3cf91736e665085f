/* Driver self-test, part four: events (sim-driver-event.c) and captures
 * that span streams through them (sim-driver-capture.c). Runs on device 0
 * with its primary context current and nothing allocated, and leaves it
 * so. */
#include "test-sim-driver.h"

/* Exported by the driver, declared by cuda.h only for per-thread builds. */
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
/* The CUDA 2.0 ABIs that cuda.h renames to their _v2. */
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);

struct capture {
	CUstreamCaptureStatus status;
	cuuint64_t id;
	CUgraph graph;
	size_t ndeps;
	const CUgraphNode *deps;
};

static struct capture
capture_of(CUstream s)
{
	struct capture c = { .status = (CUstreamCaptureStatus)-1 };

	EXPECT_RC(cuStreamGetCaptureInfo(s, &c.status, &c.id, &c.graph, &c.deps, NULL, &c.ndeps),
		  CUDA_SUCCESS);
	return c;
}

static CUevent
event(unsigned int flags)
{
	CUevent e = NULL;

	EXPECT_RC(cuEventCreate(&e, flags), CUDA_SUCCESS);
	return e;
}

static CUstream
stream(void)
{
	CUstream s = NULL;

	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	return s;
}

/* s waits on what from has done so far. */
static void
depend(CUstream s, CUstream from, CUevent e)
{
	EXPECT_RC(cuEventRecord(e, from), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(s, e, CU_EVENT_WAIT_DEFAULT), CUDA_SUCCESS);
}

static size_t
node_count(CUgraph g)
{
	size_t n = 0;

	EXPECT_RC(cuGraphGetNodes(g, NULL, &n), CUDA_SUCCESS);
	return n;
}

static float
elapsed(CUevent a, CUevent b, CUresult want)
{
	float ms = -1;

	EXPECT_RC(cuEventElapsedTime_v2(&ms, a, b), want);
	return ms;
}

/* Outside captures: complete at once, timed by the simulated clock. */
static void
test_event_basics(CUstream s)
{
	CUevent a = event(CU_EVENT_DEFAULT), b = event(CU_EVENT_BLOCKING_SYNC);
	CUevent untimed = event(CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS);
	CUevent e;
	float ms = 0;

	EXPECT_RC(cuEventCreate(&e, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuEventCreate(&e, 0x80), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuEventCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	/* Never recorded: an empty set of work. */
	EXPECT_RC(cuEventQuery(a), CUDA_SUCCESS);
	EXPECT_RC(cuEventSynchronize(a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(s, a, 0), CUDA_SUCCESS);
	elapsed(a, b, CUDA_ERROR_INVALID_HANDLE);

	EXPECT_RC(cuEventRecord(a, s), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(b, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuEventQuery(b), CUDA_SUCCESS);
	EXPECT(elapsed(a, b, CUDA_SUCCESS) == 0.001f);
	EXPECT(elapsed(b, a, CUDA_SUCCESS) == -0.001f);
	EXPECT_RC(cuEventRecordWithFlags(b, s, CU_EVENT_RECORD_DEFAULT), CUDA_SUCCESS);
	EXPECT_RC(cuEventElapsedTime(&ms, a, b), CUDA_SUCCESS);
	EXPECT(ms == 0.002f);
	EXPECT_RC(cuEventElapsedTime_v2(NULL, a, b), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuEventRecord(untimed, s), CUDA_SUCCESS);
	elapsed(a, untimed, CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuStreamWaitEvent(s, b, CU_EVENT_WAIT_DEFAULT), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(NULL, b, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent_ptsz(NULL, b, 0), CUDA_SUCCESS);

	/* The EXTERNAL flags are for captures only. */
	EXPECT_RC(cuEventRecordWithFlags(a, s, CU_EVENT_RECORD_EXTERNAL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuEventRecordWithFlags(a, s, 0x10), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamWaitEvent(s, a, CU_EVENT_WAIT_EXTERNAL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamWaitEvent(s, a, 0x10), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamWaitEvent(s, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuEventRecord(NULL, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuEventRecord(a, (CUstream)&ms), CUDA_ERROR_INVALID_HANDLE);

	EXPECT_RC(cuEventDestroy_v2(a), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy_v2(a), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuEventQuery(a), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuEventDestroy(b), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(untimed), CUDA_SUCCESS);
}

/* An event synchronisation lets pools give back what exceeds their
 * release threshold, like the other synchronisations; an event belongs
 * to its context. */
static void
test_event_context(CUcontext primary, CUstream s)
{
	CUevent e = event(0), other;
	CUdeviceptr p;
	CUcontext ctx;

	EXPECT_RC(cuMemAllocAsync(&p, MiB, s), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(p, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuEventRecord(e, s), CUDA_SUCCESS);
	EXPECT_RC(cuEventSynchronize(e), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);

	EXPECT_RC(cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	other = event(0);
	/* Recorded on a stream of another context: no; waited on: yes. */
	EXPECT_RC(cuEventRecord(e, NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuStreamWaitEvent(NULL, e, 0), CUDA_SUCCESS);
	EXPECT_RC(cuCtxDestroy(ctx), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT_RC(cuEventQuery(other), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuEventDestroy(e), CUDA_SUCCESS);
}

/* A captures; B and C join through an event recorded on A; each does
 * work; both are joined back; the end succeeds for all three. */
static CUgraph
capture_fork_join(CUstream a, CUstream b, CUstream c, CUdeviceptr *pa, CUdeviceptr *pb)
{
	CUevent fork = event(CU_EVENT_DISABLE_TIMING), jb = event(0), jc = event(0);
	struct capture ca, cb;
	CUgraph g = NULL;

	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync(pa, 3 * MiB, a), CUDA_SUCCESS);
	depend(b, a, fork);
	EXPECT_RC(cuStreamWaitEvent(c, fork, 0), CUDA_SUCCESS);
	ca = capture_of(a);
	cb = capture_of(b);
	EXPECT(cb.status == CU_STREAM_CAPTURE_STATUS_ACTIVE && cb.id == ca.id &&
	       cb.graph == ca.graph && cb.ndeps == 1 && cb.deps[0] == ca.deps[0]);
	EXPECT(capture_of(c).id == ca.id);
	/* A joined stream is being captured: it cannot begin one. */
	EXPECT_RC(cuStreamBeginCapture(b, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);

	EXPECT_RC(cuMemAllocAsync(pb, MiB, b), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD8Async(*pb, 0, MiB, b), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(*pb, b), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD8Async(*pa, 1, 16, c), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(*pa, c), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	depend(a, b, jb);
	depend(a, c, jc);
	EXPECT(capture_of(a).ndeps == 3);
	EXPECT_RC(cuEventDestroy(fork), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(jb), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(jc), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_SUCCESS);
	EXPECT(g == ca.graph);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT(capture_of(c).status == CU_STREAM_CAPTURE_STATUS_NONE);
	return g;
}

/* The graph of capture_fork_join: graph memory as for one stream. */
static void
test_fork_join(CUstream a, CUstream b, CUstream c)
{
	const CUgraphNodeType want[] = { CU_GRAPH_NODE_TYPE_MEM_ALLOC, CU_GRAPH_NODE_TYPE_MEM_ALLOC,
					 CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_MEM_FREE,
					 CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_MEM_FREE };
	CUdeviceptr pa = 0, pb = 0;
	CUgraph g = capture_fork_join(a, b, c, &pa, &pb);
	CUgraphNode nodes[6];
	CUgraphNodeType type;
	CUgraphExec e;
	cuuint64_t v = 0;
	size_t n = 6;

	EXPECT(node_count(g) == 6);
	EXPECT_RC(cuGraphGetNodes(g, nodes, &n), CUDA_SUCCESS);
	for (size_t i = 0; i < 6 && n == 6; i++) {
		EXPECT_RC(cuGraphNodeGetType(nodes[i], &type), CUDA_SUCCESS);
		EXPECT(type == want[i]);
	}
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	for (int i = 0; i < 3; i++)
		EXPECT_RC(cuGraphLaunch(e, a), CUDA_SUCCESS);
	EXPECT(used_bytes() == 6 * MiB);
	EXPECT_RC(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v),
		  CUDA_SUCCESS);
	EXPECT(v == 6 * MiB);
	EXPECT_RC(cuMemsetD8(pa, 0, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* A fork whose last work is not joined back fails the end, which ends the
 * capture everywhere. Work joined and then extended is unjoined again; a
 * stream that forked and did nothing needs no join; a join may pass
 * through another stream. */
static void
test_unjoined(CUstream a, CUstream b, CUstream c)
{
	CUevent e1 = event(0), e2 = event(0);
	CUdeviceptr p;
	CUgraph g = (CUgraph)1;

	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(b, a, e1);
	EXPECT_RC(cuMemAllocAsync(&p, MiB, b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	EXPECT(g == NULL);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuMemAllocAsync(&p, MiB, b), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB);
	EXPECT_RC(cuMemFreeAsync(p, b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamSynchronize(b), CUDA_SUCCESS);

	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD8Async(0x1000, 0, 0, a), CUDA_SUCCESS);
	depend(b, a, e1);
	EXPECT_RC(cuMemsetD8Async(0x1000, 0, 0, b), CUDA_SUCCESS);
	depend(a, b, e2);
	EXPECT_RC(cuMemsetD8Async(0x1000, 0, 0, b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);

	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(b, a, e1);
	EXPECT_RC(cuStreamWaitEvent(c, e1, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemsetD8Async(0x1000, 0, 0, c), CUDA_SUCCESS);
	depend(b, c, e2);
	depend(a, b, e1);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_SUCCESS);
	EXPECT(node_count(g) == 1);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(e1), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(e2), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* Whatever invalidates a capture invalidates it on all its streams. */
static void
test_invalidation(CUstream a, CUstream b, CUstream c)
{
	CUevent e = event(0), outside = event(0);
	CUstream d = stream();
	CUdeviceptr p;
	CUgraph g = (CUgraph)1;

	/* A synchronisation of a joined stream; ending on a joined stream. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(b, a, e);
	EXPECT_RC(cuStreamSynchronize(b), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuMemAllocAsync(&p, MiB, a), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuStreamWaitEvent(c, e, 0), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(capture_of(c).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuStreamEndCapture(b, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(g == NULL && capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);

	/* Ending on a joined stream invalidates; so does a query of one. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(b, a, e);
	EXPECT_RC(cuStreamEndCapture(b, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamQuery(b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamQuery(a), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* Two captures may not merge. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(d, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(d, e, 0), CUDA_ERROR_STREAM_CAPTURE_MERGE);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(d, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* A capture may not wait on uncaptured work; an empty event is fine. */
	EXPECT_RC(cuEventRecord(outside, c), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(e), CUDA_SUCCESS);
	e = event(0);
	EXPECT_RC(cuStreamWaitEvent(a, e, 0), CUDA_SUCCESS);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RC(cuStreamWaitEvent(a, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* An event of a capture in progress is no work to query or time; after
	 * the end it is an empty set of work again. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuEventQuery(e), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(b, e, 0), CUDA_SUCCESS);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);
	elapsed(outside, e, CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	elapsed(outside, e, CUDA_ERROR_CAPTURED_EVENT);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* The legacy stream cannot join. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(CU_STREAM_LEGACY, e, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* Destroying a joined stream invalidates; destroying the origin ends
	 * the capture on every stream. */
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(d, a, e);
	EXPECT_RC(cuStreamDestroy(d), CUDA_SUCCESS);
	EXPECT(capture_of(a).status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	d = stream();
	EXPECT_RC(cuStreamBeginCapture(d, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	depend(b, d, e);
	EXPECT_RC(cuStreamDestroy(d), CUDA_SUCCESS);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuEventDestroy(e), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(outside), CUDA_SUCCESS);
}

/* With the EXTERNAL flags, events are nodes, not joins: a launch records
 * the event of an event-record node. */
static void
test_external(CUstream a, CUstream b)
{
	const CUgraphNodeType want[] = { CU_GRAPH_NODE_TYPE_EVENT_RECORD,
					 CU_GRAPH_NODE_TYPE_WAIT_EVENT };
	CUevent rec = event(0), start = event(0), done = event(0);
	CUgraphNode nodes[2];
	CUgraphNodeType type;
	CUgraphExec e;
	CUgraph g;
	size_t n = 2;

	EXPECT_RC(cuEventRecord(done, b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecordWithFlags(rec, a, CU_EVENT_RECORD_EXTERNAL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(a, done, CU_EVENT_WAIT_EXTERNAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventQuery(rec), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(b, rec, 0), CUDA_SUCCESS);
	EXPECT(capture_of(b).status == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT(capture_of(a).ndeps == 1);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphGetNodes(g, nodes, &n), CUDA_SUCCESS);
	EXPECT(n == 2);
	for (size_t i = 0; i < 2 && n == 2; i++) {
		EXPECT_RC(cuGraphNodeGetType(nodes[i], &type), CUDA_SUCCESS);
		EXPECT(type == want[i]);
	}
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(start, a), CUDA_SUCCESS);
	elapsed(start, rec, CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuGraphLaunch(e, a), CUDA_SUCCESS);
	EXPECT(elapsed(start, rec, CUDA_SUCCESS) == 0.001f);
	/* A graph that outlives its event records nothing. */
	EXPECT_RC(cuEventDestroy(rec), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(start), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(done), CUDA_SUCCESS);
}

/* The per-thread default stream forks and joins like any other. */
static void
test_per_thread(CUstream a)
{
	CUstreamCaptureStatus status = (CUstreamCaptureStatus)-1;
	CUevent e = event(0);
	CUdeviceptr p;
	CUgraph g;

	EXPECT_RC(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent_ptsz(NULL, e, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamIsCapturing_ptsz(NULL, &status), CUDA_SUCCESS);
	EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RC(cuStreamEndCapture_ptsz(NULL, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	EXPECT_RC(cuStreamEndCapture(a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	EXPECT_RC(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync_ptsz(&p, MiB, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord_ptsz(e, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(a, e, 0), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(p, a), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent_ptsz(NULL, e, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture_ptsz(NULL, &g), CUDA_SUCCESS);
	EXPECT(node_count(g) == 2);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuEventDestroy(e), CUDA_SUCCESS);
}

void
test_events(CUcontext primary)
{
	CUstream a = stream(), b = stream(), c = stream();

	test_event_basics(a);
	test_event_context(primary, a);
	test_fork_join(a, b, c);
	test_unjoined(a, b, c);
	test_invalidation(a, b, c);
	test_external(a, b);
	test_per_thread(a);
	EXPECT_RC(cuStreamDestroy(a), CUDA_SUCCESS);
	EXPECT_RC(cuStreamDestroy(b), CUDA_SUCCESS);
	EXPECT_RC(cuStreamDestroy(c), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}
