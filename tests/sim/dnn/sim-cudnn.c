/* Simulated cuDNN (libcudnn.so.9): a TEST FIXTURE, preloaded by
 * scripts/sim-run for every command (README.md, "cuDNN"). The wheel's
 * real cuDNN cannot start on the simulated driver: cudnnCreate fails with
 * CUDNN_STATUS_NOT_INITIALIZED (it needs the real driver's private
 * interfaces, which the simulator does not have). torch links its cuDNN
 * functions by version at load time; XLA and TensorFlow look theirs up
 * with dlsym when they first call them. This file: the version (9.28.1,
 * JAX's wheel; torch accepts a newer minor than it was built with) and
 * properties, the sub-libraries' version checks, handles (host memory
 * only: no device memory is charged) and their streams, error strings
 * and the logging callback. The descriptors are in sim-cudnn-desc.c, the
 * legacy operations in sim-cudnn-ops.c, the RNN v8 API in
 * sim-cudnn-rnn.c, the backend (graph) API in sim-cudnn-backend.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

#define SIM_CUDNN_MAJOR 9
#define SIM_CUDNN_MINOR 28
#define SIM_CUDNN_PATCH 1
#define SIM_CUDNN_VERSION (SIM_CUDNN_MAJOR * 10000 + SIM_CUDNN_MINOR * 100 + SIM_CUDNN_PATCH)
#define SIM_CUDART_VERSION 13000 /* the runtime it was built for, as the wheel's */
#define SIM_MAX_DEVICE_VERSION 1200 /* newest compute capability it knows, x100 */

typedef enum { MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL } libraryPropertyType;
typedef void (*cudnnCallback_t)(int sev, void *udata, const void *dbg, const char *msg);

EXPORT size_t cudnnGetVersion(void);
EXPORT size_t cudnnGetMaxDeviceVersion(void);
EXPORT size_t cudnnGetCudartVersion(void);
EXPORT cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value);
EXPORT const char *cudnnGetErrorString(cudnnStatus_t status);
EXPORT void cudnnGetLastErrorString(char *message, size_t max_size);
EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle);
EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle);
EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream);
EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream);
EXPORT cudnnStatus_t cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr);
EXPORT cudnnStatus_t cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr);
EXPORT cudnnStatus_t cudnnGraphVersionCheck(void);
EXPORT cudnnStatus_t cudnnOpsVersionCheck(void);
EXPORT cudnnStatus_t cudnnCnnVersionCheck(void);
EXPORT cudnnStatus_t cudnnAdvVersionCheck(void);

size_t cudnnGetVersion(void) { return SIM_CUDNN_VERSION; }
size_t cudnnGetMaxDeviceVersion(void) { return SIM_MAX_DEVICE_VERSION; }
size_t cudnnGetCudartVersion(void) { return SIM_CUDART_VERSION; }

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
	if (!value)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	switch (type) {
	case MAJOR_VERSION: *value = SIM_CUDNN_MAJOR; return CUDNN_STATUS_SUCCESS;
	case MINOR_VERSION: *value = SIM_CUDNN_MINOR; return CUDNN_STATUS_SUCCESS;
	case PATCH_LEVEL: *value = SIM_CUDNN_PATCH; return CUDNN_STATUS_SUCCESS;
	}
	return CUDNN_STATUS_BAD_PARAM;
}

const char *cudnnGetErrorString(cudnnStatus_t status)
{
	switch (status) {
	case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
	case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
	case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
	case CUDNN_STATUS_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
	case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
	case CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND: return "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
	case CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT: return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
	case CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH: return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
	case CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE: return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
	case CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE: return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
	case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
	case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
	case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
		return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
	case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
	}
	return "CUDNN_STATUS_UNKNOWN";
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
	if (message && max_size)
		message[0] = '\0';
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
	if (!handle)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	*handle = calloc(1, sizeof(**handle));
	return *handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
	free(handle);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
	if (!handle)
		return CUDNN_STATUS_NOT_INITIALIZED;
	handle->stream = stream;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream)
{
	if (!handle)
		return CUDNN_STATUS_NOT_INITIALIZED;
	if (!stream)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	*stream = handle->stream;
	return CUDNN_STATUS_SUCCESS;
}

static struct {
	unsigned mask;
	void *udata;
	cudnnCallback_t fn;
} sim_callback;

cudnnStatus_t cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr)
{
	sim_callback.mask = mask;
	sim_callback.udata = udata;
	sim_callback.fn = fptr;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr)
{
	if (mask)
		*mask = sim_callback.mask;
	if (udata)
		*udata = sim_callback.udata;
	if (fptr)
		*fptr = sim_callback.fn;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGraphVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnOpsVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnCnnVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnAdvVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
