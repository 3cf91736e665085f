/* Simulated runtime: device properties and attributes. As NVIDIA's
 * runtime does, cudaGetDeviceProperties fills cudaDeviceProp from the
 * driver's device attributes (cuDeviceGetAttribute, cuDeviceGetName,
 * cuDeviceTotalMem, cuDeviceGetUuid); the values are the driver's (sim-driver.c). The
 * runtime's cudaDeviceAttr values are the driver's CUdevice_attribute
 * ones, so cudaDeviceGetAttribute passes straight through. */
#include "sim-runtime.h"

#include <stddef.h>
#include <string.h>

struct sim_rt_prop_field {
	size_t offset;           /* in cudaDeviceProp */
	CUdevice_attribute attrib;
};

#define FIELD(field, attrib) { offsetof(struct cudaDeviceProp, field), CU_DEVICE_ATTRIBUTE_##attrib }

/* The int and unsigned int fields. */
static const struct sim_rt_prop_field sim_rt_int_fields[] = {
	FIELD(regsPerBlock, MAX_REGISTERS_PER_BLOCK),
	FIELD(warpSize, WARP_SIZE),
	FIELD(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
	FIELD(maxThreadsDim[0], MAX_BLOCK_DIM_X),
	FIELD(maxThreadsDim[1], MAX_BLOCK_DIM_Y),
	FIELD(maxThreadsDim[2], MAX_BLOCK_DIM_Z),
	FIELD(maxGridSize[0], MAX_GRID_DIM_X),
	FIELD(maxGridSize[1], MAX_GRID_DIM_Y),
	FIELD(maxGridSize[2], MAX_GRID_DIM_Z),
	FIELD(major, COMPUTE_CAPABILITY_MAJOR),
	FIELD(minor, COMPUTE_CAPABILITY_MINOR),
	FIELD(multiProcessorCount, MULTIPROCESSOR_COUNT),
	FIELD(integrated, INTEGRATED),
	FIELD(canMapHostMemory, CAN_MAP_HOST_MEMORY),
	FIELD(maxTexture1D, MAXIMUM_TEXTURE1D_WIDTH),
	FIELD(maxTexture2D[0], MAXIMUM_TEXTURE2D_WIDTH),
	FIELD(maxTexture2D[1], MAXIMUM_TEXTURE2D_HEIGHT),
	FIELD(maxTexture3D[0], MAXIMUM_TEXTURE3D_WIDTH),
	FIELD(maxTexture3D[1], MAXIMUM_TEXTURE3D_HEIGHT),
	FIELD(maxTexture3D[2], MAXIMUM_TEXTURE3D_DEPTH),
	FIELD(concurrentKernels, CONCURRENT_KERNELS),
	FIELD(ECCEnabled, ECC_ENABLED),
	FIELD(pciBusID, PCI_BUS_ID),
	FIELD(pciDeviceID, PCI_DEVICE_ID),
	FIELD(pciDomainID, PCI_DOMAIN_ID),
	FIELD(tccDriver, TCC_DRIVER),
	FIELD(asyncEngineCount, ASYNC_ENGINE_COUNT),
	FIELD(unifiedAddressing, UNIFIED_ADDRESSING),
	FIELD(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
	FIELD(l2CacheSize, L2_CACHE_SIZE),
	FIELD(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
	FIELD(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
	FIELD(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
	FIELD(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
	FIELD(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
	FIELD(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
	FIELD(managedMemory, MANAGED_MEMORY),
	FIELD(isMultiGpuBoard, MULTI_GPU_BOARD),
	FIELD(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
	FIELD(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
	FIELD(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
	FIELD(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
	FIELD(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
	FIELD(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
	FIELD(cooperativeLaunch, COOPERATIVE_LAUNCH),
	FIELD(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
	FIELD(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
	FIELD(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
	FIELD(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
	FIELD(hostRegisterSupported, HOST_REGISTER_SUPPORTED),
	FIELD(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
	FIELD(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
	FIELD(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
	FIELD(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
	FIELD(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
	FIELD(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
	FIELD(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
	FIELD(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
	FIELD(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
	FIELD(ipcEventSupported, IPC_EVENT_SUPPORTED),
	FIELD(clusterLaunch, CLUSTER_LAUNCH),
	FIELD(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
	FIELD(deviceNumaConfig, NUMA_CONFIG),
	FIELD(deviceNumaId, NUMA_ID),
	FIELD(mpsEnabled, MPS_ENABLED),
	FIELD(hostNumaId, HOST_NUMA_ID),
	FIELD(gpuPciDeviceID, GPU_PCI_DEVICE_ID),
	FIELD(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID),
	FIELD(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED),
};

/* The size_t fields. */
static const struct sim_rt_prop_field sim_rt_size_fields[] = {
	FIELD(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
	FIELD(memPitch, MAX_PITCH),
	FIELD(totalConstMem, TOTAL_CONSTANT_MEMORY),
	FIELD(textureAlignment, TEXTURE_ALIGNMENT),
	FIELD(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
	FIELD(surfaceAlignment, SURFACE_ALIGNMENT),
	FIELD(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
	FIELD(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
	FIELD(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
};

static int
attribute(CUdevice_attribute attrib, int device)
{
	int value = 0;

	sim_rt_drv.device_get_attribute(&value, attrib, device);
	return value;
}

/* Fields of both widths are copied in, so that unsigned ones get the
 * attribute's bits. */
static void
fill_properties(struct cudaDeviceProp *prop, int device)
{
	const size_t nints = sizeof(sim_rt_int_fields) / sizeof(sim_rt_int_fields[0]);
	const size_t nsizes = sizeof(sim_rt_size_fields) / sizeof(sim_rt_size_fields[0]);
	char *base = (char *)prop;

	memset(prop, 0, sizeof(*prop));
	sim_rt_drv.device_get_name(prop->name, sizeof(prop->name), device);
	sim_rt_drv.device_total_mem(&prop->totalGlobalMem, device);
	sim_rt_drv.device_get_uuid((CUuuid *)&prop->uuid, device);
	for (size_t i = 0; i < nints; i++) {
		int v = attribute(sim_rt_int_fields[i].attrib, device);
		memcpy(base + sim_rt_int_fields[i].offset, &v, sizeof(v));
	}
	for (size_t i = 0; i < nsizes; i++) {
		size_t v = (size_t)attribute(sim_rt_size_fields[i].attrib, device);
		memcpy(base + sim_rt_size_fields[i].offset, &v, sizeof(v));
	}
}

cudaError_t CUDARTAPI
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	if (!prop)
		return sim_rt_fail(cudaErrorInvalidValue);
	fill_properties(prop, device);
	return cudaSuccess;
}

cudaError_t CUDARTAPI
cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	if (!value)
		return sim_rt_fail(cudaErrorInvalidValue);
	return sim_rt_check(sim_rt_drv.device_get_attribute(value, (CUdevice_attribute)attr, device));
}
