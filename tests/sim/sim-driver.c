/* Simulated CUDA driver (libcuda.so.1): initialisation, versions and
 * device queries. A TEST FIXTURE: it gives the tests a device with a fixed,
 * configurable memory capacity so that out-of-memory is deterministic.
 * Contexts and streams: sim-driver-ctx.c. Memory: sim-driver-mem.c;
 * stream-ordered pools: sim-driver-pool.c; virtual memory management:
 * sim-driver-vmm.c; arrays: sim-driver-array.c; IPC: sim-driver-ipc.c;
 * stream capture: sim-driver-capture.c; graphs: sim-driver-graph.c and,
 * for graph-allocated memory, sim-driver-graphmem.c.
 * cuGetProcAddress: sim-driver-proc.c. Error strings: sim-driver-error.c. */
#include "sim-driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Device i's memory is mapped, when that range is free, at a fixed
 * address in the range the real driver uses, so that addresses repeat
 * from run to run as well as within one. */
#define SIM_VA_BASE   ((uintptr_t)0x200000000)
#define SIM_VA_STRIDE ((uintptr_t)1 << 32)

/* A device's allocations are placed in a virtual range this many times its
 * memory, as the real driver backs them with pages: memory that is free
 * in pieces is still free (the arena's limit is the memory itself). */
#define SIM_VA_FACTOR 4

struct sim_driver sim_drv = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.next_id = 1,
};

/* SIM_FORKED: this process is a child forked after the parent had
 * initialised the driver; nothing works in it (see fork_child). */
enum { SIM_UNINITIALIZED, SIM_READY, SIM_FAILED, SIM_FORKED };
static int sim_state = SIM_UNINITIALIZED;
static CUresult sim_init_result = CUDA_ERROR_NOT_INITIALIZED;
static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

void
sim_lock(void)
{
	pthread_mutex_lock(&sim_drv.lock);
}

void
sim_unlock(void)
{
	pthread_mutex_unlock(&sim_drv.lock);
}

/* Every entry point but cuInit, cuDriverGetVersion, cuGetProcAddress and
 * the error strings needs a successful cuInit first, as on the real driver. */
CUresult
sim_ready(void)
{
	if (__atomic_load_n(&sim_state, __ATOMIC_ACQUIRE) == SIM_READY)
		return CUDA_SUCCESS;
	return CUDA_ERROR_NOT_INITIALIZED;
}

/* A private mapping of bytes at hint when that range is free, elsewhere
 * if not, with its start aligned to align (a power of two, at least a
 * page). NORESERVE: an 80 GiB device costs nothing until a test writes
 * to it. 0 on failure. */
uintptr_t
sim_map_region(uintptr_t hint, size_t bytes, size_t align, int prot)
{
	size_t len = bytes + align;
	uintptr_t p, start;
	void *m;

	if (len < bytes)
		return 0;
	m = mmap((void *)hint, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	p = (uintptr_t)m;
	start = (p + align - 1) & ~(uintptr_t)(align - 1);
	if (start > p)
		munmap(m, start - p);
	if (start + bytes < p + len)
		munmap((void *)(start + bytes), p + len - start - bytes);
	return start;
}

static uintptr_t
map_device_memory(int ordinal, size_t bytes)
{
	size_t stride = (bytes + SIM_VA_STRIDE - 1) & ~(SIM_VA_STRIDE - 1);

	return sim_map_region(SIM_VA_BASE + (uintptr_t)ordinal * stride, bytes,
			      (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
}

static CUresult
init_device(struct sim_device *d, int ordinal, const struct sim_config *cfg)
{
	size_t usable = (cfg->capacity - cfg->reserved) & ~(SIM_ARENA_GRANULE - 1);
	size_t span = usable <= SIZE_MAX / SIM_VA_FACTOR ? usable * SIM_VA_FACTOR : usable;
	uintptr_t base = usable ? map_device_memory(ordinal, span) : 0;

	if (usable && !base) {
		span = usable;	/* no room for the larger range: memory alone */
		base = map_device_memory(ordinal, span);
	}
	if (usable && !base) {
		fprintf(stderr, "cudasim: cannot map %zu bytes for device %d\n",
			usable, ordinal);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	d->capacity = cfg->capacity;
	d->reserved = cfg->reserved;
	d->primary = (struct CUctx_st){ .device = ordinal, .primary = true };
	/* An empty arena still needs a base no other device or host pointer
	 * can match; its own address is as good as any. */
	if (!sim_arena_init(&d->arena, base ? base : (uintptr_t)d, base ? span : 0))
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_arena_set_limit(&d->arena, usable);
	sim_pool_init_default(&d->default_pool, ordinal);
	d->current_pool = &d->default_pool;
	return CUDA_SUCCESS;
}

static CUresult
init_devices(void)
{
	struct sim_config cfg;
	CUresult rc = CUDA_SUCCESS;

	if (!sim_config_load(&cfg))
		return CUDA_ERROR_INVALID_VALUE;
	if (cfg.device_count == 0)
		return CUDA_ERROR_NO_DEVICE;
	sim_drv.dev = calloc((size_t)cfg.device_count, sizeof(*sim_drv.dev));
	if (!sim_drv.dev)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < cfg.device_count && rc == CUDA_SUCCESS; i++)
		rc = init_device(&sim_drv.dev[i], i, &cfg);
	sim_drv.ndev = cfg.device_count;
	return rc;
}

/* fork: the driver lock is taken across fork() so that the child never
 * inherits it held by a thread that does not exist there. */
static void
fork_prepare(void)
{
	sim_lock();
}

static void
fork_parent(void)
{
	sim_unlock();
}

/* A child forked after the driver was initialised cannot use it, as
 * with the real driver: cuInit and every call that needs it return
 * CUDA_ERROR_NOT_INITIALIZED there (the runtime reports
 * cudaErrorInitializationError). A child forked before cuInit is free to
 * initialise its own. */
static void
fork_child(void)
{
	if (__atomic_load_n(&sim_state, __ATOMIC_ACQUIRE) == SIM_READY)
		__atomic_store_n(&sim_state, SIM_FORKED, __ATOMIC_RELEASE);
	sim_unlock();
}

static void
init_once(void)
{
	sim_lock();
	sim_init_result = init_devices();
	sim_unlock();
	__atomic_store_n(&sim_state,
			 sim_init_result == CUDA_SUCCESS ? SIM_READY : SIM_FAILED,
			 __ATOMIC_RELEASE);
	if (sim_init_result == CUDA_SUCCESS)
		pthread_atfork(fork_prepare, fork_parent, fork_child);
}

CUresult CUDAAPI
cuInit(unsigned int Flags)
{
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&sim_once, init_once);
	if (__atomic_load_n(&sim_state, __ATOMIC_ACQUIRE) == SIM_FORKED)
		return CUDA_ERROR_NOT_INITIALIZED;
	return sim_init_result;
}

CUresult CUDAAPI
cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/* NULL for an ordinal that is not a device. Needs sim_ready(). */
struct sim_device *
sim_device_get(CUdevice dev)
{
	if (dev < 0 || dev >= sim_drv.ndev)
		return NULL;
	return &sim_drv.dev[dev];
}

/* The device whose memory holds [addr, addr + bytes), or NULL for memory
 * that is not device memory (host memory, with unified addressing). */
struct sim_device *
sim_device_of(uintptr_t addr, size_t bytes)
{
	for (int i = 0; i < sim_drv.ndev; i++)
		if (sim_drv.dev[i].arena.size &&
		    sim_arena_contains(&sim_drv.dev[i].arena, addr, bytes))
			return &sim_drv.dev[i];
	return NULL;
}

CUresult CUDAAPI
cuDeviceGetCount(int *count)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_drv.ndev;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "cudasim device %d", dev);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = sim_drv.dev[dev].capacity;
	return CUDA_SUCCESS;
}

/* A version-4 UUID that names the ordinal: 00000000-0000-4000-8000-
 * followed by the ordinal in 12 hex digits, the UUID the simulated NVML
 * gives the same device (sim-nvml.c). */
CUresult CUDAAPI
cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	memset(uuid->bytes, 0, sizeof(uuid->bytes));
	uuid->bytes[6] = 0x40;
	uuid->bytes[8] = (char)0x80;
	for (int i = 0; i < 6; i++)
		uuid->bytes[15 - i] = (char)(((unsigned)dev >> (8 * i)) & 0xff);
	return CUDA_SUCCESS;
}

/* The CUDA 9.2 ABI, still exported; the same UUID. */

CUresult CUDAAPI
cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

/* Attributes of an H100 SXM (compute capability 9.0), except where the
 * simulator differs: what it does not implement (GPUDirect RDMA, IPC
 * events, external semaphores, fabric handles, NUMA) is reported as
 * unsupported. The launch limits are the ones cuLaunchKernel checks.
 * Anything not listed is 0. */
static int
hopper_attribute(CUdevice_attribute attrib)
{
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return SIM_MAX_THREADS_PER_BLOCK;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return SIM_MAX_BLOCK_DIM_X;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return SIM_MAX_BLOCK_DIM_Y;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return SIM_MAX_BLOCK_DIM_Z;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return (int)SIM_MAX_GRID_DIM_X;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return SIM_MAX_GRID_DIM_Y;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return SIM_MAX_GRID_DIM_Z;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return SIM_MAX_SHARED_PER_BLOCK;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
	case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 30 << 20;
	case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return (int)SIM_ARENA_GRANULE;
	case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: return 16384;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT: return 16384;
	case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
	case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
		return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
	case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: return 4;
	case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return 0x233010de;
	case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
	default: return 0;
	}
}

/* What differs from one simulated device to the next. */
static int
attribute_value(CUdevice_attribute attrib, CUdevice dev)
{
	return attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID ? dev + 1 : hopper_attribute(attrib);
}

CUresult CUDAAPI
cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pi = attribute_value(attrib, dev);
	return CUDA_SUCCESS;
}
