/* Simulated driver: stream capture. While a stream is being captured,
 * the work issued to it is not done but added to a graph, which
 * cuStreamEndCapture hands over. What the simulator captures:
 * cuMemAllocAsync and cuMemAllocFromPoolAsync become memory-alloc nodes
 * (the call returns the node's address, nothing is allocated), and
 * cuMemFreeAsync a memory-free node (nothing is freed); cuMemsetD8Async,
 * cuMemcpyAsync and cuLaunchKernel become nodes that do nothing
 * (sim-driver-graph.c); events recorded and waited on with the
 * EXTERNAL flags become event-record and event-wait nodes.
 *
 * A capture may span streams, as the CUDA programming guide describes
 * (cross-stream dependencies): an event recorded on a stream that is
 * being captured stands for that stream's dependency set in the
 * capture's graph; a stream that is not being captured and waits on it
 * joins the capture (fork): from then on its work is captured into the
 * same graph, after those nodes. A stream of the capture that waits on it
 * adds those nodes to its own dependency set (join). cuStreamEndCapture
 * must be called on the stream that began the capture, the origin, and
 * succeeds only if the last work of every other stream of the capture is
 * something the origin's dependency set depends on (it was joined back);
 * otherwise CUDA_ERROR_STREAM_CAPTURE_UNJOINED. Either way the capture
 * ends on all its streams.
 *
 * The rules kept from the real driver (cuda.h, cuStreamBeginCapture and
 * cuThreadExchangeStreamCaptureMode; the guide for the events):
 *  - the legacy default stream cannot be captured, nor join a capture;
 *    the per-thread default stream can, one capture per thread;
 *  - a stream is captured once at a time (CUDA_ERROR_ILLEGAL_STATE);
 *  - a capture not begun in relaxed mode must end on the thread that began
 *    it (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD), and on its origin
 *    (CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, which invalidates it);
 *  - "potentially unsafe" calls (here cuMemAlloc, cuMemAllocPitch,
 *    cuMemAllocManaged, cuMemFree, cuCtxSynchronize) fail with
 *    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED while a capture prohibits them
 *    under the calling thread's mode, and invalidate that capture;
 *    synchronising or querying a stream that is being captured does the
 *    same, and querying or synchronising an event of a capture in progress
 *    fails with CUDA_ERROR_CAPTURED_EVENT and invalidates it;
 *  - a capturing stream may not wait on an event of another capture
 *    (CUDA_ERROR_STREAM_CAPTURE_MERGE, both invalidated), nor, without
 *    CU_EVENT_WAIT_EXTERNAL, on an event recorded outside any capture
 *    (CUDA_ERROR_STREAM_CAPTURE_ISOLATION, invalidated); an event never
 *    recorded, or whose capture has ended, is an empty set of work;
 *  - an invalidated capture stays on its streams until cuStreamEndCapture,
 *    which fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and destroys
 *    the graph it was making (not one the program passed to
 *    cuStreamBeginCaptureToGraph); meanwhile captured calls on any of its
 *    streams fail the same way. An unjoined end destroys it the same way.
 * Not simulated: the implicit synchronisation of the legacy stream with
 * blocking streams. */
#include "sim-driver.h"

#include <stdlib.h>

/* One capture sequence: a graph being filled from its origin stream and
 * the streams that joined it. */
struct sim_capture_seq {
	pthread_t thread; /* the thread that began it */
	CUstreamCaptureMode mode;
	cuuint64_t id;
	CUgraph graph;
	bool own_graph; /* made by cuStreamBeginCapture, not given */
	bool invalidated;
	struct sim_capture *origin;
};

/* One stream's part in a capture sequence. */
struct sim_capture {
	CUstream stream;  /* CU_STREAM_PER_THREAD for a thread's default stream */
	pthread_t thread; /* the thread whose default stream it is */
	struct sim_capture_seq *seq;
	CUgraphNode *deps; /* what the stream's next captured node depends on */
	size_t ndeps, capdeps;
	struct sim_capture *next;
};

/* Every stream being captured; under the driver lock. */
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

/* Lock held: the capture the stream takes part in, or NULL. The stream
 * is as the caller's ABI means it (sim_stream_per_thread). */
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
	return c->seq->graph;
}

/* Invalidation is the sequence's: every stream of it sees it. */
void
sim_capture_invalidate(struct sim_capture *c)
{
	c->seq->invalidated = true;
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

static bool
deps_has(const struct sim_capture *c, CUgraphNode node)
{
	for (size_t i = 0; i < c->ndeps; i++)
		if (c->deps[i] == node)
			return true;
	return false;
}

/* The union of the stream's set and deps. */
static bool
deps_add(struct sim_capture *c, const CUgraphNode *deps, size_t n)
{
	if (!deps_reserve(c, c->ndeps + n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!deps_has(c, deps[i]))
			c->deps[c->ndeps++] = deps[i];
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
	if (c->seq->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (node)
		deps_set(c, &node, 1);
	return CUDA_SUCCESS;
}

/* Whether capture seq forbids the calling thread's unsafe calls. */
static bool
prohibits(const struct sim_capture_seq *seq)
{
	bool mine = pthread_equal(seq->thread, pthread_self());

	if (seq->invalidated)
		return false;
	switch (sim_thread_mode) {
	case CU_STREAM_CAPTURE_MODE_GLOBAL:
		return mine ? seq->mode != CU_STREAM_CAPTURE_MODE_RELAXED :
			      seq->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
	case CU_STREAM_CAPTURE_MODE_THREAD_LOCAL:
		return mine && seq->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
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
		if (prohibits(c->seq)) {
			c->seq->invalidated = true;
			rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	return rc;
}

/* Lock held: the stream takes part in seq from now on, its work after
 * deps. NULL without memory. */
static struct sim_capture *
member_new(struct sim_capture_seq *seq, CUstream stream, const CUgraphNode *deps, size_t ndeps)
{
	struct sim_capture *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	*c = (struct sim_capture){ .stream = stream, .thread = pthread_self(), .seq = seq };
	if (!deps_set(c, deps, ndeps)) {
		free(c);
		return NULL;
	}
	c->next = sim_captures;
	sim_captures = c;
	return c;
}

static void
member_remove(struct sim_capture *c)
{
	struct sim_capture **at;

	for (at = &sim_captures; *at != c; at = &(*at)->next)
		;
	*at = c->next;
	free(c->deps);
	free(c);
}

/* The capture ends on all its streams. Its graph is handed over when
 * keep, else destroyed unless it was the program's own. */
static void
seq_end(struct sim_capture_seq *seq, bool keep)
{
	struct sim_capture **at = &sim_captures;

	while (*at) {
		struct sim_capture *c = *at;
		if (c->seq != seq) {
			at = &c->next;
			continue;
		}
		*at = c->next;
		free(c->deps);
		free(c);
	}
	seq->graph->capturing = false;
	if (!keep && seq->own_graph)
		sim_graph_delete(seq->graph);
	free(seq);
}

/* Lock held: the stream is being destroyed, with its context or alone.
 * Destroying the origin ends the capture with nothing to show; a joined
 * stream leaves it, and the capture, which has lost work, is invalidated. */
void
sim_captures_release_stream(CUstream stream)
{
	struct sim_capture *c = sim_capture_of(stream);

	if (!c)
		return;
	if (c == c->seq->origin) {
		seq_end(c->seq, false);
	} else {
		c->seq->invalidated = true;
		member_remove(c);
	}
}

/* Lock held: the capture in progress with this id, or NULL. */
static struct sim_capture_seq *
seq_by_id(cuuint64_t id)
{
	for (struct sim_capture *c = sim_captures; c; c = c->next)
		if (c->seq->id == id)
			return c->seq;
	return NULL;
}

/* The capture in progress an event was recorded in, or NULL (never
 * recorded, recorded outside captures, or its capture has ended). */
static struct sim_capture_seq *
event_seq(CUevent ev)
{
	return ev->state == SIM_EVENT_CAPTURED ? seq_by_id(ev->capture) : NULL;
}

/* Lock held: cuEventRecord on a stream being captured. The event stands
 * for the stream's dependency set; with CU_EVENT_RECORD_EXTERNAL it is
 * an event-record node instead, which records it when the graph runs. */
CUresult
sim_capture_record(struct sim_capture *c, CUevent ev, bool external)
{
	if (c->seq->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (external)
		return sim_capture_event_node(c, CU_GRAPH_NODE_TYPE_EVENT_RECORD, ev);
	return sim_event_capture(ev, c->seq->id, c->deps, c->ndeps);
}

/* A stream being captured waits on an event. */
static CUresult
wait_capturing(struct sim_capture *c, CUevent ev, bool external)
{
	struct sim_capture_seq *from = event_seq(ev);

	if (c->seq->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (external)
		return sim_capture_event_node(c, CU_GRAPH_NODE_TYPE_WAIT_EVENT, ev);
	if (from == c->seq)
		return deps_add(c, ev->deps, ev->ndeps) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	if (from) {
		from->invalidated = c->seq->invalidated = true;
		return CUDA_ERROR_STREAM_CAPTURE_MERGE;
	}
	if (ev->state == SIM_EVENT_DONE) {
		c->seq->invalidated = true;
		return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	}
	return CUDA_SUCCESS;
}

/* A stream not being captured waits on an event: it joins the event's
 * capture, if one is in progress; anything else is complete already. */
static CUresult
wait_outside(CUstream stream, CUevent ev, bool external)
{
	struct sim_capture_seq *from = event_seq(ev);

	if (external)
		return CUDA_ERROR_INVALID_VALUE; /* only valid during a capture */
	if (!from)
		return CUDA_SUCCESS;
	if (from->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (stream == NULL || stream == CU_STREAM_LEGACY) {
		from->invalidated = true;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	return member_new(from, stream, ev->deps, ev->ndeps) ? CUDA_SUCCESS :
							       CUDA_ERROR_OUT_OF_MEMORY;
}

/* Lock held: cuStreamWaitEvent; c is the stream's capture or NULL. */
CUresult
sim_capture_wait(CUstream stream, struct sim_capture *c, CUevent ev, bool external)
{
	return c ? wait_capturing(c, ev, external) : wait_outside(stream, ev, external);
}

/* Lock held: an event is queried, synchronised or timed. One that stands
 * for work of a capture in progress is no work at all: the call fails and
 * the capture is invalidated. */
CUresult
sim_capture_event_use(CUevent ev)
{
	struct sim_capture_seq *from = event_seq(ev);

	if (!from)
		return CUDA_SUCCESS;
	from->invalidated = true;
	return CUDA_ERROR_CAPTURED_EVENT;
}

static bool
mode_ok(CUstreamCaptureMode mode)
{
	return mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
	       mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
	       mode == CU_STREAM_CAPTURE_MODE_RELAXED;
}

/* Lock held: a new sequence with its origin. */
static CUresult
seq_new(CUstream stream, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
	CUstreamCaptureMode mode)
{
	struct sim_capture_seq *seq = calloc(1, sizeof(*seq));

	if (!seq)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*seq = (struct sim_capture_seq){ .thread = pthread_self(),
					 .mode = mode,
					 .id = sim_next_capture_id++,
					 .graph = graph,
					 .own_graph = graph == NULL };
	if (!graph && !(seq->graph = sim_graph_new())) {
		free(seq);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	seq->origin = member_new(seq, stream, deps, ndeps);
	if (!seq->origin) {
		if (seq->own_graph)
			sim_graph_delete(seq->graph);
		free(seq);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	seq->graph->capturing = true;
	return CUDA_SUCCESS;
}

/* Lock held. graph: the one to capture into, or NULL for a new one;
 * deps: the nodes of it that the first captured node depends on. */
static CUresult
begin(CUstream stream, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
      CUstreamCaptureMode mode)
{
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
	return seq_new(stream, graph, deps, ndeps, mode);
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

/* Lock held: whether the last work of every other stream of seq was
 * joined back into the origin: the origin's dependency set depends on
 * it. */
static CUresult
joined(const struct sim_capture_seq *seq)
{
	const struct sim_capture *o = seq->origin;
	bool *reached = sim_graph_ancestors(seq->graph, o->deps, o->ndeps);
	CUresult rc = CUDA_SUCCESS;

	if (!reached)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (const struct sim_capture *c = sim_captures; c && rc == CUDA_SUCCESS; c = c->next)
		for (size_t i = 0; c->seq == seq && i < c->ndeps; i++)
			if (!reached[c->deps[i]->index])
				rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
	free(reached);
	return rc;
}

/* Lock held. */
static CUresult
end(CUstream stream, CUgraph *out)
{
	struct sim_capture_seq *seq;
	struct sim_capture *c;
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
	seq = c->seq;
	if (seq->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(seq->thread, pthread_self()))
		return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	if (c != seq->origin) {
		seq->invalidated = true;
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	}
	rc = seq->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : joined(seq);
	*out = rc == CUDA_SUCCESS ? seq->graph : NULL;
	seq_end(seq, rc == CUDA_SUCCESS);
	return rc;
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
	*status = !c		      ? CU_STREAM_CAPTURE_STATUS_NONE :
		  c->seq->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
					CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (*status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return CUDA_SUCCESS;
	if (id)
		*id = c->seq->id;
	if (graph)
		*graph = c->seq->graph;
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
