/* Internals shared by the files of the simulated driver (libcuda.so.1).
 * Only the cu* entry points are exported (libcuda.map); everything here
 * is local to the library. */
#pragma once

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>

#include "sim-arena.h"
#include "sim-config.h"

/* The version cuDriverGetVersion reports: a CUDA 13.0 driver. */
#define SIM_DRIVER_VERSION 13000

/* The granularity of virtual memory management (cuMemCreate, cuMemMap,
 * cuMemAddressReserve) and of the device memory a pool reserves: 2 MiB,
 * as on current NVIDIA GPUs. */
#define SIM_GRANULARITY ((size_t)2 << 20)

/* Launch limits of the simulated device, those of a Hopper GPU:
 * cuDeviceGetAttribute reports them and cuLaunchKernel enforces them. */
#define SIM_MAX_THREADS_PER_BLOCK 1024
#define SIM_MAX_BLOCK_DIM_X 1024
#define SIM_MAX_BLOCK_DIM_Y 1024
#define SIM_MAX_BLOCK_DIM_Z 64
#define SIM_MAX_GRID_DIM_X 2147483647u
#define SIM_MAX_GRID_DIM_Y 65535
#define SIM_MAX_GRID_DIM_Z 65535
#define SIM_MAX_SHARED_PER_BLOCK 49152     /* without opting in to more */

/* What a block in a blockmap is, for the maps that mix kinds. */
enum sim_kind {
	SIM_KIND_DEVICE = 1,
	SIM_KIND_MANAGED,
	SIM_KIND_PINNED,
	SIM_KIND_STREAM,
	SIM_KIND_CONTEXT,
	SIM_KIND_POOL_CHUNK,   /* device memory a pool holds in reserve */
	SIM_KIND_POOL_ALLOC,   /* a block carved from a pool's chunk */
	SIM_KIND_PHYSICAL,     /* cuMemCreate */
	SIM_KIND_ARRAY,
	SIM_KIND_REGISTERED,   /* cuMemHostRegister */
	SIM_KIND_RESERVATION,  /* cuMemAddressReserve */
	SIM_KIND_IMPORTED,     /* cuIpcOpenMemHandle */
	SIM_KIND_GRAPH_CHUNK,  /* device memory the graph memory pool holds */
	SIM_KIND_GRAPH_VA,     /* the address range of a graph allocation */
	SIM_KIND_EVENT,
	SIM_KIND_MODULE_GLOBAL, /* a module's __device__ variable (cuModuleGetGlobal) */
};

struct CUctx_st {
	uint32_t id;        /* owner tag of its memory and streams; fresh per (re)creation */
	CUdevice device;
	uint64_t peers;     /* devices whose memory it has enabled access to (a bit each) */
	bool primary;
	unsigned retains;   /* primary contexts only */
};

struct CUstream_st {
	uint32_t owner;     /* id of the context it was created in */
	CUdevice device;
	unsigned flags;
	int priority;       /* 0 (lowest) to SIM_STREAM_PRIORITY_GREATEST */
};

/* Stream priorities, those of a Hopper GPU: 0 is the lowest and the
 * default, -5 the greatest (sim-driver-stream.c). */
#define SIM_STREAM_PRIORITY_GREATEST (-5)

/* What an event stands for (sim-driver-event.c). Work completes when it
 * is issued, so a record outside a capture is complete at once. */
enum sim_event_state {
	SIM_EVENT_EMPTY,    /* never recorded: an empty set of work */
	SIM_EVENT_DONE,     /* recorded outside any capture */
	SIM_EVENT_CAPTURED, /* recorded in a capture: nodes of its graph */
};

struct CUevent_st {
	uint32_t owner;     /* id of the context it was created in */
	CUdevice device;
	unsigned flags;     /* CU_EVENT_* */
	enum sim_event_state state;
	unsigned long long tick;  /* DONE: the simulated clock at the record */
	cuuint64_t capture;       /* CAPTURED: the capture's id */
	CUgraphNode *deps;        /* CAPTURED: the recording stream's dependency set */
	size_t ndeps;
};

/* A chunk of device memory that a pool holds, and the pool's blocks in it. */
struct sim_pool_chunk {
	struct sim_arena blocks;        /* base and size: the chunk's device memory */
	struct sim_pool_chunk *next;    /* the pool's chunks, in address order */
};

/* A stream-ordered memory pool (sim-driver-pool.c). */
struct CUmemPoolHandle_st {
	CUdevice device;
	uint32_t owner;                 /* creating context's id; 0: a default pool */
	bool destroyed;                 /* destroyed with blocks still live */
	size_t max_size;                /* 0: the device's capacity */
	cuuint64_t release_threshold;
	size_t reserved, reserved_high, used_high;
	int reuse[3];                   /* the CU_MEMPOOL_ATTR_REUSE_* switches, stored only */
	struct sim_pool_chunk *chunks;
	struct CUmemPoolHandle_st *next; /* every pool, default ones first */
};

/* What one device's graph memory pool holds (sim-driver-graphmem.c):
 * device memory in SIM_GRANULARITY blocks of the device's arena. */
struct sim_graph_pool {
	size_t reserved, reserved_high, used_high;
	uintptr_t *chunks;
	size_t nchunks, capchunks;
};

/* The allocation of one memory-alloc node (sim-driver-graphmem.c). Its
 * address is fixed from the node's creation for as long as a node, an
 * executable graph or a launch still holds it. */
struct sim_graph_alloc {
	uintptr_t va;
	size_t bytes;            /* as requested */
	size_t size;             /* address range and physical memory: bytes rounded to 2 MiB */
	CUdevice device;
	unsigned refs;           /* nodes and executable-graph steps that name it */
	bool live;               /* made by a launch and not freed since */
	uint32_t owner;          /* while live: the context of that launch */
	CUgraph freed_by;        /* the graph with a free node for it, if any */
	struct sim_graph_alloc *next;
};

/* Graphs (sim-driver-graph.c). Only what the simulator runs has a
 * meaning: memory-alloc and memory-free nodes, and event-record nodes;
 * empty, kernel, memset, memcpy and event-wait nodes are kept and do
 * nothing. Dependencies are kept because a capture across streams must
 * tell joined work from unjoined work. */
struct CUgraphNode_st {
	CUgraph graph;
	CUgraphNodeType type;
	size_t index;                      /* its place in graph->nodes */
	CUgraphNode *deps;                 /* the nodes it depends on, all earlier in the graph */
	size_t ndeps;
	CUevent event;                     /* EVENT_RECORD, WAIT_EVENT: the event */
	struct sim_graph_alloc *alloc;     /* MEM_ALLOC: its allocation; MEM_FREE: what it frees */
	CUDA_MEM_ALLOC_NODE_PARAMS params; /* MEM_ALLOC: as given, with dptr */
};

struct CUgraph_st {
	CUgraphNode *nodes;      /* in the order they were added: a valid order to run them */
	size_t nnodes, capnodes;
	unsigned nexecs;         /* executable graphs made from it that still exist */
	bool capturing;          /* a capture into it has not ended */
	struct CUgraph_st *next; /* every graph */
};

/* One step of an executable graph: what a node does when it runs. */
struct sim_graph_step {
	CUgraphNodeType type;
	struct sim_graph_alloc *alloc;
	CUevent event;           /* EVENT_RECORD: recorded when the step runs */
};

struct CUgraphExec_st {
	CUgraph graph;           /* NULL once the graph is destroyed */
	struct sim_graph_step *steps;
	size_t nsteps;
	unsigned long long flags;
	uint32_t owner;          /* the context it was instantiated in */
	bool mapped;             /* holds its physical mapping between launches */
	struct CUgraphExec_st *next; /* every executable graph */
};

struct sim_device {
	size_t capacity;
	size_t reserved;
	struct sim_arena arena;
	struct CUctx_st primary;
	struct CUmemPoolHandle_st default_pool;
	CUmemoryPool current_pool;      /* cuDeviceSetMemPool; cuMemAllocAsync uses it */
	struct sim_graph_pool graph_pool;
};

/* All mutable driver state, under one lock: a test fixture needs to be
 * obviously correct far more than it needs to scale. */
struct sim_driver {
	pthread_mutex_t lock;
	int ndev;
	struct sim_device *dev;
	struct sim_blockmap contexts;  /* live contexts, keyed by CUcontext */
	struct sim_blockmap streams;   /* keyed by CUstream, owner = context id */
	struct sim_blockmap pinned;    /* pinned host memory, keyed by pointer */
	struct sim_blockmap registered; /* cuMemHostRegister'ed ranges, keyed by pointer */
	struct sim_blockmap events;    /* keyed by CUevent, owner = context id */
	uint32_t next_id;              /* context ids; 0 is no context */
};

/* sim-driver.c */
extern struct sim_driver sim_drv;
CUresult sim_ready(void);
void sim_lock(void);
void sim_unlock(void);
struct sim_device *sim_device_get(CUdevice dev);
/* sim-ledger.c: the order served, for tests (CUDASIM_LEDGER). Lock held. */
void sim_ledger_note(char op, uintptr_t addr, size_t bytes);
struct sim_device *sim_device_of(uintptr_t addr, size_t bytes);
uintptr_t sim_map_region(uintptr_t hint, size_t bytes, size_t align, int prot);

/* sim-driver-ctx.c: call with the lock held */
CUresult sim_ctx_enter(CUcontext *ctx);
CUresult sim_stream_check(CUstream stream, CUcontext ctx);
CUresult sim_stream_create(CUstream *phStream, unsigned int flags, int priority, CUcontext ctx);
bool sim_ctx_alive(CUcontext ctx);
CUstream sim_stream_per_thread(CUstream stream);

/* sim-driver-mem.c: call with the lock held */
void sim_pinned_release_owner(uint32_t owner);
CUresult sim_mem_free(CUdeviceptr dptr, CUstream stream);

/* sim-driver-pool.c: call with the lock held */
void sim_pool_init_default(CUmemoryPool pool, CUdevice dev);
CUresult sim_pool_alloc(CUmemoryPool pool, size_t bytes, uint32_t owner, CUdeviceptr *dptr);
bool sim_pool_free(uintptr_t addr);
const struct sim_block *sim_pool_block(uintptr_t addr);
void sim_pools_synchronize(CUdevice dev);
void sim_pools_release_owner(CUcontext ctx);

/* sim-driver-vmm.c: call with the lock held */
bool sim_vmm_owns(uintptr_t addr);
bool sim_vmm_mapped(uintptr_t addr, size_t bytes);
bool sim_vmm_range(uintptr_t addr, uintptr_t *base, size_t *size);

/* sim-driver-array.c: call with the lock held */
void sim_arrays_release_owner(uint32_t owner);

/* sim-driver-capture.c: call with the lock held */
struct sim_capture;
struct sim_capture *sim_capture_of(CUstream stream);
CUresult sim_capture_add_node(struct sim_capture *c, CUgraphNode node);
const CUgraphNode *sim_capture_deps(const struct sim_capture *c, size_t *ndeps);
CUgraph sim_capture_graph(const struct sim_capture *c);
void sim_capture_invalidate(struct sim_capture *c);
CUresult sim_capture_unsafe_call(void);
void sim_captures_release_stream(CUstream stream);
CUresult sim_capture_record(struct sim_capture *c, CUevent ev, bool external);
CUresult sim_capture_wait(CUstream stream, struct sim_capture *c, CUevent ev, bool external);
CUresult sim_capture_event_use(CUevent ev);

/* sim-driver-event.c: call with the lock held */
bool sim_event_alive(CUevent ev);
CUresult sim_event_capture(CUevent ev, cuuint64_t capture, const CUgraphNode *deps,
			   size_t ndeps);
void sim_event_ran(CUevent ev);
void sim_events_release_owner(uint32_t owner);

/* sim-driver-graph.c: call with the lock held */
extern CUgraphExec sim_graph_execs;
CUgraph sim_graph_new(void);
CUresult sim_graph_node_new(CUgraph graph, CUgraphNodeType type, const CUgraphNode *deps,
			    size_t ndeps, CUgraphNode *out);
bool *sim_graph_ancestors(CUgraph graph, const CUgraphNode *tips, size_t ntips);
void sim_graph_delete(CUgraph graph);
bool sim_graph_alive(CUgraph graph);
void sim_graph_execs_release_owner(uint32_t owner);
CUresult sim_capture_alloc(struct sim_capture *c, CUmemoryPool pool, size_t bytes,
			   CUdeviceptr *dptr);
CUresult sim_capture_free(struct sim_capture *c, CUdeviceptr dptr);
CUresult sim_capture_noop(struct sim_capture *c, CUgraphNodeType type);
CUresult sim_capture_event_node(struct sim_capture *c, CUgraphNodeType type, CUevent ev);

/* sim-driver-graphmem.c: call with the lock held */
CUresult sim_graph_alloc_new(const CUDA_MEM_ALLOC_NODE_PARAMS *params,
			     struct sim_graph_alloc **out);
void sim_graph_alloc_put(struct sim_graph_alloc *a);
struct sim_graph_alloc *sim_graph_alloc_at(uintptr_t addr);
bool sim_graph_mem_free(uintptr_t addr);
bool sim_graph_mem_live(uintptr_t addr, size_t bytes);
bool sim_graph_mem_range(uintptr_t addr, uintptr_t *base, size_t *size);
CUresult sim_graph_mem_run(CUgraphExec exec, bool launch, CUcontext ctx);
void sim_graph_mem_exec_gone(CUgraphExec exec);
void sim_graph_mem_release_owner(CUcontext ctx);

/* sim-driver-module.c: call with the lock held */
void sim_modules_release_owner(uint32_t owner);

/* sim-driver-ipc.c: call with the lock held */
bool sim_ipc_imported(uintptr_t addr, size_t bytes);
bool sim_ipc_range(uintptr_t addr, uintptr_t *base, size_t *size);
void sim_ipc_release_owner(uint32_t owner);

/* Exported entry points that cuda.h does not declare in a default build:
 * the per-thread-default-stream twins, which the driver hands out through
 * cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N,
				       CUstream hStream);
CUresult CUDAAPI cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr,
					      cuuint32_t value, unsigned int flags);
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
					  void *userData, unsigned int flags);
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext,
					CUdeviceptr srcDevice, CUcontext srcContext,
					size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
	unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
	unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
	CUstream hStream, void **kernelParams);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
				       void **kernelParams, void **extra);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					      CUstream hStream);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				    CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
				      size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
					   size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
					   CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
					   size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				      size_t ByteCount);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				      CUstream hStream);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
						  const CUgraphNode *dependencies,
						  const CUgraphEdgeData *dependencyData,
						  size_t numDependencies, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
						CUstreamCaptureStatus *captureStatus_out,
						cuuint64_t *id_out, CUgraph *graph_out,
						const CUgraphNode **dependencies_out,
						const CUgraphEdgeData **edgeData_out,
						size_t *numDependencies_out);
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
						   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
					     unsigned int flags);
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX,
				     unsigned int blockDimY, unsigned int blockDimZ,
				     unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra);

/* Older ABIs of cuStreamGetCaptureInfo, which cuda.h renames to its _v3:
 * the CUDA 10.1 one and the CUDA 11.3 one, with their per-thread twins. */
#undef cuStreamGetCaptureInfo
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
					cuuint64_t *id_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream,
					     CUstreamCaptureStatus *captureStatus_out,
					     cuuint64_t *id_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
					   CUstreamCaptureStatus *captureStatus_out,
					   cuuint64_t *id_out, CUgraph *graph_out,
					   const CUgraphNode **dependencies_out,
					   size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
						CUstreamCaptureStatus *captureStatus_out,
						cuuint64_t *id_out, CUgraph *graph_out,
						const CUgraphNode **dependencies_out,
						size_t *numDependencies_out);

/* The older ABIs of the functions that cuda.h renames to their _v2 (the
 * signatures did not change; the real driver exports both, and so does
 * the simulator). Driver code calls the _v2 names explicitly. */
#undef cuMemHostRegister
#undef cuIpcOpenMemHandle
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuDeviceGetUuid
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
