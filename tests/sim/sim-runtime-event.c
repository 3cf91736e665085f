/* Simulated runtime: events, and the stream calls that go with them. The
 * runtime's cudaEvent_t is the driver's CUevent and the event flags have
 * the driver's values, so the calls pass straight through; the model,
 * captures across streams included, is the driver's (sim-driver-event.c,
 * sim-driver-capture.c). */
#include "sim-runtime.h"

#include <string.h>

cudaError_t CUDARTAPI
cudaEventCreate(cudaEvent_t *event)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_create(event, cudaEventDefault));
}

cudaError_t CUDARTAPI
cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_create(event, flags));
}

cudaError_t CUDARTAPI
cudaEventDestroy(cudaEvent_t event)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_destroy(event));
}

cudaError_t CUDARTAPI
cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_record(event, stream));
}

cudaError_t CUDARTAPI
cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_record_ptsz(event, stream));
}

cudaError_t CUDARTAPI
cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_record_with_flags(event, stream, flags));
}

cudaError_t CUDARTAPI
cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_record_with_flags_ptsz(event, stream, flags));
}

cudaError_t CUDARTAPI
cudaEventQuery(cudaEvent_t event)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_query(event));
}

cudaError_t CUDARTAPI
cudaEventSynchronize(cudaEvent_t event)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_synchronize(event));
}

/* CUDA 13's header names the CUDA 12.8 ABI cudaEventElapsedTime; it is the
 * driver's newest one. */
cudaError_t CUDARTAPI
cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.event_elapsed_time(ms, start, end));
}

cudaError_t CUDARTAPI
cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_wait_event(stream, event, flags));
}

cudaError_t CUDARTAPI
cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_wait_event_ptsz(stream, event, flags));
}

cudaError_t CUDARTAPI
cudaStreamQuery(cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_query(stream));
}

cudaError_t CUDARTAPI
cudaStreamQuery_ptsz(cudaStream_t stream)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.stream_query_ptsz(stream));
}

/* IPC events are not simulated (the device reports
 * cudaDevAttrIpcEventSupport 0): the driver says cudaErrorNotSupported. */
cudaError_t CUDARTAPI
cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
	SIM_RT_ENTER();
	return sim_rt_check(sim_rt_drv.ipc_get_event_handle((CUipcEventHandle *)handle, event));
}

cudaError_t CUDARTAPI
cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
	CUipcEventHandle h;

	SIM_RT_ENTER();
	memcpy(&h, &handle, sizeof(h));
	return sim_rt_check(sim_rt_drv.ipc_open_event_handle(event, h));
}
