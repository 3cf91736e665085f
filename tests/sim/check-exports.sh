#!/bin/sh
# Checks that the simulated libraries look like the real ones to the
# dynamic linker: sonames, exported names, symbol versions, and that the
# runtime does not link the driver (it must dlopen it, as NVIDIA's does).
#
# usage: check-exports.sh SIM_CUDART SIM_CUDA [REAL_CUDART]
# Exits 77 (skipped) without objdump.
set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 SIM_CUDART SIM_CUDA [REAL_CUDART]" >&2
	exit 99
fi
cudart=$1 cuda=$2 real=${3:-}
command -v objdump >/dev/null || { echo "objdump not found"; exit 77; }

fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# "VERSION NAME" for each symbol a library defines (Base: unversioned).
defined() {
	objdump -T "$1" | grep -E '^[0-9a-f]+ ' | grep -v '\*UND\*' |
		awk '{ print $(NF-1), $NF }' | grep -vE '^libcudart.so.1[23] libcudart.so.1[23]$'
}

# The entry points the tests rely on.
runtime_api="cudaMalloc cudaFree cudaMallocAsync cudaFreeAsync cudaMallocAsync_ptsz
cudaFreeAsync_ptsz cudaMallocManaged cudaMallocHost cudaHostAlloc cudaFreeHost
cudaMallocPitch cudaMemGetInfo cudaGetDevice cudaSetDevice cudaGetDeviceCount
cudaGetDeviceProperties cudaDeviceSynchronize cudaDeviceReset cudaStreamCreate
cudaStreamCreateWithFlags cudaStreamDestroy cudaStreamSynchronize cudaMemcpy
cudaMemcpyAsync cudaMemset cudaGetLastError cudaPeekAtLastError cudaGetErrorString
cudaGetErrorName cudaRuntimeGetVersion cudaDriverGetVersion cudaGetDriverEntryPoint
cudaGetDriverEntryPointByVersion cudaGetDriverEntryPoint_ptsz
cudaGetDriverEntryPointByVersion_ptsz cudaMallocFromPoolAsync
cudaMallocFromPoolAsync_ptsz cudaMemPoolCreate cudaMemPoolDestroy cudaMemPoolTrimTo
cudaMemPoolGetAttribute cudaMemPoolSetAttribute cudaDeviceGetDefaultMemPool
cudaDeviceGetMemPool cudaDeviceSetMemPool cudaMallocArray cudaMalloc3DArray
cudaFreeArray cudaMalloc3D cudaIpcGetMemHandle cudaIpcOpenMemHandle
cudaIpcCloseMemHandle cudaHostRegister cudaHostUnregister cudaMemsetAsync
cudaMemsetAsync_ptsz cudaStreamBeginCapture cudaStreamBeginCapture_ptsz
cudaStreamBeginCaptureToGraph cudaStreamBeginCaptureToGraph_ptsz cudaStreamEndCapture
cudaStreamEndCapture_ptsz cudaStreamIsCapturing cudaStreamIsCapturing_ptsz
cudaStreamGetCaptureInfo cudaStreamGetCaptureInfo_ptsz cudaThreadExchangeStreamCaptureMode
cudaGraphCreate cudaGraphClone cudaGraphDestroy cudaGraphAddEmptyNode cudaGraphGetNodes
cudaGraphNodeGetType cudaGraphAddMemAllocNode cudaGraphAddMemFreeNode
cudaGraphMemAllocNodeGetParams cudaGraphMemFreeNodeGetParams cudaGraphInstantiate
cudaGraphInstantiateWithFlags cudaGraphInstantiateWithParams
cudaGraphInstantiateWithParams_ptsz cudaGraphExecGetFlags cudaGraphExecDestroy
cudaGraphLaunch cudaGraphLaunch_ptsz cudaGraphUpload cudaGraphUpload_ptsz
cudaDeviceGraphMemTrim cudaDeviceGetGraphMemAttribute cudaDeviceSetGraphMemAttribute
cudaDeviceGetAttribute cudaMemcpyAsync_ptsz cudaStreamQuery cudaStreamQuery_ptsz
cudaStreamWaitEvent cudaStreamWaitEvent_ptsz cudaEventCreate cudaEventCreateWithFlags
cudaEventRecord cudaEventRecord_ptsz cudaEventRecordWithFlags cudaEventRecordWithFlags_ptsz
cudaEventQuery cudaEventSynchronize cudaEventElapsedTime cudaEventDestroy cudaLaunchKernel
cudaLaunchKernel_ptsz cudaGetKernel cudaGetFuncBySymbol __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd
__cudaUnregisterFatBinary __cudaRegisterFunction __cudaRegisterVar __cudaInitModule
__cudaPushCallConfiguration __cudaPopCallConfiguration __cudaGetKernel __cudaLaunchKernel
__cudaLaunchKernel_ptsz
cudaDeviceCanAccessPeer cudaDeviceEnablePeerAccess cudaDeviceGetPCIBusId
cudaDeviceGetStreamPriorityRange cudaFuncGetAttributes cudaFuncSetAttribute
cudaGetSymbolAddress cudaGraphAddNode cudaGraphConditionalHandleCreate
cudaGraphNodeGetDependencies cudaGraphRetainUserObject cudaIpcGetEventHandle
cudaIpcOpenEventHandle cudaKernelSetAttributeForDevice cudaLaunchCooperativeKernel
cudaLaunchHostFunc cudaLaunchKernelExC cudaLibraryGetGlobal cudaLibraryGetKernel
cudaLibraryGetKernelCount cudaLibraryGetManaged cudaLibraryGetUnifiedFunction
cudaLibraryLoadData cudaLibraryLoadFromFile cudaLibraryUnload cudaMemPoolSetAccess
cudaMemcpy2DAsync cudaMemcpyPeerAsync cudaMemcpyToSymbol
cudaOccupancyMaxActiveBlocksPerMultiprocessor
cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags cudaPointerGetAttributes
cudaProfilerStart cudaProfilerStop cudaStreamAddCallback cudaStreamCreateWithPriority
cudaStreamGetPriority cudaStreamUpdateCaptureDependencies cudaUserObjectCreate
cudaUserObjectRelease"
driver_api="cuInit cuDriverGetVersion cuDeviceGet cuDeviceGetCount cuDeviceGetName
cuDeviceTotalMem_v2 cuDeviceGetAttribute cuDevicePrimaryCtxRetain
cuDevicePrimaryCtxRelease_v2 cuCtxCreate_v4 cuCtxDestroy_v2 cuCtxGetCurrent
cuCtxSetCurrent cuCtxGetDevice cuCtxSynchronize cuStreamCreate cuStreamDestroy_v2
cuStreamSynchronize cuMemAlloc_v2 cuMemFree_v2 cuMemAllocPitch_v2 cuMemAllocManaged
cuMemAllocHost_v2 cuMemHostAlloc cuMemFreeHost cuMemAllocAsync cuMemFreeAsync
cuMemGetInfo_v2 cuMemcpy cuMemcpyHtoD_v2 cuMemcpyDtoH_v2 cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync_v2_ptsz
cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync_v2_ptsz cuMemcpyDtoDAsync_v2 cuMemcpyDtoDAsync_v2_ptsz
cuMemcpyDtoD_v2 cuMemcpyDtoD_v2_ptds cuMemsetD8_v2
cuGetErrorString cuGetErrorName cuGetProcAddress cuGetProcAddress_v2
cuMemAllocAsync_ptsz cuMemFreeAsync_ptsz cuMemAllocFromPoolAsync
cuMemAllocFromPoolAsync_ptsz cuDeviceGetDefaultMemPool cuDeviceGetMemPool
cuDeviceSetMemPool cuMemPoolCreate cuMemPoolDestroy cuMemPoolTrimTo
cuMemPoolGetAttribute cuMemPoolSetAttribute cuMemGetAllocationGranularity
cuMemAddressReserve cuMemAddressFree cuMemCreate cuMemRelease cuMemMap cuMemUnmap
cuMemSetAccess cuMemGetAllocationPropertiesFromHandle cuArrayCreate_v2
cuArray3DCreate_v2 cuArrayDestroy cuArrayGetDescriptor_v2 cuArray3DGetDescriptor_v2
cuIpcGetMemHandle cuIpcOpenMemHandle cuIpcOpenMemHandle_v2 cuIpcCloseMemHandle
cuMemHostRegister cuMemHostRegister_v2 cuMemHostUnregister cuMemGetAddressRange_v2
cuMemsetD8Async cuMemsetD8Async_ptsz cuStreamBeginCapture_v2 cuStreamBeginCapture_v2_ptsz
cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz cuStreamEndCapture
cuStreamEndCapture_ptsz cuStreamIsCapturing cuStreamIsCapturing_ptsz cuStreamGetCaptureInfo
cuStreamGetCaptureInfo_ptsz cuStreamGetCaptureInfo_v2 cuStreamGetCaptureInfo_v2_ptsz
cuStreamGetCaptureInfo_v3 cuStreamGetCaptureInfo_v3_ptsz cuThreadExchangeStreamCaptureMode
cuGraphCreate cuGraphClone cuGraphDestroy cuGraphAddEmptyNode cuGraphGetNodes
cuGraphNodeGetType cuGraphAddMemAllocNode cuGraphAddMemFreeNode cuGraphMemAllocNodeGetParams
cuGraphMemFreeNodeGetParams cuGraphInstantiateWithFlags cuGraphInstantiateWithParams
cuGraphInstantiateWithParams_ptsz cuGraphExecGetFlags cuGraphExecDestroy cuGraphLaunch
cuGraphLaunch_ptsz cuGraphUpload cuGraphUpload_ptsz cuDeviceGraphMemTrim
cuDeviceGetGraphMemAttribute cuDeviceSetGraphMemAttribute cuStreamQuery cuStreamQuery_ptsz
cuStreamWaitEvent cuStreamWaitEvent_ptsz cuEventCreate cuEventDestroy cuEventDestroy_v2
cuEventRecord cuEventRecord_ptsz cuEventRecordWithFlags cuEventRecordWithFlags_ptsz
cuEventQuery cuEventSynchronize cuEventElapsedTime cuEventElapsedTime_v2 cuModuleLoadData
cuModuleUnload cuModuleGetFunction cuLibraryLoadData cuLibraryUnload cuLibraryGetKernel
cuKernelGetFunction cuLaunchKernel cuLaunchKernel_ptsz
cuDevicePrimaryCtxGetState cuDeviceCanAccessPeer cuCtxEnablePeerAccess cuDeviceGetPCIBusId
cuCtxGetStreamPriorityRange cuStreamCreateWithPriority cuStreamGetPriority
cuStreamGetPriority_ptsz cuLaunchHostFunc cuLaunchHostFunc_ptsz cuStreamAddCallback
cuStreamAddCallback_ptsz cuPointerGetAttribute cuPointerGetAttributes cuMemPoolSetAccess
cuIpcGetEventHandle cuIpcOpenEventHandle cuMemcpy2DAsync_v2 cuMemcpy2DAsync_v2_ptsz
cuMemcpyPeerAsync cuMemcpyPeerAsync_ptsz cuModuleLoadDataEx cuModuleLoadFatBinary cuModuleGetGlobal_v2 cuTensorMapEncodeTiled cuLaunchCooperativeKernel
cuLaunchCooperativeKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz cuFuncGetAttribute
cuFuncSetAttribute cuFuncSetCacheConfig cuKernelGetAttribute cuKernelSetAttribute
cuOccupancyMaxActiveBlocksPerMultiprocessor
cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags cuGraphNodeGetDependencies_v2
cuGetExportTable cuCtxPushCurrent_v2 cuCtxPopCurrent_v2 cuMemRetainAllocationHandle
cuMemExportToShareableHandle cuMemImportFromShareableHandle cuMemsetD32Async
cuMemsetD32Async_ptsz cuStreamWriteValue32_v2 cuStreamWriteValue32_v2_ptsz cuDeviceGetUuid
cuDeviceGetUuid_v2"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
defined "$cudart" >"$tmp/cudart"
defined "$cuda" >"$tmp/cuda"

# Runtime: soname, no libcuda, everything cuda* (and nvcc's __cuda*) under
# libcudart.so.13.
objdump -p "$cudart" | grep -q 'SONAME *libcudart\.so\.13$' || bad "$cudart: soname is not libcudart.so.13"
objdump -p "$cudart" | grep 'NEEDED.*libcuda\.' && bad "$cudart links libcuda; it must dlopen it"
# The CUDA 12 names the runtime also defines, under libcudart.so.12 as in
# the wheel's libcudart.so.12 (libcudart.map): not in CUDA 13's.
cuda12_only="cudaGetDeviceProperties_v2"
for f in $cuda12_only; do
	grep -qx "libcudart.so.12 $f" "$tmp/cudart" || bad "$cudart: no $f@libcudart.so.12"
done
grep -Ev '^libcudart\.so\.13 (__)?cuda' "$tmp/cudart" |
	grep -Ev "^libcudart\.so\.12 ($(echo $cuda12_only | tr ' ' '|'))\$" | while read -r line; do
	echo "FAIL: $cudart exports '$line' (want cuda* and __cuda* under libcudart.so.13)"
done | grep . && fail=1
for f in $runtime_api; do
	grep -q "^libcudart\.so\.13 $f\$" "$tmp/cudart" || bad "$cudart: no $f@@libcudart.so.13"
done

# Each simulated runtime symbol exists, with the same version, in the real one.
if [ -n "$real" ] && [ -r "$real" ]; then
	defined "$real" >"$tmp/real"
	grep -v '^libcudart\.so\.12 ' "$tmp/cudart" | while read -r line; do
		grep -qx "$line" "$tmp/real" || echo "FAIL: $real has no '$line'"
	done | grep . && fail=1
fi

# Driver: soname, only cu* and unversioned, as the real libcuda.so.1.
objdump -p "$cuda" | grep -q 'SONAME *libcuda\.so\.1$' || bad "$cuda: soname is not libcuda.so.1"
grep -v '^Base cu' "$tmp/cuda" | while read -r line; do
	echo "FAIL: $cuda exports '$line' (want unversioned cu*)"
done | grep . && fail=1
for f in $driver_api; do
	grep -q "^Base $f\$" "$tmp/cuda" || bad "$cuda: no $f"
done

[ $fail -eq 0 ] && echo "exports ok: $(wc -l <"$tmp/cudart") runtime, $(wc -l <"$tmp/cuda") driver symbols"
exit $fail
