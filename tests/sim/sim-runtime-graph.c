/* Simulated runtime: stream capture, graphs and graph memory. The
 * runtime's graph, node and executable-graph handles are the driver's,
 * and the enums (capture modes and statuses, node types, graph memory
 * attributes, instantiate flags) have the driver's values, so most calls
 * pass straight through; the model is the driver's
 * (sim-driver-capture.c, sim-driver-graph.c, sim-driver-graphmem.c). */
#include "sim-runtime.h"

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

cudaError_t CUDARTAPI
cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_begin_capture(stream, (CUstreamCaptureMode)mode));
}

cudaError_t CUDARTAPI
cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	SIM_RT_ENTER();
	return sim_rt_check(
		sim_rt_drv.stream_begin_capture_ptsz(stream, (CUstreamCaptureMode)mode));
}

/* The edge data is the driver's structure under another name. */
cudaError_t CUDARTAPI
cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
			      const cudaGraphNode_t *dependencies,
			      const cudaGraphEdgeData *dependencyData, size_t numDependencies,
			      enum cudaStreamCaptureMode mode)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_begin_capture_to_graph(
		stream, graph, dependencies, (const CUgraphEdgeData *)dependencyData,
		numDependencies, (CUstreamCaptureMode)mode));
}

cudaError_t CUDARTAPI
cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
				   const cudaGraphNode_t *dependencies,
				   const cudaGraphEdgeData *dependencyData, size_t numDependencies,
				   enum cudaStreamCaptureMode mode)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_begin_capture_to_graph_ptsz(
		stream, graph, dependencies, (const CUgraphEdgeData *)dependencyData,
		numDependencies, (CUstreamCaptureMode)mode));
}

cudaError_t CUDARTAPI
cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_end_capture(stream, pGraph));
}

cudaError_t CUDARTAPI
cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_end_capture_ptsz(stream, pGraph));
}

cudaError_t CUDARTAPI
cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	SIM_RT_ENTER();
	return sim_rt_check(
		sim_rt_drv.stream_is_capturing(stream, (CUstreamCaptureStatus *)pCaptureStatus));
}

cudaError_t CUDARTAPI
cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_is_capturing_ptsz(
		stream, (CUstreamCaptureStatus *)pCaptureStatus));
}

cudaError_t CUDARTAPI
cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
			 unsigned long long *id_out, cudaGraph_t *graph_out,
			 const cudaGraphNode_t **dependencies_out,
			 const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_get_capture_info(
		stream, (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out, graph_out,
		dependencies_out, (const CUgraphEdgeData **)edgeData_out, numDependencies_out));
}

cudaError_t CUDARTAPI
cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
			      unsigned long long *id_out, cudaGraph_t *graph_out,
			      const cudaGraphNode_t **dependencies_out,
			      const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_get_capture_info_ptsz(
		stream, (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out, graph_out,
		dependencies_out, (const CUgraphEdgeData **)edgeData_out, numDependencies_out));
}

cudaError_t CUDARTAPI
cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	cudaError_t err = sim_rt_init();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.thread_exchange_capture_mode((CUstreamCaptureMode *)mode));
}

cudaError_t CUDARTAPI
cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_create(pGraph, flags));
}

cudaError_t CUDARTAPI
cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_clone(pGraphClone, originalGraph));
}

static void graph_objects_release(cudaGraph_t graph);

cudaError_t CUDARTAPI
cudaGraphDestroy(cudaGraph_t graph)
{
	CUresult rc;

	SIM_RT_ENTER();
	rc = sim_rt_drv.graph_destroy(graph);
	if (rc == CUDA_SUCCESS)
		graph_objects_release(graph);
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
		      const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
	SIM_RT_ENTER();
	return sim_rt_check(
		sim_rt_drv.graph_add_empty_node(pGraphNode, graph, pDependencies, numDependencies));
}

cudaError_t CUDARTAPI
cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_get_nodes(graph, nodes, numNodes));
}

/* The graph as a DOT file at path, as the real runtime writes one for
 * debugging (torch's CUDAGraph::debug_dump calls it): a digraph with one
 * node per graph node, named by its type. The flags choose the detail the
 * real one adds; the simulator writes the same outline for all. */
cudaError_t CUDARTAPI
cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
	SIM_RT_ENTER();
	size_t n = 0;
	cudaError_t e = sim_rt_check(sim_rt_drv.graph_get_nodes(graph, NULL, &n));
	if (e != cudaSuccess)
		return e;
	if (!path)
		return sim_rt_fail(cudaErrorInvalidValue);
	CUgraphNode *nodes = n ? calloc(n, sizeof(*nodes)) : NULL;
	if (n && !nodes)
		return sim_rt_fail(cudaErrorMemoryAllocation);
	if (n && (e = sim_rt_check(sim_rt_drv.graph_get_nodes(graph, nodes, &n))) != cudaSuccess) {
		free(nodes);
		return e;
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		free(nodes);
		return sim_rt_fail(cudaErrorOperatingSystem);
	}
	fprintf(f, "digraph dot {\n");
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
		sim_rt_drv.graph_node_get_type(nodes[i], &type);
		fprintf(f, "  node%zu [label=\"%zu: type %d\"];\n", i, i, (int)type);
	}
	fprintf(f, "}\n");
	free(nodes);
	return fclose(f) == 0 ? cudaSuccess : sim_rt_fail(cudaErrorOperatingSystem);
}

cudaError_t CUDARTAPI
cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_node_get_type(node, (CUgraphNodeType *)pType));
}

/* Field by field, as for pools. The access descriptors have the same
 * layout in both APIs ({location {type, id}, flags}). */
static CUDA_MEM_ALLOC_NODE_PARAMS
driver_alloc_params(const struct cudaMemAllocNodeParams *p)
{
	const struct cudaMemPoolProps *pp = &p->poolProps;

	return (CUDA_MEM_ALLOC_NODE_PARAMS){
		.poolProps = {
			.allocType = (CUmemAllocationType)pp->allocType,
			.handleTypes = (CUmemAllocationHandleType)pp->handleTypes,
			.location = { .type = (CUmemLocationType)pp->location.type,
				      .id = pp->location.id },
			.win32SecurityAttributes = pp->win32SecurityAttributes,
			.maxSize = pp->maxSize,
			.usage = pp->usage,
		},
		.accessDescs = (const CUmemAccessDesc *)p->accessDescs,
		.accessDescCount = p->accessDescCount,
		.bytesize = p->bytesize,
	};
}

cudaError_t CUDARTAPI
cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
			 const cudaGraphNode_t *pDependencies, size_t numDependencies,
			 struct cudaMemAllocNodeParams *nodeParams)
{
	CUDA_MEM_ALLOC_NODE_PARAMS params;
	CUresult rc;

	SIM_RT_ENTER();
	if (!nodeParams)
		return sim_rt_fail(cudaErrorInvalidValue);
	params = driver_alloc_params(nodeParams);
	rc = sim_rt_drv.graph_add_mem_alloc_node(pGraphNode, graph, pDependencies, numDependencies,
						 &params);
	if (rc == CUDA_SUCCESS)
		nodeParams->dptr = (void *)(uintptr_t)params.dptr;
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
			const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dptr)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_add_mem_free_node(
		pGraphNode, graph, pDependencies, numDependencies, (CUdeviceptr)(uintptr_t)dptr));
}

cudaError_t CUDARTAPI
cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out)
{
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	CUresult rc;

	SIM_RT_ENTER();
	if (!params_out)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.graph_mem_alloc_node_get_params(node, &p);
	if (rc != CUDA_SUCCESS)
		return sim_rt_check(rc);
	*params_out = (struct cudaMemAllocNodeParams){
		.poolProps = {
			.allocType = (enum cudaMemAllocationType)p.poolProps.allocType,
			.handleTypes = (enum cudaMemAllocationHandleType)p.poolProps.handleTypes,
			.location = { .type = (enum cudaMemLocationType)p.poolProps.location.type,
				      .id = p.poolProps.location.id },
			.maxSize = p.poolProps.maxSize,
			.usage = p.poolProps.usage,
		},
		.bytesize = p.bytesize,
		.dptr = (void *)(uintptr_t)p.dptr,
	};
	return cudaSuccess;
}

/* dptr_out is a void ** in all but name. */
cudaError_t CUDARTAPI
cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
	CUdeviceptr dptr = 0;
	CUresult rc;

	SIM_RT_ENTER();
	if (!dptr_out)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.graph_mem_free_node_get_params(node, &dptr);
	if (rc == CUDA_SUCCESS)
		*(void **)dptr_out = (void *)(uintptr_t)dptr;
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_instantiate_with_flags(pGraphExec, graph, flags));
}

cudaError_t CUDARTAPI
cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
			      unsigned long long flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_instantiate_with_flags(pGraphExec, graph, flags));
}

static cudaError_t
instantiate_with_params(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
			cudaGraphInstantiateParams *params, bool per_thread)
{
	CUDA_GRAPH_INSTANTIATE_PARAMS p;
	CUresult rc;

	SIM_RT_ENTER();
	if (!params)
		return sim_rt_fail(cudaErrorInvalidValue);
	p = (CUDA_GRAPH_INSTANTIATE_PARAMS){ .flags = params->flags,
					     .hUploadStream = params->uploadStream };
	rc = per_thread ? sim_rt_drv.graph_instantiate_with_params_ptsz(pGraphExec, graph, &p) :
			  sim_rt_drv.graph_instantiate_with_params(pGraphExec, graph, &p);
	params->errNode_out = p.hErrNode_out;
	params->result_out = (cudaGraphInstantiateResult)p.result_out;
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
			       cudaGraphInstantiateParams *instantiateParams)
{
	return instantiate_with_params(pGraphExec, graph, instantiateParams, false);
}

cudaError_t CUDARTAPI
cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
				    cudaGraphInstantiateParams *instantiateParams)
{
	return instantiate_with_params(pGraphExec, graph, instantiateParams, true);
}

cudaError_t CUDARTAPI
cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_exec_get_flags(graphExec, (cuuint64_t *)flags));
}

cudaError_t CUDARTAPI
cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_exec_destroy(graphExec));
}

cudaError_t CUDARTAPI
cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_launch(graphExec, stream));
}

cudaError_t CUDARTAPI
cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_launch_ptsz(graphExec, stream));
}

cudaError_t CUDARTAPI
cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_upload(graphExec, stream));
}

cudaError_t CUDARTAPI
cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_upload_ptsz(graphExec, stream));
}

cudaError_t CUDARTAPI
cudaDeviceGraphMemTrim(int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_graph_mem_trim(device));
}

cudaError_t CUDARTAPI
cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_get_graph_mem_attribute(
		device, (CUgraphMem_attribute)attr, value));
}

cudaError_t CUDARTAPI
cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_set_graph_mem_attribute(
		device, (CUgraphMem_attribute)attr, value));
}

/* ---- generic nodes, dependencies, user objects ---- */

static bool
default_edges(const cudaGraphEdgeData *edges, size_t n)
{
	for (size_t i = 0; edges && i < n; i++)
		if (edges[i].from_port || edges[i].to_port || edges[i].type)
			return false;
	return true;
}

/* The node kinds the simulator builds (empty, memory alloc and free);
 * others, and edges other than plain ones, are not simulated. */
cudaError_t CUDARTAPI
cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
		 const cudaGraphNode_t *pDependencies, const cudaGraphEdgeData *dependencyData,
		 size_t numDependencies, struct cudaGraphNodeParams *nodeParams)
{
	struct cudaMemAllocNodeParams alloc;
	cudaError_t err;

	if (!nodeParams)
		return sim_rt_fail(cudaErrorInvalidValue);
	if (!default_edges(dependencyData, numDependencies))
		return sim_rt_fail(cudaErrorNotSupported);
	switch (nodeParams->type) {
	case cudaGraphNodeTypeEmpty:
		return cudaGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
	case cudaGraphNodeTypeMemFree:
		return cudaGraphAddMemFreeNode(pGraphNode, graph, pDependencies, numDependencies,
					       nodeParams->free.dptr);
	case cudaGraphNodeTypeMemAlloc:
		alloc = (struct cudaMemAllocNodeParams){
			.poolProps = nodeParams->alloc.poolProps,
			.accessDescs = nodeParams->alloc.accessDescs,
			.accessDescCount = nodeParams->alloc.accessDescCount,
			.bytesize = nodeParams->alloc.bytesize,
		};
		err = cudaGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies,
					       &alloc);
		if (err == cudaSuccess)
			nodeParams->alloc.dptr = alloc.dptr;
		return err;
	default:
		return sim_rt_fail(cudaErrorNotSupported);
	}
}

cudaError_t CUDARTAPI
cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
			     cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.graph_node_get_dependencies(
		node, pDependencies, (CUgraphEdgeData *)edgeData, pNumDependencies));
}

/* Conditional nodes and rewriting a capture's dependencies are not
 * simulated (docs: tests/sim/README.md). */
cudaError_t CUDARTAPI
cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph,
				 unsigned int defaultLaunchValue, unsigned int flags)
{
	(void)pHandle_out;
	(void)graph;
	(void)defaultLaunchValue;
	(void)flags;
	return sim_rt_fail(cudaErrorNotSupported);
}

cudaError_t CUDARTAPI
cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
				    const cudaGraphEdgeData *dependencyData,
				    size_t numDependencies, unsigned int flags)
{
	(void)stream;
	(void)dependencies;
	(void)dependencyData;
	(void)numDependencies;
	(void)flags;
	return sim_rt_fail(cudaErrorNotSupported);
}

/* User objects: a reference count and a destructor, run (on the thread
 * that drops the last reference, at once) when the count reaches zero.
 * A graph's references are dropped when the graph is destroyed; the
 * executable graphs made from it take none of their own here. */
struct CUuserObject_st {
	void *ptr;
	cudaHostFn_t destroy;
	unsigned long long refs;
};

struct sim_rt_retain {
	cudaGraph_t graph;
	cudaUserObject_t object;
	unsigned int count;
	struct sim_rt_retain *next;
};

static pthread_mutex_t sim_rt_objects_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_rt_retain *sim_rt_retains;

cudaError_t CUDARTAPI
cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
		     unsigned int initialRefcount, unsigned int flags)
{
	cudaUserObject_t o;

	if (!object_out || !destroy || initialRefcount == 0 ||
	    flags != cudaUserObjectNoDestructorSync)
		return sim_rt_fail(cudaErrorInvalidValue);
	o = calloc(1, sizeof(*o));
	if (!o)
		return sim_rt_fail(cudaErrorMemoryAllocation);
	*o = (struct CUuserObject_st){ .ptr = ptr, .destroy = destroy, .refs = initialRefcount };
	*object_out = o;
	return cudaSuccess;
}

static void
object_release(cudaUserObject_t object, unsigned int count)
{
	unsigned long long left = __atomic_sub_fetch(&object->refs, count, __ATOMIC_ACQ_REL);

	if (left == 0) {
		object->destroy(object->ptr);
		free(object);
	}
}

cudaError_t CUDARTAPI
cudaUserObjectRelease(cudaUserObject_t object, unsigned int count)
{
	if (!object || count == 0)
		return sim_rt_fail(cudaErrorInvalidValue);
	object_release(object, count);
	return cudaSuccess;
}

cudaError_t CUDARTAPI
cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
			  unsigned int flags)
{
	struct sim_rt_retain *r;
	size_t n = 0;

	if (!graph || !object || count == 0 || (flags & ~(unsigned int)cudaGraphUserObjectMove))
		return sim_rt_fail(cudaErrorInvalidValue);
	if (sim_rt_drv.graph_get_nodes(graph, NULL, &n) != CUDA_SUCCESS)
		return sim_rt_fail(cudaErrorInvalidValue);
	r = calloc(1, sizeof(*r));
	if (!r)
		return sim_rt_fail(cudaErrorMemoryAllocation);
	if (!(flags & cudaGraphUserObjectMove))
		__atomic_add_fetch(&object->refs, count, __ATOMIC_ACQ_REL);
	*r = (struct sim_rt_retain){ .graph = graph, .object = object, .count = count };
	pthread_mutex_lock(&sim_rt_objects_lock);
	r->next = sim_rt_retains;
	sim_rt_retains = r;
	pthread_mutex_unlock(&sim_rt_objects_lock);
	return cudaSuccess;
}

/* What cudaGraphDestroy drops. */
static void
graph_objects_release(cudaGraph_t graph)
{
	struct sim_rt_retain **at = &sim_rt_retains, *mine = NULL, *r;

	pthread_mutex_lock(&sim_rt_objects_lock);
	while ((r = *at)) {
		if (r->graph != graph) {
			at = &r->next;
			continue;
		}
		*at = r->next;
		r->next = mine;
		mine = r;
	}
	pthread_mutex_unlock(&sim_rt_objects_lock);
	while ((r = mine)) {
		mine = r->next;
		object_release(r->object, r->count);
		free(r);
	}
}
