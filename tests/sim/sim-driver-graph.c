/* Simulated driver: graphs, their nodes, executable graphs and launches.
 *
 * A graph is a list of nodes in the order they were added, which is an
 * order they may run in (a node's dependencies exist before it); each
 * node keeps its dependencies, which only a capture's end looks at. The
 * simulator runs what matters to memory: memory-alloc nodes
 * (cuGraphAddMemAllocNode, or cuMemAllocAsync captured on a stream) and
 * memory-free nodes (cuGraphAddMemFreeNode, or a captured cuMemFreeAsync).
 * Event-record nodes record their event when the graph runs. Empty,
 * kernel, memset, memcpy and event-wait nodes are kept and do nothing.
 * What a launch does to memory, and the physical memory behind graph
 * allocations: sim-driver-graphmem.c.
 *
 * Rules kept from cuda.h:
 *  - a graph with memory nodes cannot be cloned (CUDA_ERROR_NOT_SUPPORTED)
 *    and has at most one executable graph at a time (a second
 *    instantiation fails with CUDA_ERROR_INVALID_VALUE);
 *  - an allocation is freed by at most one free node, in its own graph or
 *    in one other graph (CUDA_ERROR_INVALID_VALUE otherwise), and a free
 *    node takes only the address an alloc node returned;
 *  - a graph that a capture is still filling cannot be instantiated;
 *  - destroying a graph does not free its live allocations;
 *  - cuGraphInstantiateWithFlags takes AUTO_FREE_ON_LAUNCH, DEVICE_LAUNCH
 *    (not with AUTO_FREE_ON_LAUNCH) and USE_NODE_PRIORITY; UPLOAD only
 *    through cuGraphInstantiateWithParams, with its upload stream.
 * Launching into a stream that is being captured is not simulated: it
 * fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the
 * capture. Work completes when it is issued, as everywhere in the
 * simulator: graphs never run at the same time. */
#include "sim-driver.h"

#include <stdlib.h>

/* Every graph and every executable graph; under the driver lock. */
static CUgraph sim_graphs;
CUgraphExec sim_graph_execs;

bool
sim_graph_alive(CUgraph graph)
{
	for (CUgraph g = sim_graphs; g; g = g->next)
		if (g == graph)
			return graph != NULL;
	return false;
}

static bool
exec_alive(CUgraphExec exec)
{
	for (CUgraphExec e = sim_graph_execs; e; e = e->next)
		if (e == exec)
			return exec != NULL;
	return false;
}

static bool
node_alive(CUgraphNode node)
{
	return node && sim_graph_alive(node->graph);
}

/* Lock held: an empty graph, or NULL without memory. */
CUgraph
sim_graph_new(void)
{
	CUgraph g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->next = sim_graphs;
	sim_graphs = g;
	return g;
}

static void
node_free(CUgraphNode n)
{
	free(n->deps);
	free(n);
}

/* Lock held: a new node at the end of the graph, depending on deps (nodes
 * of the graph, checked by the caller). */
CUresult
sim_graph_node_new(CUgraph graph, CUgraphNodeType type, const CUgraphNode *deps, size_t ndeps,
		   CUgraphNode *out)
{
	CUgraphNode n;

	if (graph->nnodes == graph->capnodes) {
		size_t cap = graph->capnodes ? graph->capnodes * 2 : 8;
		CUgraphNode *nodes = realloc(graph->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return CUDA_ERROR_OUT_OF_MEMORY;
		graph->nodes = nodes;
		graph->capnodes = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || (ndeps && !(n->deps = malloc(ndeps * sizeof(*n->deps))))) {
		free(n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (size_t i = 0; i < ndeps; i++)
		n->deps[i] = deps[i];
	n->ndeps = ndeps;
	n->graph = graph;
	n->type = type;
	n->index = graph->nnodes;
	graph->nodes[graph->nnodes++] = n;
	*out = n;
	return CUDA_SUCCESS;
}

/* Lock held: by node index, whether each node of graph is one of the tips
 * or something they depend on, or NULL without memory. A node's
 * dependencies come before it, so one pass from the end finds them all. */
bool *
sim_graph_ancestors(CUgraph graph, const CUgraphNode *tips, size_t ntips)
{
	bool *in = calloc(graph->nnodes ? graph->nnodes : 1, sizeof(*in));

	if (!in)
		return NULL;
	for (size_t i = 0; i < ntips; i++)
		in[tips[i]->index] = true;
	for (size_t i = graph->nnodes; i-- > 0;)
		for (size_t j = 0; in[i] && j < graph->nodes[i]->ndeps; j++)
			in[graph->nodes[i]->deps[j]->index] = true;
	return in;
}

static bool
has_memory_nodes(CUgraph graph)
{
	for (size_t i = 0; i < graph->nnodes; i++)
		if (graph->nodes[i]->alloc)
			return true;
	return false;
}

/* Lock held: the graph and its nodes go; what they allocated stays
 * allocated while it is live or an executable graph holds it. */
void
sim_graph_delete(CUgraph graph)
{
	CUgraph *at;

	for (size_t i = 0; i < graph->nnodes; i++) {
		CUgraphNode n = graph->nodes[i];
		if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE && n->alloc->freed_by == graph)
			n->alloc->freed_by = NULL;
		if (n->alloc)
			sim_graph_alloc_put(n->alloc);
		node_free(n);
	}
	for (CUgraphExec e = sim_graph_execs; e; e = e->next)
		if (e->graph == graph)
			e->graph = NULL;
	for (at = &sim_graphs; *at != graph; at = &(*at)->next)
		;
	*at = graph->next;
	free(graph->nodes);
	free(graph);
}

CUresult CUDAAPI
cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phGraph || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	*phGraph = sim_graph_new();
	sim_unlock();
	return *phGraph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Lock held: the nodes of a graph without memory nodes, copied with
 * their dependencies (the copies have the same indices). */
static CUresult
clone_node(CUgraph to, CUgraphNode from)
{
	CUgraphNode n;
	CUresult rc = sim_graph_node_new(to, from->type, from->deps, from->ndeps, &n);

	for (size_t j = 0; rc == CUDA_SUCCESS && j < n->ndeps; j++)
		n->deps[j] = to->nodes[from->deps[j]->index];
	if (rc == CUDA_SUCCESS)
		n->event = from->event;
	return rc;
}

static CUresult
clone_nodes(CUgraph from, CUgraph to)
{
	CUresult rc = CUDA_SUCCESS;

	for (size_t i = 0; i < from->nnodes && rc == CUDA_SUCCESS; i++)
		rc = clone_node(to, from->nodes[i]);
	return rc;
}

CUresult CUDAAPI
cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	CUresult rc = sim_ready();
	CUgraph clone = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phGraphClone)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim_graph_alive(originalGraph))
		rc = CUDA_ERROR_INVALID_VALUE;
	else if (has_memory_nodes(originalGraph))
		rc = CUDA_ERROR_NOT_SUPPORTED;
	else if (!(clone = sim_graph_new()))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS)
		rc = clone_nodes(originalGraph, clone);
	if (rc != CUDA_SUCCESS && clone)
		sim_graph_delete(clone);
	else if (rc == CUDA_SUCCESS)
		*phGraphClone = clone;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphDestroy(CUgraph hGraph)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!sim_graph_alive(hGraph) || hGraph->capturing)
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		sim_graph_delete(hGraph);
	sim_unlock();
	return rc;
}

/* Lock held: the common checks of the cuGraphAdd*Node calls. */
static CUresult
add_check(CUgraphNode *out, CUgraph graph, const CUgraphNode *deps, size_t ndeps)
{
	if (!out || !sim_graph_alive(graph) || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++) {
		if (!deps[i] || deps[i]->graph != graph)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t j = 0; j < i; j++)
			if (deps[j] == deps[i])
				return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
		    size_t numDependencies)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	rc = add_check(phGraphNode, hGraph, dependencies, numDependencies);
	if (rc == CUDA_SUCCESS)
		rc = sim_graph_node_new(hGraph, CU_GRAPH_NODE_TYPE_EMPTY, dependencies,
					numDependencies, phGraphNode);
	sim_unlock();
	return rc;
}

/* Lock held: an alloc node, its allocation made and its address in
 * params->dptr. The node keeps the parameters, without the access
 * descriptors (the caller's memory). */
static CUresult
add_alloc_node(CUgraph graph, const CUgraphNode *deps, size_t ndeps,
	       CUDA_MEM_ALLOC_NODE_PARAMS *params, CUgraphNode *out)
{
	struct sim_graph_alloc *a = NULL;
	CUresult rc = sim_graph_alloc_new(params, &a);

	if (rc == CUDA_SUCCESS)
		rc = sim_graph_node_new(graph, CU_GRAPH_NODE_TYPE_MEM_ALLOC, deps, ndeps, out);
	if (rc != CUDA_SUCCESS) {
		if (a)
			sim_graph_alloc_put(a);
		return rc;
	}
	params->dptr = (CUdeviceptr)a->va;
	(*out)->alloc = a;
	(*out)->params = *params;
	(*out)->params.accessDescs = NULL;
	(*out)->params.accessDescCount = 0;
	return CUDA_SUCCESS;
}

/* Lock held: a free node for the allocation that starts at dptr. */
static CUresult
add_free_node(CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr,
	      CUgraphNode *out)
{
	struct sim_graph_alloc *a = sim_graph_alloc_at((uintptr_t)dptr);
	CUresult rc;

	if (!a || a->va != (uintptr_t)dptr || a->freed_by)
		return CUDA_ERROR_INVALID_VALUE;
	rc = sim_graph_node_new(graph, CU_GRAPH_NODE_TYPE_MEM_FREE, deps, ndeps, out);
	if (rc != CUDA_SUCCESS)
		return rc;
	a->refs++;
	a->freed_by = graph;
	(*out)->alloc = a;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
		       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	rc = add_check(phGraphNode, hGraph, dependencies, numDependencies);
	if (rc == CUDA_SUCCESS && !nodeParams)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = add_alloc_node(hGraph, dependencies, numDependencies, nodeParams, phGraphNode);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
		      size_t numDependencies, CUdeviceptr dptr)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	rc = add_check(phGraphNode, hGraph, dependencies, numDependencies);
	if (rc == CUDA_SUCCESS)
		rc = add_free_node(hGraph, dependencies, numDependencies, dptr, phGraphNode);
	sim_unlock();
	return rc;
}

/* Lock held: a stream-ordered allocation on a stream being captured
 * becomes an alloc node of the capture's graph, on the device of the
 * pool it names. */
CUresult
sim_capture_alloc(struct sim_capture *c, CUmemoryPool pool, size_t bytes, CUdeviceptr *dptr)
{
	CUDA_MEM_ALLOC_NODE_PARAMS params = {
		.poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
			       .location = { CU_MEM_LOCATION_TYPE_DEVICE, pool->device } },
		.bytesize = bytes,
	};
	CUgraphNode node;
	size_t ndeps;
	const CUgraphNode *deps = sim_capture_deps(c, &ndeps);
	CUresult rc = sim_capture_add_node(c, NULL);

	if (rc == CUDA_SUCCESS)
		rc = add_alloc_node(sim_capture_graph(c), deps, ndeps, &params, &node);
	if (rc == CUDA_SUCCESS) {
		sim_capture_add_node(c, node);
		*dptr = params.dptr;
	} else {
		sim_capture_invalidate(c);
	}
	return rc;
}

/* Lock held: a stream-ordered free on a stream being captured becomes a
 * free node; one the graph could not take invalidates the capture. */
CUresult
sim_capture_free(struct sim_capture *c, CUdeviceptr dptr)
{
	CUgraphNode node;
	size_t ndeps;
	const CUgraphNode *deps = sim_capture_deps(c, &ndeps);
	CUresult rc = sim_capture_add_node(c, NULL);

	if (rc == CUDA_SUCCESS)
		rc = add_free_node(sim_capture_graph(c), deps, ndeps, dptr, &node);
	if (rc == CUDA_SUCCESS)
		sim_capture_add_node(c, node);
	else
		sim_capture_invalidate(c);
	return rc;
}

/* Lock held: a captured set or copy: a node that does nothing. */
CUresult
sim_capture_noop(struct sim_capture *c, CUgraphNodeType type)
{
	CUgraphNode node;
	size_t ndeps;
	const CUgraphNode *deps = sim_capture_deps(c, &ndeps);
	CUresult rc = sim_capture_add_node(c, NULL);

	if (rc == CUDA_SUCCESS)
		rc = sim_graph_node_new(sim_capture_graph(c), type, deps, ndeps, &node);
	if (rc == CUDA_SUCCESS)
		sim_capture_add_node(c, node);
	return rc;
}


/* Lock held: an event recorded or waited on with the EXTERNAL flag
 * during a capture: an event-record node (a launch records the event) or
 * an event-wait node (it does nothing). */
CUresult
sim_capture_event_node(struct sim_capture *c, CUgraphNodeType type, CUevent ev)
{
	CUgraphNode node;
	size_t ndeps;
	const CUgraphNode *deps = sim_capture_deps(c, &ndeps);
	CUresult rc = sim_capture_add_node(c, NULL);

	if (rc == CUDA_SUCCESS)
		rc = sim_graph_node_new(sim_capture_graph(c), type, deps, ndeps, &node);
	if (rc == CUDA_SUCCESS) {
		node->event = ev;
		sim_capture_add_node(c, node);
	}
	return rc;
}

CUresult CUDAAPI
cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!params_out || !node_alive(hNode) || hNode->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		*params_out = hNode->params;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!dptr_out || !node_alive(hNode) || hNode->type != CU_GRAPH_NODE_TYPE_MEM_FREE)
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		*dptr_out = (CUdeviceptr)hNode->alloc->va;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!type || !node_alive(hNode))
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		*type = hNode->type;
	sim_unlock();
	return rc;
}

/* Like cuGraphGetNodes: with dependencies NULL, the count; else up to
 * *numDependencies of them. Every edge is a default one (no edge data). */
CUresult CUDAAPI
cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
			      CUgraphEdgeData *edgeData, size_t *numDependencies)
{
	CUresult rc = sim_ready();
	size_t n;

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!numDependencies || !node_alive(hNode) || (edgeData && !dependencies)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else if (!dependencies) {
		*numDependencies = hNode->ndeps;
	} else {
		n = *numDependencies < hNode->ndeps ? *numDependencies : hNode->ndeps;
		for (size_t i = 0; i < n; i++) {
			dependencies[i] = hNode->deps[i];
			if (edgeData)
				edgeData[i] = (CUgraphEdgeData){ 0 };
		}
		*numDependencies = n;
	}
	sim_unlock();
	return rc;
}

/* With nodes NULL, the count; else up to *numNodes of them, and the count
 * of those written. */
CUresult CUDAAPI
cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!numNodes || !sim_graph_alive(hGraph)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else if (!nodes) {
		*numNodes = hGraph->nnodes;
	} else {
		if (*numNodes > hGraph->nnodes)
			*numNodes = hGraph->nnodes;
		for (size_t i = 0; i < *numNodes; i++)
			nodes[i] = hGraph->nodes[i];
	}
	sim_unlock();
	return rc;
}

/* ---- executable graphs ---- */

static CUresult
flags_check(cuuint64_t flags, bool with_params)
{
	const cuuint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
				 CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
				 CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY |
				 (with_params ? CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD : 0);
	const cuuint64_t exclusive = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
				     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;

	if ((flags & ~known) || (flags & exclusive) == exclusive)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* Lock held: a snapshot of the graph's nodes as steps, each holding its
 * allocation. */
static CUresult
instantiate(CUgraphExec *out, CUgraph graph, cuuint64_t flags, CUcontext ctx)
{
	CUgraphExec e;

	if (!out || !sim_graph_alive(graph) || graph->capturing ||
	    (graph->nexecs && has_memory_nodes(graph)))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->steps = calloc(graph->nnodes ? graph->nnodes : 1, sizeof(*e->steps)))) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (size_t i = 0; i < graph->nnodes; i++) {
		e->steps[i] = (struct sim_graph_step){ .type = graph->nodes[i]->type,
						       .alloc = graph->nodes[i]->alloc,
						       .event = graph->nodes[i]->event };
		if (e->steps[i].alloc)
			e->steps[i].alloc->refs++;
	}
	e->nsteps = graph->nnodes;
	e->graph = graph;
	e->flags = flags;
	e->owner = ctx->id;
	e->next = sim_graph_execs;
	sim_graph_execs = e;
	graph->nexecs++;
	*out = e;
	return CUDA_SUCCESS;
}

static CUresult
instantiate_locked(CUgraphExec *out, CUgraph graph, cuuint64_t flags, bool with_params)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = flags_check(flags, with_params);
	if (rc == CUDA_SUCCESS)
		rc = instantiate(out, graph, flags, ctx);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	return instantiate_locked(phGraphExec, hGraph, flags, false);
}

/* CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD uploads at once on the given stream. */
static CUresult
instantiate_with_params(CUgraphExec *phGraphExec, CUgraph hGraph,
			CUDA_GRAPH_INSTANTIATE_PARAMS *params, bool per_thread)
{
	CUresult rc;

	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	params->hErrNode_out = NULL;
	rc = instantiate_locked(phGraphExec, hGraph, params->flags, true);
	if (rc == CUDA_SUCCESS && (params->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
		rc = per_thread ? cuGraphUpload_ptsz(*phGraphExec, params->hUploadStream) :
				  cuGraphUpload(*phGraphExec, params->hUploadStream);
		if (rc != CUDA_SUCCESS)
			cuGraphExecDestroy(*phGraphExec);
	}
	params->result_out =
		rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
	return rc;
}

CUresult CUDAAPI
cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
			     CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_with_params(phGraphExec, hGraph, instantiateParams, false);
}

CUresult CUDAAPI
cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
				  CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return instantiate_with_params(phGraphExec, hGraph, instantiateParams, true);
}

CUresult CUDAAPI
cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!flags || !exec_alive(hGraphExec))
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		*flags = hGraphExec->flags;
	sim_unlock();
	return rc;
}

/* Lock held. */
static void
exec_delete(CUgraphExec exec)
{
	CUgraphExec *at;

	sim_graph_mem_exec_gone(exec);
	if (exec->graph)
		exec->graph->nexecs--;
	for (at = &sim_graph_execs; *at != exec; at = &(*at)->next)
		;
	*at = exec->next;
	free(exec->steps);
	free(exec);
}

CUresult CUDAAPI
cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (exec_alive(hGraphExec))
		exec_delete(hGraphExec);
	else
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Lock held: the executable graphs of a context that is being destroyed. */
void
sim_graph_execs_release_owner(uint32_t owner)
{
	CUgraphExec e, next;

	for (e = sim_graph_execs; e; e = next) {
		next = e->next;
		if (e->owner == owner)
			exec_delete(e);
	}
}

/* Lock held: what a launch does besides memory: its event-record nodes
 * record their events. Kernel, copy, set and wait nodes do nothing. */
static void
run_events(CUgraphExec exec)
{
	for (size_t i = 0; i < exec->nsteps; i++)
		if (exec->steps[i].type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
			sim_event_ran(exec->steps[i].event);
}

/* One path for launches and uploads. */
static CUresult
run(CUgraphExec exec, CUstream stream, bool launch)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && !exec_alive(exec))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream))) {
		sim_capture_invalidate(c);
		rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (rc == CUDA_SUCCESS)
		rc = sim_graph_mem_run(exec, launch, ctx);
	if (rc == CUDA_SUCCESS && launch)
		run_events(exec);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return run(hGraphExec, hStream, true);
}

CUresult CUDAAPI
cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return run(hGraphExec, sim_stream_per_thread(hStream), true);
}

CUresult CUDAAPI
cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	return run(hGraphExec, hStream, false);
}

CUresult CUDAAPI
cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return run(hGraphExec, sim_stream_per_thread(hStream), false);
}
