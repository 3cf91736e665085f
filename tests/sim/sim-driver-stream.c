/* Simulated driver: stream priorities, host functions on streams, and
 * access between devices. The simulated device runs work when it is
 * issued, so a priority changes no order: it is kept and reported. A
 * host function (cuLaunchHostFunc, cuStreamAddCallback) runs at once, on
 * the calling thread, after the driver lock is let go (the real driver
 * runs it on a thread of its own once the stream's work before it is
 * done, which here is now). On a stream being captured it becomes a host
 * node that does nothing. */
#include "sim-driver.h"

#include <stdio.h>

static int
clamp_priority(int priority)
{
	if (priority < SIM_STREAM_PRIORITY_GREATEST)
		return SIM_STREAM_PRIORITY_GREATEST;
	return priority > 0 ? 0 : priority;
}

CUresult CUDAAPI
cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	sim_unlock();
	if (rc != CUDA_SUCCESS)
		return rc;
	if (leastPriority)
		*leastPriority = 0;
	if (greatestPriority)
		*greatestPriority = SIM_STREAM_PRIORITY_GREATEST;
	return CUDA_SUCCESS;
}

/* Out-of-range priorities are clamped, as cuda.h says. */
CUresult CUDAAPI
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!phStream || (flags & ~CU_STREAM_NON_BLOCKING)))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_create(phStream, flags, clamp_priority(priority), ctx);
	sim_unlock();
	return rc;
}

/* The default streams have the default priority. */
CUresult CUDAAPI
cuStreamGetPriority(CUstream hStream, int *priority)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !priority)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(hStream, ctx);
	if (rc == CUDA_SUCCESS)
		*priority = hStream == NULL || hStream == CU_STREAM_LEGACY ||
					    hStream == CU_STREAM_PER_THREAD ?
				    0 :
				    hStream->priority;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	return cuStreamGetPriority(sim_stream_per_thread(hStream), priority);
}

/* Lock taken and let go: whether the host function is to run now. */
static CUresult
host_work(CUstream stream, bool *run)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	*run = false;
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream)))
		rc = sim_capture_noop(c, CU_GRAPH_NODE_TYPE_HOST);
	else if (rc == CUDA_SUCCESS)
		*run = true;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	bool run;
	CUresult rc = fn ? host_work(hStream, &run) : CUDA_ERROR_INVALID_VALUE;

	if (rc == CUDA_SUCCESS && run)
		fn(userData);
	return rc;
}

CUresult CUDAAPI
cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return cuLaunchHostFunc(sim_stream_per_thread(hStream), fn, userData);
}

/* The callback is told the stream's status: its work never fails here. A
 * stream callback cannot be captured (cuda.h), so a capture refuses it. */
CUresult CUDAAPI
cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
		    unsigned int flags)
{
	enum CUstreamCaptureStatus_enum status = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult rc;

	if (!callback || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	rc = cuStreamIsCapturing(hStream, &status);
	if (rc == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (rc == CUDA_SUCCESS)
		callback(hStream, CUDA_SUCCESS, userData);
	return rc;
}

CUresult CUDAAPI
cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
			 unsigned int flags)
{
	return cuStreamAddCallback(sim_stream_per_thread(hStream), callback, userData, flags);
}

/* ---- devices and their peers ---- */

/* Every simulated device's memory lives in this process: any two can
 * reach each other's. */
CUresult CUDAAPI
cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!canAccessPeer)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev) || !sim_device_get(peerDev))
		return CUDA_ERROR_INVALID_DEVICE;
	*canAccessPeer = dev != peerDev;
	return CUDA_SUCCESS;
}

/* Access from the current context to the memory of peerContext's
 * device: recorded once, as the real driver does. */
CUresult CUDAAPI
cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
	CUcontext ctx;
	uint64_t bit;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && Flags != 0)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !sim_ctx_alive(peerContext))
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS && peerContext->device == ctx->device)
		rc = CUDA_ERROR_INVALID_DEVICE;
	bit = rc == CUDA_SUCCESS ? (uint64_t)1 << (peerContext->device % 64) : 0;
	if (rc == CUDA_SUCCESS && (ctx->peers & bit))
		rc = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	if (rc == CUDA_SUCCESS)
		ctx->peers |= bit;
	sim_unlock();
	return rc;
}

/* The PCI address that the device attributes give: domain 0, bus the
 * ordinal plus one, device 0 (sim-driver.c). */
CUresult CUDAAPI
cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(pciBusId, (size_t)len, "00000000:%02X:00.0", (unsigned)(dev + 1) & 0xff);
	return CUDA_SUCCESS;
}
