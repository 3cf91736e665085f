/* Simulated driver: IPC memory handles (cuIpcGetMemHandle and company).
 *
 * The 64 bytes of a CUipcMemHandle carry what another process needs to
 * name the memory: the exporter's pid, the device, the allocation's offset
 * in that device's memory and its size. The importer gets an address of
 * its own, from a region kept for imported memory (apart from device
 * memory and reserved address space), with as many bytes as the
 * allocation: it can copy to and from it, but the contents are not shared
 * with the exporter. Imported memory is not charged
 * to the importer's device: the exporter pays for it.
 *
 * As with real CUDA: only memory from cuMemAlloc can be exported; a
 * process cannot open a handle it exported itself
 * (CUDA_ERROR_INVALID_CONTEXT); opening the same handle again in a context
 * returns the same address and counts a reference, and
 * cuIpcCloseMemHandle drops one. Imports belong to the importing context.
 * Whether the exporter still lives, or still holds the memory, is not
 * checked. */
#include "sim-driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_IMPORT_SPACE_HINT ((uintptr_t)0x210000000000)
#define SIM_IMPORT_SPACE ((size_t)64 << 30)

static const char sim_ipc_magic[8] = "cudasim";

/* The layout of the 64 opaque bytes. */
struct sim_ipc_handle {
	char magic[8];
	uint32_t pid;
	int32_t device;
	uint64_t offset;
	uint64_t size;
	char unused[32];
};

_Static_assert(sizeof(struct sim_ipc_handle) == sizeof(CUipcMemHandle),
	       "an IPC handle is 64 bytes");

struct sim_import {
	uint32_t pid;
	int32_t device;
	uint64_t offset;
	uintptr_t addr;
	size_t size;
	uint32_t owner;     /* importing context */
	unsigned refs;
};

/* All under the driver lock. */
static struct sim_arena sim_imported;
static bool sim_imported_ready;
static struct sim_import *sim_imports;
static size_t sim_nimports, sim_capimports;

CUresult CUDAAPI
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	struct sim_ipc_handle h = { .pid = (uint32_t)getpid() };
	const struct sim_block *b = NULL;
	struct sim_device *d = NULL;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS) {
		d = sim_device_of((uintptr_t)dptr, 1);
		b = d ? sim_arena_find(&d->arena, (uintptr_t)dptr) : NULL;
	}
	if (rc == CUDA_SUCCESS && (!pHandle || !b || b->kind != SIM_KIND_DEVICE))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS) {
		memcpy(h.magic, sim_ipc_magic, sizeof(h.magic));
		h.device = (int32_t)(d - sim_drv.dev);
		h.offset = b->addr - d->arena.base;
		h.size = b->size;
		memcpy(pHandle, &h, sizeof(h));
	}
	sim_unlock();
	return rc;
}

static bool
imported_ready(void)
{
	uintptr_t base;

	if (sim_imported_ready)
		return true;
	base = sim_map_region(SIM_IMPORT_SPACE_HINT, SIM_IMPORT_SPACE,
			      (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
	if (!base || !sim_arena_init(&sim_imported, base, SIM_IMPORT_SPACE))
		return false;
	sim_imported_ready = true;
	return true;
}

/* Lock held: whether [addr, addr + bytes) lies in one imported block. */
bool
sim_ipc_imported(uintptr_t addr, size_t bytes)
{
	for (size_t i = 0; i < sim_nimports; i++) {
		const struct sim_import *m = &sim_imports[i];
		if (addr >= m->addr && addr - m->addr < m->size && bytes <= m->size - (addr - m->addr))
			return true;
	}
	return false;
}

/* Lock held: the import that holds addr. */
bool
sim_ipc_range(uintptr_t addr, uintptr_t *base, size_t *size)
{
	for (size_t i = 0; i < sim_nimports; i++) {
		const struct sim_import *m = &sim_imports[i];
		if (addr >= m->addr && addr - m->addr < m->size) {
			*base = m->addr;
			*size = m->size;
			return true;
		}
	}
	return false;
}

static struct sim_import *
find_import(const struct sim_ipc_handle *h, uint32_t owner)
{
	for (size_t i = 0; i < sim_nimports; i++) {
		struct sim_import *m = &sim_imports[i];
		if (m->pid == h->pid && m->device == h->device && m->offset == h->offset &&
		    m->owner == owner)
			return m;
	}
	return NULL;
}

static bool
imports_reserve(size_t n)
{
	struct sim_import *m;
	size_t cap;

	if (n <= sim_capimports)
		return true;
	cap = sim_capimports ? sim_capimports * 2 : 16;
	m = realloc(sim_imports, cap * sizeof(*m));
	if (!m)
		return false;
	sim_imports = m;
	sim_capimports = cap;
	return true;
}

/* Lock held. */
static CUresult
import(CUdeviceptr *pdptr, const struct sim_ipc_handle *h, CUcontext ctx)
{
	struct sim_import *m = find_import(h, ctx->id);
	uintptr_t addr;

	if (m) {
		m->refs++;
		*pdptr = (CUdeviceptr)m->addr;
		return CUDA_SUCCESS;
	}
	if (!imported_ready() || !imports_reserve(sim_nimports + 1) ||
	    !sim_arena_alloc(&sim_imported, h->size, ctx->id, SIM_KIND_IMPORTED, &addr))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_imports[sim_nimports++] = (struct sim_import){
		.pid = h->pid, .device = h->device, .offset = h->offset, .addr = addr,
		.size = h->size, .owner = ctx->id, .refs = 1 };
	*pdptr = (CUdeviceptr)addr;
	return CUDA_SUCCESS;
}

static CUresult
open_handle(CUdeviceptr *pdptr, const CUipcMemHandle *handle, unsigned int flags)
{
	struct sim_ipc_handle h;
	CUcontext ctx;
	CUresult rc;

	memcpy(&h, handle, sizeof(h));
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && (!pdptr || (flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ||
				   memcmp(h.magic, sim_ipc_magic, sizeof(h.magic)) != 0 ||
				   !sim_device_get(h.device) || h.size == 0))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && h.pid == (uint32_t)getpid())
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		rc = import(pdptr, &h, ctx);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	return open_handle(pdptr, &handle, Flags);
}

/* The CUDA 4.1 ABI, still exported and handed out for older versions. */
CUresult CUDAAPI
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
	return open_handle(pdptr, &handle, Flags);
}

/* Lock held. */
static void
import_drop(size_t i)
{
	sim_arena_free(&sim_imported, sim_imports[i].addr);
	sim_imports[i] = sim_imports[--sim_nimports];
}

/* Lock held: the index of the context's import at addr, or SIZE_MAX. */
static size_t
import_at(uintptr_t addr, uint32_t owner)
{
	for (size_t i = 0; i < sim_nimports; i++)
		if (sim_imports[i].addr == addr && sim_imports[i].owner == owner)
			return i;
	return SIZE_MAX;
}

CUresult CUDAAPI
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	size_t i = SIZE_MAX;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS)
		i = import_at((uintptr_t)dptr, ctx->id);
	if (rc == CUDA_SUCCESS && i == SIZE_MAX)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && --sim_imports[i].refs == 0)
		import_drop(i);
	sim_unlock();
	return rc;
}

/* Lock held: the imports of a context that is being destroyed. */
void
sim_ipc_release_owner(uint32_t owner)
{
	size_t i = 0;

	while (i < sim_nimports) {
		if (sim_imports[i].owner == owner)
			import_drop(i);
		else
			i++;
	}
}

/* IPC events are not simulated: the device says so
 * (CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED is 0), and so do these. */
CUresult CUDAAPI
cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pHandle || !event)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI
cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
	CUresult rc = sim_ready();

	(void)handle;
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_NOT_SUPPORTED;
}
