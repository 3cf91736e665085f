/* Simulated driver: stream capture. While a stream is being captured,
 * the work issued to it is not done but added to a graph, which
 * cuStreamEndCapture hands over. What the simulator captures:
 * cuMemAllocAsync and cuMemAllocFromPoolAsync become memory-alloc nodes
 * (the call returns the node's address, nothing is allocated), and
 * cuMemFreeAsync a memory-free node (nothing is freed); cuMemsetD8Async
 * and cuMemcpyAsync become nodes that do nothing (sim-driver-graph.c).
 *
 * The rules kept from the real driver (cuda.h, cuStreamBeginCapture and
 * cuThreadExchangeStreamCaptureMode):
 *  - the legacy default stream cannot be captured; the per-thread default
 *    stream can, one capture per thread;
 *  - a stream is captured once at a time (CUDA_ERROR_ILLEGAL_STATE);
 *  - a capture not begun in relaxed mode must end on the thread that began
 *    it (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
 *  - "potentially unsafe" calls (here cuMemAlloc, cuMemAllocPitch,
 *    cuMemAllocManaged, cuMemFree, cuCtxSynchronize) fail with
 *    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while a capture prohibits them
 *    under the calling thread's mode, and invalidate that capture;
 *    synchronising a stream that is being captured does the same;
 *  - an invalidated capture stays on its stream until cuStreamEndCapture,
 *    which fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and destroys
 *    the graph it was making (not one the program passed to
 *    cuStreamBeginCaptureToGraph).
 * Not simulated: the implicit synchronisation of the legacy stream with
 * blocking streams, events and cross-stream dependencies. */
#include "sim-driver.h"

#include <stdlib.h>

struct sim_capture {
	CUstream stream;  /* CU_STREAM_PER_THREAD for a thread's default stream */
	pthread_t thread; /* the thread that began it */
	CUstreamCaptureMode mode;
	cuuint64_t id;
	CUgraph graph;
	bool own_graph; /* made by cuStreamBeginCapture, not given */
	bool invalidated;
	CUgraphNode *deps; /* what the next captured node depends on */
	size_t ndeps, capdeps;
	struct sim_capture *next;
};

/* Every capture in progress; under the driver lock. */
static struct sim_capture *sim_captures;
static cuuint64_t sim_next_capture_id = 1;

/* The thread's capture interaction mode (cuThreadExchangeStreamCaptureMode). */
static __thread CUstreamCaptureMode sim_thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static bool
same_stream(const struct sim_capture *c, CUstream stream)
{
	if (c->stream != stream)
		return false;
	return stream != CU_STREAM_PER_THREAD || pthread_equal(c->thread, pthread_self());
}

/* Lock held: the capture in progress on a stream, or NULL. The stream is
 * as the caller's ABI means it (sim_stream_per_thread). */
struct sim_capture *
sim_capture_of(CUstream stream)
{
	for (struct sim_capture *c = sim_captures; c; c = c->next)
		if (same_stream(c, stream))
			return c;
	return NULL;
}

CUgraph
sim_capture_graph(const struct sim_capture *c)
{
	return c->graph;
}

void
sim_capture_invalidate(struct sim_capture *c)
{
	c->invalidated = true;
}

/* Room for n dependencies; there is always room for one, so that a new
 * node can always become the whole set. */
static bool
deps_reserve(struct sim_capture *c, size_t n)
{
	CUgraphNode *deps;
	size_t cap = c->capdeps ? c->capdeps : 4;

	while (cap < n)
		cap *= 2;
	if (cap == c->capdeps)
		return true;
	deps = realloc(c->deps, cap * sizeof(*deps));
	if (!deps)
		return false;
	c->deps = deps;
	c->capdeps = cap;
	return true;
}

static bool
deps_set(struct sim_capture *c, const CUgraphNode *deps, size_t n)
{
	if (!deps_reserve(c, n))
		return false;
	for (size_t i = 0; i < n; i++)
		c->deps[i] = deps[i];
	c->ndeps = n;
	return true;
}

/* Lock held: what the stream's next captured node depends on. */
const CUgraphNode *
sim_capture_deps(const struct sim_capture *c, size_t *ndeps)
{
	*ndeps = c->ndeps;
	return c->deps;
}

/* Lock held: a node made by a captured call (made with sim_capture_deps)
 * is what the stream's next node depends on; with NULL, whether the
 * capture can take one. An invalidated capture takes nothing more. */
CUresult
sim_capture_add_node(struct sim_capture *c, CUgraphNode node)
{
	if (c->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (node)
		deps_set(c, &node, 1);
	return CUDA_SUCCESS;
}

/* Whether capture c forbids the calling thread's unsafe calls. */
static bool
prohibits(const struct sim_capture *c)
{
	bool mine = pthread_equal(c->thread, pthread_self());

	if (c->invalidated)
		return false;
	switch (sim_thread_mode) {
	case CU_STREAM_CAPTURE_MODE_GLOBAL:
		return mine ? c->mode != CU_STREAM_CAPTURE_MODE_RELAXED :
			      c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
	case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
		return mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
	default:
		return false;
	}
}

/* Lock held: the check at the start of every potentially unsafe call.
 * Each capture that forbids it is invalidated. */
CUresult
sim_capture_unsafe_call(void)
{
	CUresult rc = CUDA_SUCCESS;

	for (struct sim_capture *c = sim_captures; c; c = c->next)
		if (prohibits(c)) {
			c->invalidated = true;
			rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	return rc;
}

static void
capture_remove(struct sim_capture *c)
{
	struct sim_capture **at;

	for (at = &sim_captures; *at != c; at = &(*at)->next)
		;
	*at = c->next;
	c->graph->capturing = false;
	free(c->deps);
	free(c);
}

/* Lock held: the stream is being destroyed, with its context or alone;
 * a capture on it ends with nothing to show. */
void
sim_captures_release_stream(CUstream stream)
{
	struct sim_capture *c = sim_capture_of(stream);
	CUgraph graph;
	bool own;

	if (!c)
		return;
	graph = c->graph;
	own = c->own_graph;
	capture_remove(c);
	if (own)
		sim_graph_delete(graph);
}

static bool
mode_ok(CUstreamCaptureMode mode)
{
	return mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
	       mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
	       mode == CU_STREAM_CAPTURE_MODE_RELAXED;
}

/* Lock held. graph: the one to capture into, or NULL for a new one;
 * deps: the nodes of it that the first captured node depends on. */
static CUresult
begin(CUstream stream, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
      CUstreamCaptureMode mode)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc = sim_ctx_enter(&ctx);

	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!mode_ok(mode) || (graph && (!sim_graph_alive(graph) || graph->capturing)))
		return CUDA_ERROR_INVALID_VALUE;
	if (stream == NULL || stream == CU_STREAM_LEGACY)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (sim_capture_of(stream))
		return CUDA_ERROR_ILLEGAL_STATE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*c = (struct sim_capture){ .stream = stream,
				   .thread = pthread_self(),
				   .mode = mode,
				   .id = sim_next_capture_id++,
				   .graph = graph,
				   .own_graph = graph == NULL };
	if (!deps_set(c, deps, ndeps) || (!graph && !(c->graph = sim_graph_new()))) {
		free(c->deps);
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->graph->capturing = true;
	c->next = sim_captures;
	sim_captures = c;
	return CUDA_SUCCESS;
}

static CUresult
begin_locked(CUstream stream, CUgraph graph, CUstreamCaptureMode mode)
{
	CUresult rc;

	sim_lock();
	rc = begin(stream, graph, NULL, 0, mode);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	return begin_locked(hStream, NULL, mode);
}

CUresult CUDAAPI
cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return begin_locked(sim_stream_per_thread(hStream), NULL, mode);
}

/* The dependencies must be nodes of the graph. */
static CUresult
begin_to_graph(CUstream stream, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
	       CUstreamCaptureMode mode)
{
	if (!graph || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++)
		if (!deps[i] || deps[i]->graph != graph)
			return CUDA_ERROR_INVALID_VALUE;
	return begin(stream, graph, deps, ndeps, mode);
}

CUresult CUDAAPI
cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
			    const CUgraphEdgeData *dependencyData, size_t numDependencies,
			    CUstreamCaptureMode mode)
{
	CUresult rc;

	(void)dependencyData;
	sim_lock();
	rc = sim_graph_alive(hGraph) ?
		     begin_to_graph(hStream, hGraph, dependencies, numDependencies, mode) :
		     CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
				 const CUgraphEdgeData *dependencyData, size_t numDependencies,
				 CUstreamCaptureMode mode)
{
	return cuStreamBeginCaptureToGraph(sim_stream_per_thread(hStream), hGraph, dependencies,
					   dependencyData, numDependencies, mode);
}

/* Lock held. */
static CUresult
end(CUstream stream, CUgraph *out)
{
	struct sim_capture *c;
	CUgraph graph;
	bool invalidated, own;
	CUcontext ctx;
	CUresult rc = sim_ctx_enter(&ctx);

	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	c = sim_capture_of(stream);
	if (!c)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
		return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	graph = c->graph;
	invalidated = c->invalidated;
	own = c->own_graph;
	capture_remove(c);
	if (invalidated && own)
		sim_graph_delete(graph);
	*out = invalidated ? NULL : graph;
	return invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
}

CUresult CUDAAPI
cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	CUresult rc;

	sim_lock();
	rc = end(hStream, phGraph);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	return cuStreamEndCapture(sim_stream_per_thread(hStream), phGraph);
}

/* Lock held: status, id and graph of the stream's capture. */
static CUresult
capture_info(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
	     const CUgraphNode **deps, size_t *ndeps)
{
	const struct sim_capture *c;
	CUcontext ctx;
	CUresult rc = sim_ctx_enter(&ctx);

	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	c = sim_capture_of(stream);
	*status = !c		 ? CU_STREAM_CAPTURE_STATUS_NONE :
		  c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
				   CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (*status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return CUDA_SUCCESS;
	if (id)
		*id = c->id;
	if (graph)
		*graph = c->graph;
	if (deps)
		*deps = c->ndeps ? c->deps : NULL;
	if (ndeps)
		*ndeps = c->ndeps;
	return CUDA_SUCCESS;
}

static CUresult
capture_info_locked(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
		    const CUgraphNode **deps, size_t *ndeps)
{
	CUresult rc;

	sim_lock();
	rc = capture_info(stream, status, id, graph, deps, ndeps);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return capture_info_locked(hStream, captureStatus, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI
cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return capture_info_locked(sim_stream_per_thread(hStream), captureStatus, NULL, NULL, NULL,
				   NULL);
}

CUresult CUDAAPI
cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
		       cuuint64_t *id_out)
{
	return capture_info_locked(hStream, captureStatus_out, id_out, NULL, NULL, NULL);
}

CUresult CUDAAPI
cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
			    cuuint64_t *id_out)
{
	return capture_info_locked(sim_stream_per_thread(hStream), captureStatus_out, id_out, NULL,
				   NULL, NULL);
}

CUresult CUDAAPI
cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
			  cuuint64_t *id_out, CUgraph *graph_out,
			  const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
	return capture_info_locked(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
				   numDependencies_out);
}

CUresult CUDAAPI
cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
			       cuuint64_t *id_out, CUgraph *graph_out,
			       const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
	return capture_info_locked(sim_stream_per_thread(hStream), captureStatus_out, id_out,
				   graph_out, dependencies_out, numDependencies_out);
}

/* Every edge is a default edge: no edge data. */
CUresult CUDAAPI
cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
			  cuuint64_t *id_out, CUgraph *graph_out,
			  const CUgraphNode **dependencies_out,
			  const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	if (edgeData_out)
		*edgeData_out = NULL;
	return capture_info_locked(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
				   numDependencies_out);
}

CUresult CUDAAPI
cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
			       cuuint64_t *id_out, CUgraph *graph_out,
			       const CUgraphNode **dependencies_out,
			       const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	return cuStreamGetCaptureInfo_v3(sim_stream_per_thread(hStream), captureStatus_out, id_out,
					 graph_out, dependencies_out, edgeData_out,
					 numDependencies_out);
}

CUresult CUDAAPI
cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = sim_thread_mode;

	if (sim_ready() != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!mode || !mode_ok(*mode))
		return CUDA_ERROR_INVALID_VALUE;
	sim_thread_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}
