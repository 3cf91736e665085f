/* Simulated runtime: what a kernel is and how it may be launched
 * (attributes, occupancy, extended and cooperative launches) and device
 * code loaded as libraries at run time. As the CUDA 12+ runtime does, a
 * kernel is named by its host stub (registered by nvcc's code,
 * sim-runtime-kernel.c) or by a cudaKernel_t, and every query goes to the
 * driver's cuKernel* and cuOccupancy* calls; the figures are the
 * driver's (sim-driver-module.c). */
#include "sim-runtime.h"

#include <stdio.h>
#include <stdlib.h>

/* A host stub's kernel, or func itself taken as a cudaKernel_t, which the
 * driver checks. */
static CUkernel
kernel_or_handle(const void *func)
{
	CUkernel kernel = NULL;

	if (sim_rt_kernel_of(func, &kernel) != cudaSuccess)
		kernel = (CUkernel)func;
	return kernel;
}

static cudaError_t
func_error(CUresult rc)
{
	return sim_rt_fail(rc == CUDA_ERROR_INVALID_HANDLE ? cudaErrorInvalidDeviceFunction :
							     sim_rt_from_driver(rc));
}

static CUresult
kernel_attribute(int *value, CUfunction_attribute attr, CUkernel kernel, int device)
{
	return sim_rt_drv.kernel_get_attribute(value, attr, kernel, device);
}

cudaError_t CUDARTAPI
cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	int device = 0, v[8] = { 0 };
	CUkernel kernel;
	CUresult rc = CUDA_SUCCESS;

	SIM_RT_ENTER();
	if (!attr)
		return sim_rt_fail(cudaErrorInvalidValue);
	cudaGetDevice(&device);
	kernel = kernel_or_handle(func);
	for (int a = CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
	     rc == CUDA_SUCCESS && a <= CU_FUNC_ATTRIBUTE_CACHE_MODE_CA; a++)
		rc = kernel_attribute(&v[a], (CUfunction_attribute)a, kernel, device);
	if (rc != CUDA_SUCCESS)
		return func_error(rc);
	*attr = (struct cudaFuncAttributes){
		.maxThreadsPerBlock = v[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK],
		.sharedSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES],
		.constSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES],
		.localSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES],
		.numRegs = v[CU_FUNC_ATTRIBUTE_NUM_REGS],
		.ptxVersion = v[CU_FUNC_ATTRIBUTE_PTX_VERSION],
		.binaryVersion = v[CU_FUNC_ATTRIBUTE_BINARY_VERSION],
		.cacheModeCA = v[CU_FUNC_ATTRIBUTE_CACHE_MODE_CA],
	};
	kernel_attribute(&attr->maxDynamicSharedSizeBytes,
			 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel, device);
	kernel_attribute(&attr->preferredShmemCarveout,
			 CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, kernel, device);
	return cudaSuccess;
}

/* The runtime's cudaFuncAttribute values are the driver's
 * CU_FUNC_ATTRIBUTE_* ones from 8 (MaxDynamicSharedMemorySize) on. */
cudaError_t CUDARTAPI
cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr, int value,
				int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return func_error(sim_rt_drv.kernel_set_attribute((CUfunction_attribute)attr, value,
							   (CUkernel)kernel, device));
}

cudaError_t CUDARTAPI
cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	int device = 0;

	SIM_RT_ENTER();
	cudaGetDevice(&device);
	return func_error(sim_rt_drv.kernel_set_attribute((CUfunction_attribute)attr, value,
							   kernel_or_handle(func), device));
}

cudaError_t CUDARTAPI
cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
						       int blockSize, size_t dynamicSMemSize,
						       unsigned int flags)
{
	SIM_RT_ENTER();
	return func_error(sim_rt_drv.occupancy(numBlocks, (CUfunction)kernel_or_handle(func),
					       blockSize, dynamicSMemSize, flags));
}

cudaError_t CUDARTAPI
cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
					      size_t dynamicSMemSize)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		numBlocks, func, blockSize, dynamicSMemSize, cudaOccupancyDefault);
}

/* The launch attributes are the driver's under other names. */
cudaError_t CUDARTAPI
cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	CUlaunchConfig c;

	SIM_RT_ENTER();
	if (!config)
		return sim_rt_fail(cudaErrorInvalidValue);
	c = (CUlaunchConfig){
		.gridDimX = config->gridDim.x, .gridDimY = config->gridDim.y,
		.gridDimZ = config->gridDim.z, .blockDimX = config->blockDim.x,
		.blockDimY = config->blockDim.y, .blockDimZ = config->blockDim.z,
		.sharedMemBytes = (unsigned int)config->dynamicSmemBytes,
		.hStream = config->stream, .attrs = (CUlaunchAttribute *)config->attrs,
		.numAttrs = config->numAttrs,
	};
	if (config->dynamicSmemBytes > UINT32_MAX)
		return sim_rt_fail(cudaErrorInvalidValue);
	return func_error(sim_rt_drv.launch_kernel_ex(&c, (CUfunction)kernel_or_handle(func),
						      args, NULL));
}

cudaError_t CUDARTAPI
cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			    size_t sharedMem, cudaStream_t stream)
{
	SIM_RT_ENTER();
	if (sharedMem > UINT32_MAX)
		return sim_rt_fail(cudaErrorInvalidValue);
	return func_error(sim_rt_drv.launch_cooperative(
		(CUfunction)kernel_or_handle(func), gridDim.x, gridDim.y, gridDim.z, blockDim.x,
		blockDim.y, blockDim.z, (unsigned int)sharedMem, stream, args));
}

/* ---- libraries ---- */

/* The JIT and library options are accepted and ignored, as the driver
 * does; a cudaLibrary_t is the driver's CUlibrary. */
cudaError_t CUDARTAPI
cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
		    void **jitOptionsValues, unsigned int numJitOptions,
		    enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
		    unsigned int numLibraryOptions)
{
	cudaError_t err = sim_rt_init();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.library_load_data(
		(CUlibrary *)library, code, (CUjit_option *)jitOptions, jitOptionsValues,
		numJitOptions, (CUlibraryOption *)libraryOptions, libraryOptionValues,
		numLibraryOptions));
}

/* The file read whole, then loaded as data (the driver keeps a copy). */
cudaError_t CUDARTAPI
cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName,
			enum cudaJitOption *jitOptions, void **jitOptionsValues,
			unsigned int numJitOptions, enum cudaLibraryOption *libraryOptions,
			void **libraryOptionValues, unsigned int numLibraryOptions)
{
	FILE *f = fileName ? fopen(fileName, "rb") : NULL;
	char *code = NULL;
	size_t n = 0, cap = 0, got;
	cudaError_t err;

	if (!f)
		return sim_rt_fail(fileName ? cudaErrorFileNotFound : cudaErrorInvalidValue);
	do {
		char *bigger = n + 65536 + 1 > cap ? realloc(code, cap = 2 * cap + 65536 + 1) : code;
		if (!bigger) {
			free(code);
			fclose(f);
			return sim_rt_fail(cudaErrorMemoryAllocation);
		}
		code = bigger;
		got = fread(code + n, 1, 65536, f);
		n += got;
	} while (got == 65536);
	fclose(f);
	code[n] = '\0';
	err = cudaLibraryLoadData(library, code, jitOptions, jitOptionsValues, numJitOptions,
				  libraryOptions, libraryOptionValues, numLibraryOptions);
	free(code);
	return err;
}

cudaError_t CUDARTAPI
cudaLibraryUnload(cudaLibrary_t library)
{
	cudaError_t err = sim_rt_init();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.library_unload((CUlibrary)library));
}

cudaError_t CUDARTAPI
cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)
{
	cudaError_t err = sim_rt_init();
	CUresult rc;

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	rc = sim_rt_drv.library_get_kernel((CUkernel *)pKernel, (CUlibrary)library, name);
	return sim_rt_fail(rc == CUDA_ERROR_NOT_FOUND ? cudaErrorSymbolNotFound :
							sim_rt_from_driver(rc));
}

/* What the simulator cannot answer: it does not parse device code, so it
 * can neither list a library's kernels nor give its variables storage,
 * and it has no unified functions. */
cudaError_t CUDARTAPI
cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
	(void)count;
	(void)lib;
	return sim_rt_fail(cudaErrorNotSupported);
}

cudaError_t CUDARTAPI
cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
	(void)dptr;
	(void)bytes;
	(void)library;
	(void)name;
	return sim_rt_fail(cudaErrorNotSupported);
}

cudaError_t CUDARTAPI
cudaLibraryGetManaged(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
	(void)dptr;
	(void)bytes;
	(void)library;
	(void)name;
	return sim_rt_fail(cudaErrorNotSupported);
}

cudaError_t CUDARTAPI
cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t library, const char *symbol)
{
	(void)fptr;
	(void)library;
	(void)symbol;
	return sim_rt_fail(cudaErrorSymbolNotFound);
}
