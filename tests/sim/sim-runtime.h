/* Internals shared by the files of the simulated runtime (libcudart.so.13).
 * Only the cuda* entry points are exported (libcudart.map). */
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

/* The version cudaRuntimeGetVersion reports, and the version the runtime
 * asks the driver's cuGetProcAddress for, as a CUDA 13.0 runtime does. */
#define SIM_RT_VERSION 13000

/* Every driver function the runtime calls, fetched once through the
 * driver's cuGetProcAddress_v2 by base name: X(field, base name, search
 * flags, typedef of the ABI the driver answers with at SIM_RT_VERSION). */
#define SIM_RT_LEGACY     CU_GET_PROC_ADDRESS_DEFAULT
#define SIM_RT_PER_THREAD CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define SIM_RT_DRIVER_FUNCTIONS(X) \
	X(init,                 "cuInit",                    SIM_RT_LEGACY, PFN_cuInit_v2000) \
	X(driver_get_version,   "cuDriverGetVersion",        SIM_RT_LEGACY, PFN_cuDriverGetVersion_v2020) \
	X(device_get_count,     "cuDeviceGetCount",          SIM_RT_LEGACY, PFN_cuDeviceGetCount_v2000) \
	X(device_get_name,      "cuDeviceGetName",           SIM_RT_LEGACY, PFN_cuDeviceGetName_v2000) \
	X(device_total_mem,     "cuDeviceTotalMem",          SIM_RT_LEGACY, PFN_cuDeviceTotalMem_v3020) \
	X(device_get_uuid,      "cuDeviceGetUuid",           SIM_RT_LEGACY, PFN_cuDeviceGetUuid_v11040) \
	X(device_get_attribute, "cuDeviceGetAttribute",      SIM_RT_LEGACY, PFN_cuDeviceGetAttribute_v2000) \
	X(primary_retain,       "cuDevicePrimaryCtxRetain",  SIM_RT_LEGACY, PFN_cuDevicePrimaryCtxRetain_v7000) \
	X(primary_release,      "cuDevicePrimaryCtxRelease", SIM_RT_LEGACY, PFN_cuDevicePrimaryCtxRelease_v11000) \
	X(ctx_set_current,      "cuCtxSetCurrent",           SIM_RT_LEGACY, PFN_cuCtxSetCurrent_v4000) \
	X(ctx_synchronize,      "cuCtxSynchronize",          SIM_RT_LEGACY, PFN_cuCtxSynchronize_v13000) \
	X(stream_create,        "cuStreamCreate",            SIM_RT_LEGACY, PFN_cuStreamCreate_v2000) \
	X(stream_destroy,       "cuStreamDestroy",           SIM_RT_LEGACY, PFN_cuStreamDestroy_v4000) \
	X(stream_synchronize,   "cuStreamSynchronize",       SIM_RT_LEGACY, PFN_cuStreamSynchronize_v2000) \
	X(mem_get_info,         "cuMemGetInfo",              SIM_RT_LEGACY, PFN_cuMemGetInfo_v3020) \
	X(mem_alloc,            "cuMemAlloc",                SIM_RT_LEGACY, PFN_cuMemAlloc_v3020) \
	X(mem_free,             "cuMemFree",                 SIM_RT_LEGACY, PFN_cuMemFree_v3020) \
	X(mem_alloc_pitch,      "cuMemAllocPitch",           SIM_RT_LEGACY, PFN_cuMemAllocPitch_v3020) \
	X(mem_alloc_managed,    "cuMemAllocManaged",         SIM_RT_LEGACY, PFN_cuMemAllocManaged_v6000) \
	X(mem_alloc_host,       "cuMemAllocHost",            SIM_RT_LEGACY, PFN_cuMemAllocHost_v3020) \
	X(mem_host_alloc,       "cuMemHostAlloc",            SIM_RT_LEGACY, PFN_cuMemHostAlloc_v2020) \
	X(mem_free_host,        "cuMemFreeHost",             SIM_RT_LEGACY, PFN_cuMemFreeHost_v2000) \
	X(mem_alloc_async,      "cuMemAllocAsync",           SIM_RT_LEGACY, PFN_cuMemAllocAsync_v11020) \
	X(mem_free_async,       "cuMemFreeAsync",            SIM_RT_LEGACY, PFN_cuMemFreeAsync_v11020) \
	X(mem_alloc_async_ptsz, "cuMemAllocAsync",           SIM_RT_PER_THREAD, PFN_cuMemAllocAsync_v11020_ptsz) \
	X(mem_free_async_ptsz,  "cuMemFreeAsync",            SIM_RT_PER_THREAD, PFN_cuMemFreeAsync_v11020_ptsz) \
	X(memcpy,               "cuMemcpy",                  SIM_RT_LEGACY, PFN_cuMemcpy_v4000) \
	X(memcpy_async,         "cuMemcpyAsync",             SIM_RT_LEGACY, PFN_cuMemcpyAsync_v4000) \
	X(memcpy_htod,          "cuMemcpyHtoD",              SIM_RT_LEGACY, PFN_cuMemcpyHtoD_v3020) \
	X(memcpy_dtoh,          "cuMemcpyDtoH",              SIM_RT_LEGACY, PFN_cuMemcpyDtoH_v3020) \
	X(memset_d8,            "cuMemsetD8",                SIM_RT_LEGACY, PFN_cuMemsetD8_v3020) \
	X(mem_alloc_from_pool,  "cuMemAllocFromPoolAsync",   SIM_RT_LEGACY, PFN_cuMemAllocFromPoolAsync_v11020) \
	X(mem_alloc_from_pool_ptsz, "cuMemAllocFromPoolAsync", SIM_RT_PER_THREAD, PFN_cuMemAllocFromPoolAsync_v11020_ptsz) \
	X(device_get_default_mem_pool, "cuDeviceGetDefaultMemPool", SIM_RT_LEGACY, PFN_cuDeviceGetDefaultMemPool_v11020) \
	X(device_get_mem_pool,  "cuDeviceGetMemPool",        SIM_RT_LEGACY, PFN_cuDeviceGetMemPool_v11020) \
	X(device_set_mem_pool,  "cuDeviceSetMemPool",        SIM_RT_LEGACY, PFN_cuDeviceSetMemPool_v11020) \
	X(mem_pool_create,      "cuMemPoolCreate",           SIM_RT_LEGACY, PFN_cuMemPoolCreate_v11020) \
	X(mem_pool_destroy,     "cuMemPoolDestroy",          SIM_RT_LEGACY, PFN_cuMemPoolDestroy_v11020) \
	X(mem_pool_trim_to,     "cuMemPoolTrimTo",           SIM_RT_LEGACY, PFN_cuMemPoolTrimTo_v11020) \
	X(mem_pool_get_attribute, "cuMemPoolGetAttribute",   SIM_RT_LEGACY, PFN_cuMemPoolGetAttribute_v11020) \
	X(mem_pool_set_attribute, "cuMemPoolSetAttribute",   SIM_RT_LEGACY, PFN_cuMemPoolSetAttribute_v11020) \
	X(array_3d_create,      "cuArray3DCreate",           SIM_RT_LEGACY, PFN_cuArray3DCreate_v3020) \
	X(array_destroy,        "cuArrayDestroy",            SIM_RT_LEGACY, PFN_cuArrayDestroy_v2000) \
	X(ipc_get_mem_handle,   "cuIpcGetMemHandle",         SIM_RT_LEGACY, PFN_cuIpcGetMemHandle_v4010) \
	X(ipc_open_mem_handle,  "cuIpcOpenMemHandle",        SIM_RT_LEGACY, PFN_cuIpcOpenMemHandle_v11000) \
	X(ipc_close_mem_handle, "cuIpcCloseMemHandle",       SIM_RT_LEGACY, PFN_cuIpcCloseMemHandle_v4010) \
	X(mem_host_register,    "cuMemHostRegister",         SIM_RT_LEGACY, PFN_cuMemHostRegister_v6050) \
	X(mem_host_unregister,  "cuMemHostUnregister",       SIM_RT_LEGACY, PFN_cuMemHostUnregister_v4000) \
	X(memset_d8_async,      "cuMemsetD8Async",           SIM_RT_LEGACY, PFN_cuMemsetD8Async_v3020) \
	X(memset_d8_async_ptsz, "cuMemsetD8Async",           SIM_RT_PER_THREAD, PFN_cuMemsetD8Async_v7000_ptsz) \
	X(memcpy_async_ptsz,    "cuMemcpyAsync",             SIM_RT_PER_THREAD, PFN_cuMemcpyAsync_v7000_ptsz) \
	X(memcpy_2d_async,      "cuMemcpy2DAsync",           SIM_RT_LEGACY, PFN_cuMemcpy2DAsync_v3020) \
	X(memcpy_peer_async,    "cuMemcpyPeerAsync",         SIM_RT_LEGACY, PFN_cuMemcpyPeerAsync_v4000) \
	X(pointer_get_attributes, "cuPointerGetAttributes",  SIM_RT_LEGACY, PFN_cuPointerGetAttributes_v7000) \
	X(mem_pool_set_access,  "cuMemPoolSetAccess",        SIM_RT_LEGACY, PFN_cuMemPoolSetAccess_v11020) \
	X(ipc_get_event_handle, "cuIpcGetEventHandle",       SIM_RT_LEGACY, PFN_cuIpcGetEventHandle_v4010) \
	X(ipc_open_event_handle, "cuIpcOpenEventHandle",     SIM_RT_LEGACY, PFN_cuIpcOpenEventHandle_v4010) \
	X(device_can_access_peer, "cuDeviceCanAccessPeer",   SIM_RT_LEGACY, PFN_cuDeviceCanAccessPeer_v4000) \
	X(ctx_enable_peer_access, "cuCtxEnablePeerAccess",   SIM_RT_LEGACY, PFN_cuCtxEnablePeerAccess_v4000) \
	X(device_get_pci_bus_id, "cuDeviceGetPCIBusId",      SIM_RT_LEGACY, PFN_cuDeviceGetPCIBusId_v4010) \
	X(stream_priority_range, "cuCtxGetStreamPriorityRange", SIM_RT_LEGACY, PFN_cuCtxGetStreamPriorityRange_v5050) \
	X(stream_create_with_priority, "cuStreamCreateWithPriority", SIM_RT_LEGACY, PFN_cuStreamCreateWithPriority_v5050) \
	X(stream_get_priority,  "cuStreamGetPriority",       SIM_RT_LEGACY, PFN_cuStreamGetPriority_v5050) \
	X(launch_host_func,     "cuLaunchHostFunc",          SIM_RT_LEGACY, PFN_cuLaunchHostFunc_v10000) \
	X(stream_add_callback,  "cuStreamAddCallback",       SIM_RT_LEGACY, PFN_cuStreamAddCallback_v5000) \
	SIM_RT_GRAPH_FUNCTIONS(X) \
	SIM_RT_EVENT_FUNCTIONS(X) \
	SIM_RT_KERNEL_FUNCTIONS(X)

/* The same for events and the stream calls that go with them. */
#define SIM_RT_EVENT_FUNCTIONS(X) \
	X(event_create,         "cuEventCreate",             SIM_RT_LEGACY, PFN_cuEventCreate_v2000) \
	X(event_destroy,        "cuEventDestroy",            SIM_RT_LEGACY, PFN_cuEventDestroy_v4000) \
	X(event_record,         "cuEventRecord",             SIM_RT_LEGACY, PFN_cuEventRecord_v2000) \
	X(event_record_ptsz,    "cuEventRecord",             SIM_RT_PER_THREAD, PFN_cuEventRecord_v7000_ptsz) \
	X(event_record_with_flags, "cuEventRecordWithFlags", SIM_RT_LEGACY, PFN_cuEventRecordWithFlags_v11010) \
	X(event_record_with_flags_ptsz, "cuEventRecordWithFlags", SIM_RT_PER_THREAD, PFN_cuEventRecordWithFlags_v11010_ptsz) \
	X(event_query,          "cuEventQuery",              SIM_RT_LEGACY, PFN_cuEventQuery_v2000) \
	X(event_synchronize,    "cuEventSynchronize",        SIM_RT_LEGACY, PFN_cuEventSynchronize_v2000) \
	X(event_elapsed_time,   "cuEventElapsedTime",        SIM_RT_LEGACY, PFN_cuEventElapsedTime_v12080) \
	X(stream_wait_event,    "cuStreamWaitEvent",         SIM_RT_LEGACY, PFN_cuStreamWaitEvent_v3020) \
	X(stream_wait_event_ptsz, "cuStreamWaitEvent",       SIM_RT_PER_THREAD, PFN_cuStreamWaitEvent_v7000_ptsz) \
	X(stream_query,         "cuStreamQuery",             SIM_RT_LEGACY, PFN_cuStreamQuery_v2000) \
	X(stream_query_ptsz,    "cuStreamQuery",             SIM_RT_PER_THREAD, PFN_cuStreamQuery_v7000_ptsz)

/* The same for device code: the CUDA 12+ runtime loads each fatbinary as
 * a library and launches its kernels with cuLaunchKernel. */
#define SIM_RT_KERNEL_FUNCTIONS(X) \
	X(library_load_data,    "cuLibraryLoadData",         SIM_RT_LEGACY, PFN_cuLibraryLoadData_v12000) \
	X(library_unload,       "cuLibraryUnload",           SIM_RT_LEGACY, PFN_cuLibraryUnload_v12000) \
	X(library_get_kernel,   "cuLibraryGetKernel",        SIM_RT_LEGACY, PFN_cuLibraryGetKernel_v12000) \
	X(kernel_get_function,  "cuKernelGetFunction",       SIM_RT_LEGACY, PFN_cuKernelGetFunction_v12000) \
	X(launch_kernel,        "cuLaunchKernel",            SIM_RT_LEGACY, PFN_cuLaunchKernel_v4000) \
	X(launch_kernel_ptsz,   "cuLaunchKernel",            SIM_RT_PER_THREAD, PFN_cuLaunchKernel_v7000_ptsz) \
	X(launch_kernel_ex,     "cuLaunchKernelEx",          SIM_RT_LEGACY, PFN_cuLaunchKernelEx_v11060) \
	X(launch_cooperative,   "cuLaunchCooperativeKernel", SIM_RT_LEGACY, PFN_cuLaunchCooperativeKernel_v9000) \
	X(kernel_get_attribute, "cuKernelGetAttribute",      SIM_RT_LEGACY, PFN_cuKernelGetAttribute_v12000) \
	X(kernel_set_attribute, "cuKernelSetAttribute",      SIM_RT_LEGACY, PFN_cuKernelSetAttribute_v12000) \
	X(occupancy,            "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", SIM_RT_LEGACY, \
	  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000)

/* The same for stream capture, graphs and graph memory. */
#define SIM_RT_GRAPH_FUNCTIONS(X) \
	X(stream_begin_capture, "cuStreamBeginCapture", SIM_RT_LEGACY, PFN_cuStreamBeginCapture_v10010) \
	X(stream_begin_capture_ptsz, "cuStreamBeginCapture", SIM_RT_PER_THREAD, PFN_cuStreamBeginCapture_v10010_ptsz) \
	X(stream_begin_capture_to_graph, "cuStreamBeginCaptureToGraph", SIM_RT_LEGACY, PFN_cuStreamBeginCaptureToGraph_v12030) \
	X(stream_begin_capture_to_graph_ptsz, "cuStreamBeginCaptureToGraph", SIM_RT_PER_THREAD, PFN_cuStreamBeginCaptureToGraph_v12030_ptsz) \
	X(stream_end_capture,   "cuStreamEndCapture",        SIM_RT_LEGACY, PFN_cuStreamEndCapture_v10000) \
	X(stream_end_capture_ptsz, "cuStreamEndCapture",     SIM_RT_PER_THREAD, PFN_cuStreamEndCapture_v10000_ptsz) \
	X(stream_is_capturing,  "cuStreamIsCapturing",       SIM_RT_LEGACY, PFN_cuStreamIsCapturing_v10000) \
	X(stream_is_capturing_ptsz, "cuStreamIsCapturing",   SIM_RT_PER_THREAD, PFN_cuStreamIsCapturing_v10000_ptsz) \
	X(stream_get_capture_info, "cuStreamGetCaptureInfo", SIM_RT_LEGACY, PFN_cuStreamGetCaptureInfo_v12030) \
	X(stream_get_capture_info_ptsz, "cuStreamGetCaptureInfo", SIM_RT_PER_THREAD, PFN_cuStreamGetCaptureInfo_v12030_ptsz) \
	X(thread_exchange_capture_mode, "cuThreadExchangeStreamCaptureMode", SIM_RT_LEGACY, PFN_cuThreadExchangeStreamCaptureMode_v10010) \
	X(graph_create,         "cuGraphCreate",             SIM_RT_LEGACY, PFN_cuGraphCreate_v10000) \
	X(graph_clone,          "cuGraphClone",              SIM_RT_LEGACY, PFN_cuGraphClone_v10000) \
	X(graph_destroy,        "cuGraphDestroy",            SIM_RT_LEGACY, PFN_cuGraphDestroy_v10000) \
	X(graph_add_empty_node, "cuGraphAddEmptyNode",       SIM_RT_LEGACY, PFN_cuGraphAddEmptyNode_v10000) \
	X(graph_get_nodes,      "cuGraphGetNodes",           SIM_RT_LEGACY, PFN_cuGraphGetNodes_v10000) \
	X(graph_node_get_type,  "cuGraphNodeGetType",        SIM_RT_LEGACY, PFN_cuGraphNodeGetType_v10000) \
	X(graph_node_get_dependencies, "cuGraphNodeGetDependencies", SIM_RT_LEGACY, PFN_cuGraphNodeGetDependencies_v12030) \
	X(graph_add_mem_alloc_node, "cuGraphAddMemAllocNode", SIM_RT_LEGACY, PFN_cuGraphAddMemAllocNode_v11040) \
	X(graph_add_mem_free_node, "cuGraphAddMemFreeNode",  SIM_RT_LEGACY, PFN_cuGraphAddMemFreeNode_v11040) \
	X(graph_mem_alloc_node_get_params, "cuGraphMemAllocNodeGetParams", SIM_RT_LEGACY, PFN_cuGraphMemAllocNodeGetParams_v11040) \
	X(graph_mem_free_node_get_params, "cuGraphMemFreeNodeGetParams", SIM_RT_LEGACY, PFN_cuGraphMemFreeNodeGetParams_v11040) \
	X(graph_instantiate_with_flags, "cuGraphInstantiateWithFlags", SIM_RT_LEGACY, PFN_cuGraphInstantiateWithFlags_v11040) \
	X(graph_instantiate_with_params, "cuGraphInstantiateWithParams", SIM_RT_LEGACY, PFN_cuGraphInstantiateWithParams_v12000) \
	X(graph_instantiate_with_params_ptsz, "cuGraphInstantiateWithParams", SIM_RT_PER_THREAD, PFN_cuGraphInstantiateWithParams_v12000_ptsz) \
	X(graph_exec_get_flags, "cuGraphExecGetFlags",       SIM_RT_LEGACY, PFN_cuGraphExecGetFlags_v12000) \
	X(graph_exec_destroy,   "cuGraphExecDestroy",        SIM_RT_LEGACY, PFN_cuGraphExecDestroy_v10000) \
	X(graph_launch,         "cuGraphLaunch",             SIM_RT_LEGACY, PFN_cuGraphLaunch_v10000) \
	X(graph_launch_ptsz,    "cuGraphLaunch",             SIM_RT_PER_THREAD, PFN_cuGraphLaunch_v10000_ptsz) \
	X(graph_upload,         "cuGraphUpload",             SIM_RT_LEGACY, PFN_cuGraphUpload_v11010) \
	X(graph_upload_ptsz,    "cuGraphUpload",             SIM_RT_PER_THREAD, PFN_cuGraphUpload_v11010_ptsz) \
	X(device_graph_mem_trim, "cuDeviceGraphMemTrim",     SIM_RT_LEGACY, PFN_cuDeviceGraphMemTrim_v11040) \
	X(device_get_graph_mem_attribute, "cuDeviceGetGraphMemAttribute", SIM_RT_LEGACY, PFN_cuDeviceGetGraphMemAttribute_v11040) \
	X(device_set_graph_mem_attribute, "cuDeviceSetGraphMemAttribute", SIM_RT_LEGACY, PFN_cuDeviceSetGraphMemAttribute_v11040)

struct sim_rt_driver {
	PFN_cuGetProcAddress_v12000 get_proc_address;
#define SIM_RT_FIELD(field, name, flags, type) type field;
	SIM_RT_DRIVER_FUNCTIONS(SIM_RT_FIELD)
#undef SIM_RT_FIELD
};

/* sim-runtime.c */
extern struct sim_rt_driver sim_rt_drv;
cudaError_t sim_rt_init(void);
cudaError_t sim_rt_enter(void);
cudaError_t sim_rt_check_device(int device);

/* The prologue of every entry point that works on the device: returns
 * the error unless the thread has its context. */
#define SIM_RT_ENTER()                                    \
	do {                                              \
		cudaError_t enter_err_ = sim_rt_enter();  \
		if (enter_err_ != cudaSuccess)            \
			return sim_rt_fail(enter_err_);   \
	} while (0)

/* sim-runtime-kernel.c */
void sim_rt_kernels_at_fork(void);
cudaError_t sim_rt_kernel_of(const void *func, CUkernel *out);

/* sim-runtime.c */
cudaError_t sim_rt_primary_context(int device, CUcontext *ctx);

/* sim-runtime-error.c */
cudaError_t sim_rt_from_driver(CUresult rc);
cudaError_t sim_rt_fail(cudaError_t err);
cudaError_t sim_rt_check(CUresult rc);

/* Exported entry points that cuda_runtime_api.h declares only for
 * per-thread-default-stream builds; the real library exports both. */
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
						   cudaStream_t stream);
cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
	unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
	unsigned int cudaVersion, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
					   cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamBeginCapture_ptsz(cudaStream_t stream,
						  enum cudaStreamCaptureMode mode);
cudaError_t CUDARTAPI cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
	const cudaGraphNode_t *dependencies, const cudaGraphEdgeData *dependencyData,
	size_t numDependencies, enum cudaStreamCaptureMode mode);
cudaError_t CUDARTAPI cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t CUDARTAPI cudaStreamIsCapturing_ptsz(cudaStream_t stream,
						 enum cudaStreamCaptureStatus *pCaptureStatus);
cudaError_t CUDARTAPI cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
	enum cudaStreamCaptureStatus *captureStatus_out, unsigned long long *id_out,
	cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
	const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out);
cudaError_t CUDARTAPI cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec,
	cudaGraph_t graph, cudaGraphInstantiateParams *instantiateParams);
cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t CUDARTAPI cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					   enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
					       unsigned int flags);
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t CUDARTAPI cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
						    unsigned int flags);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					    void **args, size_t sharedMem, cudaStream_t stream);
