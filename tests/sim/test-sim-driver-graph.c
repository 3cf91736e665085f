/* Driver self-test, part three: stream capture, graphs and graph memory
 * (sim-driver-capture.c, sim-driver-graph.c, sim-driver-graphmem.c).
 * Runs on device 0 with its primary context current and nothing
 * allocated, and leaves it so. */
#include "test-sim-driver.h"

#include <pthread.h>
#include <string.h>

/* Exported by the driver, declared by cuda.h only for per-thread builds. */
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

static const CUDA_MEM_ALLOC_NODE_PARAMS alloc_params = {
	.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
		       .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } },
};

static cuuint64_t
graph_attr(CUgraphMem_attribute attr)
{
	cuuint64_t v = 0;

	EXPECT_RC(cuDeviceGetGraphMemAttribute(0, attr, &v), CUDA_SUCCESS);
	return v;
}

#define GRAPH_USED() graph_attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)
#define GRAPH_RESERVED() graph_attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)

static CUstreamCaptureStatus
capture_status(CUstream s)
{
	CUstreamCaptureStatus status = (CUstreamCaptureStatus)-1;

	EXPECT_RC(cuStreamIsCapturing(s, &status), CUDA_SUCCESS);
	return status;
}

/* The dependency set of a stream being captured: its size, the array. */
static size_t
capture_deps(CUstream s, const CUgraphNode **deps)
{
	CUstreamCaptureStatus status;
	size_t n = 99;

	*deps = NULL;
	EXPECT_RC(cuStreamGetCaptureInfo(s, &status, NULL, NULL, deps, NULL, &n), CUDA_SUCCESS);
	return n;
}

/* An alloc node of bytes in graph, its address returned. */
static CUdeviceptr
alloc_node(CUgraph graph, size_t bytes, CUgraphNode *node)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params;
	CUgraphNode n;

	p.bytesize = bytes;
	EXPECT_RC(cuGraphAddMemAllocNode(node ? node : &n, graph, NULL, 0, &p), CUDA_SUCCESS);
	return p.dptr;
}

static void
free_node(CUgraph graph, CUdeviceptr dptr)
{
	CUgraphNode n;

	EXPECT_RC(cuGraphAddMemFreeNode(&n, graph, NULL, 0, dptr), CUDA_SUCCESS);
}

static void
expect_range(CUdeviceptr p, CUdeviceptr want_base, size_t want_size)
{
	CUdeviceptr base = 0;
	size_t size = 0;

	EXPECT_RC(cuMemGetAddressRange(&base, &size, p), CUDA_SUCCESS);
	EXPECT(base == want_base && size == want_size);
}

/* Captured stream-ordered calls become nodes; nothing is allocated. */
static CUgraph
capture_model(CUstream s, CUdeviceptr *a, CUdeviceptr *b)
{
	const CUgraphNode *deps = NULL;
	CUstreamCaptureStatus status;
	cuuint64_t id = 0;
	CUgraph g = NULL, during = NULL;
	size_t ndeps = 7;

	EXPECT(capture_status(s) == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
		  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
		  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamBeginCapture(s, (CUstreamCaptureMode)7), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
	EXPECT(capture_status(s) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RC(cuStreamGetCaptureInfo(s, &status, &id, &during, &deps, NULL, &ndeps),
		  CUDA_SUCCESS);
	EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && during && ndeps == 0);

	EXPECT_RC(cuMemAllocAsync(a, 3 * MiB, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
	expect_range(*a, *a, 4 * MiB);
	EXPECT_RC(cuMemsetD8Async(*a, 1, 3 * MiB, s), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(*a, s), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync(b, MiB, s), CUDA_SUCCESS);
	EXPECT(*b >= *a + 4 * MiB);
	EXPECT_RC(cuStreamGetCaptureInfo(s, &status, NULL, NULL, &deps, NULL, &ndeps),
		  CUDA_SUCCESS);
	EXPECT(ndeps == 1 && deps && deps[0]);
	/* Not live before a launch: no copies to it. */
	EXPECT_RC(cuMemsetD8(*b, 0, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	EXPECT(g == during);
	EXPECT(capture_status(s) == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuStreamEndCapture(s, &during), CUDA_ERROR_ILLEGAL_STATE);
	return g;
}

static void
expect_nodes(CUgraph g, CUdeviceptr a)
{
	const CUgraphNodeType want[] = { CU_GRAPH_NODE_TYPE_MEM_ALLOC, CU_GRAPH_NODE_TYPE_MEMSET,
					 CU_GRAPH_NODE_TYPE_MEM_FREE,
					 CU_GRAPH_NODE_TYPE_MEM_ALLOC };
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	CUgraphNode nodes[8];
	CUgraphNodeType type;
	CUdeviceptr freed = 0;
	size_t n = 0;

	EXPECT_RC(cuGraphGetNodes(g, NULL, &n), CUDA_SUCCESS);
	EXPECT(n == 4);
	n = 8;
	EXPECT_RC(cuGraphGetNodes(g, nodes, &n), CUDA_SUCCESS);
	for (size_t i = 0; i < 4 && n == 4; i++) {
		EXPECT_RC(cuGraphNodeGetType(nodes[i], &type), CUDA_SUCCESS);
		EXPECT(type == want[i]);
	}
	EXPECT_RC(cuGraphMemAllocNodeGetParams(nodes[0], &p), CUDA_SUCCESS);
	EXPECT(p.bytesize == 3 * MiB && p.dptr == a && p.poolProps.location.id == 0);
	EXPECT_RC(cuGraphMemFreeNodeGetParams(nodes[2], &freed), CUDA_SUCCESS);
	EXPECT(freed == a);
	EXPECT_RC(cuGraphMemFreeNodeGetParams(nodes[0], &freed), CUDA_ERROR_INVALID_VALUE);
}

/* Physical memory comes at the launch: the graph's 4 MiB + 2 MiB at
 * once; after it, the 2 MiB that stay live and the 4 MiB the executable
 * graph keeps mapped. */
static void
test_capture_and_launch(CUstream s)
{
	unsigned char out[16];
	CUdeviceptr a = 0, b = 0;
	CUgraphExec e, e2;
	CUgraph g = capture_model(s, &a, &b), clone;

	expect_nodes(g, a);
	EXPECT_RC(cuGraphClone(&clone, g), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphInstantiate(&e2, g, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 0 && GRAPH_RESERVED() == 0 && GRAPH_USED() == 0);

	EXPECT_RC(cuGraphLaunch(e, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 6 * MiB && GRAPH_RESERVED() == 6 * MiB && GRAPH_USED() == 6 * MiB);
	EXPECT_RC(cuMemsetD8(b, 7, MiB), CUDA_SUCCESS);
	EXPECT_RC(cuMemcpyDtoH(out, b + 100, sizeof(out)), CUDA_SUCCESS);
	EXPECT(out[0] == 7 && out[15] == 7);
	EXPECT_RC(cuMemsetD8(a, 0, 16), CUDA_ERROR_INVALID_VALUE);
	/* Relaunching while b is live fails and changes nothing. */
	EXPECT_RC(cuGraphLaunch(e, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 6 * MiB && GRAPH_USED() == 6 * MiB);
	/* Freed: back to the graph pool, which keeps it. */
	EXPECT_RC(cuMemFree(b), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(b), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 6 * MiB && GRAPH_USED() == 6 * MiB);
	EXPECT_RC(cuGraphLaunch(e, s), CUDA_SUCCESS);
	EXPECT(GRAPH_RESERVED() == 6 * MiB);

	/* Destroying the graph and the executable graph frees nothing live. */
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphLaunch(e, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_ERROR_INVALID_VALUE);
	EXPECT(used_bytes() == 6 * MiB && GRAPH_USED() == 2 * MiB);
	expect_range(b, b, 2 * MiB);
	EXPECT_RC(cuMemsetD8(b, 1, MiB), CUDA_SUCCESS);
	{
		CUdeviceptr base;
		size_t size;
		EXPECT_RC(cuMemGetAddressRange(&base, &size, a), CUDA_ERROR_NOT_FOUND);
	}
	/* Trim keeps what is live. */
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && GRAPH_RESERVED() == 2 * MiB);
	EXPECT_RC(cuMemFreeAsync(b, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 2 * MiB && GRAPH_USED() == 0);
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0 && GRAPH_RESERVED() == 0);
	EXPECT_RC(cuDeviceGraphMemTrim(2), CUDA_ERROR_INVALID_DEVICE);
}

static void
test_attributes(void)
{
	cuuint64_t zero = 0, one = 1;

	EXPECT(graph_attr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == 6 * MiB);
	EXPECT(graph_attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) == 6 * MiB);
	EXPECT_RC(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero),
		  CUDA_SUCCESS);
	EXPECT_RC(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero),
		  CUDA_SUCCESS);
	EXPECT(graph_attr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == 0);
	EXPECT(graph_attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) == 0);
	EXPECT_RC(cuDeviceGetGraphMemAttribute(2, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one),
		  CUDA_ERROR_INVALID_DEVICE);
}

/* Explicit nodes: what a free node may take. */
static void
test_node_rules(void)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params;
	CUgraph g, other;
	CUgraphNode n, twice[2];
	CUdeviceptr a;

	EXPECT_RC(cuGraphCreate(&g, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphCreate(&g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphCreate(&other, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphAddMemAllocNode(&n, g, NULL, 0, &p), CUDA_ERROR_INVALID_VALUE);
	p.bytesize = MiB;
	p.poolProps.location.id = 2;
	EXPECT_RC(cuGraphAddMemAllocNode(&n, g, NULL, 0, &p), CUDA_ERROR_INVALID_VALUE);
	p.poolProps.location.id = 0;
	p.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT_RC(cuGraphAddMemAllocNode(&n, g, NULL, 0, &p), CUDA_ERROR_INVALID_VALUE);
	a = alloc_node(g, 4 * MiB, &n);
	twice[0] = twice[1] = n;
	EXPECT_RC(cuGraphAddMemFreeNode(&n, g, twice, 2, a), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphAddMemFreeNode(&n, g, NULL, 0, a + 512), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphAddMemFreeNode(&n, g, NULL, 0, 0xdead), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphAddMemFreeNode(&n, g, &n, 1, a), CUDA_SUCCESS);
	EXPECT_RC(cuGraphAddMemFreeNode(&n, g, NULL, 0, a), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphAddMemFreeNode(&n, other, NULL, 0, a), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphAddEmptyNode(&n, other, NULL, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(other), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* Memory a graph does not free is freed by another graph's free node, or
 * by the next launch of an auto-free executable graph. */
static void
test_cross_graph_and_auto_free(CUstream s)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS ip = { .flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD,
					     .hUploadStream = s };
	CUgraph maker, freer;
	CUgraphExec em, ef;
	cuuint64_t flags = 7;
	CUdeviceptr q;

	EXPECT_RC(cuGraphCreate(&maker, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphCreate(&freer, 0), CUDA_SUCCESS);
	q = alloc_node(maker, 4 * MiB, NULL);
	free_node(freer, q);
	/* An upload maps without running. */
	EXPECT_RC(cuGraphInstantiateWithParams(&em, maker, &ip), CUDA_SUCCESS);
	EXPECT(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS && !ip.hErrNode_out);
	EXPECT(used_bytes() == 4 * MiB && GRAPH_USED() == 4 * MiB);
	EXPECT_RC(cuMemsetD8(q, 0, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphInstantiate(&ef, freer, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(ef, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphLaunch(em, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB && GRAPH_USED() == 4 * MiB);
	EXPECT_RC(cuGraphLaunch(ef, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(ef, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(q), CUDA_ERROR_INVALID_VALUE);
	/* Freed in another graph: the owner may not free it too. */
	{
		CUgraphNode n;
		EXPECT_RC(cuGraphAddMemFreeNode(&n, maker, NULL, 0, q), CUDA_ERROR_INVALID_VALUE);
	}

	EXPECT_RC(cuGraphExecDestroy(em), CUDA_SUCCESS);
	EXPECT_RC(cuGraphInstantiate(&em, maker,
				     CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
					     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphInstantiate(&em, maker, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphInstantiate(&em, maker, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
		  CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecGetFlags(em, &flags), CUDA_SUCCESS);
	EXPECT(flags == CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	EXPECT_RC(cuGraphLaunch(em, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(em, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB && GRAPH_USED() == 4 * MiB);
	EXPECT_RC(cuGraphExecDestroy(em), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(ef), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(maker), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(freer), CUDA_SUCCESS);
	EXPECT(GRAPH_USED() == 4 * MiB);
	EXPECT_RC(cuMemFree(q), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* Graphs never run at once: two graphs that free what they allocate
 * share the pool's memory. A launch the device cannot back fails and
 * changes nothing. */
static void
test_sharing_and_oom(CUstream s)
{
	CUgraph g1, g2;
	CUgraphExec e1, e2;
	CUdeviceptr a, big;

	EXPECT_RC(cuGraphCreate(&g1, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphCreate(&g2, 0), CUDA_SUCCESS);
	free_node(g1, alloc_node(g1, 8 * MiB, NULL));
	a = alloc_node(g2, 6 * MiB, NULL);
	free_node(g2, a);
	EXPECT_RC(cuGraphInstantiate(&e1, g1, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphInstantiate(&e2, g2, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e1, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e2, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e1, s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 8 * MiB && GRAPH_RESERVED() == 8 * MiB && GRAPH_USED() == 8 * MiB);
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0 && GRAPH_USED() == 0);

	EXPECT_RC(cuMemAlloc(&big, CAPACITY - RESERVED - 4 * MiB), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e1, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RC(cuGraphUpload(e2, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(GRAPH_RESERVED() == 0 && GRAPH_USED() == 0);
	EXPECT_RC(cuMemFree(big), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e1, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(e1), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(e2), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g1), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g2), CUDA_SUCCESS);
	EXPECT_RC(cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

struct other_thread {
	CUcontext ctx;
	CUstream stream;
	CUresult alloc_rc, end_rc;
};

static void *
other_thread_calls(void *arg)
{
	struct other_thread *t = arg;
	CUdeviceptr p;
	CUgraph g;

	cuCtxSetCurrent(t->ctx);
	t->alloc_rc = cuMemAlloc(&p, 512);
	if (t->alloc_rc == CUDA_SUCCESS)
		cuMemFree(p);
	t->end_rc = t->stream ? cuStreamEndCapture(t->stream, &g) : CUDA_SUCCESS;
	return NULL;
}

static struct other_thread
from_other_thread(CUstream end_stream)
{
	struct other_thread t = { .stream = end_stream };
	pthread_t th;

	cuCtxGetCurrent(&t.ctx);
	EXPECT(pthread_create(&th, NULL, other_thread_calls, &t) == 0);
	EXPECT(pthread_join(th, NULL) == 0);
	return t;
}

/* Which calls a capture forbids, and to whom (cuThreadExchangeStreamCaptureMode). */
static void
test_capture_modes(CUstream s)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	struct other_thread t;
	CUdeviceptr p;
	CUgraph g = (CUgraph)1;

	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	t = from_other_thread(s);
	EXPECT(t.alloc_rc == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT(t.end_rc == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	EXPECT(capture_status(s) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuMemAllocAsync(&p, 512, s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(g == NULL);

	/* The capturing thread itself, unless it or the capture is relaxed. */
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
	t = from_other_thread(NULL);
	EXPECT(t.alloc_rc == CUDA_SUCCESS);
	EXPECT_RC(cuThreadExchangeStreamCaptureMode(&mode), CUDA_SUCCESS);
	EXPECT(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
	EXPECT_RC(cuThreadExchangeStreamCaptureMode(&mode), CUDA_SUCCESS);
	EXPECT(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSynchronize(), CUDA_SUCCESS);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* What else invalidates a capture, and the other ways to capture. */
static void
test_capture_rules(CUstream s)
{
	CUgraph g = NULL, target;
	CUgraphExec e;
	CUgraphNode first;
	const CUgraphNode *deps = NULL;
	CUdeviceptr p, q;
	size_t n = 0;

	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
	EXPECT_RC(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* A captured free takes only graph memory. */
	EXPECT_RC(cuMemAlloc(&p, 512), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuMemFree(p), CUDA_SUCCESS);
	/* Launching into a capture is not simulated. */
	EXPECT_RC(cuGraphCreate(&g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e, s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(cuStreamEndCapture(s, &target), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_SUCCESS);

	/* Into an existing graph, after its own nodes. */
	EXPECT_RC(cuGraphAddEmptyNode(&first, g, NULL, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCaptureToGraph(s, g, &first, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL),
		  CUDA_SUCCESS);
	EXPECT(capture_deps(s, &deps) == 1 && deps[0] == first);
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemAllocAsync(&q, MiB, s), CUDA_SUCCESS);
	EXPECT(capture_deps(s, &deps) == 1 && deps[0] != first);
	EXPECT_RC(cuStreamEndCapture(s, &target), CUDA_SUCCESS);
	EXPECT(target == g);
	EXPECT_RC(cuGraphGetNodes(g, NULL, &n), CUDA_SUCCESS);
	EXPECT(n == 2);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);

	/* The thread's per-thread default stream, through the _ptsz ABIs. */
	EXPECT_RC(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT(capture_status(NULL) == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT(capture_status(CU_STREAM_PER_THREAD) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RC(cuMemAllocAsync_ptsz(&q, MiB, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuMemFreeAsync_ptsz(q, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture_ptsz(NULL, &g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphGetNodes(g, NULL, &n), CUDA_SUCCESS);
	EXPECT(n == 2);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}

/* A stream destroyed mid-capture takes the capture with it; a context
 * destroyed takes its executable graphs and live graph memory. */
static void
test_teardown(CUcontext primary)
{
	CUcontext ctx;
	CUstream s;
	CUgraph g;
	CUgraphExec e;
	CUdeviceptr p;

	EXPECT_RC(cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuMemAllocAsync(&p, MiB, s), CUDA_SUCCESS);
	EXPECT_RC(cuStreamDestroy(s), CUDA_SUCCESS);
	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	EXPECT(capture_status(s) == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RC(cuGraphCreate(&g, 0), CUDA_SUCCESS);
	p = alloc_node(g, 3 * MiB, NULL);
	EXPECT_RC(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(e, s), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT(used_bytes() == 4 * MiB);
	EXPECT_RC(cuCtxDestroy(ctx), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0 && GRAPH_RESERVED() == 0 && GRAPH_USED() == 0);
	EXPECT_RC(cuGraphExecDestroy(e), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);
}

void
test_graphs(CUcontext primary)
{
	CUstream s;

	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	test_capture_and_launch(s);
	test_attributes();
	test_node_rules();
	test_cross_graph_and_auto_free(s);
	test_sharing_and_oom(s);
	test_capture_modes(s);
	test_capture_rules(s);
	EXPECT_RC(cuStreamDestroy(s), CUDA_SUCCESS);
	test_teardown(primary);
	EXPECT(used_bytes() == 0);
}
