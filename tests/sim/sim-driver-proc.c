/* Simulated driver: cuGetProcAddress. The CUDA runtime reaches every
 * driver function through it, by base name ("cuMemAlloc") and the CUDA
 * version it was built for; the driver answers with the newest ABI of that
 * name the version knows (cuMemAlloc_v2 from 3.2 on). An interposer has to
 * map each answer back to the wrapper of exactly that ABI, so the table
 * below keeps every ABI of a name that the simulator implements.
 *
 * To add a function: implement it, then add one row per ABI with the CUDA
 * version that introduced it (the _vNNNN suffix of its PFN_ typedef in
 * cudaTypedefs.h). Versions older than the oldest row of a name answer
 * CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT here; the real driver would
 * still have the legacy ABIs this simulator leaves out (cuStreamBeginCapture
 * of CUDA 10.0, the five-argument cuGraphInstantiate before 12.0). */
#include "sim-driver.h"

#include <string.h>

/* cuda.h renames cuGetProcAddress to the _v2 ABI; the 4-argument ABI of
 * CUDA 11.3 is still exported under the plain name. (The older ABIs of
 * cuEventDestroy and cuEventElapsedTime are declared in sim-driver.h.) */
#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags);

/* Which default stream an entry's implicit stream means. */
enum sim_stream_abi {
	SIM_ABI_ANY,         /* the function has no per-thread twin */
	SIM_ABI_LEGACY,      /* the legacy default stream */
	SIM_ABI_PER_THREAD,  /* the _ptds / _ptsz twin */
};

struct sim_proc {
	const char *name;    /* base name, as callers ask for it */
	int version;         /* first CUDA version with this ABI */
	enum sim_stream_abi abi;
	void *fn;
};

/* #name is never macro-expanded, so cuda.h's renames do not apply to it. */
#define PROC(name, version, fn) { #name, version, SIM_ABI_ANY, (void *)fn }
#define PROC_LEGACY(name, version, fn) { #name, version, SIM_ABI_LEGACY, (void *)fn }
#define PROC_PER_THREAD(name, version, fn) { #name, version, SIM_ABI_PER_THREAD, (void *)fn }

static const struct sim_proc sim_procs[] = {
	PROC(cuGetProcAddress, 11030, cuGetProcAddress),
	PROC(cuGetProcAddress, 12000, cuGetProcAddress_v2),
	PROC(cuGetExportTable, 3000, cuGetExportTable),
	PROC(cuGetErrorString, 6000, cuGetErrorString),
	PROC(cuGetErrorName, 6000, cuGetErrorName),
	PROC(cuInit, 2000, cuInit),
	PROC(cuDriverGetVersion, 2020, cuDriverGetVersion),

	PROC(cuDeviceGet, 2000, cuDeviceGet),
	PROC(cuDeviceGetCount, 2000, cuDeviceGetCount),
	PROC(cuDeviceGetName, 2000, cuDeviceGetName),
	PROC(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
	PROC(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
	PROC(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
	PROC(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
	PROC(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
	PROC(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
	PROC(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
	PROC(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer),
	PROC(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId),
	PROC(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess),
	PROC(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange),

	PROC(cuCtxCreate, 12050, cuCtxCreate_v4),
	PROC(cuCtxDestroy, 4000, cuCtxDestroy_v2),
	PROC(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
	PROC(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
	PROC(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
	PROC(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
	PROC(cuCtxGetDevice, 2000, cuCtxGetDevice),
	PROC(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
	PROC(cuCtxSynchronize, 2000, cuCtxSynchronize),
	PROC(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),

	PROC(cuStreamCreate, 2000, cuStreamCreate),
	PROC(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
	PROC_LEGACY(cuStreamGetPriority, 5050, cuStreamGetPriority),
	PROC_PER_THREAD(cuStreamGetPriority, 7000, cuStreamGetPriority_ptsz),
	PROC_LEGACY(cuLaunchHostFunc, 10000, cuLaunchHostFunc),
	PROC_PER_THREAD(cuLaunchHostFunc, 10000, cuLaunchHostFunc_ptsz),
	PROC_LEGACY(cuStreamAddCallback, 5000, cuStreamAddCallback),
	PROC_PER_THREAD(cuStreamAddCallback, 7000, cuStreamAddCallback_ptsz),
	PROC(cuStreamDestroy, 4000, cuStreamDestroy_v2),
	PROC_LEGACY(cuStreamSynchronize, 2000, cuStreamSynchronize),
	PROC_PER_THREAD(cuStreamSynchronize, 7000, cuStreamSynchronize_ptsz),
	PROC_LEGACY(cuStreamQuery, 2000, cuStreamQuery),
	PROC_PER_THREAD(cuStreamQuery, 7000, cuStreamQuery_ptsz),
	PROC_LEGACY(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
	PROC_PER_THREAD(cuStreamWaitEvent, 7000, cuStreamWaitEvent_ptsz),

	PROC(cuEventCreate, 2000, cuEventCreate),
	PROC(cuEventDestroy, 2000, cuEventDestroy),
	PROC(cuEventDestroy, 4000, cuEventDestroy_v2),
	PROC_LEGACY(cuEventRecord, 2000, cuEventRecord),
	PROC_PER_THREAD(cuEventRecord, 7000, cuEventRecord_ptsz),
	PROC_LEGACY(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags),
	PROC_PER_THREAD(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags_ptsz),
	PROC(cuEventQuery, 2000, cuEventQuery),
	PROC(cuEventSynchronize, 2000, cuEventSynchronize),
	PROC(cuEventElapsedTime, 2000, cuEventElapsedTime),
	PROC(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),

	PROC(cuMemGetInfo, 3020, cuMemGetInfo_v2),
	PROC(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2),
	PROC(cuMemAlloc, 3020, cuMemAlloc_v2),
	PROC(cuMemFree, 3020, cuMemFree_v2),
	PROC(cuMemAllocPitch, 3020, cuMemAllocPitch_v2),
	PROC(cuMemAllocManaged, 6000, cuMemAllocManaged),
	PROC(cuMemAllocHost, 3020, cuMemAllocHost_v2),
	PROC(cuMemHostAlloc, 2020, cuMemHostAlloc),
	PROC(cuMemFreeHost, 2000, cuMemFreeHost),
	PROC_LEGACY(cuMemAllocAsync, 11020, cuMemAllocAsync),
	PROC_PER_THREAD(cuMemAllocAsync, 11020, cuMemAllocAsync_ptsz),
	PROC_LEGACY(cuMemFreeAsync, 11020, cuMemFreeAsync),
	PROC_PER_THREAD(cuMemFreeAsync, 11020, cuMemFreeAsync_ptsz),
	PROC_LEGACY(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync),
	PROC_PER_THREAD(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync_ptsz),
	PROC(cuMemHostRegister, 4000, cuMemHostRegister),
	PROC(cuMemHostRegister, 6050, cuMemHostRegister_v2),
	PROC(cuMemHostUnregister, 4000, cuMemHostUnregister),
	PROC(cuPointerGetAttribute, 4000, cuPointerGetAttribute),
	PROC(cuPointerGetAttributes, 7000, cuPointerGetAttributes),

	PROC(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool),
	PROC(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool),
	PROC(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool),
	PROC(cuMemPoolCreate, 11020, cuMemPoolCreate),
	PROC(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
	PROC(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
	PROC(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute),
	PROC(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute),
	PROC(cuMemPoolSetAccess, 11020, cuMemPoolSetAccess),

	PROC(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
	PROC(cuMemAddressReserve, 10020, cuMemAddressReserve),
	PROC(cuMemAddressFree, 10020, cuMemAddressFree),
	PROC(cuMemCreate, 10020, cuMemCreate),
	PROC(cuMemRelease, 10020, cuMemRelease),
	PROC(cuMemMap, 10020, cuMemMap),
	PROC(cuMemUnmap, 10020, cuMemUnmap),
	PROC(cuMemSetAccess, 10020, cuMemSetAccess),
	PROC(cuMemGetAllocationPropertiesFromHandle, 10020, cuMemGetAllocationPropertiesFromHandle),
	PROC(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle),
	PROC(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle),
	PROC(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle),

	PROC(cuArrayCreate, 3020, cuArrayCreate_v2),
	PROC(cuArray3DCreate, 3020, cuArray3DCreate_v2),
	PROC(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor_v2),
	PROC(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor_v2),
	PROC(cuArrayDestroy, 2000, cuArrayDestroy),

	PROC(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle),
	PROC(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle),
	PROC(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2),
	PROC(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle),
	PROC(cuIpcGetEventHandle, 4010, cuIpcGetEventHandle),
	PROC(cuIpcOpenEventHandle, 4010, cuIpcOpenEventHandle),

	PROC_LEGACY(cuMemcpy, 4000, cuMemcpy),
	PROC_PER_THREAD(cuMemcpy, 7000, cuMemcpy_ptds),
	PROC_LEGACY(cuMemcpyAsync, 4000, cuMemcpyAsync),
	PROC_PER_THREAD(cuMemcpyAsync, 7000, cuMemcpyAsync_ptsz),
	PROC_LEGACY(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
	PROC_PER_THREAD(cuMemcpyHtoD, 7000, cuMemcpyHtoD_v2_ptds),
	PROC_LEGACY(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
	PROC_LEGACY(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
	PROC_PER_THREAD(cuMemcpyHtoDAsync, 7000, cuMemcpyHtoDAsync_v2_ptsz),
	PROC_LEGACY(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
	PROC_PER_THREAD(cuMemcpyDtoHAsync, 7000, cuMemcpyDtoHAsync_v2_ptsz),
	PROC_LEGACY(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2),
	PROC_PER_THREAD(cuMemcpyDtoDAsync, 7000, cuMemcpyDtoDAsync_v2_ptsz),
	PROC_LEGACY(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2),
	PROC_PER_THREAD(cuMemcpyDtoD, 7000, cuMemcpyDtoD_v2_ptds),
	PROC_PER_THREAD(cuMemcpyDtoH, 7000, cuMemcpyDtoH_v2_ptds),
	PROC_LEGACY(cuMemsetD8, 3020, cuMemsetD8_v2),
	PROC_PER_THREAD(cuMemsetD8, 7000, cuMemsetD8_v2_ptds),
	PROC_LEGACY(cuMemsetD8Async, 3020, cuMemsetD8Async),
	PROC_PER_THREAD(cuMemsetD8Async, 7000, cuMemsetD8Async_ptsz),
	PROC_LEGACY(cuMemsetD32Async, 3020, cuMemsetD32Async),
	PROC_PER_THREAD(cuMemsetD32Async, 7000, cuMemsetD32Async_ptsz),
	PROC_LEGACY(cuStreamWriteValue32, 11070, cuStreamWriteValue32_v2),
	PROC_PER_THREAD(cuStreamWriteValue32, 11070, cuStreamWriteValue32_v2_ptsz),
	PROC_LEGACY(cuMemcpy2DAsync, 3020, cuMemcpy2DAsync_v2),
	PROC_PER_THREAD(cuMemcpy2DAsync, 7000, cuMemcpy2DAsync_v2_ptsz),
	PROC_LEGACY(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync),
	PROC_PER_THREAD(cuMemcpyPeerAsync, 7000, cuMemcpyPeerAsync_ptsz),

	PROC(cuModuleLoadData, 2000, cuModuleLoadData),
	PROC(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx),
	PROC(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary),
	PROC(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2),
	PROC(cuTensorMapEncodeTiled, 12000, cuTensorMapEncodeTiled),
	PROC(cuModuleUnload, 2000, cuModuleUnload),
	PROC(cuModuleGetFunction, 2000, cuModuleGetFunction),
	PROC(cuLibraryLoadData, 12000, cuLibraryLoadData),
	PROC(cuLibraryUnload, 12000, cuLibraryUnload),
	PROC(cuLibraryGetKernel, 12000, cuLibraryGetKernel),
	PROC(cuKernelGetFunction, 12000, cuKernelGetFunction),
	PROC_LEGACY(cuLaunchKernel, 4000, cuLaunchKernel),
	PROC_PER_THREAD(cuLaunchKernel, 7000, cuLaunchKernel_ptsz),
	PROC_LEGACY(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel),
	PROC_PER_THREAD(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel_ptsz),
	PROC_LEGACY(cuLaunchKernelEx, 11060, cuLaunchKernelEx),
	PROC_PER_THREAD(cuLaunchKernelEx, 11060, cuLaunchKernelEx_ptsz),
	PROC(cuFuncGetAttribute, 2020, cuFuncGetAttribute),
	PROC(cuFuncSetAttribute, 9000, cuFuncSetAttribute),
	PROC(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig),
	PROC(cuKernelGetAttribute, 12000, cuKernelGetAttribute),
	PROC(cuKernelSetAttribute, 12000, cuKernelSetAttribute),
	PROC(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050,
	     cuOccupancyMaxActiveBlocksPerMultiprocessor),
	PROC(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000,
	     cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),

	PROC_LEGACY(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2),
	PROC_PER_THREAD(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2_ptsz),
	PROC_LEGACY(cuStreamBeginCaptureToGraph, 12030, cuStreamBeginCaptureToGraph),
	PROC_PER_THREAD(cuStreamBeginCaptureToGraph, 12030, cuStreamBeginCaptureToGraph_ptsz),
	PROC_LEGACY(cuStreamEndCapture, 10000, cuStreamEndCapture),
	PROC_PER_THREAD(cuStreamEndCapture, 10000, cuStreamEndCapture_ptsz),
	PROC_LEGACY(cuStreamIsCapturing, 10000, cuStreamIsCapturing),
	PROC_PER_THREAD(cuStreamIsCapturing, 10000, cuStreamIsCapturing_ptsz),
	PROC_LEGACY(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo),
	PROC_PER_THREAD(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo_ptsz),
	PROC_LEGACY(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2),
	PROC_PER_THREAD(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2_ptsz),
	PROC_LEGACY(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3),
	PROC_PER_THREAD(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3_ptsz),
	PROC(cuThreadExchangeStreamCaptureMode, 10010, cuThreadExchangeStreamCaptureMode),

	PROC(cuGraphCreate, 10000, cuGraphCreate),
	PROC(cuGraphClone, 10000, cuGraphClone),
	PROC(cuGraphDestroy, 10000, cuGraphDestroy),
	PROC(cuGraphAddEmptyNode, 10000, cuGraphAddEmptyNode),
	PROC(cuGraphGetNodes, 10000, cuGraphGetNodes),
	PROC(cuGraphNodeGetType, 10000, cuGraphNodeGetType),
	PROC(cuGraphNodeGetDependencies, 12030, cuGraphNodeGetDependencies_v2),
	PROC(cuGraphAddMemAllocNode, 11040, cuGraphAddMemAllocNode),
	PROC(cuGraphAddMemFreeNode, 11040, cuGraphAddMemFreeNode),
	PROC(cuGraphMemAllocNodeGetParams, 11040, cuGraphMemAllocNodeGetParams),
	PROC(cuGraphMemFreeNodeGetParams, 11040, cuGraphMemFreeNodeGetParams),
	PROC(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags),
	PROC(cuGraphInstantiate, 12000, cuGraphInstantiateWithFlags),
	PROC_LEGACY(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams),
	PROC_PER_THREAD(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams_ptsz),
	PROC(cuGraphExecGetFlags, 12000, cuGraphExecGetFlags),
	PROC(cuGraphExecDestroy, 10000, cuGraphExecDestroy),
	PROC_LEGACY(cuGraphLaunch, 10000, cuGraphLaunch),
	PROC_PER_THREAD(cuGraphLaunch, 10000, cuGraphLaunch_ptsz),
	PROC_LEGACY(cuGraphUpload, 11010, cuGraphUpload),
	PROC_PER_THREAD(cuGraphUpload, 11010, cuGraphUpload_ptsz),
	PROC(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim),
	PROC(cuDeviceGetGraphMemAttribute, 11040, cuDeviceGetGraphMemAttribute),
	PROC(cuDeviceSetGraphMemAttribute, 11040, cuDeviceSetGraphMemAttribute),
};

#define SIM_NPROCS (sizeof(sim_procs) / sizeof(sim_procs[0]))

/* Newest row of this name and stream class that the version knows.
 * *named tells whether the name exists at all. */
static const struct sim_proc *
newest(const char *symbol, int version, bool per_thread, bool *named)
{
	const struct sim_proc *best = NULL;

	for (size_t i = 0; i < SIM_NPROCS; i++) {
		const struct sim_proc *p = &sim_procs[i];
		if (strcmp(p->name, symbol) != 0)
			continue;
		*named = true;
		if ((p->abi == SIM_ABI_PER_THREAD) != per_thread || p->version > version)
			continue;
		if (!best || p->version > best->version)
			best = p;
	}
	return best;
}

/* A per-thread request falls back to the legacy ABI where a function has
 * no per-thread twin, as the real driver documents. */
static const struct sim_proc *
lookup(const char *symbol, int version, cuuint64_t flags, bool *named)
{
	const struct sim_proc *p = NULL;

	*named = false;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		p = newest(symbol, version, true, named);
	return p ? p : newest(symbol, version, false, named);
}

CUresult CUDAAPI
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
		    CUdriverProcAddressQueryResult *symbolStatus)
{
	const cuuint64_t known = CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct sim_proc *p;
	bool named;

	if (!symbol || !pfn || (flags & ~known) || (flags & known) == known)
		return CUDA_ERROR_INVALID_VALUE;
	p = lookup(symbol, cudaVersion, flags, &named);
	*pfn = p ? p->fn : NULL;
	if (symbolStatus)
		*symbolStatus = p ? CU_GET_PROC_ADDRESS_SUCCESS :
			named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
				CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

/* NVIDIA's own libraries (NVRTC, cuBLAS...) ask the driver for private
 * tables of functions by UUID. The simulator has none: every id is
 * unknown, which they take as a driver without that table. */
CUresult CUDAAPI
cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	*ppExportTable = NULL;
	return CUDA_ERROR_NOT_FOUND;
}
