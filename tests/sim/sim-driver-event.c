/* Simulated driver: events. Work completes when it is issued, so an event
 * recorded outside a stream capture is complete at once: queries and
 * synchronisations succeed, and a stream that waits on it has nothing to
 * wait for. An event recorded on a stream that is being captured stands
 * for nodes of the capture's graph instead, and waiting on it is how
 * other streams join the capture (sim-driver-capture.c).
 *
 * Timing: the simulated device has a clock that advances by one
 * microsecond at every record outside a capture, so the time between two
 * records is deterministic: 0.001 ms times the records made from the
 * first to the second. */
#include "sim-driver.h"

#include <stdlib.h>

/* Microseconds, advanced by each record (under the driver lock). */
static unsigned long long sim_event_clock;

bool
sim_event_alive(CUevent ev)
{
	const struct sim_block *b;

	if (!ev)
		return false;
	b = sim_blockmap_find(&sim_drv.events, (uintptr_t)ev);
	return b && b->kind == SIM_KIND_EVENT;
}

static void
forget_capture(CUevent ev)
{
	free(ev->deps);
	ev->deps = NULL;
	ev->ndeps = 0;
}

/* Lock held: the event stands for the nodes deps of the capture. */
CUresult
sim_event_capture(CUevent ev, cuuint64_t capture, const CUgraphNode *deps, size_t ndeps)
{
	CUgraphNode *copy = NULL;

	if (ndeps && !(copy = malloc(ndeps * sizeof(*copy))))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < ndeps; i++)
		copy[i] = deps[i];
	forget_capture(ev);
	ev->state = SIM_EVENT_CAPTURED;
	ev->capture = capture;
	ev->deps = copy;
	ev->ndeps = ndeps;
	return CUDA_SUCCESS;
}

static void
record_done(CUevent ev)
{
	forget_capture(ev);
	ev->state = SIM_EVENT_DONE;
	ev->tick = ++sim_event_clock;
}

/* Lock held: a launch ran an event-record node of ev (recorded with
 * CU_EVENT_RECORD_EXTERNAL during a capture). The event may be gone. */
void
sim_event_ran(CUevent ev)
{
	if (sim_event_alive(ev))
		record_done(ev);
}

static void
event_delete(CUevent ev)
{
	sim_blockmap_remove(&sim_drv.events, (uintptr_t)ev, NULL);
	forget_capture(ev);
	free(ev);
}

/* Lock held: the events of a context that is being destroyed. */
void
sim_events_release_owner(uint32_t owner)
{
	uintptr_t *handles;
	size_t n = sim_blockmap_owned(&sim_drv.events, owner, &handles);

	for (size_t i = 0; i < n; i++)
		event_delete((CUevent)handles[i]);
	free(handles);
}

/* INTERPROCESS only with DISABLE_TIMING, as cuda.h says. */
static bool
create_flags_ok(unsigned int flags)
{
	const unsigned int known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
				   CU_EVENT_INTERPROCESS;

	if (flags & ~known)
		return false;
	return !(flags & CU_EVENT_INTERPROCESS) || (flags & CU_EVENT_DISABLE_TIMING);
}

static CUresult
event_create(CUevent *out, unsigned int flags, CUcontext ctx)
{
	CUevent ev = calloc(1, sizeof(*ev));
	struct sim_block b = { .owner = ctx->id, .kind = SIM_KIND_EVENT };

	if (!ev)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ev = (struct CUevent_st){ .owner = ctx->id, .device = ctx->device, .flags = flags };
	b.addr = (uintptr_t)ev;
	if (!sim_blockmap_insert(&sim_drv.events, &b)) {
		free(ev);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = ev;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!phEvent || !create_flags_ok(Flags)))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = event_create(phEvent, Flags, ctx);
	sim_unlock();
	return rc;
}

/* An event may be destroyed at any time, captured or not; graph nodes
 * that name it then record nothing. */
CUresult CUDAAPI
cuEventDestroy_v2(CUevent hEvent)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (sim_event_alive(hEvent))
		event_delete(hEvent);
	else
		rc = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return rc;
}

/* The CUDA 2.0 ABI, still exported. */
CUresult CUDAAPI
cuEventDestroy(CUevent hEvent)
{
	return cuEventDestroy_v2(hEvent);
}

/* The event and the stream must belong to the same context. On a stream
 * being captured, the capture decides (sim_capture_record). */
static CUresult
record(CUevent ev, CUstream stream, unsigned int flags)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !sim_event_alive(ev))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && ev->owner != ctx->id)
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS && (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream)))
		rc = sim_capture_record(c, ev, flags & CU_EVENT_RECORD_EXTERNAL);
	else if (rc == CUDA_SUCCESS && (flags & CU_EVENT_RECORD_EXTERNAL))
		rc = CUDA_ERROR_INVALID_VALUE; /* only valid during a capture */
	else if (rc == CUDA_SUCCESS)
		record_done(ev);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return record(hEvent, hStream, CU_EVENT_RECORD_DEFAULT);
}

CUresult CUDAAPI
cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return record(hEvent, sim_stream_per_thread(hStream), CU_EVENT_RECORD_DEFAULT);
}

CUresult CUDAAPI
cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	return record(hEvent, hStream, flags);
}

CUresult CUDAAPI
cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	return record(hEvent, sim_stream_per_thread(hStream), flags);
}

/* Query and synchronize: everything recorded is complete, but an event
 * of a capture in progress is not work at all (CUDA_ERROR_CAPTURED_EVENT,
 * and the capture is invalidated). A synchronisation lets the device's
 * pools give back what exceeds their release threshold, as the stream
 * and context ones do. */
static CUresult
complete(CUevent ev, bool synchronize)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	rc = sim_event_alive(ev) ? sim_capture_event_use(ev) : CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS && synchronize)
		sim_pools_synchronize(ev->device);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuEventQuery(CUevent hEvent)
{
	return complete(hEvent, false);
}

CUresult CUDAAPI
cuEventSynchronize(CUevent hEvent)
{
	return complete(hEvent, true);
}

/* Lock held: the time between two completed records; cuda.h's errors for
 * an event never recorded or made without timing. A captured event whose
 * capture has ended counts as never recorded. */
static CUresult
elapsed(float *ms, CUevent start, CUevent end)
{
	CUresult rc;

	if (!sim_event_alive(start) || !sim_event_alive(end))
		return CUDA_ERROR_INVALID_HANDLE;
	rc = sim_capture_event_use(start);
	if (rc == CUDA_SUCCESS)
		rc = sim_capture_event_use(end);
	if (rc != CUDA_SUCCESS)
		return rc;
	if (start->state != SIM_EVENT_DONE || end->state != SIM_EVENT_DONE ||
	    ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((double)end->tick - (double)start->tick) / 1000.0f;
	return CUDA_SUCCESS;
}

/* The CUDA 12.8 ABI; the older one below behaves the same here. */
CUresult CUDAAPI
cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = elapsed(pMilliseconds, hStart, hEnd);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* The event may be of another context. Whether the wait joins a capture,
 * extends one, or does nothing is the capture's business. */
static CUresult
wait_event(CUstream stream, CUevent ev, unsigned int flags)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && !sim_event_alive(ev))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS && (flags & ~(unsigned int)CU_EVENT_WAIT_EXTERNAL))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = sim_capture_wait(stream, sim_capture_of(stream), ev,
				      flags & CU_EVENT_WAIT_EXTERNAL);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return wait_event(hStream, hEvent, Flags);
}

CUresult CUDAAPI
cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return wait_event(sim_stream_per_thread(hStream), hEvent, Flags);
}
