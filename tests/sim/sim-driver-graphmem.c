/* Simulated driver: graph-allocated memory, as the CUDA programming guide
 * describes graph memory nodes, kept simple on purpose (README.md says
 * the same):
 *
 *  - Address: an alloc node reserves its address range when it is made,
 *    the size rounded up to 2 MiB, in a region of its own (apart from
 *    device memory, VMM and IPC ranges). The address stays the same for
 *    every instantiation and launch, and is reserved for as long as a
 *    node or an executable graph names the allocation, or it is live.
 *  - Live: a launch makes each allocation of the graph live, in node
 *    order, and each free node frees one; what the graph does not free
 *    stays live after the launch, until cuMemFree, cuMemFreeAsync or a
 *    launch of a graph with a free node for it. Destroying the graph or
 *    the executable graph frees nothing. Relaunching while an allocation
 *    of the graph is live fails with CUDA_ERROR_INVALID_VALUE, unless the
 *    graph was instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_
 *    LAUNCH: then the launch frees them first.
 *  - Physical memory: each device has one graph memory pool, apart from
 *    the stream-ordered pools. It holds device memory in 2 MiB blocks,
 *    which the device counts as used (cuMemGetInfo) from the launch or
 *    upload that needed them until cuDeviceGraphMemTrim gives them back.
 *    An allocation takes its rounded size.
 *  - In use (CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) is the memory of the live
 *    allocations, plus what executable graphs keep mapped between
 *    launches: an executable graph maps its allocations that are not live
 *    at its first launch or upload and keeps them mapped until it is
 *    destroyed or trimmed. Graphs never run at the same time here, so
 *    every executable graph maps the same memory: the largest mapping
 *    counts, once.
 *  - A launch needs the live allocations (less those auto-freed) plus
 *    every allocation of the graph at once (no reuse within one graph);
 *    the pool grows to that, and to what is in use after the launch, when
 *    it holds less. When the device cannot give it the memory, the other
 *    executable graphs lose their mappings and the pool tries once more,
 *    then the launch fails with CUDA_ERROR_OUT_OF_MEMORY and changes
 *    nothing. An upload maps without running: it needs what is in use
 *    after it.
 *  - cuDeviceGraphMemTrim: nothing is running, so every executable graph
 *    of the device loses its mapping, and the pool gives back all it
 *    holds beyond the live allocations. Nothing else gives memory back,
 *    except destroying the context, which frees the context's live
 *    allocations and trims its device. */
#include "sim-driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The graph allocations' address region: its placement when that range
 * is free, and its size (inaccessible but where an allocation is). */
#define SIM_GRAPH_VA_HINT ((uintptr_t)0x220000000000)
#define SIM_GRAPH_VA_SPACE ((size_t)256 << 30)

/* All under the driver lock. */
static struct sim_arena sim_graph_va;
static bool sim_graph_va_ready;
static struct sim_graph_alloc *sim_graph_allocs;

static bool
va_ready(void)
{
	uintptr_t base;

	if (sim_graph_va_ready)
		return true;
	base = sim_map_region(SIM_GRAPH_VA_HINT, SIM_GRAPH_VA_SPACE, SIM_GRANULARITY, PROT_NONE);
	if (!base || !sim_arena_init(&sim_graph_va, base, SIM_GRAPH_VA_SPACE))
		return false;
	sim_graph_va_ready = true;
	return true;
}

static size_t
round_granularity(size_t bytes)
{
	if (bytes > SIZE_MAX - (SIM_GRANULARITY - 1))
		return 0;
	return (bytes + SIM_GRANULARITY - 1) & ~(SIM_GRANULARITY - 1);
}

/* As for cuMemPoolCreate, without IPC: graph memory cannot be exported. */
static bool
params_ok(const CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	return p->poolProps.allocType == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       p->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       sim_device_get(p->poolProps.location.id) &&
	       p->poolProps.handleTypes == CU_MEM_HANDLE_TYPE_NONE && p->bytesize > 0 &&
	       p->accessDescCount <= (size_t)sim_drv.ndev &&
	       (p->accessDescCount == 0 || p->accessDescs);
}

/* Lock held: a new allocation, its address reserved and accessible, held
 * once (by the node that makes it). */
CUresult
sim_graph_alloc_new(const CUDA_MEM_ALLOC_NODE_PARAMS *params, struct sim_graph_alloc **out)
{
	size_t size = round_granularity(params->bytesize);
	struct sim_graph_alloc *a;
	uintptr_t va;

	if (!params_ok(params))
		return CUDA_ERROR_INVALID_VALUE;
	if (size == 0 || !va_ready() ||
	    !sim_arena_alloc_aligned(&sim_graph_va, size, SIM_GRANULARITY, 0, SIM_KIND_GRAPH_VA,
				     &va))
		return CUDA_ERROR_OUT_OF_MEMORY;
	a = calloc(1, sizeof(*a));
	if (!a || mprotect((void *)va, size, PROT_READ | PROT_WRITE) != 0) {
		free(a);
		sim_arena_free(&sim_graph_va, va);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*a = (struct sim_graph_alloc){ .va = va,
				       .bytes = params->bytesize,
				       .size = size,
				       .device = params->poolProps.location.id,
				       .refs = 1 };
	a->next = sim_graph_allocs;
	sim_graph_allocs = a;
	*out = a;
	return CUDA_SUCCESS;
}

/* The address goes back when nothing names the allocation and it is not
 * live; its contents go with it. */
static void
release_if_unused(struct sim_graph_alloc *a)
{
	struct sim_graph_alloc **at;

	if (a->refs || a->live)
		return;
	madvise((void *)a->va, a->size, MADV_DONTNEED);
	mprotect((void *)a->va, a->size, PROT_NONE);
	sim_arena_free(&sim_graph_va, a->va);
	for (at = &sim_graph_allocs; *at != a; at = &(*at)->next)
		;
	*at = a->next;
	free(a);
}

void
sim_graph_alloc_put(struct sim_graph_alloc *a)
{
	a->refs--;
	release_if_unused(a);
}

/* Lock held: the allocation whose address range holds addr, or NULL. */
struct sim_graph_alloc *
sim_graph_alloc_at(uintptr_t addr)
{
	for (struct sim_graph_alloc *a = sim_graph_allocs; a; a = a->next)
		if (addr >= a->va && addr - a->va < a->size)
			return a;
	return NULL;
}

/* Lock held: whether [addr, addr + bytes) lies in one live allocation. */
bool
sim_graph_mem_live(uintptr_t addr, size_t bytes)
{
	const struct sim_graph_alloc *a = sim_graph_alloc_at(addr);

	return a && a->live && bytes <= a->size - (addr - a->va);
}

/* Lock held: the address range of the allocation that holds addr. */
bool
sim_graph_mem_range(uintptr_t addr, uintptr_t *base, size_t *size)
{
	const struct sim_graph_alloc *a = sim_graph_alloc_at(addr);

	if (!a)
		return false;
	*base = a->va;
	*size = a->size;
	return true;
}

/* ---- the graph memory pool of each device ---- */

static struct sim_graph_pool *
pool_of(CUdevice dev)
{
	return &sim_drv.dev[dev].graph_pool;
}

static size_t
pinned(CUdevice dev)
{
	size_t n = 0;

	for (const struct sim_graph_alloc *a = sim_graph_allocs; a; a = a->next)
		if (a->live && a->device == dev)
			n += a->size;
	return n;
}

/* What an executable graph's allocations on dev take: all of them, or
 * those not live (its mapping between launches). */
static size_t
exec_need(CUgraphExec e, CUdevice dev, bool all)
{
	size_t n = 0;

	for (size_t i = 0; i < e->nsteps; i++) {
		const struct sim_graph_alloc *a = e->steps[i].alloc;
		if (e->steps[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && a->device == dev &&
		    (all || !a->live))
			n += a->size;
	}
	return n;
}

static size_t
used(CUdevice dev)
{
	size_t mapped = 0;

	for (CUgraphExec e = sim_graph_execs; e; e = e->next)
		if (e->mapped && exec_need(e, dev, false) > mapped)
			mapped = exec_need(e, dev, false);
	return pinned(dev) + mapped;
}

static void
note_high(CUdevice dev)
{
	struct sim_graph_pool *p = pool_of(dev);
	size_t u = used(dev);

	if (u > p->used_high)
		p->used_high = u;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
}

/* Blocks of the device's arena, owned by no context (owner 0), so that
 * destroying a context leaves them to the pool. */
static bool
grow(CUdevice dev, size_t target)
{
	struct sim_graph_pool *p = pool_of(dev);
	uintptr_t block;

	while (p->reserved < target) {
		if (p->nchunks == p->capchunks) {
			size_t cap = p->capchunks ? p->capchunks * 2 : 16;
			uintptr_t *c = realloc(p->chunks, cap * sizeof(*c));
			if (!c)
				return false;
			p->chunks = c;
			p->capchunks = cap;
		}
		if (!sim_arena_alloc(&sim_drv.dev[dev].arena, SIM_GRANULARITY, 0,
				     SIM_KIND_GRAPH_CHUNK, &block))
			return false;
		p->chunks[p->nchunks++] = block;
		p->reserved += SIM_GRANULARITY;
	}
	return true;
}

static void
shrink(CUdevice dev, size_t keep)
{
	struct sim_graph_pool *p = pool_of(dev);

	while (p->reserved > keep && p->nchunks) {
		sim_arena_free(&sim_drv.dev[dev].arena, p->chunks[--p->nchunks]);
		p->reserved -= SIM_GRANULARITY;
	}
}

/* ---- launches ---- */

static bool
allocates(CUgraphExec e, const struct sim_graph_alloc *a)
{
	for (size_t i = 0; i < e->nsteps; i++)
		if (e->steps[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && e->steps[i].alloc == a)
			return true;
	return false;
}

/* A launch may run: no allocation of the graph is live (unless it frees
 * them first), and each allocation of another graph it frees is live. */
static CUresult
launch_check(CUgraphExec e, bool auto_free)
{
	for (size_t i = 0; i < e->nsteps; i++) {
		const struct sim_graph_step *s = &e->steps[i];
		if (s->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && s->alloc->live && !auto_free)
			return CUDA_ERROR_INVALID_VALUE;
		if (s->type == CU_GRAPH_NODE_TYPE_MEM_FREE && !allocates(e, s->alloc) &&
		    !s->alloc->live)
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* What the launch needs on dev while it runs. */
static size_t
launch_peak(CUgraphExec e, CUdevice dev, bool auto_free)
{
	size_t freed = 0;

	for (size_t i = 0; i < e->nsteps; i++) {
		const struct sim_graph_step *s = &e->steps[i];
		if (auto_free && s->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && s->alloc->live &&
		    s->alloc->device == dev)
			freed += s->alloc->size;
	}
	return pinned(dev) - freed + exec_need(e, dev, true);
}

/* The steps, in order: allocations become live, frees end them. */
static void
launch_apply(CUgraphExec e, uint32_t owner)
{
	for (size_t i = 0; i < e->nsteps; i++) {
		struct sim_graph_alloc *a = e->steps[i].alloc;
		if (e->steps[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			a->live = true;
			a->owner = owner;
		} else if (e->steps[i].type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
			a->live = false;
		}
	}
}

/* Grow every device's pool to what it needs now (and at least to peak[d]
 * while the launch runs). */
static bool
grow_all(const size_t *peak)
{
	for (CUdevice d = 0; d < sim_drv.ndev; d++) {
		size_t u = used(d);
		if (!grow(d, peak[d] > u ? peak[d] : u))
			return false;
	}
	return true;
}

static void
unmap_others(CUgraphExec exec)
{
	for (CUgraphExec e = sim_graph_execs; e; e = e->next)
		if (e != exec)
			e->mapped = false;
}

/* Back what is now in use (and peak[d] while the launch runs) with
 * memory; failing that, once more after the other executable graphs lose
 * their mappings. */
static bool
back_with_memory(CUgraphExec exec, const size_t *peak)
{
	if (grow_all(peak))
		return true;
	unmap_others(exec);
	return grow_all(peak);
}

/* What a failed launch puts back: the steps' liveness and the mapping. */
static void
restore(CUgraphExec exec, const bool *live, bool mapped)
{
	for (size_t i = 0; i < exec->nsteps; i++)
		if (exec->steps[i].alloc)
			exec->steps[i].alloc->live = live[i];
	exec->mapped = mapped;
}

/* Lock held: the launch's effect, with peak[d] and before[d] (what each
 * pool holds) and live[i] (each step's allocation) saved first. */
static CUresult
run_saved(CUgraphExec exec, bool launch, uint32_t owner, size_t *peak, size_t *before, bool *live)
{
	bool auto_free = launch && (exec->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	bool was_mapped = exec->mapped, ok;

	for (CUdevice d = 0; d < sim_drv.ndev; d++) {
		peak[d] = launch ? launch_peak(exec, d, auto_free) : 0;
		before[d] = pool_of(d)->reserved;
	}
	for (size_t i = 0; i < exec->nsteps; i++)
		live[i] = exec->steps[i].alloc && exec->steps[i].alloc->live;
	if (launch)
		launch_apply(exec, owner);
	exec->mapped = true;
	ok = back_with_memory(exec, peak);
	if (!ok)
		restore(exec, live, was_mapped);
	for (CUdevice d = 0; d < sim_drv.ndev; d++) {
		if (!ok)
			shrink(d, before[d]);
		note_high(d);
	}
	return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Lock held: a launch (or, without launch, an upload) of exec on the
 * context's stream: its effect on graph memory. On failure nothing has
 * changed, but that other executable graphs may have lost their
 * mappings. */
CUresult
sim_graph_mem_run(CUgraphExec exec, bool launch, CUcontext ctx)
{
	bool auto_free = launch && (exec->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	size_t ndev = (size_t)sim_drv.ndev;
	size_t *peak = calloc(ndev, sizeof(*peak)), *before = calloc(ndev, sizeof(*before));
	bool *live = calloc(exec->nsteps ? exec->nsteps : 1, sizeof(*live));
	CUresult rc = launch ? launch_check(exec, auto_free) : CUDA_SUCCESS;

	if (rc == CUDA_SUCCESS && (!peak || !before || !live))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS)
		rc = run_saved(exec, launch, ctx->id, peak, before, live);
	free(peak);
	free(before);
	free(live);
	return rc;
}

/* Lock held: an executable graph is being destroyed. Its mapping goes,
 * its allocations stay allocated while live. */
void
sim_graph_mem_exec_gone(CUgraphExec exec)
{
	exec->mapped = false;
	for (size_t i = 0; i < exec->nsteps; i++)
		if (exec->steps[i].alloc)
			sim_graph_alloc_put(exec->steps[i].alloc);
}

/* Lock held: cuMemFree or cuMemFreeAsync of addr. False when addr is not
 * the start of a live graph allocation. The memory goes back to the graph
 * memory pool, not to the device. */
bool
sim_graph_mem_free(uintptr_t addr)
{
	struct sim_graph_alloc *a = sim_graph_alloc_at(addr);

	if (!a || a->va != addr || !a->live)
		return false;
	a->live = false;
	release_if_unused(a);
	return true;
}

static void
trim(CUdevice dev)
{
	for (CUgraphExec e = sim_graph_execs; e; e = e->next)
		if (exec_need(e, dev, true))
			e->mapped = false;
	shrink(dev, pinned(dev));
}

/* Lock held: the context is being destroyed (its executable graphs are
 * gone already): its live allocations are freed and its device's graph
 * memory pool gives back what is not in use. */
void
sim_graph_mem_release_owner(CUcontext ctx)
{
	struct sim_graph_alloc *a, *next;

	for (a = sim_graph_allocs; a; a = next) {
		next = a->next;
		if (a->live && a->owner == ctx->id) {
			a->live = false;
			release_if_unused(a);
		}
	}
	shrink(ctx->device, used(ctx->device));
}

CUresult CUDAAPI
cuDeviceGraphMemTrim(CUdevice device)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!sim_device_get(device))
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	trim(device);
	sim_unlock();
	return CUDA_SUCCESS;
}

/* Every value is a cuuint64_t. */
CUresult CUDAAPI
cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	CUresult rc = sim_ready();
	struct sim_graph_pool *p;
	cuuint64_t v = 0;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!sim_device_get(device))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	p = pool_of(device);
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
		v = used(device);
		break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
		v = p->used_high;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
		v = p->reserved;
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		v = p->reserved_high;
		break;
	default:
		rc = CUDA_ERROR_INVALID_VALUE;
		break;
	}
	sim_unlock();
	if (rc == CUDA_SUCCESS)
		memcpy(value, &v, sizeof(v));
	return rc;
}

/* Only the high-water marks, and only reset (to the current value) by
 * setting 0. */
CUresult CUDAAPI
cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
	CUresult rc = sim_ready();
	struct sim_graph_pool *p;
	cuuint64_t v;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!sim_device_get(device))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, value, sizeof(v));
	if (v != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	p = pool_of(device);
	if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
		p->used_high = used(device);
	else if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
		p->reserved_high = p->reserved;
	else
		rc = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return rc;
}
