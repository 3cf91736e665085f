/* The simulated libcublas.so.13: handles and their state (stream,
 * workspace, math and pointer modes), versions, status names, and the
 * host-device copies. The BLAS routines are in sim-cublas-routines.c.
 * Exports: libcublas.map. */
#include <stdlib.h>

#include "sim-blas.h"
#include "sim-cublas.h"

/* A handle is cuBLASLt's (sim-blas.h), with the cuBLAS state and the
 * default workspace pool added. */
cublasStatus_t
cublasCreate_v2(cublasHandle_t *handle)
{
	struct sim_blas_handle *h;
	cublasStatus_t status;

	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	status = cublasLtCreate((cublasLtHandle_t *)&h);
	if (status != CUBLAS_STATUS_SUCCESS)
		return status;
	h->is_cublas = true;
	h->math_mode = CUBLAS_DEFAULT_MATH;
	h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
	status = sim_blas_default_workspace(h);
	if (status != CUBLAS_STATUS_SUCCESS) {
		cublasLtDestroy((cublasLtHandle_t)h);
		return status;
	}
	*handle = (cublasHandle_t)h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasDestroy_v2(cublasHandle_t handle)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	sim_blas_release_workspace(h);
	return cublasLtDestroy((cublasLtHandle_t)h);
}

struct sim_blas_handle *
sim_cublas_handle(cublasHandle_t handle)
{
	struct sim_blas_handle *h = (struct sim_blas_handle *)handle;

	return h && h->magic == SIM_BLAS_MAGIC && h->is_cublas ? h : NULL;
}

cublasStatus_t
cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
	if (!version)
		return CUBLAS_STATUS_INVALID_VALUE;
	*version = SIM_BLAS_VERSION;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetProperty(libraryPropertyType type, int *value)
{
	return cublasLtGetProperty(type, value);
}

const char *
cublasGetStatusName(cublasStatus_t status)
{
	return sim_blas_status_name(status);
}

const char *
cublasGetStatusString(cublasStatus_t status)
{
	return sim_blas_status_string(status);
}

/* Setting the stream puts the default workspace pool back, as cuBLAS
 * documents: PyTorch sets its own workspace again after every
 * cublasSetStream. */
cublasStatus_t
cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->stream = (CUstream)streamId;
	h->workspace = h->default_workspace;
	h->workspace_size = h->default_workspace_size;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!streamId)
		return CUBLAS_STATUS_INVALID_VALUE;
	*streamId = (cudaStream_t)h->stream;
	return CUBLAS_STATUS_SUCCESS;
}

/* The caller's buffer (PyTorch's, from its caching allocator) is kept and
 * never touched. It must be aligned to 256 bytes. */
cublasStatus_t
cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if ((uintptr_t)workspace % 256 != 0 || (!workspace && workspaceSizeInBytes))
		return CUBLAS_STATUS_INVALID_VALUE;
	h->workspace = (CUdeviceptr)(uintptr_t)workspace;
	h->workspace_size = workspaceSizeInBytes;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->math_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = h->math_mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
		return CUBLAS_STATUS_INVALID_VALUE;
	h->pointer_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = h->pointer_mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (smCountTarget < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	h->sm_count_target = smCountTarget;
	return CUBLAS_STATUS_SUCCESS;
}

/* The settings cuSOLVER makes on its handles: stored, and read back by
 * the getters; nothing computes with them. */
cublasStatus_t
cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED)
		return CUBLAS_STATUS_INVALID_VALUE;
	h->atomics_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetEnvironmentMode(cublasHandle_t handle, int mode)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->environment_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

/* SET_GET(field, setter, getter, type): a stored emulation setting. */
#define SET_GET(field, setter, getter, type)                              \
	cublasStatus_t setter(cublasHandle_t handle, type value)          \
	{                                                                 \
		struct sim_blas_handle *h = sim_cublas_handle(handle);    \
                                                                          \
		if (!h)                                                   \
			return CUBLAS_STATUS_NOT_INITIALIZED;             \
		h->field = value;                                         \
		return CUBLAS_STATUS_SUCCESS;                             \
	}                                                                 \
	cublasStatus_t getter(cublasHandle_t handle, type *value)         \
	{                                                                 \
		struct sim_blas_handle *h = sim_cublas_handle(handle);    \
                                                                          \
		if (!h)                                                   \
			return CUBLAS_STATUS_NOT_INITIALIZED;             \
		if (!value)                                               \
			return CUBLAS_STATUS_INVALID_VALUE;               \
		*value = h->field;                                        \
		return CUBLAS_STATUS_SUCCESS;                             \
	}

SET_GET(emulation_special_values, cublasSetEmulationSpecialValuesSupport,
	cublasGetEmulationSpecialValuesSupport, cudaEmulationSpecialValuesSupport)
SET_GET(mantissa_control, cublasSetFixedPointEmulationMantissaControl,
	cublasGetFixedPointEmulationMantissaControl, cudaEmulationMantissaControl)
SET_GET(max_mantissa_bits, cublasSetFixedPointEmulationMaxMantissaBitCount,
	cublasGetFixedPointEmulationMaxMantissaBitCount, int)
SET_GET(mantissa_bit_offset, cublasSetFixedPointEmulationMantissaBitOffset,
	cublasGetFixedPointEmulationMantissaBitOffset, int)

cublasStatus_t
cublasSetEmulationStrategy(cublasHandle_t handle, cublasEmulationStrategy_t emulationStrategy)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->emulation_strategy = emulationStrategy;
	return CUBLAS_STATUS_SUCCESS;
}

/* Host-device copies are real copies, through the driver's cuMemcpyAsync
 * on the given stream (so a capture records them): one per column, or
 * one per element for a strided vector. */
static cublasStatus_t
copy_strided(int count, int width, const void *src, long long src_step, void *dst,
	     long long dst_step, cudaStream_t stream)
{
	const struct sim_blas_driver *d = sim_blas_driver();

	if (!d)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	for (int i = 0; i < count; i++) {
		CUdeviceptr to = (CUdeviceptr)(uintptr_t)dst + (CUdeviceptr)(i * dst_step);
		CUdeviceptr from = (CUdeviceptr)(uintptr_t)src + (CUdeviceptr)(i * src_step);

		if (d->memcpy_async(to, from, (size_t)width, (CUstream)stream) != CUDA_SUCCESS)
			return CUBLAS_STATUS_MAPPING_ERROR;
	}
	return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t
copy_matrix(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb,
	    cudaStream_t stream)
{
	if (rows < 0 || cols < 0 || elemSize <= 0 || lda <= 0 || ldb <= 0 || lda < rows ||
	    ldb < rows)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (rows == 0 || cols == 0)
		return CUBLAS_STATUS_SUCCESS;
	return copy_strided(cols, rows * elemSize, A, (long long)lda * elemSize, B,
			    (long long)ldb * elemSize, stream);
}

static cublasStatus_t
copy_vector(int n, int elemSize, const void *x, int incx, void *y, int incy, cudaStream_t stream)
{
	if (n < 0 || elemSize <= 0 || incx <= 0 || incy <= 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (n == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (incx == 1 && incy == 1)
		return copy_strided(1, n * elemSize, x, 0, y, 0, stream);
	return copy_strided(n, elemSize, x, (long long)incx * elemSize, y,
			    (long long)incy * elemSize, stream);
}

cublasStatus_t
cublasSetMatrixAsync(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb,
		     cudaStream_t stream)
{
	return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, stream);
}

cublasStatus_t
cublasGetMatrixAsync(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb,
		     cudaStream_t stream)
{
	return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, stream);
}

cublasStatus_t
cublasSetVectorAsync(int n, int elemSize, const void *hostPtr, int incx, void *devicePtr, int incy,
		     cudaStream_t stream)
{
	return copy_vector(n, elemSize, hostPtr, incx, devicePtr, incy, stream);
}

cublasStatus_t
cublasGetVectorAsync(int n, int elemSize, const void *devicePtr, int incx, void *hostPtr, int incy,
		     cudaStream_t stream)
{
	return copy_vector(n, elemSize, devicePtr, incx, hostPtr, incy, stream);
}
