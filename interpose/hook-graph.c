/* CUDA graphs (hooks.def, both libraries): graph and exec lifetimes,
 * stream captures, launches, and graph-allocated memory. Destroying a
 * graph does not free live graph-allocated memory, and physical memory
 * goes back only after cudaDeviceGraphMemTrim: the report works that out
 * from these events (docs/trace-format.md). Allocations and frees made on
 * a stream that is being captured become graph memory and free nodes of
 * the captured graph; the wrappers here keep record.c's capture-stream
 * table, which is how the allocation hooks know. A capture spreads by
 * fork/join: a stream that waits on an event recorded in a capture joins
 * it, and its work is the capture's too, until the origin stream ends it
 * (mt_capture_join). */
#include "hook-common.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* One wrapper shape for all of them: call, then record; or record, then
 * call for what may be reused once the call returns (destroy). */
#define GRAPH_WRAPPER(ret, err, name, params, args, BEFORE, KIND, ADDR, BYTES, STREAM, HANDLE, \
		      STACK, AFTER)                                                           \
	MT_EXPORT ret name params                                                             \
	{                                                                                     \
		MT_REAL_OR(name, err);                                                        \
		if (!mt_enter())                                                              \
			return real args;                                                     \
		struct mt_rec r_ = { .api = MT_API_##name, .kind = (KIND),                    \
				     .no_stack = !(STACK) };                                  \
		if (BEFORE) {                                                                 \
			r_.address = MT_U64(ADDR);                                            \
			r_.handle = MT_U64(HANDLE);                                           \
			r_.stream = MT_U64(STREAM);                                           \
			mt_record_event(&r_);                                                 \
		}                                                                             \
		ret rc = real args;                                                           \
		if (!(BEFORE) && (rc == 0 || (AFTER))) {                                      \
			r_.status = (int)rc;                                                  \
			r_.address = MT_U64(ADDR);                                            \
			r_.bytes = (uint64_t)(BYTES);                                         \
			r_.handle = MT_U64(HANDLE);                                           \
			r_.stream = MT_U64(STREAM);                                           \
			mt_record_event(&r_);                                                 \
		}                                                                             \
		mt_leave();                                                                   \
		return rc;                                                                    \
	}

#define RT_G(name, params, args, BEFORE, KIND, ADDR, BYTES, STREAM, HANDLE, STACK, AFTER)      \
	GRAPH_WRAPPER(cudaError_t, cudaErrorInitializationError, name, params, args, BEFORE,   \
		      KIND, ADDR, BYTES, STREAM, HANDLE, STACK, AFTER)
#define DRV_G(name, params, args, BEFORE, KIND, ADDR, BYTES, STREAM, HANDLE, STACK, AFTER)     \
	GRAPH_WRAPPER(CUresult, CUDA_ERROR_NOT_INITIALIZED, name, params, args, BEFORE, KIND,  \
		      ADDR, BYTES, STREAM, HANDLE, STACK, AFTER)

/* ---- captures ----
 * The capture table is kept by the wrapper the program called; nested
 * calls (runtime -> driver) pass through inside the guard. */

#define BEGIN_CAPTURE(RET, ERR, name, params, args, STREAM, GRAPH, MODE)                       \
	MT_EXPORT RET name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, ERR);                                                         \
		if (!mt_enter())                                                               \
			return real args;                                                      \
		RET rc = real args;                                                            \
		if (rc == 0) {                                                                 \
			mt_capture_begin(MT_U64(STREAM));                                      \
			mt_record_event(&(struct mt_rec){ .api = MT_API_##name,                \
							  .kind = MT_EV_CAPTURE_BEGIN,         \
							  .stream = MT_U64(STREAM),            \
							  .handle = MT_U64(GRAPH),             \
							  .bytes = (uint64_t)(MODE) });        \
		}                                                                              \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

#define RT_BEGIN(name, params, args, STREAM, GRAPH, MODE) \
	BEGIN_CAPTURE(cudaError_t, cudaErrorInitializationError, name, params, args, STREAM, GRAPH, MODE)
#define DRV_BEGIN(name, params, args, STREAM, GRAPH, MODE) \
	BEGIN_CAPTURE(CUresult, CUDA_ERROR_NOT_INITIALIZED, name, params, args, STREAM, GRAPH, MODE)

RT_BEGIN(cudaStreamBeginCapture, (cudaStream_t stream, enum cudaStreamCaptureMode mode),
	 (stream, mode), stream, 0, mode)
RT_BEGIN(cudaStreamBeginCapture_ptsz, (cudaStream_t stream, enum cudaStreamCaptureMode mode),
	 (stream, mode), stream, 0, mode)
RT_BEGIN(cudaStreamBeginCaptureToGraph,
	 (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,
	  const cudaGraphEdgeData *edata, size_t ndeps, enum cudaStreamCaptureMode mode),
	 (stream, graph, deps, edata, ndeps, mode), stream, graph, mode)
RT_BEGIN(cudaStreamBeginCaptureToGraph_ptsz,
	 (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,
	  const cudaGraphEdgeData *edata, size_t ndeps, enum cudaStreamCaptureMode mode),
	 (stream, graph, deps, edata, ndeps, mode), stream, graph, mode)
DRV_BEGIN(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode),
	  hStream, 0, mode)
DRV_BEGIN(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode),
	  (hStream, mode), hStream, 0, mode)
DRV_BEGIN(cuStreamBeginCaptureToGraph,
	  (CUstream hStream, CUgraph hGraph, const CUgraphNode *deps, const CUgraphEdgeData *edata,
	   size_t ndeps, CUstreamCaptureMode mode),
	  (hStream, hGraph, deps, edata, ndeps, mode), hStream, hGraph, mode)
DRV_BEGIN(cuStreamBeginCaptureToGraph_ptsz,
	  (CUstream hStream, CUgraph hGraph, const CUgraphNode *deps, const CUgraphEdgeData *edata,
	   size_t ndeps, CUstreamCaptureMode mode),
	  (hStream, hGraph, deps, edata, ndeps, mode), hStream, hGraph, mode)

/* The capture ends whatever the result (a failed capture is invalidated). */
#define END_CAPTURE(RET, ERR, name, params, args, STREAM, PGRAPH)                              \
	MT_EXPORT RET name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, ERR);                                                         \
		if (!mt_enter())                                                               \
			return real args;                                                      \
		RET rc = real args;                                                            \
		mt_capture_end(MT_U64(STREAM));                                                \
		mt_record_event(&(struct mt_rec){ .api = MT_API_##name,                        \
						  .kind = MT_EV_CAPTURE_END,                   \
						  .status = (int)rc,                           \
						  .stream = MT_U64(STREAM),                    \
						  .handle = rc == 0 ? MT_OUT(PGRAPH) : 0 });   \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

END_CAPTURE(cudaError_t, cudaErrorInitializationError, cudaStreamEndCapture,
	    (cudaStream_t stream, cudaGraph_t *pGraph), (stream, pGraph), stream, pGraph)
END_CAPTURE(cudaError_t, cudaErrorInitializationError, cudaStreamEndCapture_ptsz,
	    (cudaStream_t stream, cudaGraph_t *pGraph), (stream, pGraph), stream, pGraph)
END_CAPTURE(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuStreamEndCapture,
	    (CUstream hStream, CUgraph *phGraph), (hStream, phGraph), hStream, phGraph)
END_CAPTURE(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuStreamEndCapture_ptsz,
	    (CUstream hStream, CUgraph *phGraph), (hStream, phGraph), hStream, phGraph)

/* ---- fork and join ----
 * Only while a capture is open: events are recorded every step of a
 * training loop, and then these wrappers are one load and a tail call. */

#define EVENT_RECORD(RET, ERR, name, params, args, EVENT, STREAM, FLAGS)                       \
	MT_EXPORT RET name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, ERR);                                                         \
		if (MT_LIKELY(mt_capture_none()) || !mt_enter())                               \
			return real args;                                                      \
		RET rc = real args;                                                            \
		if (rc == 0)                                                                   \
			mt_capture_event_recorded(MT_U64(EVENT), MT_U64(STREAM), (FLAGS) & 1); \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

EVENT_RECORD(cudaError_t, cudaErrorInitializationError, cudaEventRecord,
	     (cudaEvent_t event, cudaStream_t stream), (event, stream), event, stream, 0)
EVENT_RECORD(cudaError_t, cudaErrorInitializationError, cudaEventRecord_ptsz,
	     (cudaEvent_t event, cudaStream_t stream), (event, stream), event, stream, 0)
EVENT_RECORD(cudaError_t, cudaErrorInitializationError, cudaEventRecordWithFlags,
	     (cudaEvent_t event, cudaStream_t stream, unsigned int flags), (event, stream, flags),
	     event, stream, flags)
EVENT_RECORD(cudaError_t, cudaErrorInitializationError, cudaEventRecordWithFlags_ptsz,
	     (cudaEvent_t event, cudaStream_t stream, unsigned int flags), (event, stream, flags),
	     event, stream, flags)
EVENT_RECORD(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuEventRecord,
	     (CUevent hEvent, CUstream hStream), (hEvent, hStream), hEvent, hStream, 0)
EVENT_RECORD(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuEventRecord_ptsz,
	     (CUevent hEvent, CUstream hStream), (hEvent, hStream), hEvent, hStream, 0)
EVENT_RECORD(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuEventRecordWithFlags,
	     (CUevent hEvent, CUstream hStream, unsigned int flags), (hEvent, hStream, flags),
	     hEvent, hStream, flags)
EVENT_RECORD(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuEventRecordWithFlags_ptsz,
	     (CUevent hEvent, CUstream hStream, unsigned int flags), (hEvent, hStream, flags),
	     hEvent, hStream, flags)

/* An external wait (flag 1) is a node of its own, not a join. */
#define WAIT_EVENT(RET, ERR, name, params, args, STREAM, EVENT, FLAGS)                         \
	MT_EXPORT RET name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, ERR);                                                         \
		if (MT_LIKELY(mt_capture_none()) || !mt_enter())                               \
			return real args;                                                      \
		RET rc = real args;                                                            \
		uint64_t origin_ = rc == 0 && !((FLAGS) & 1)                                   \
					   ? mt_capture_join(MT_U64(STREAM), MT_U64(EVENT))    \
					   : 0;                                                \
		if (origin_)                                                                   \
			mt_record_event(&(struct mt_rec){ .api = MT_API_##name,                \
							  .kind = MT_EV_CAPTURE_JOIN,          \
							  .stream = MT_U64(STREAM),            \
							  .address = origin_,                  \
							  .no_stack = true });                 \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

WAIT_EVENT(cudaError_t, cudaErrorInitializationError, cudaStreamWaitEvent,
	   (cudaStream_t stream, cudaEvent_t event, unsigned int flags), (stream, event, flags),
	   stream, event, flags)
WAIT_EVENT(cudaError_t, cudaErrorInitializationError, cudaStreamWaitEvent_ptsz,
	   (cudaStream_t stream, cudaEvent_t event, unsigned int flags), (stream, event, flags),
	   stream, event, flags)
WAIT_EVENT(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuStreamWaitEvent,
	   (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags),
	   hStream, hEvent, Flags)
WAIT_EVENT(CUresult, CUDA_ERROR_NOT_INITIALIZED, cuStreamWaitEvent_ptsz,
	   (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags),
	   hStream, hEvent, Flags)

/* ---- graphs and execs ---- */

RT_G(cudaGraphCreate, (cudaGraph_t *pGraph, unsigned int flags), (pGraph, flags), false,
     MT_EV_GRAPH_CREATE, 0, 0, 0, MT_OUT(pGraph), true, false)
DRV_G(cuGraphCreate, (CUgraph *phGraph, unsigned int flags), (phGraph, flags), false,
      MT_EV_GRAPH_CREATE, 0, 0, 0, MT_OUT(phGraph), true, false)
RT_G(cudaGraphClone, (cudaGraph_t *pGraphClone, cudaGraph_t originalGraph),
     (pGraphClone, originalGraph), false, MT_EV_GRAPH_CLONE, originalGraph, 0, 0,
     MT_OUT(pGraphClone), true, false)
DRV_G(cuGraphClone, (CUgraph *phGraphClone, CUgraph originalGraph), (phGraphClone, originalGraph),
      false, MT_EV_GRAPH_CLONE, originalGraph, 0, 0, MT_OUT(phGraphClone), true, false)
RT_G(cudaGraphDestroy, (cudaGraph_t graph), (graph), true, MT_EV_GRAPH_DESTROY, 0, 0, 0, graph,
     true, false)
DRV_G(cuGraphDestroy, (CUgraph hGraph), (hGraph), true, MT_EV_GRAPH_DESTROY, 0, 0, 0, hGraph, true,
      false)

#define INSTANTIATE(L, name, params, args, PEXEC, GRAPH, FLAGS)                                \
	L(name, params, args, false, MT_EV_EXEC_CREATE, GRAPH, FLAGS, 0, MT_OUT(PEXEC), true, \
	  false)

INSTANTIATE(RT_G, cudaGraphInstantiate,
	    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags),
	    (pGraphExec, graph, flags), pGraphExec, graph, flags)
INSTANTIATE(RT_G, cudaGraphInstantiateWithFlags,
	    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags),
	    (pGraphExec, graph, flags), pGraphExec, graph, flags)
INSTANTIATE(RT_G, cudaGraphInstantiateWithParams,
	    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *params),
	    (pGraphExec, graph, params), pGraphExec, graph, params ? params->flags : 0)
INSTANTIATE(RT_G, cudaGraphInstantiateWithParams_ptsz,
	    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *params),
	    (pGraphExec, graph, params), pGraphExec, graph, params ? params->flags : 0)
INSTANTIATE(DRV_G, cuGraphInstantiateWithFlags,
	    (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags),
	    (phGraphExec, hGraph, flags), phGraphExec, hGraph, flags)
INSTANTIATE(DRV_G, cuGraphInstantiateWithParams,
	    (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *params),
	    (phGraphExec, hGraph, params), phGraphExec, hGraph, params ? params->flags : 0)
INSTANTIATE(DRV_G, cuGraphInstantiateWithParams_ptsz,
	    (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *params),
	    (phGraphExec, hGraph, params), phGraphExec, hGraph, params ? params->flags : 0)

RT_G(cudaGraphExecDestroy, (cudaGraphExec_t graphExec), (graphExec), true, MT_EV_EXEC_DESTROY, 0, 0,
     0, graphExec, true, false)
DRV_G(cuGraphExecDestroy, (CUgraphExec hGraphExec), (hGraphExec), true, MT_EV_EXEC_DESTROY, 0, 0,
      0, hGraphExec, true, false)

/* Launches happen every step: recorded without a stack. A failed launch is
 * recorded too (relaunching with unfreed graph memory fails). */
#define LAUNCH(L, name, params, args, KIND, EXEC, STREAM) \
	L(name, params, args, false, KIND, 0, 0, STREAM, EXEC, false, true)

LAUNCH(RT_G, cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream),
       MT_EV_GRAPH_LAUNCH, graphExec, stream)
LAUNCH(RT_G, cudaGraphLaunch_ptsz, (cudaGraphExec_t graphExec, cudaStream_t stream),
       (graphExec, stream), MT_EV_GRAPH_LAUNCH, graphExec, stream)
LAUNCH(DRV_G, cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream),
       MT_EV_GRAPH_LAUNCH, hGraphExec, hStream)
LAUNCH(DRV_G, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
       (hGraphExec, hStream), MT_EV_GRAPH_LAUNCH, hGraphExec, hStream)
LAUNCH(RT_G, cudaGraphUpload, (cudaGraphExec_t graphExec, cudaStream_t stream), (graphExec, stream),
       MT_EV_GRAPH_UPLOAD, graphExec, stream)
LAUNCH(RT_G, cudaGraphUpload_ptsz, (cudaGraphExec_t graphExec, cudaStream_t stream),
       (graphExec, stream), MT_EV_GRAPH_UPLOAD, graphExec, stream)
LAUNCH(DRV_G, cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream),
       MT_EV_GRAPH_UPLOAD, hGraphExec, hStream)
LAUNCH(DRV_G, cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
       (hGraphExec, hStream), MT_EV_GRAPH_UPLOAD, hGraphExec, hStream)

RT_G(cudaDeviceGraphMemTrim, (int device), (device), false, MT_EV_GRAPH_MEM_TRIM, 0, device, 0, 0,
     true, true)
DRV_G(cuDeviceGraphMemTrim, (CUdevice device), (device), false, MT_EV_GRAPH_MEM_TRIM, 0, device, 0,
      0, true, true)

/* ---- memory nodes ---- */

/* A memory-alloc node: graph memory at the address the node returns, for
 * the graph's life; physical once an exec of the graph runs. */
#define ALLOC_NODE(RET, OK, OOM, ERR, name, params, args, PARAMS, GRAPH)                      \
	MT_ALLOC_WRAPPER(RET, OK, OOM, ERR, name, params, args, (PARAMS) ? MT_U64((PARAMS)->dptr) \
									 : 0,                    \
			 (PARAMS) ? (PARAMS)->bytesize : 0, MT_MEM_GRAPH, 0, GRAPH)

ALLOC_NODE(cudaError_t, cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInitializationError,
	   cudaGraphAddMemAllocNode,
	   (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
	    size_t ndeps, struct cudaMemAllocNodeParams *nodeParams),
	   (pGraphNode, graph, deps, ndeps, nodeParams), nodeParams, graph)
ALLOC_NODE(CUresult, CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_INITIALIZED,
	   cuGraphAddMemAllocNode,
	   (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t ndeps,
	    CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams),
	   (phGraphNode, hGraph, deps, ndeps, nodeParams), nodeParams, hGraph)

RT_G(cudaGraphAddMemFreeNode,
     (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
      void *dptr),
     (pGraphNode, graph, deps, ndeps, dptr), false, MT_EV_GRAPH_FREE_NODE, dptr, 0, 0, graph, true,
     false)
DRV_G(cuGraphAddMemFreeNode,
      (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t ndeps,
       CUdeviceptr dptr),
      (phGraphNode, hGraph, deps, ndeps, dptr), false, MT_EV_GRAPH_FREE_NODE, dptr, 0, 0, hGraph,
      true, false)
