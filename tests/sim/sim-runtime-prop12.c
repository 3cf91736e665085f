/* Simulated runtime: cudaGetDeviceProperties_v2, the CUDA 12 runtime's
 * name for cudaGetDeviceProperties (CUDA 12's headers define the one as
 * the other), with CUDA 12's cudaDeviceProp, which CUDA 13 changed: it
 * dropped clockRate, deviceOverlap, computeMode and others, so every field
 * after maxGridSize moved. TensorFlow (CUDA 12) reaches the simulated
 * runtime through its cudart stub, which falls back to the process's
 * global scope (docs/frameworks.md, TensorFlow); Eigen reads the device's
 * multiprocessor and thread counts from here to size its kernel launches,
 * and without it uses uninitialised memory.
 *
 * struct sim_prop12 is CUDA 12.9's layout (driver_types.h of the
 * nvidia-cuda-runtime-cu12 wheel), field for field; the static asserts
 * hold it to the offsets and size measured there. The values are the
 * simulated runtime's own (cudaGetDeviceProperties) and, for the fields
 * CUDA 13 dropped, the driver's attributes. */
#include "sim-runtime.h"

#include <stddef.h>
#include <string.h>

struct sim_prop12 {
	char name[256];
	cudaUUID_t uuid;
	char luid[8];
	unsigned int luidDeviceNodeMask;
	size_t totalGlobalMem, sharedMemPerBlock;
	int regsPerBlock, warpSize;
	size_t memPitch;
	int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
	size_t totalConstMem;
	int major, minor;
	size_t textureAlignment, texturePitchAlignment;
	int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated,
		canMapHostMemory, computeMode, maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear,
		maxTexture2D[2], maxTexture2DMipmap[2], maxTexture2DLinear[3], maxTexture2DGather[2],
		maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap, maxTexture1DLayered[2],
		maxTexture2DLayered[3], maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2],
		maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap,
		maxSurfaceCubemapLayered[2];
	size_t surfaceAlignment;
	int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver,
		asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize,
		persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported,
		globalL1CacheSupported, localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID,
		hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio, pageableMemoryAccess,
		concurrentManagedAccess, computePreemptionSupported,
		canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
	size_t sharedMemPerBlockOptin;
	int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost,
		maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
	size_t reservedSharedMemPerBlock;
	int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported,
		timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
	unsigned int gpuDirectRDMAFlushWritesOptions;
	int gpuDirectRDMAWritesOrdering;
	unsigned int memoryPoolSupportedHandleTypes;
	int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch,
		unifiedFunctionPointers, reserved[63];
};
_Static_assert(offsetof(struct sim_prop12, major) == 360, "CUDA 12 layout");
_Static_assert(offsetof(struct sim_prop12, multiProcessorCount) == 388, "CUDA 12 layout");
_Static_assert(offsetof(struct sim_prop12, maxThreadsPerMultiProcessor) == 624, "CUDA 12 layout");
_Static_assert(sizeof(struct sim_prop12) == 1032, "CUDA 12 layout");

static int
attribute(enum cudaDeviceAttr attr, int device)
{
	int v = 0;

	return cudaDeviceGetAttribute(&v, attr, device) == cudaSuccess ? v : 0;
}

/* The fields both layouts have, by name. */
#define SIM_PROP12_SAME(X) \
	X(uuid) X(luid) X(luidDeviceNodeMask) X(totalGlobalMem) X(sharedMemPerBlock) \
	X(regsPerBlock) X(warpSize) X(memPitch) X(maxThreadsPerBlock) X(maxThreadsDim) \
	X(maxGridSize) X(totalConstMem) X(major) X(minor) X(textureAlignment) \
	X(texturePitchAlignment) X(multiProcessorCount) X(integrated) X(canMapHostMemory) \
	X(concurrentKernels) X(ECCEnabled) X(pciBusID) X(pciDeviceID) X(pciDomainID) \
	X(tccDriver) X(asyncEngineCount) X(unifiedAddressing) X(memoryBusWidth) X(l2CacheSize) \
	X(persistingL2CacheMaxSize) X(maxThreadsPerMultiProcessor) X(streamPrioritiesSupported) \
	X(globalL1CacheSupported) X(localL1CacheSupported) X(sharedMemPerMultiprocessor) \
	X(regsPerMultiprocessor) X(managedMemory) X(isMultiGpuBoard) X(multiGpuBoardGroupID) \
	X(hostNativeAtomicSupported) X(pageableMemoryAccess) X(concurrentManagedAccess) \
	X(computePreemptionSupported) X(canUseHostPointerForRegisteredMem) X(cooperativeLaunch) \
	X(sharedMemPerBlockOptin) X(pageableMemoryAccessUsesHostPageTables) \
	X(directManagedMemAccessFromHost) X(maxBlocksPerMultiProcessor) \
	X(accessPolicyMaxWindowSize) X(reservedSharedMemPerBlock)

cudaError_t CUDARTAPI cudaGetDeviceProperties_v2(struct sim_prop12 *prop, int device);

cudaError_t CUDARTAPI
cudaGetDeviceProperties_v2(struct sim_prop12 *prop, int device)
{
	struct cudaDeviceProp p13;
	cudaError_t err;

	if (!prop)
		return cudaGetDeviceProperties(NULL, device);
	err = cudaGetDeviceProperties(&p13, device);
	if (err != cudaSuccess)
		return err;
	memset(prop, 0, sizeof(*prop));
	memcpy(prop->name, p13.name, sizeof(prop->name));
#define SIM_COPY(f) memcpy(&prop->f, &p13.f, sizeof(prop->f));
	SIM_PROP12_SAME(SIM_COPY)
#undef SIM_COPY
	/* dropped by CUDA 13: the driver still answers for some */
	prop->clockRate = attribute(cudaDevAttrClockRate, device);
	prop->memoryClockRate = attribute(cudaDevAttrMemoryClockRate, device);
	prop->deviceOverlap = prop->asyncEngineCount > 0;
	return cudaSuccess;
}
