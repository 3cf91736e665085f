/* Simulated driver: contexts and streams. Minimal but real-shaped: one
 * current context per thread (with a plain stack under it for
 * cuCtxPushCurrent and cuCtxPopCurrent), primary contexts that are
 * reference counted, and memory, pinned memory and streams owned by the
 * context they were made in and freed with it. */
#include "sim-driver.h"

#include <stdlib.h>

static __thread CUcontext sim_current;

/* Lock held. */
bool
sim_ctx_alive(CUcontext ctx)
{
	return ctx && sim_blockmap_find(&sim_drv.contexts, (uintptr_t)ctx);
}

/* The calling thread's context, which every memory and stream call needs.
 * Lock held. */
CUresult
sim_ctx_enter(CUcontext *ctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!sim_ctx_alive(sim_current))
		return CUDA_ERROR_INVALID_CONTEXT;
	*ctx = sim_current;
	return CUDA_SUCCESS;
}

/* A fresh id per (re)creation, so that a primary context that is released
 * and retained again owns nothing of its previous life. */
static bool
ctx_register(CUcontext ctx)
{
	struct sim_block b = { .addr = (uintptr_t)ctx, .kind = SIM_KIND_CONTEXT };

	b.owner = ctx->id = sim_drv.next_id++;
	ctx->peers = 0;
	return sim_blockmap_insert(&sim_drv.contexts, &b);
}

static void
streams_release_owner(uint32_t owner)
{
	uintptr_t *handles;
	size_t n = sim_blockmap_owned(&sim_drv.streams, owner, &handles);

	for (size_t i = 0; i < n; i++) {
		sim_captures_release_stream((CUstream)handles[i]);
		sim_blockmap_remove(&sim_drv.streams, handles[i], NULL);
		free((void *)handles[i]);
	}
	free(handles);
}

/* Destroying a context frees everything made in it, as on a real device:
 * this is what cudaDeviceReset does to a process's allocations (pool
 * blocks, pools, arrays, imported IPC memory, executable graphs and live
 * graph allocations included, and its streams, events, modules and
 * functions; physical memory from cuMemCreate is the process's and
 * stays, and so do graphs and libraries). A primary context stays
 * current where it was (inactive until retained again), as on the real
 * driver. */
static void
ctx_teardown(CUcontext ctx)
{
	sim_graph_execs_release_owner(ctx->id);
	sim_graph_mem_release_owner(ctx);
	sim_arrays_release_owner(ctx->id);
	sim_pools_release_owner(ctx);
	sim_ipc_release_owner(ctx->id);
	sim_arena_release_owner(&sim_drv.dev[ctx->device].arena, ctx->id);
	sim_pinned_release_owner(ctx->id);
	streams_release_owner(ctx->id);
	sim_events_release_owner(ctx->id);
	sim_modules_release_owner(ctx->id);
	sim_blockmap_remove(&sim_drv.contexts, (uintptr_t)ctx, NULL);
}

static CUresult
primary_retain(CUcontext *pctx, CUdevice dev)
{
	struct sim_device *d = sim_device_get(dev);

	if (!d)
		return CUDA_ERROR_INVALID_DEVICE;
	if (d->primary.retains == 0 && !ctx_register(&d->primary))
		return CUDA_ERROR_OUT_OF_MEMORY;
	d->primary.retains++;
	*pctx = &d->primary;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = primary_retain(pctx, dev);
	sim_unlock();
	return rc;
}

static CUresult
primary_release(CUdevice dev)
{
	struct sim_device *d = sim_device_get(dev);

	if (!d)
		return CUDA_ERROR_INVALID_DEVICE;
	if (d->primary.retains == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--d->primary.retains == 0)
		ctx_teardown(&d->primary);
	return CUDA_SUCCESS;
}

/* Active while retained; the flags (scheduling, host mapping) are never
 * set on the simulated device. */
CUresult CUDAAPI
cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	struct sim_device *d;
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	d = sim_device_get(dev);
	if (d) {
		*flags = 0;
		*active = d->primary.retains > 0;
	}
	sim_unlock();
	return d ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	rc = primary_release(dev);
	sim_unlock();
	return rc;
}

static CUresult
ctx_create(CUcontext *pctx, CUdevice dev)
{
	CUcontext ctx;

	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->device = dev;
	if (!ctx_register(ctx)) {
		free(ctx);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	sim_current = *pctx = ctx;
	return CUDA_SUCCESS;
}

/* Creation parameters (execution affinity, CIG) and flags are accepted and
 * ignored: the simulated device has nothing they could change. */
CUresult CUDAAPI
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
	       unsigned int flags, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = ctx_create(pctx, dev);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!sim_ctx_alive(ctx) || ctx->primary) {
		rc = CUDA_ERROR_INVALID_CONTEXT;
	} else {
		ctx_teardown(ctx);
		if (sim_current == ctx)
			sim_current = NULL;
		free(ctx);
	}
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = sim_current;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuCtxSetCurrent(CUcontext ctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (ctx && !sim_ctx_alive(ctx))
		rc = CUDA_ERROR_INVALID_CONTEXT;
	else
		sim_current = ctx;
	sim_unlock();
	return rc;
}

/* A context stack of its own per thread, under the current context:
 * push makes a context current and keeps the one before; pop gives it
 * back. (cuCtxSetCurrent replaces the current one, the stack's top.) */
#define SIM_CTX_STACK 32
static __thread CUcontext sim_ctx_stack[SIM_CTX_STACK];
static __thread unsigned sim_ctx_depth;

CUresult CUDAAPI
cuCtxPushCurrent_v2(CUcontext ctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!sim_ctx_alive(ctx))
		rc = CUDA_ERROR_INVALID_CONTEXT;
	else if (sim_ctx_depth == SIM_CTX_STACK)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS) {
		sim_ctx_stack[sim_ctx_depth++] = sim_current;
		sim_current = ctx;
	}
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!sim_current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = sim_current;
	sim_current = sim_ctx_depth ? sim_ctx_stack[--sim_ctx_depth] : NULL;
	return CUDA_SUCCESS;
}

/* The context named, or the current one for NULL (the CUDA 13 _v2 ABIs). */
static CUresult
ctx_resolve(CUcontext ctx, CUcontext *out)
{
	if (sim_ready() != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return sim_ctx_enter(out);
	if (!sim_ctx_alive(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = ctx_resolve(ctx, &ctx);
	if (rc == CUDA_SUCCESS)
		*device = ctx->device;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuCtxGetDevice(CUdevice *device)
{
	return cuCtxGetDevice_v2(device, NULL);
}

/* Work on the simulated device completes when it is issued; what a
 * synchronisation still does is let the device's pools give memory over
 * their release threshold back (sim-driver-pool.c). It is a potentially
 * unsafe call during stream capture (sim-driver-capture.c). */
CUresult CUDAAPI
cuCtxSynchronize_v2(CUcontext ctx)
{
	CUresult rc;

	sim_lock();
	rc = ctx_resolve(ctx, &ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_capture_unsafe_call();
	if (rc == CUDA_SUCCESS)
		sim_pools_synchronize(ctx->device);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuCtxSynchronize(void)
{
	return cuCtxSynchronize_v2(NULL);
}

static bool
is_builtin_stream(CUstream s)
{
	return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* The stream a per-thread-default-stream ABI (_ptsz, _ptds) means: there
 * the NULL stream is the thread's own. */
CUstream
sim_stream_per_thread(CUstream stream)
{
	return stream ? stream : CU_STREAM_PER_THREAD;
}

/* Streams are valid in the context that made them. Lock held. */
CUresult
sim_stream_check(CUstream stream, CUcontext ctx)
{
	const struct sim_block *b;

	if (is_builtin_stream(stream))
		return CUDA_SUCCESS;
	b = sim_blockmap_find(&sim_drv.streams, (uintptr_t)stream);
	if (!b || b->owner != ctx->id)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* Lock held; priority already clamped (sim-driver-stream.c). */
CUresult
sim_stream_create(CUstream *phStream, unsigned int flags, int priority, CUcontext ctx)
{
	CUstream s = calloc(1, sizeof(*s));
	struct sim_block b = { .owner = ctx->id, .kind = SIM_KIND_STREAM };

	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*s = (struct CUstream_st){
		.owner = ctx->id, .device = ctx->device, .flags = flags, .priority = priority
	};
	b.addr = (uintptr_t)s;
	if (!sim_blockmap_insert(&sim_drv.streams, &b)) {
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*phStream = s;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!phStream || (Flags & ~CU_STREAM_NON_BLOCKING)))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_create(phStream, Flags, 0, ctx);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamDestroy_v2(CUstream hStream)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && is_builtin_stream(hStream))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(hStream, ctx);
	if (rc == CUDA_SUCCESS) {
		sim_captures_release_stream(hStream);
		sim_blockmap_remove(&sim_drv.streams, (uintptr_t)hStream, NULL);
		free(hStream);
	}
	sim_unlock();
	return rc;
}

/* Synchronising a stream that is being captured invalidates the capture. */
CUresult CUDAAPI
cuStreamSynchronize(CUstream hStream)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(hStream, ctx);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(hStream))) {
		sim_capture_invalidate(c);
		rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (rc == CUDA_SUCCESS)
		sim_pools_synchronize(ctx->device);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamSynchronize_ptsz(CUstream hStream)
{
	return cuStreamSynchronize(sim_stream_per_thread(hStream));
}

/* Everything issued is complete. Querying a stream that is being
 * captured invalidates the capture, as synchronising it does. */
CUresult CUDAAPI
cuStreamQuery(CUstream hStream)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(hStream, ctx);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(hStream))) {
		sim_capture_invalidate(c);
		rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuStreamQuery_ptsz(CUstream hStream)
{
	return cuStreamQuery(sim_stream_per_thread(hStream));
}
