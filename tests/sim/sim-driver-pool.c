/* Simulated driver: stream-ordered allocation and memory pools.
 *
 * The model, kept simple on purpose (tests/sim/README.md says the same):
 *  - A pool reserves device memory in chunks: SIM_GRANULARITY (2 MiB), or
 *    a request's size rounded up to 2 MiB when it is larger. A chunk
 *    counts as used on the device (cuMemGetInfo) from the moment the pool
 *    reserves it.
 *  - Blocks are carved from the chunks first fit, in 512-byte granules as
 *    cuMemAlloc charges; a pool's "used" is the sum of its live blocks.
 *  - Freeing a block gives it back to the pool, not to the device. A chunk
 *    with no live block goes back to the device only when cuMemPoolTrimTo
 *    asks for it, or when a synchronisation (cuStreamSynchronize,
 *    cuCtxSynchronize) finds the pool holding more than its release
 *    threshold (default 0: everything free goes back at the next
 *    synchronisation, as with real CUDA). So a pool's reserved size can
 *    exceed its used size, and the device shows the difference as used.
 *  - Work completes when it is issued, so a block freed on one stream can
 *    be reused at once from any stream; the reuse policies are stored and
 *    reported but change nothing.
 *  - When a pool cannot grow, it gives its own free chunks back and tries
 *    once more before failing with CUDA_ERROR_OUT_OF_MEMORY; other pools
 *    keep what they hold, so cuMemAlloc can fail while a pool sits on
 *    free memory, as on a real device.
 * cuMemAllocAsync uses the current pool of the context's device (its
 * default pool unless cuDeviceSetMemPool changed it). */
#include "sim-driver.h"

#include <stdlib.h>

/* Every pool, default ones included; under the driver lock. */
static CUmemoryPool sim_pools;

static size_t
chunk_size(size_t bytes)
{
	if (bytes > SIZE_MAX - (SIM_GRANULARITY - 1))
		return 0;
	return (bytes + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
}

static struct sim_arena *
device_arena(CUmemoryPool pool)
{
	return &sim_drv.dev[pool->device].arena;
}

static bool
is_default(CUmemoryPool pool)
{
	return pool == &sim_drv.dev[pool->device].default_pool;
}

static size_t
pool_used(CUmemoryPool pool)
{
	size_t used = 0;

	for (struct sim_pool_chunk *c = pool->chunks; c; c = c->next)
		used += c->blocks.used;
	return used;
}

void
sim_pool_init_default(CUmemoryPool pool, CUdevice dev)
{
	*pool = (struct CUmemPoolHandle_st){ .device = dev, .reuse = { 1, 1, 1 } };
	pool->next = sim_pools;
	sim_pools = pool;
}

static bool
pool_alive(CUmemoryPool pool)
{
	for (CUmemoryPool p = sim_pools; p; p = p->next)
		if (p == pool)
			return !p->destroyed;
	return false;
}

/* Reserve a chunk that holds bytes, kept in address order. */
static struct sim_pool_chunk *
chunk_add(CUmemoryPool pool, size_t bytes)
{
	size_t len = chunk_size(bytes);
	size_t limit = pool->max_size ? pool->max_size : SIZE_MAX;
	struct sim_pool_chunk *c, **at;
	uintptr_t base;

	if (len == 0 || pool->reserved > limit || len > limit - pool->reserved)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (!sim_arena_alloc(device_arena(pool), len, 0, SIM_KIND_POOL_CHUNK, &base)) {
		free(c);
		return NULL;
	}
	if (!sim_arena_init(&c->blocks, base, len)) {
		sim_arena_free(device_arena(pool), base);
		free(c);
		return NULL;
	}
	for (at = &pool->chunks; *at && (*at)->blocks.base < base; at = &(*at)->next)
		;
	c->next = *at;
	*at = c;
	pool->reserved += len;
	if (pool->reserved > pool->reserved_high)
		pool->reserved_high = pool->reserved;
	return c;
}

static void
chunk_release(CUmemoryPool pool, struct sim_pool_chunk **at)
{
	struct sim_pool_chunk *c = *at;

	*at = c->next;
	pool->reserved -= c->blocks.size;
	sim_arena_free(device_arena(pool), c->blocks.base);
	sim_arena_fini(&c->blocks);
	free(c);
}

/* Give chunks without live blocks back to the device, lowest address
 * first, until the pool holds at most keep bytes. */
static void
trim(CUmemoryPool pool, size_t keep)
{
	struct sim_pool_chunk **at = &pool->chunks;

	while (*at && pool->reserved > keep) {
		if ((*at)->blocks.used == 0)
			chunk_release(pool, at);
		else
			at = &(*at)->next;
	}
}

static void
pool_delete(CUmemoryPool pool)
{
	CUmemoryPool *at;

	trim(pool, 0);
	for (at = &sim_pools; *at != pool; at = &(*at)->next)
		;
	*at = pool->next;
	free(pool);
}

/* Destroyed with blocks still live, a pool lingers (invisible) until the
 * last one is freed, as the real cuMemPoolDestroy documents. */
static void
pool_destroy(CUmemoryPool pool)
{
	struct sim_device *d = &sim_drv.dev[pool->device];

	if (d->current_pool == pool)
		d->current_pool = &d->default_pool;
	pool->destroyed = true;
	if (pool_used(pool) == 0)
		pool_delete(pool);
	else
		trim(pool, 0);
}

static bool
carve(CUmemoryPool pool, size_t bytes, uint32_t owner, uintptr_t *addr)
{
	for (struct sim_pool_chunk *c = pool->chunks; c; c = c->next)
		if (sim_arena_alloc(&c->blocks, bytes, owner, SIM_KIND_POOL_ALLOC, addr))
			return true;
	return false;
}

/* Lock held. owner: the id of the allocating context. */
CUresult
sim_pool_alloc(CUmemoryPool pool, size_t bytes, uint32_t owner, CUdeviceptr *dptr)
{
	struct sim_pool_chunk *c;
	uintptr_t addr;
	size_t used;

	if (!carve(pool, bytes, owner, &addr)) {
		c = chunk_add(pool, bytes);
		if (!c) {
			trim(pool, 0);
			c = chunk_add(pool, bytes);
		}
		if (!c || !sim_arena_alloc(&c->blocks, bytes, owner, SIM_KIND_POOL_ALLOC, &addr))
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	used = pool_used(pool);
	if (used > pool->used_high)
		pool->used_high = used;
	*dptr = (CUdeviceptr)addr;
	return CUDA_SUCCESS;
}

/* The chunk, of any pool, that holds addr. */
static struct sim_pool_chunk *
chunk_of(uintptr_t addr, CUmemoryPool *pool)
{
	for (CUmemoryPool p = sim_pools; p; p = p->next)
		for (struct sim_pool_chunk *c = p->chunks; c; c = c->next)
			if (sim_arena_contains(&c->blocks, addr, 1)) {
				*pool = p;
				return c;
			}
	return NULL;
}

/* Lock held: the live pool block that holds addr, or NULL. */
const struct sim_block *
sim_pool_block(uintptr_t addr)
{
	CUmemoryPool pool = NULL;
	struct sim_pool_chunk *c = chunk_of(addr, &pool);

	return c ? sim_blockmap_overlap(&c->blocks.live, addr, 1) : NULL;
}

/* Lock held. False when addr is not a live block of a pool. */
bool
sim_pool_free(uintptr_t addr)
{
	CUmemoryPool pool = NULL;
	struct sim_pool_chunk *c = chunk_of(addr, &pool);

	if (!c || !sim_arena_free(&c->blocks, addr))
		return false;
	if (pool->destroyed && pool_used(pool) == 0)
		pool_delete(pool);
	return true;
}

/* Lock held: a synchronisation on the device. */
void
sim_pools_synchronize(CUdevice dev)
{
	for (CUmemoryPool p = sim_pools; p; p = p->next)
		if (p->device == dev && p->reserved > p->release_threshold)
			trim(p, (size_t)p->release_threshold);
}

/* Lock held: the context is being destroyed. Its blocks in every pool are
 * freed, the pools it created are destroyed, and the pools of its device
 * give their free chunks back. */
void
sim_pools_release_owner(CUcontext ctx)
{
	CUmemoryPool p, next;

	for (p = sim_pools; p; p = p->next)
		for (struct sim_pool_chunk *c = p->chunks; c; c = c->next)
			sim_arena_release_owner(&c->blocks, ctx->id);
	for (p = sim_pools; p; p = next) {
		next = p->next;
		if (!is_default(p) && (p->owner == ctx->id || p->destroyed))
			pool_destroy(p);
		else if (p->device == ctx->device)
			trim(p, 0);
	}
}

CUresult CUDAAPI
cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	CUresult rc = sim_ready();
	struct sim_device *d;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	d = sim_device_get(dev);
	if (!d)
		return CUDA_ERROR_INVALID_DEVICE;
	*pool_out = &d->default_pool;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult rc = sim_ready();
	struct sim_device *d;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	d = sim_device_get(dev);
	if (!d)
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	*pool = d->current_pool;
	sim_unlock();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	CUresult rc = sim_ready();
	struct sim_device *d;

	if (rc != CUDA_SUCCESS)
		return rc;
	d = sim_device_get(dev);
	if (!d)
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	if (pool_alive(pool) && pool->device == dev)
		d->current_pool = pool;
	else
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

static bool
props_ok(const CUmemPoolProps *props)
{
	const unsigned known = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;

	return props && props->allocType == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       props->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       sim_device_get(props->location.id) && !(props->handleTypes & ~known);
}

/* A pool made while a context is current belongs to it: destroying the
 * context (cudaDeviceReset) destroys the pool. */
CUresult CUDAAPI
cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	CUresult rc = sim_ready();
	CUmemoryPool p;
	CUcontext ctx;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pool || !props_ok(poolProps))
		return CUDA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = (struct CUmemPoolHandle_st){ .device = poolProps->location.id,
					  .max_size = poolProps->maxSize,
					  .reuse = { 1, 1, 1 } };
	sim_lock();
	if (sim_ctx_enter(&ctx) == CUDA_SUCCESS)
		p->owner = ctx->id;
	p->next = sim_pools;
	sim_pools = p;
	sim_unlock();
	*pool = p;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!pool_alive(pool) || is_default(pool))
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		pool_destroy(pool);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!pool_alive(pool))
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		trim(pool, minBytesToKeep);
	sim_unlock();
	return rc;
}

/* Lock held, pool alive. The REUSE_* attributes are int, the others
 * cuuint64_t, as cuda.h documents. */
static CUresult
get_attribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	cuuint64_t v;

	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: v = pool->release_threshold; break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: v = pool->reserved; break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: v = pool->reserved_high; break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: v = pool_used(pool); break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH: v = pool->used_high; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	*(cuuint64_t *)value = v;
	return CUDA_SUCCESS;
}

/* The high-water marks can only be reset (to the current value), by
 * setting them to 0. */
static CUresult
set_attribute(CUmemoryPool pool, CUmemPool_attribute attr, const void *value)
{
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
			*(const int *)value != 0;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		pool->release_threshold = *(const cuuint64_t *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		if (*(const cuuint64_t *)value != 0)
			return CUDA_ERROR_INVALID_VALUE;
		pool->reserved_high = pool->reserved;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(const cuuint64_t *)value != 0)
			return CUDA_ERROR_INVALID_VALUE;
		pool->used_high = pool_used(pool);
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI
cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = pool_alive(pool) ? get_attribute(pool, attr, value) : CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = pool_alive(pool) ? set_attribute(pool, attr, value) : CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Access from other devices: checked and accepted. Every simulated
 * device reaches every pool's memory already (cuDeviceCanAccessPeer); the
 * pool's own device always has read-write access, which cannot be taken
 * away. */
static CUresult
access_ok(CUmemoryPool pool, const CUmemAccessDesc *desc)
{
	if (desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    !sim_device_get(desc->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	if (desc->flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
	    desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
	    desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
		return CUDA_ERROR_INVALID_VALUE;
	if (desc->location.id == pool->device && desc->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (count && !map)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = pool_alive(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++)
		rc = access_ok(pool, &map[i]);
	sim_unlock();
	return rc;
}

/* One path for every stream-ordered allocation; without from_pool, the
 * current pool of the context's device. On a stream being captured, an
 * alloc node of the capture's graph instead: the pool only names the
 * device (sim-driver-graph.c). */
static CUresult
alloc_async(CUdeviceptr *dptr, size_t bytes, bool from_pool, CUmemoryPool pool,
	    CUstream stream)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!dptr || bytes == 0))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && !from_pool)
		pool = sim_drv.dev[ctx->device].current_pool;
	if (rc == CUDA_SUCCESS && !pool_alive(pool))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream)))
		rc = sim_capture_alloc(c, pool, bytes, dptr);
	else if (rc == CUDA_SUCCESS)
		rc = sim_pool_alloc(pool, bytes, ctx->id, dptr);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_async(dptr, bytesize, false, NULL, hStream);
}

CUresult CUDAAPI
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_async(dptr, bytesize, false, NULL, sim_stream_per_thread(hStream));
}

CUresult CUDAAPI
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
	return alloc_async(dptr, bytesize, true, pool, hStream);
}

CUresult CUDAAPI
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
			     CUstream hStream)
{
	return alloc_async(dptr, bytesize, true, pool, sim_stream_per_thread(hStream));
}

/* Frees of pool blocks, cuMemAlloc memory and live graph allocations
 * alike, as on the real driver; the block is free when the call returns.
 * On a stream being captured, a free node instead (sim_mem_free). */
CUresult CUDAAPI
cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return sim_mem_free(dptr, hStream);
}

CUresult CUDAAPI
cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return sim_mem_free(dptr, sim_stream_per_thread(hStream));
}
