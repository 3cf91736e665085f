/* Simulated driver: error names and strings, worded as the real driver
 * words them, for the codes the simulator can return and a few more. */
#include "sim-driver.h"

#include <stddef.h>

struct sim_error {
	CUresult code;
	const char *name;
	const char *text;
};

#define ERR(code, text) { code, #code, text }

static const struct sim_error sim_errors[] = {
	ERR(CUDA_SUCCESS, "no error"),
	ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	ERR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	ERR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	ERR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	ERR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
	ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	ERR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	ERR(CUDA_ERROR_NOT_READY, "device not ready"),
	ERR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	ERR(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	ERR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	ERR(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
	ERR(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
	    "part or all of the requested memory range is already mapped"),
	ERR(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
	    "pointer does not correspond to a registered memory region"),
	ERR(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
	    "operation not permitted when stream is capturing"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
	    "operation failed due to a previous error during capture"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_MERGE,
	    "operation would result in a merge of separate capture sequences"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
	    "capture was not ended in the same stream as it began"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
	    "dependency created on uncaptured work in another stream"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
	    "operation would make the legacy stream depend on a capturing blocking stream"),
	ERR(CUDA_ERROR_CAPTURED_EVENT,
	    "operation not permitted on an event last recorded in a capturing stream"),
	ERR(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
	    "attempt to terminate a thread-local capture sequence from another thread"),
	ERR(CUDA_ERROR_UNKNOWN, "unknown error"),
};

static const struct sim_error *
find_error(CUresult code)
{
	for (size_t i = 0; i < sizeof(sim_errors) / sizeof(sim_errors[0]); i++)
		if (sim_errors[i].code == code)
			return &sim_errors[i];
	return NULL;
}

CUresult CUDAAPI
cuGetErrorString(CUresult error, const char **pStr)
{
	const struct sim_error *e = find_error(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->text : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI
cuGetErrorName(CUresult error, const char **pStr)
{
	const struct sim_error *e = find_error(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
