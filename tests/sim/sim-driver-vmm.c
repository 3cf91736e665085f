/* Simulated driver: virtual memory management (cuMemCreate, cuMemMap and
 * company), the way PyTorch's expandable segments use it.
 *
 *  - Address space: cuMemAddressReserve hands out ranges of one
 *    inaccessible region of its own (SIM_VA_SPACE bytes, apart from every
 *    device's memory), in multiples of the 2 MiB granularity. Reserved
 *    address space is not device memory and costs nothing.
 *  - Physical memory: cuMemCreate charges its size to the device
 *    (CUDA_ERROR_OUT_OF_MEMORY when it does not fit, as cuMemAlloc) and
 *    keeps the contents in a memfd, so that every mapping of one handle
 *    sees the same bytes.
 *  - cuMemMap maps the handle's memory at the reserved address, readable
 *    and writable at once (cuMemSetAccess checks its arguments and that
 *    the range is mapped, and changes nothing): programs can copy to and
 *    from it and set it like any device memory.
 *  - cuMemRelease invalidates the handle, but the physical memory goes
 *    back to the device only when no mapping of it is left, as in real
 *    CUDA; cuMemUnmap of the last mapping of a released handle frees it.
 *  - cuMemUnmap takes whole mappings (one or several, no part of one);
 *    cuMemAddressFree takes a whole reservation with nothing mapped in it.
 * Physical memory belongs to the process, not to a context: destroying a
 * context leaves it alone. */
#include "sim-driver.h"

#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reserved address space: its placement when that range is free,
 * and its size (inaccessible and NORESERVE, so it costs no memory). */
#define SIM_VA_SPACE_HINT ((uintptr_t)0x200000000000)
#define SIM_VA_SPACE ((size_t)256 << 30)

/* A cuMemCreate handle: the CUmemGenericAllocationHandle is its address. */
struct sim_physical {
	CUmemAllocationProp prop;
	uintptr_t charge;   /* its block in the device arena */
	size_t size;
	int fd;             /* the contents; -1: private per mapping */
	unsigned mappings;
	unsigned refs;      /* cuMemCreate, cuMemRetainAllocationHandle, import: one each */
	bool released;      /* no reference left: goes with its last mapping */
	bool imported;      /* another process's memory: not charged here */
};

struct sim_mapping {
	uintptr_t va;
	size_t size;
	struct sim_physical *phys;
};

/* All under the driver lock. */
static struct sim_arena sim_va;          /* blocks: reservations */
static bool sim_va_ready;
static struct sim_blockmap sim_handles;  /* live handles, keyed by address */
static struct sim_mapping *sim_maps;
static size_t sim_nmaps, sim_capmaps;

static bool
aligned(size_t v)
{
	return (v & (SIM_GRANULARITY - 1)) == 0;
}

static bool
va_ready(void)
{
	uintptr_t base;

	if (sim_va_ready)
		return true;
	base = sim_map_region(SIM_VA_SPACE_HINT, SIM_VA_SPACE, SIM_GRANULARITY, PROT_NONE);
	if (!base || !sim_arena_init(&sim_va, base, SIM_VA_SPACE))
		return false;
	sim_va_ready = true;
	return true;
}

/* Lock held: whether addr lies in the reserved address space at all. */
bool
sim_vmm_owns(uintptr_t addr)
{
	return sim_va_ready && sim_arena_contains(&sim_va, addr, 1);
}

static const struct sim_mapping *
mapping_at(uintptr_t addr)
{
	for (size_t i = 0; i < sim_nmaps; i++)
		if (addr >= sim_maps[i].va && addr - sim_maps[i].va < sim_maps[i].size)
			return &sim_maps[i];
	return NULL;
}

/* Lock held: whether every byte of [addr, addr + bytes) is mapped. */
bool
sim_vmm_mapped(uintptr_t addr, size_t bytes)
{
	uintptr_t end = addr + bytes;

	if (end < addr)
		return false;
	do {
		const struct sim_mapping *m = mapping_at(addr);
		if (!m)
			return false;
		addr = m->va + m->size;
	} while (addr < end);
	return true;
}

/* Lock held: the mapping that holds addr. */
bool
sim_vmm_range(uintptr_t addr, uintptr_t *base, size_t *size)
{
	const struct sim_mapping *m = mapping_at(addr);

	if (!m)
		return false;
	*base = m->va;
	*size = m->size;
	return true;
}

static bool
any_mapped(uintptr_t addr, size_t bytes)
{
	for (size_t i = 0; i < sim_nmaps; i++)
		if (sim_maps[i].va < addr + bytes && addr < sim_maps[i].va + sim_maps[i].size)
			return true;
	return false;
}

static bool
prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       sim_device_get(prop->location.id);
}

CUresult CUDAAPI
cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
			      CUmemAllocationGranularity_flags option)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!granularity || !prop_ok(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = SIM_GRANULARITY;
	return CUDA_SUCCESS;
}

/* The fixed address asked for (addr) is a hint, and this simulator does
 * not take it. */
CUresult CUDAAPI
cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
		    unsigned long long flags)
{
	CUresult rc = sim_ready();
	uintptr_t va;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!ptr || size == 0 || !aligned(size) || flags != 0 ||
	    (alignment & (alignment - 1)) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!va_ready() || !sim_arena_alloc_aligned(&sim_va, size,
						    alignment > SIM_GRANULARITY ? alignment :
						    SIM_GRANULARITY, 0, SIM_KIND_RESERVATION, &va))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	else
		*ptr = (CUdeviceptr)va;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult rc = sim_ready();
	const struct sim_block *b;

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	b = sim_va_ready ? sim_arena_find(&sim_va, (uintptr_t)ptr) : NULL;
	if (!b || b->size != size || any_mapped((uintptr_t)ptr, size))
		rc = CUDA_ERROR_INVALID_VALUE;
	else
		sim_arena_free(&sim_va, (uintptr_t)ptr);
	sim_unlock();
	return rc;
}

/* Lock held. Charge the device, then make the contents. */
static CUresult
physical_create(struct sim_physical **out, size_t size, const CUmemAllocationProp *prop)
{
	struct sim_arena *arena = &sim_drv.dev[prop->location.id].arena;
	struct sim_physical *p = calloc(1, sizeof(*p));
	struct sim_block b = { .kind = SIM_KIND_PHYSICAL };

	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!sim_arena_alloc(arena, size, 0, SIM_KIND_PHYSICAL, &p->charge)) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->prop = *prop;
	p->size = size;
	p->refs = 1;
	p->fd = memfd_create("cudasim-physical", MFD_CLOEXEC);
	if (p->fd >= 0 && ftruncate(p->fd, (off_t)size) != 0) {
		close(p->fd);
		p->fd = -1;
	}
	b.addr = (uintptr_t)p;
	b.size = size;
	if (!sim_blockmap_insert(&sim_handles, &b)) {
		if (p->fd >= 0)
			close(p->fd);
		sim_arena_free(arena, p->charge);
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = p;
	return CUDA_SUCCESS;
}

static void
physical_destroy(struct sim_physical *p)
{
	if (!p->imported)
		sim_arena_free(&sim_drv.dev[p->prop.location.id].arena, p->charge);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

CUresult CUDAAPI
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
	    unsigned long long flags)
{
	CUresult rc = sim_ready();
	struct sim_physical *p = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!handle || size == 0 || !aligned(size) || flags != 0 || !prop_ok(prop))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = physical_create(&p, size, prop);
	if (rc == CUDA_SUCCESS)
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	sim_unlock();
	return rc;
}

static struct sim_physical *
physical_of(CUmemGenericAllocationHandle handle)
{
	const struct sim_block *b = sim_blockmap_find(&sim_handles, (uintptr_t)handle);

	return b ? (struct sim_physical *)b->addr : NULL;
}

CUresult CUDAAPI
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	CUresult rc = sim_ready();
	struct sim_physical *p;

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	p = physical_of(handle);
	if (!p) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else if (--p->refs == 0) {
		sim_blockmap_remove(&sim_handles, (uintptr_t)handle, NULL);
		p->released = true;
		if (p->mappings == 0)
			physical_destroy(p);
	}
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
				       CUmemGenericAllocationHandle handle)
{
	CUresult rc = sim_ready();
	struct sim_physical *p;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	p = physical_of(handle);
	if (p)
		*prop = p->prop;
	else
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Whether [va, va + size) lies inside one reservation. */
static bool
reserved(uintptr_t va, size_t size)
{
	const struct sim_block *b;

	if (!sim_va_ready || !sim_arena_contains(&sim_va, va, size))
		return false;
	b = sim_blockmap_overlap(&sim_va.live, va, 1);
	return b && va + size <= b->addr + b->size;
}

static bool
place_contents(uintptr_t va, size_t size, size_t offset, const struct sim_physical *p)
{
	void *m;

	if (p->fd >= 0)
		m = mmap((void *)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
			 (off_t)offset);
	else
		m = mmap((void *)va, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	return m != MAP_FAILED;
}

/* Back to reserved, inaccessible address space. */
static void
remove_contents(uintptr_t va, size_t size)
{
	mmap((void *)va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
	     -1, 0);
}

static bool
maps_reserve(size_t n)
{
	struct sim_mapping *m;
	size_t cap;

	if (n <= sim_capmaps)
		return true;
	cap = sim_capmaps ? sim_capmaps * 2 : 16;
	m = realloc(sim_maps, cap * sizeof(*m));
	if (!m)
		return false;
	sim_maps = m;
	sim_capmaps = cap;
	return true;
}

/* Lock held, arguments checked. */
static CUresult
map(uintptr_t va, size_t size, size_t offset, struct sim_physical *p)
{
	if (offset > p->size || size > p->size - offset || !reserved(va, size) ||
	    any_mapped(va, size))
		return CUDA_ERROR_INVALID_VALUE;
	if (!maps_reserve(sim_nmaps + 1) || !place_contents(va, size, offset, p))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_maps[sim_nmaps++] = (struct sim_mapping){ .va = va, .size = size, .phys = p };
	p->mappings++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
	 unsigned long long flags)
{
	CUresult rc = sim_ready();
	struct sim_physical *p;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!ptr || size == 0 || !aligned((size_t)ptr) || !aligned(size) || !aligned(offset) ||
	    flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	p = physical_of(handle);
	rc = p ? map((uintptr_t)ptr, size, offset, p) : CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* Whether [va, va + size) is made of whole mappings, at least one. */
static bool
whole_mappings(uintptr_t va, size_t size)
{
	bool found = false;

	for (size_t i = 0; i < sim_nmaps; i++) {
		const struct sim_mapping *m = &sim_maps[i];
		if (m->va >= va + size || va >= m->va + m->size)
			continue;
		if (m->va < va || m->va + m->size > va + size)
			return false;
		found = true;
	}
	return found && sim_vmm_mapped(va, size);
}

/* Lock held. The last mapping of a released handle frees its memory. */
static void
unmap(uintptr_t va, size_t size)
{
	size_t i = 0;

	while (i < sim_nmaps) {
		struct sim_mapping m = sim_maps[i];
		if (m.va < va || m.va >= va + size) {
			i++;
			continue;
		}
		remove_contents(m.va, m.size);
		sim_maps[i] = sim_maps[--sim_nmaps];
		if (--m.phys->mappings == 0 && m.phys->released)
			physical_destroy(m.phys);
	}
}

CUresult CUDAAPI
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if ((uintptr_t)ptr + size < (uintptr_t)ptr)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (whole_mappings((uintptr_t)ptr, size))
		unmap((uintptr_t)ptr, size);
	else
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

static bool
access_ok(const CUmemAccessDesc *desc, size_t count)
{
	if (!desc || count == 0)
		return false;
	for (size_t i = 0; i < count; i++)
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    !sim_device_get(desc[i].location.id) ||
		    (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return false;
	return true;
}

CUresult CUDAAPI
cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (size == 0 || !access_ok(desc, count))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!sim_vmm_mapped((uintptr_t)ptr, size))
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}

/* ---- handles of mapped memory, and sharing them ---- */

/* The handle that backs a mapped address, with one more reference (the
 * caller releases it); a released handle whose memory is still mapped
 * comes back to life. */
CUresult CUDAAPI
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	const struct sim_mapping *m;
	struct sim_block b = { .kind = SIM_KIND_PHYSICAL };
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	m = mapping_at((uintptr_t)addr);
	if (!m) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else if (m->phys->released) {
		b.addr = (uintptr_t)m->phys;
		b.size = m->phys->size;
		if (!sim_blockmap_insert(&sim_handles, &b))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else
			m->phys->released = false;
	}
	if (rc == CUDA_SUCCESS) {
		m->phys->refs++;
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
	}
	sim_unlock();
	return rc;
}

/* A POSIX file descriptor of the contents, for a handle created to be
 * shared that way; the caller owns it. */
CUresult CUDAAPI
cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
			     CUmemAllocationHandleType handleType, unsigned long long flags)
{
	struct sim_physical *p;
	CUresult rc = sim_ready();
	int fd = -1;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!shareableHandle || flags != 0 ||
	    handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	p = physical_of(handle);
	if (!p || !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		rc = CUDA_ERROR_INVALID_VALUE;
	else if (p->fd < 0 || (fd = dup(p->fd)) < 0)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	if (rc == CUDA_SUCCESS)
		*(int *)shareableHandle = fd;
	return rc;
}

/* The memory behind another process's descriptor: a handle of its own,
 * on the current context's device, showing the same bytes, and not
 * charged to this process's device (as IPC imports are not). The
 * descriptor stays the caller's. */
CUresult CUDAAPI
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
			       CUmemAllocationHandleType shHandleType)
{
	int fd = (int)(intptr_t)osHandle;
	struct sim_block b = { .kind = SIM_KIND_PHYSICAL };
	struct sim_physical *p = NULL;
	struct stat st;
	CUcontext ctx;
	CUresult rc;

	if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_INVALID_VALUE;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 || !aligned((size_t)st.st_size))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !(p = calloc(1, sizeof(*p))))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS) {
		*p = (struct sim_physical){
			.prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				  .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
				  .location = { CU_MEM_LOCATION_TYPE_DEVICE, ctx->device } },
			.size = (size_t)st.st_size, .fd = dup(fd), .refs = 1, .imported = true,
		};
		b.addr = (uintptr_t)p;
		b.size = p->size;
		if (p->fd < 0 || !sim_blockmap_insert(&sim_handles, &b))
			rc = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (rc == CUDA_SUCCESS) {
		*handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
	} else if (p) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
	}
	sim_unlock();
	return rc;
}
