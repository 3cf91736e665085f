/* Simulated runtime: errors. Driver results map to runtime errors as the
 * real runtime maps them, and every failing call becomes the calling
 * thread's last error until cudaGetLastError reads and clears it. */
#include "sim-runtime.h"

#include <stddef.h>

static __thread cudaError_t sim_rt_last_error = cudaSuccess;

struct sim_rt_mapping {
	CUresult driver;
	cudaError_t runtime;
};

static const struct sim_rt_mapping sim_rt_mappings[] = {
	{ CUDA_SUCCESS, cudaSuccess },
	{ CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue },
	{ CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation },
	{ CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError },
	{ CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading },
	{ CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice },
	{ CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice },
	{ CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized },
	{ CUDA_ERROR_CONTEXT_IS_DESTROYED, cudaErrorContextIsDestroyed },
	{ CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle },
	{ CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound },
	{ CUDA_ERROR_NOT_READY, cudaErrorNotReady },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, cudaErrorIllegalAddress },
	{ CUDA_ERROR_NOT_PERMITTED, cudaErrorNotPermitted },
	{ CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported },
	{ CUDA_ERROR_MAP_FAILED, cudaErrorMapBufferObjectFailed },
	{ CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cudaErrorHostMemoryAlreadyRegistered },
	{ CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cudaErrorHostMemoryNotRegistered },
	{ CUDA_ERROR_ILLEGAL_STATE, cudaErrorIllegalState },
	{ CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cudaErrorStreamCaptureUnsupported },
	{ CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cudaErrorStreamCaptureInvalidated },
	{ CUDA_ERROR_STREAM_CAPTURE_MERGE, cudaErrorStreamCaptureMerge },
	{ CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, cudaErrorStreamCaptureUnmatched },
	{ CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cudaErrorStreamCaptureUnjoined },
	{ CUDA_ERROR_STREAM_CAPTURE_ISOLATION, cudaErrorStreamCaptureIsolation },
	{ CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cudaErrorStreamCaptureImplicit },
	{ CUDA_ERROR_CAPTURED_EVENT, cudaErrorCapturedEvent },
	{ CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, cudaErrorStreamCaptureWrongThread },
	{ CUDA_ERROR_INVALID_IMAGE, cudaErrorInvalidKernelImage },
	{ CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cudaErrorPeerAccessAlreadyEnabled },
};

cudaError_t
sim_rt_from_driver(CUresult rc)
{
	for (size_t i = 0; i < sizeof(sim_rt_mappings) / sizeof(sim_rt_mappings[0]); i++)
		if (sim_rt_mappings[i].driver == rc)
			return sim_rt_mappings[i].runtime;
	return cudaErrorUnknown;
}

/* Record a failure as the thread's last error and return it. */
cudaError_t
sim_rt_fail(cudaError_t err)
{
	if (err != cudaSuccess)
		sim_rt_last_error = err;
	return err;
}

/* The runtime result of a driver call, recorded if it failed. */
cudaError_t
sim_rt_check(CUresult rc)
{
	return sim_rt_fail(sim_rt_from_driver(rc));
}

cudaError_t CUDARTAPI
cudaGetLastError(void)
{
	cudaError_t err = sim_rt_last_error;

	sim_rt_last_error = cudaSuccess;
	return err;
}

cudaError_t CUDARTAPI
cudaPeekAtLastError(void)
{
	return sim_rt_last_error;
}

struct sim_rt_error {
	cudaError_t code;
	const char *name;
	const char *text;
};

#define ERR(code, text) { code, #code, text }

static const struct sim_rt_error sim_rt_errors[] = {
	ERR(cudaSuccess, "no error"),
	ERR(cudaErrorInvalidValue, "invalid argument"),
	ERR(cudaErrorMemoryAllocation, "out of memory"),
	ERR(cudaErrorInitializationError, "initialization error"),
	ERR(cudaErrorCudartUnloading, "driver shutting down"),
	ERR(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"),
	ERR(cudaErrorInsufficientDriver,
	    "CUDA driver version is insufficient for CUDA runtime version"),
	ERR(cudaErrorNoDevice, "no CUDA-capable device is detected"),
	ERR(cudaErrorInvalidDevice, "invalid device ordinal"),
	ERR(cudaErrorDeviceUninitialized, "invalid device context"),
	ERR(cudaErrorInvalidResourceHandle, "invalid resource handle"),
	ERR(cudaErrorSymbolNotFound, "named symbol not found"),
	ERR(cudaErrorNotReady, "device not ready"),
	ERR(cudaErrorIllegalAddress, "an illegal memory access was encountered"),
	ERR(cudaErrorContextIsDestroyed, "context is destroyed"),
	ERR(cudaErrorNotPermitted, "operation not permitted"),
	ERR(cudaErrorNotSupported, "operation not supported"),
	ERR(cudaErrorInvalidChannelDescriptor, "invalid channel descriptor"),
	ERR(cudaErrorMapBufferObjectFailed, "mapping of buffer object failed"),
	ERR(cudaErrorHostMemoryAlreadyRegistered,
	    "part or all of the requested memory range is already mapped"),
	ERR(cudaErrorHostMemoryNotRegistered,
	    "pointer does not correspond to a registered memory region"),
	ERR(cudaErrorIllegalState, "the operation cannot be performed in the present state"),
	ERR(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"),
	ERR(cudaErrorStreamCaptureInvalidated,
	    "operation failed due to a previous error during capture"),
	ERR(cudaErrorStreamCaptureMerge,
	    "operation would result in a merge of separate capture sequences"),
	ERR(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began"),
	ERR(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work"),
	ERR(cudaErrorStreamCaptureIsolation,
	    "dependency created on uncaptured work in another stream"),
	ERR(cudaErrorStreamCaptureImplicit,
	    "operation would make the legacy stream depend on a capturing blocking stream"),
	ERR(cudaErrorCapturedEvent,
	    "operation not permitted on an event last recorded in a capturing stream"),
	ERR(cudaErrorStreamCaptureWrongThread,
	    "attempt to terminate a thread-local capture sequence from another thread"),
	ERR(cudaErrorInvalidConfiguration, "invalid configuration argument"),
	ERR(cudaErrorMissingConfiguration, "__global__ function call is not configured"),
	ERR(cudaErrorInvalidDeviceFunction, "invalid device function"),
	ERR(cudaErrorInvalidKernelImage, "device kernel image is invalid"),
	ERR(cudaErrorInvalidSymbol, "invalid device symbol"),
	ERR(cudaErrorInvalidPitchValue, "invalid pitch argument"),
	ERR(cudaErrorFileNotFound, "file not found"),
	ERR(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled"),
	ERR(cudaErrorUnknown, "unknown error"),
};

static const struct sim_rt_error *
find_error(cudaError_t code)
{
	for (size_t i = 0; i < sizeof(sim_rt_errors) / sizeof(sim_rt_errors[0]); i++)
		if (sim_rt_errors[i].code == code)
			return &sim_rt_errors[i];
	return NULL;
}

const char *CUDARTAPI
cudaGetErrorString(cudaError_t error)
{
	const struct sim_rt_error *e = find_error(error);

	return e ? e->text : "unrecognized error code";
}

const char *CUDARTAPI
cudaGetErrorName(cudaError_t error)
{
	const struct sim_rt_error *e = find_error(error);

	return e ? e->name : "unrecognized error code";
}
