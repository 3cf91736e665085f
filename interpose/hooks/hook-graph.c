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

/* When a graph call is recorded. */
enum when {
	BEFORE_CALL, /* what may be reused once the call returns (destroy) */
	ON_SUCCESS,
	ON_RETURN, /* whatever the result (a failed launch tells something) */
};

/* One wrapper shape for the lifetimes: the event is the fields of a
 * struct mt_rec, named (kind, address, bytes, stream, handle, no_stack),
 * evaluated when it is recorded: after the call for ON_SUCCESS and
 * ON_RETURN, so that they may read what the call wrote. */
#define GRAPH_WRAPPER(RET, ERR, name, params, args, WHEN, ...)                                 \
	MT_EXPORT RET name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, ERR);                                                         \
		if (!mt_enter())                                                               \
			return real args;                                                      \
		if ((WHEN) == BEFORE_CALL)                                                     \
			mt_record_event(&(struct mt_rec){ .api = MT_API_##name, __VA_ARGS__ }); \
		RET rc = real args;                                                            \
		if ((WHEN) == ON_RETURN || ((WHEN) == ON_SUCCESS && rc == 0))                  \
			mt_record_event(&(struct mt_rec){ .api = MT_API_##name,                \
							  .status = (int)rc,                   \
							  __VA_ARGS__ });                      \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

#define RT_GRAPH(...) GRAPH_WRAPPER(cudaError_t, cudaErrorInitializationError, __VA_ARGS__)
#define DRV_GRAPH(...) GRAPH_WRAPPER(CUresult, CUDA_ERROR_NOT_INITIALIZED, __VA_ARGS__)

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

#define RT_BEGIN(...) BEGIN_CAPTURE(cudaError_t, cudaErrorInitializationError, __VA_ARGS__)
#define DRV_BEGIN(...) BEGIN_CAPTURE(CUresult, CUDA_ERROR_NOT_INITIALIZED, __VA_ARGS__)

MT_WITH_PTSZ(RT_BEGIN, cudaStreamBeginCapture,
	     (cudaStream_t stream, enum cudaStreamCaptureMode mode), (stream, mode), stream, 0, mode)
MT_WITH_PTSZ(RT_BEGIN, cudaStreamBeginCaptureToGraph,
	     (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,
	      const cudaGraphEdgeData *edata, size_t ndeps, enum cudaStreamCaptureMode mode),
	     (stream, graph, deps, edata, ndeps, mode), stream, graph, mode)
MT_WITH_PTSZ(DRV_BEGIN, cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode),
	     (hStream, mode), hStream, 0, mode)
MT_WITH_PTSZ(DRV_BEGIN, cuStreamBeginCaptureToGraph,
	     (CUstream hStream, CUgraph hGraph, const CUgraphNode *deps,
	      const CUgraphEdgeData *edata, size_t ndeps, CUstreamCaptureMode mode),
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

#define RT_END(...) END_CAPTURE(cudaError_t, cudaErrorInitializationError, __VA_ARGS__)
#define DRV_END(...) END_CAPTURE(CUresult, CUDA_ERROR_NOT_INITIALIZED, __VA_ARGS__)

MT_WITH_PTSZ(RT_END, cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t *pGraph),
	     (stream, pGraph), stream, pGraph)
MT_WITH_PTSZ(DRV_END, cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph),
	     (hStream, phGraph), hStream, phGraph)

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

#define RT_RECORD(...) EVENT_RECORD(cudaError_t, cudaErrorInitializationError, __VA_ARGS__)
#define DRV_RECORD(...) EVENT_RECORD(CUresult, CUDA_ERROR_NOT_INITIALIZED, __VA_ARGS__)

MT_WITH_PTSZ(RT_RECORD, cudaEventRecord, (cudaEvent_t event, cudaStream_t stream),
	     (event, stream), event, stream, 0)
MT_WITH_PTSZ(RT_RECORD, cudaEventRecordWithFlags,
	     (cudaEvent_t event, cudaStream_t stream, unsigned int flags), (event, stream, flags),
	     event, stream, flags)
MT_WITH_PTSZ(DRV_RECORD, cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream),
	     hEvent, hStream, 0)
MT_WITH_PTSZ(DRV_RECORD, cuEventRecordWithFlags,
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

#define RT_WAIT(...) WAIT_EVENT(cudaError_t, cudaErrorInitializationError, __VA_ARGS__)
#define DRV_WAIT(...) WAIT_EVENT(CUresult, CUDA_ERROR_NOT_INITIALIZED, __VA_ARGS__)

MT_WITH_PTSZ(RT_WAIT, cudaStreamWaitEvent,
	     (cudaStream_t stream, cudaEvent_t event, unsigned int flags), (stream, event, flags),
	     stream, event, flags)
MT_WITH_PTSZ(DRV_WAIT, cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags),
	     (hStream, hEvent, Flags), hStream, hEvent, Flags)

/* ---- graphs and execs ---- */

RT_GRAPH(cudaGraphCreate, (cudaGraph_t *pGraph, unsigned int flags), (pGraph, flags), ON_SUCCESS,
	 .kind = MT_EV_GRAPH_CREATE, .handle = MT_OUT(pGraph))
DRV_GRAPH(cuGraphCreate, (CUgraph *phGraph, unsigned int flags), (phGraph, flags), ON_SUCCESS,
	  .kind = MT_EV_GRAPH_CREATE, .handle = MT_OUT(phGraph))
RT_GRAPH(cudaGraphClone, (cudaGraph_t *pGraphClone, cudaGraph_t originalGraph),
	 (pGraphClone, originalGraph), ON_SUCCESS, .kind = MT_EV_GRAPH_CLONE,
	 .address = MT_U64(originalGraph), .handle = MT_OUT(pGraphClone))
DRV_GRAPH(cuGraphClone, (CUgraph *phGraphClone, CUgraph originalGraph),
	  (phGraphClone, originalGraph), ON_SUCCESS, .kind = MT_EV_GRAPH_CLONE,
	  .address = MT_U64(originalGraph), .handle = MT_OUT(phGraphClone))
RT_GRAPH(cudaGraphDestroy, (cudaGraph_t graph), (graph), BEFORE_CALL, .kind = MT_EV_GRAPH_DESTROY,
	 .handle = MT_U64(graph))
DRV_GRAPH(cuGraphDestroy, (CUgraph hGraph), (hGraph), BEFORE_CALL, .kind = MT_EV_GRAPH_DESTROY,
	  .handle = MT_U64(hGraph))

/* The exec is the handle, the graph it was made from the address, the
 * flags the bytes. */
#define INSTANTIATE(L, name, params, args, PEXEC, GRAPH, FLAGS)                            \
	L(name, params, args, ON_SUCCESS, .kind = MT_EV_EXEC_CREATE, .address = MT_U64(GRAPH), \
	  .bytes = (FLAGS), .handle = MT_OUT(PEXEC))
#define RT_INSTANTIATE(name, params, args, PEXEC, GRAPH, FLAGS) \
	INSTANTIATE(RT_GRAPH, name, params, args, PEXEC, GRAPH, FLAGS)
#define DRV_INSTANTIATE(name, params, args, PEXEC, GRAPH, FLAGS) \
	INSTANTIATE(DRV_GRAPH, name, params, args, PEXEC, GRAPH, FLAGS)

RT_INSTANTIATE(cudaGraphInstantiate,
	       (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags),
	       (pGraphExec, graph, flags), pGraphExec, graph, flags)
RT_INSTANTIATE(cudaGraphInstantiateWithFlags,
	       (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags),
	       (pGraphExec, graph, flags), pGraphExec, graph, flags)
MT_WITH_PTSZ(RT_INSTANTIATE, cudaGraphInstantiateWithParams,
	     (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *params),
	     (pGraphExec, graph, params), pGraphExec, graph, params ? params->flags : 0)
DRV_INSTANTIATE(cuGraphInstantiateWithFlags,
		(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags),
		(phGraphExec, hGraph, flags), phGraphExec, hGraph, flags)
MT_WITH_PTSZ(DRV_INSTANTIATE, cuGraphInstantiateWithParams,
	     (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *params),
	     (phGraphExec, hGraph, params), phGraphExec, hGraph, params ? params->flags : 0)

RT_GRAPH(cudaGraphExecDestroy, (cudaGraphExec_t graphExec), (graphExec), BEFORE_CALL,
	 .kind = MT_EV_EXEC_DESTROY, .handle = MT_U64(graphExec))
DRV_GRAPH(cuGraphExecDestroy, (CUgraphExec hGraphExec), (hGraphExec), BEFORE_CALL,
	  .kind = MT_EV_EXEC_DESTROY, .handle = MT_U64(hGraphExec))

/* Launches happen every step: recorded without a stack. A failed launch is
 * recorded too (relaunching with unfreed graph memory fails). */
MT_WITH_PTSZ(RT_GRAPH, cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream),
	     (graphExec, stream), ON_RETURN, .kind = MT_EV_GRAPH_LAUNCH,
	     .stream = MT_U64(stream), .handle = MT_U64(graphExec), .no_stack = true)
MT_WITH_PTSZ(DRV_GRAPH, cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream),
	     (hGraphExec, hStream), ON_RETURN, .kind = MT_EV_GRAPH_LAUNCH,
	     .stream = MT_U64(hStream), .handle = MT_U64(hGraphExec), .no_stack = true)
MT_WITH_PTSZ(RT_GRAPH, cudaGraphUpload, (cudaGraphExec_t graphExec, cudaStream_t stream),
	     (graphExec, stream), ON_RETURN, .kind = MT_EV_GRAPH_UPLOAD,
	     .stream = MT_U64(stream), .handle = MT_U64(graphExec), .no_stack = true)
MT_WITH_PTSZ(DRV_GRAPH, cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream),
	     (hGraphExec, hStream), ON_RETURN, .kind = MT_EV_GRAPH_UPLOAD,
	     .stream = MT_U64(hStream), .handle = MT_U64(hGraphExec), .no_stack = true)

/* The device trimmed travels as the bytes. */
RT_GRAPH(cudaDeviceGraphMemTrim, (int device), (device), ON_RETURN, .kind = MT_EV_GRAPH_MEM_TRIM,
	 .bytes = (uint64_t)device)
DRV_GRAPH(cuDeviceGraphMemTrim, (CUdevice device), (device), ON_RETURN,
	  .kind = MT_EV_GRAPH_MEM_TRIM, .bytes = (uint64_t)device)

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

RT_GRAPH(cudaGraphAddMemFreeNode,
	 (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *deps,
	  size_t ndeps, void *dptr),
	 (pGraphNode, graph, deps, ndeps, dptr), ON_SUCCESS, .kind = MT_EV_GRAPH_FREE_NODE,
	 .address = MT_U64(dptr), .handle = MT_U64(graph))
DRV_GRAPH(cuGraphAddMemFreeNode,
	  (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t ndeps,
	   CUdeviceptr dptr),
	  (phGraphNode, hGraph, deps, ndeps, dptr), ON_SUCCESS, .kind = MT_EV_GRAPH_FREE_NODE,
	  .address = MT_U64(dptr), .handle = MT_U64(hGraph))
