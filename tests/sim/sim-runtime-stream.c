/* Simulated runtime: stream priorities, host work on streams, and access
 * between devices. Each call passes through to the driver's
 * (sim-driver-stream.c): host functions run when issued, on the calling
 * thread, since the simulated device completes work when it is issued. */
#include "sim-runtime.h"

#include <cuda_profiler_api.h>
#include <stdint.h>

cudaError_t CUDARTAPI
cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_priority_range(leastPriority, greatestPriority));
}

cudaError_t CUDARTAPI
cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	SIM_RT_ENTER();
	if (!pStream || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return sim_rt_fail(cudaErrorInvalidValue);
	return sim_rt_check(sim_rt_drv.stream_create_with_priority(pStream, flags, priority));
}

cudaError_t CUDARTAPI
cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_get_priority(hStream, priority));
}

cudaError_t CUDARTAPI
cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.launch_host_func(stream, fn, userData));
}

/* The runtime's callback takes a cudaError_t where the driver's takes a
 * CUresult: the status is always success here, 0 in both. */
cudaError_t CUDARTAPI
cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
		      unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_add_callback(stream, (CUstreamCallback)callback,
							   userData, flags));
}

cudaError_t CUDARTAPI
cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err == cudaSuccess)
		err = sim_rt_check_device(peerDevice);
	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_can_access_peer(canAccessPeer, device, peerDevice));
}

/* The current device's primary context gets access to the peer's. */
cudaError_t CUDARTAPI
cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
	CUcontext peer;
	cudaError_t err = sim_rt_check_device(peerDevice);

	if (err == cudaSuccess)
		err = sim_rt_enter();
	if (err == cudaSuccess)
		err = sim_rt_primary_context(peerDevice, &peer);
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.ctx_enable_peer_access(peer, flags));
}

cudaError_t CUDARTAPI
cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	return sim_rt_check(sim_rt_drv.device_get_pci_bus_id(pciBusId, len, device));
}

cudaError_t CUDARTAPI
cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
		    cudaStream_t stream)
{
	CUcontext dctx, sctx;
	cudaError_t err = sim_rt_enter();

	if (err == cudaSuccess)
		err = sim_rt_check_device(dstDevice);
	if (err == cudaSuccess)
		err = sim_rt_check_device(srcDevice);
	if (err == cudaSuccess)
		err = sim_rt_primary_context(dstDevice, &dctx);
	if (err == cudaSuccess)
		err = sim_rt_primary_context(srcDevice, &sctx);
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.memcpy_peer_async((CUdeviceptr)(uintptr_t)dst, dctx,
							 (CUdeviceptr)(uintptr_t)src, sctx, count,
							 stream));
}

/* No profiler is attached to the simulated device: nothing to start. */
cudaError_t CUDARTAPI
cudaProfilerStart(void)
{
	SIM_RT_ENTER();
	return cudaSuccess;
}

cudaError_t CUDARTAPI
cudaProfilerStop(void)
{
	SIM_RT_ENTER();
	return cudaSuccess;
}
