/* Simulated driver: memory. Device and managed memory come from the
 * device's first-fit arena (sim-arena.c) and count against its capacity;
 * pinned and registered host memory is plain host memory and does not.
 * Copies and sets are plain memcpy/memset on the backing memory.
 * Stream-ordered allocation: sim-driver-pool.c. */
#include "sim-driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static CUresult
arena_alloc(CUdeviceptr *dptr, size_t bytes, CUcontext ctx, enum sim_kind kind)
{
	struct sim_arena *arena = &sim_drv.dev[ctx->device].arena;
	uintptr_t addr;

	/* On failure *dptr is left as it was, as on the real driver. Managed
	 * memory oversubscribes a full device, as on Linux since Pascal. */
	if (!sim_arena_alloc(arena, bytes, ctx->id, kind, &addr) &&
	    (kind != SIM_KIND_MANAGED || !sim_arena_alloc_over(arena, bytes, ctx->id, kind, &addr)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_ledger_note('a', addr, sim_arena_round(bytes));
	*dptr = (CUdeviceptr)addr;
	return CUDA_SUCCESS;
}

/* One path for every device and managed allocation outside pools. All
 * of them are potentially unsafe during stream capture. */
static CUresult
mem_alloc(CUdeviceptr *dptr, size_t bytes, enum sim_kind kind)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_capture_unsafe_call();
	if (rc == CUDA_SUCCESS && (!dptr || bytes == 0))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = arena_alloc(dptr, bytes, ctx, kind);
	sim_unlock();
	return rc;
}

/* Device or managed memory from cuMemAlloc*, a pool's block, or a live
 * graph allocation: any of them may be freed by cuMemFree or
 * cuMemFreeAsync, as on the real driver. Lock held. */
static bool
free_block(uintptr_t addr)
{
	struct sim_device *d;
	const struct sim_block *b;

	if (sim_pool_free(addr) || sim_graph_mem_free(addr))
		return true;
	d = sim_device_of(addr, 0);
	b = d ? sim_arena_find(&d->arena, addr) : NULL;
	if (!b || (b->kind != SIM_KIND_DEVICE && b->kind != SIM_KIND_MANAGED))
		return false;
	sim_ledger_note('f', addr, b->size);
	return sim_arena_free(&d->arena, addr);
}

/* cuMemFreeAsync: on a stream being captured, a free node of the
 * capture's graph instead (sim-driver-graph.c). */
CUresult
sim_mem_free(CUdeviceptr dptr, CUstream stream)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream)))
		rc = sim_capture_free(c, dptr);
	else if (rc == CUDA_SUCCESS && !free_block((uintptr_t)dptr))
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return mem_alloc(dptr, bytesize, SIM_KIND_DEVICE);
}

/* Potentially unsafe during stream capture, as cuMemAlloc. */
CUresult CUDAAPI
cuMemFree_v2(CUdeviceptr dptr)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		rc = sim_capture_unsafe_call();
	if (rc == CUDA_SUCCESS && !free_block((uintptr_t)dptr))
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (sim_ready() != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return mem_alloc(dptr, bytesize, SIM_KIND_MANAGED);
}

/* Rows are padded to the allocation granule, the pitch a real device
 * of this generation reports for small widths. */
CUresult CUDAAPI
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
		   size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch = sim_arena_round(WidthInBytes);
	CUresult rc;

	if (sim_ready() != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pPitch || WidthInBytes == 0 || Height == 0 ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (pitch == 0 || Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = mem_alloc(dptr, pitch * Height, SIM_KIND_DEVICE);
	if (rc == CUDA_SUCCESS)
		*pPitch = pitch;
	return rc;
}

/* Lock held: the allocation that holds addr, as the program sees it
 * (cuMemAlloc*, pool block, mapping of physical memory, imported IPC
 * memory; sizes as charged). */
static bool
address_range(uintptr_t addr, uintptr_t *base, size_t *size)
{
	struct sim_device *d = sim_device_of(addr, 1);
	const struct sim_block *b = d ? sim_pool_block(addr) : NULL;

	if (!d && sim_graph_mem_range(addr, base, size))
		return true;
	if (d && !b) {
		b = sim_blockmap_overlap(&d->arena.live, addr, 1);
		if (b && b->kind != SIM_KIND_DEVICE && b->kind != SIM_KIND_MANAGED)
			b = NULL;
	}
	if (b) {
		*base = b->addr;
		*size = b->size;
		return true;
	}
	return sim_vmm_range(addr, base, size) || sim_ipc_range(addr, base, size);
}

/* Both outputs are optional, as on the real driver. */
CUresult CUDAAPI
cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	uintptr_t base = 0;
	size_t size = 0;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !address_range((uintptr_t)dptr, &base, &size))
		rc = CUDA_ERROR_NOT_FOUND;
	sim_unlock();
	if (rc == CUDA_SUCCESS && pbase)
		*pbase = (CUdeviceptr)base;
	if (rc == CUDA_SUCCESS && psize)
		*psize = size;
	return rc;
}

CUresult CUDAAPI
cuMemGetInfo_v2(size_t *free, size_t *total)
{
	struct sim_device *d;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!free || !total))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS) {
		d = &sim_drv.dev[ctx->device];
		*total = d->capacity;
		*free = d->capacity - d->reserved - d->arena.used;
	}
	sim_unlock();
	return rc;
}

/* Pinned host memory: its own mapping, so that a free of the wrong
 * pointer is caught and the memory is page-aligned like the real thing. */
static CUresult
pinned_alloc(void **pp, size_t bytes, CUcontext ctx)
{
	struct sim_block b = { .size = bytes, .owner = ctx->id, .kind = SIM_KIND_PINNED };
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	b.addr = (uintptr_t)p;
	if (!sim_blockmap_insert(&sim_drv.pinned, &b)) {
		munmap(p, bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

static CUresult
host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				   CU_MEMHOSTALLOC_WRITECOMBINED;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!pp || bytesize == 0 || (flags & ~known)))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = pinned_alloc(pp, bytesize, ctx);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return host_alloc(pp, bytesize, 0);
}

CUresult CUDAAPI
cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	return host_alloc(pp, bytesize, Flags);
}

static bool
pinned_free(uintptr_t addr)
{
	struct sim_block b;

	if (!sim_blockmap_remove(&sim_drv.pinned, addr, &b))
		return false;
	munmap((void *)b.addr, b.size);
	return true;
}

CUresult CUDAAPI
cuMemFreeHost(void *p)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !pinned_free((uintptr_t)p))
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Host registration pins memory the program already has: nothing is
 * allocated, on the device or the host; the driver only remembers the
 * range. A range may not meet one already registered or pinned. */
static CUresult
host_register(void *p, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
				   CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
	struct sim_block b = { .addr = (uintptr_t)p, .size = bytesize, .kind = SIM_KIND_REGISTERED };
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!p || bytesize == 0 || (flags & ~known) ||
				   b.addr + bytesize < b.addr))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (sim_blockmap_overlap(&sim_drv.registered, b.addr, bytesize) ||
				   sim_blockmap_overlap(&sim_drv.pinned, b.addr, bytesize)))
		rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	b.owner = rc == CUDA_SUCCESS ? ctx->id : 0;
	if (rc == CUDA_SUCCESS && !sim_blockmap_insert(&sim_drv.registered, &b))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	return host_register(p, bytesize, Flags);
}

/* The CUDA 4.0 ABI, still exported and handed out for older versions. */
CUresult CUDAAPI
cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	return host_register(p, bytesize, Flags);
}

CUresult CUDAAPI
cuMemHostUnregister(void *p)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !sim_blockmap_remove(&sim_drv.registered, (uintptr_t)p, NULL))
		rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	sim_unlock();
	return rc;
}

/* Lock held: the pinned and registered host memory of a context that is
 * being destroyed. */
void
sim_pinned_release_owner(uint32_t owner)
{
	uintptr_t *addrs;
	size_t n = sim_blockmap_owned(&sim_drv.pinned, owner, &addrs);

	for (size_t i = 0; i < n; i++)
		pinned_free(addrs[i]);
	free(addrs);
	n = sim_blockmap_owned(&sim_drv.registered, owner, &addrs);
	for (size_t i = 0; i < n; i++)
		sim_blockmap_remove(&sim_drv.registered, addrs[i], NULL);
	free(addrs);
}

/* Pinned or registered host memory holds [addr, addr + bytes): with
 * unified addressing the device reaches it by the same pointer, so a
 * memset "on the device" may write it (XLA's redzone checker sets a word
 * of pinned memory with cuMemsetD32Async). Lock held. */
static bool
host_mapped(uintptr_t addr, size_t bytes)
{
	const struct sim_block *b = sim_blockmap_overlap(&sim_drv.pinned, addr, 1);

	if (!b)
		b = sim_blockmap_overlap(&sim_drv.registered, addr, 1);
	return b && addr - b->addr <= b->size && bytes <= b->size - (addr - b->addr);
}

/* With unified addressing a pointer is device memory when it falls in a
 * device's range, and then the whole range must; mapped virtual memory
 * and imported IPC memory are device memory too. Anything else is host
 * memory, which the caller vouches for, or, where only device memory
 * will do, pinned or registered host memory. */
static bool
range_ok(uintptr_t addr, size_t bytes, bool device_only)
{
	struct sim_device *d = sim_device_of(addr, 0);

	if (!addr)
		return false;
	if (d)
		return sim_arena_contains(&d->arena, addr, bytes);
	if (sim_vmm_owns(addr))
		return sim_vmm_mapped(addr, bytes);
	if (sim_ipc_imported(addr, 1))
		return sim_ipc_imported(addr, bytes);
	if (sim_graph_alloc_at(addr))
		return sim_graph_mem_live(addr, bytes);
	return !device_only || host_mapped(addr, bytes);
}

static CUresult
stream_enter(CUstream stream)
{
	CUcontext ctx;
	CUresult rc = sim_ctx_enter(&ctx);

	return rc == CUDA_SUCCESS ? sim_stream_check(stream, ctx) : rc;
}

/* On a stream being captured, an asynchronous copy or set is not done
 * but becomes a node that does nothing (sim-driver-graph.c); its device
 * pointer may be a graph allocation that is not live yet. Lock held. */
static CUresult
capture_noop(struct sim_capture *c, uintptr_t dst, size_t bytes, CUgraphNodeType type)
{
	if (bytes && !range_ok(dst, bytes, false) && !sim_graph_alloc_at(dst)) {
		sim_capture_invalidate(c);
		return CUDA_ERROR_INVALID_VALUE;
	}
	return sim_capture_noop(c, type);
}

/* Checks under the lock, moves the bytes outside it: only a racing free
 * by the application could bite (device memory is never unmapped, a
 * graph allocation's range is when its allocation goes). */
static CUresult
mem_copy(uintptr_t dst, bool dst_device, uintptr_t src, bool src_device,
	 size_t bytes, CUstream stream, bool async)
{
	struct sim_capture *c;
	CUresult rc;

	sim_lock();
	rc = stream_enter(stream);
	if (rc == CUDA_SUCCESS && async && (c = sim_capture_of(stream))) {
		rc = capture_noop(c, dst, bytes, CU_GRAPH_NODE_TYPE_MEMCPY);
		bytes = 0;
	} else if (rc == CUDA_SUCCESS && bytes &&
		   (!range_ok(dst, bytes, dst_device) || !range_ok(src, bytes, src_device))) {
		rc = CUDA_ERROR_INVALID_VALUE;
	}
	sim_unlock();
	if (rc == CUDA_SUCCESS && bytes)
		memmove((void *)dst, (const void *)src, bytes);
	return rc;
}

static CUresult
mem_set(uintptr_t dst, unsigned char uc, size_t bytes, CUstream stream, bool async)
{
	struct sim_capture *c;
	CUresult rc;

	sim_lock();
	rc = stream_enter(stream);
	if (rc == CUDA_SUCCESS && async && (c = sim_capture_of(stream))) {
		rc = capture_noop(c, dst, bytes, CU_GRAPH_NODE_TYPE_MEMSET);
		bytes = 0;
	} else if (rc == CUDA_SUCCESS && bytes && !range_ok(dst, bytes, true)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	}
	sim_unlock();
	if (rc == CUDA_SUCCESS && bytes)
		memset((void *)dst, uc, bytes);
	return rc;
}

CUresult CUDAAPI
cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return mem_copy(dst, false, src, false, ByteCount, NULL, false);
}

CUresult CUDAAPI
cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return mem_copy(dst, false, src, false, ByteCount, CU_STREAM_PER_THREAD, false);
}

CUresult CUDAAPI
cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	return mem_copy(dst, false, src, false, ByteCount, hStream, true);
}

CUresult CUDAAPI
cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
	return mem_copy(dst, false, src, false, ByteCount, sim_stream_per_thread(hStream), true);
}

CUresult CUDAAPI
cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return mem_copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount, NULL, false);
}

CUresult CUDAAPI
cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return mem_copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount,
			CU_STREAM_PER_THREAD, false);
}

CUresult CUDAAPI
cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return mem_copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount, NULL, false);
}

CUresult CUDAAPI
cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return mem_copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount,
			CU_STREAM_PER_THREAD, false);
}

/* The typed copies XLA makes (host to device, device to host, device to
 * device), each on a stream and, for the per-thread default stream, its
 * _ptsz twin; and the synchronous device-to-device copy. */
CUresult CUDAAPI
cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
		     CUstream hStream)
{
	return mem_copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount, hStream, true);
}

CUresult CUDAAPI
cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
			  CUstream hStream)
{
	return mem_copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount,
			sim_stream_per_thread(hStream), true);
}

CUresult CUDAAPI
cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
	return mem_copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount, hStream, true);
}

CUresult CUDAAPI
cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
			  CUstream hStream)
{
	return mem_copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount,
			sim_stream_per_thread(hStream), true);
}

CUresult CUDAAPI
cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
		     CUstream hStream)
{
	return mem_copy(dstDevice, true, srcDevice, true, ByteCount, hStream, true);
}

CUresult CUDAAPI
cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
			  CUstream hStream)
{
	return mem_copy(dstDevice, true, srcDevice, true, ByteCount,
			sim_stream_per_thread(hStream), true);
}

CUresult CUDAAPI
cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return mem_copy(dstDevice, true, srcDevice, true, ByteCount, NULL, false);
}

CUresult CUDAAPI
cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return mem_copy(dstDevice, true, srcDevice, true, ByteCount, CU_STREAM_PER_THREAD, false);
}

CUresult CUDAAPI
cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return mem_set(dstDevice, uc, N, NULL, false);
}

CUresult CUDAAPI
cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return mem_set(dstDevice, uc, N, CU_STREAM_PER_THREAD, false);
}

CUresult CUDAAPI
cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
	return mem_set(dstDevice, uc, N, hStream, true);
}

CUresult CUDAAPI
cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
	return mem_set(dstDevice, uc, N, sim_stream_per_thread(hStream), true);
}

/* ---- 2D and peer copies ---- */

/* One side of a 2D copy: its address and whether it must be device
 * memory. Arrays are not simulated here. */
static bool
side_2d(CUmemorytype type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t pitch,
	uintptr_t *addr, bool *device)
{
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		*addr = (uintptr_t)host;
		*device = false;
		break;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		*addr = (uintptr_t)dev;
		*device = type == CU_MEMORYTYPE_DEVICE;
		break;
	default:
		return false;
	}
	*addr += y * pitch + x;
	return *addr != 0;
}

/* Lock held: every row of both sides is memory of the right kind. */
static bool
rows_ok(uintptr_t dst, bool dst_device, size_t dpitch, uintptr_t src, bool src_device,
	size_t spitch, size_t width, size_t height)
{
	for (size_t r = 0; r < height; r++)
		if (!range_ok(dst + r * dpitch, width, dst_device) ||
		    !range_ok(src + r * spitch, width, src_device))
			return false;
	return true;
}

static CUresult
mem_copy_2d(const CUDA_MEMCPY2D *p, CUstream stream)
{
	uintptr_t dst, src;
	bool dst_device, src_device;
	struct sim_capture *c;
	size_t rows;
	CUresult rc;

	if (!p || !side_2d(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY,
			   p->srcPitch, &src, &src_device) ||
	    !side_2d(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY,
		     p->dstPitch, &dst, &dst_device) ||
	    (p->Height > 1 && (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes)))
		return CUDA_ERROR_INVALID_VALUE;
	rows = p->WidthInBytes ? p->Height : 0;
	sim_lock();
	rc = stream_enter(stream);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream))) {
		rc = capture_noop(c, dst, 0, CU_GRAPH_NODE_TYPE_MEMCPY);
		rows = 0;
	} else if (rc == CUDA_SUCCESS && !rows_ok(dst, dst_device, p->dstPitch, src, src_device,
						  p->srcPitch, p->WidthInBytes, rows)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	}
	sim_unlock();
	for (size_t r = 0; rc == CUDA_SUCCESS && r < rows; r++)
		memmove((void *)(dst + r * p->dstPitch), (const void *)(src + r * p->srcPitch),
			p->WidthInBytes);
	return rc;
}

CUresult CUDAAPI
cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return mem_copy_2d(pCopy, hStream);
}

CUresult CUDAAPI
cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return mem_copy_2d(pCopy, sim_stream_per_thread(hStream));
}

/* Between devices: both contexts must live; the bytes move as in any
 * copy, since every device's memory is in this process. */
static CUresult
peer_copy(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src, CUcontext srcContext,
	  size_t bytes, CUstream stream)
{
	bool alive;

	sim_lock();
	alive = sim_ctx_alive(dstContext) && sim_ctx_alive(srcContext);
	sim_unlock();
	if (!alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	return mem_copy(dst, true, src, true, bytes, stream, true);
}

CUresult CUDAAPI
cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
		  CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream);
}

CUresult CUDAAPI
cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
		       CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	return peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount,
			 sim_stream_per_thread(hStream));
}

/* ---- 32-bit sets and stream memory operations ---- */

/* Like mem_set, of N 32-bit words. */
static CUresult
mem_set32(uintptr_t dst, unsigned int value, size_t n, CUstream stream, CUgraphNodeType type)
{
	struct sim_capture *c;
	CUresult rc;

	if (n > SIZE_MAX / 4 || (dst & 3))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = stream_enter(stream);
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream))) {
		rc = capture_noop(c, dst, n * 4, type);
		n = 0;
	} else if (rc == CUDA_SUCCESS && n && !range_ok(dst, n * 4, true)) {
		rc = CUDA_ERROR_INVALID_VALUE;
	}
	sim_unlock();
	for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++)
		memcpy((void *)(dst + 4 * i), &value, 4);
	return rc;
}

CUresult CUDAAPI
cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
	return mem_set32((uintptr_t)dstDevice, ui, N, hStream, CU_GRAPH_NODE_TYPE_MEMSET);
}

CUresult CUDAAPI
cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
	return mem_set32((uintptr_t)dstDevice, ui, N, sim_stream_per_thread(hStream),
			 CU_GRAPH_NODE_TYPE_MEMSET);
}

/* A write of one word, done when issued (no flag changes that here). */
CUresult CUDAAPI
cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
	if (flags & ~(unsigned int)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)
		return CUDA_ERROR_INVALID_VALUE;
	return mem_set32((uintptr_t)addr, value, 1, stream, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
}

CUresult CUDAAPI
cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
			     unsigned int flags)
{
	return cuStreamWriteValue32_v2(sim_stream_per_thread(stream), addr, value, flags);
}
