/* Internals shared by the simulated libcublas.so.13 and libcublasLt.so.13
 * (README.md, "BLAS libraries"). Nothing here is exported: each library's
 * version script names its public functions only. */
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the libraries report: the nvidia-cublas wheel torch 2.15.0 runs
 * with (13.4.1), as cublasLtGetVersion of the real library answers. */
#define SIM_BLAS_MAJOR 13
#define SIM_BLAS_MINOR 4
#define SIM_BLAS_PATCH 1
#define SIM_BLAS_VERSION (SIM_BLAS_MAJOR * 10000 + SIM_BLAS_MINOR * 100 + SIM_BLAS_PATCH)

#define SIM_BLAS_MAGIC 0x53424c41u /* "SBLA" */

/* One handle for both libraries. cublasCreate makes it through
 * cublasLtCreate, as NVIDIA's cuBLAS builds on cuBLASLt, so a cublasHandle_t
 * is also a valid cublasLtHandle_t: PyTorch's CUDA build passes its cuBLAS
 * handle to cublasLtMatmul (reinterpret_cast) and never calls
 * cublasLtCreate. The cuBLAS fields stay zero in a handle made by
 * cublasLtCreate, and cuBLAS takes it for no handle (NOT_INITIALIZED). */
struct sim_blas_handle {
	uint32_t magic;
	CUcontext ctx;
	CUdevice device;
	/* cuBLAS state */
	bool is_cublas;
	CUstream stream;
	CUdeviceptr workspace;          /* the one kernels would use now */
	size_t workspace_size;
	CUdeviceptr default_workspace;  /* allocated by cublasCreate, freed by cublasDestroy */
	size_t default_workspace_size;
	cublasMath_t math_mode;
	cublasPointerMode_t pointer_mode;
	int sm_count_target;
	cublasAtomicsMode_t atomics_mode;
	int environment_mode;
	cublasEmulationStrategy_t emulation_strategy;
	cudaEmulationSpecialValuesSupport emulation_special_values;
	cudaEmulationMantissaControl mantissa_control;
	int max_mantissa_bits;
	int mantissa_bit_offset;
};

/* sim-blas-core.c: the driver, reached as NVIDIA's libraries reach it:
 * dlopen("libcuda.so.1"), dlsym of cuGetProcAddress_v2, the rest through it. */
struct sim_blas_driver {
	PFN_cuInit_v2000 init;
	PFN_cuDeviceGet_v2000 device_get;
	PFN_cuDeviceGetAttribute_v2000 device_get_attribute;
	PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
	PFN_cuCtxGetCurrent_v4000 ctx_get_current;
	PFN_cuCtxSetCurrent_v4000 ctx_set_current;
	PFN_cuCtxGetDevice_v13000 ctx_get_device;
	PFN_cuMemAlloc_v3020 mem_alloc;
	PFN_cuMemFree_v3020 mem_free;
	PFN_cuMemcpyAsync_v4000 memcpy_async;
};

const struct sim_blas_driver *sim_blas_driver(void);
cublasStatus_t sim_blas_attach(struct sim_blas_handle *h);
cublasStatus_t sim_blas_default_workspace(struct sim_blas_handle *h);
void sim_blas_release_workspace(struct sim_blas_handle *h);
size_t sim_blas_type_size(cudaDataType type);
const char *sim_blas_status_name(cublasStatus_t status);
const char *sim_blas_status_string(cublasStatus_t status);
