/* Internals shared by the files of the simulated driver (libcuda.so.1).
 * Only the cu* entry points are exported (libcuda.map); everything here
 * is local to the library. */
#pragma once

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>

#include "sim-arena.h"
#include "sim-config.h"

/* The version cuDriverGetVersion reports: a CUDA 13.0 driver. */
#define SIM_DRIVER_VERSION 13000

/* The granularity of virtual memory management (cuMemCreate, cuMemMap,
 * cuMemAddressReserve) and of the device memory a pool reserves: 2 MiB,
 * as on current NVIDIA GPUs. */
#define SIM_GRANULARITY ((size_t)2 << 20)

/* What a block in a blockmap is, for the maps that mix kinds. */
enum sim_kind {
	SIM_KIND_DEVICE = 1,
	SIM_KIND_MANAGED,
	SIM_KIND_PINNED,
	SIM_KIND_STREAM,
	SIM_KIND_CONTEXT,
	SIM_KIND_POOL_CHUNK,   /* device memory a pool holds in reserve */
	SIM_KIND_POOL_ALLOC,   /* a block carved from a pool's chunk */
	SIM_KIND_PHYSICAL,     /* cuMemCreate */
	SIM_KIND_ARRAY,
	SIM_KIND_REGISTERED,   /* cuMemHostRegister */
	SIM_KIND_RESERVATION,  /* cuMemAddressReserve */
	SIM_KIND_IMPORTED,     /* cuIpcOpenMemHandle */
};

struct CUctx_st {
	uint32_t id;        /* owner tag of its memory and streams; fresh per (re)creation */
	CUdevice device;
	bool primary;
	unsigned retains;   /* primary contexts only */
};

struct CUstream_st {
	uint32_t owner;     /* id of the context it was created in */
	CUdevice device;
	unsigned flags;
};

/* A chunk of device memory that a pool holds, and the pool's blocks in it. */
struct sim_pool_chunk {
	struct sim_arena blocks;        /* base and size: the chunk's device memory */
	struct sim_pool_chunk *next;    /* the pool's chunks, in address order */
};

/* A stream-ordered memory pool (sim-driver-pool.c). */
struct CUmemPoolHandle_st {
	CUdevice device;
	uint32_t owner;                 /* creating context's id; 0: a default pool */
	bool destroyed;                 /* destroyed with blocks still live */
	size_t max_size;                /* 0: the device's capacity */
	cuuint64_t release_threshold;
	size_t reserved, reserved_high, used_high;
	int reuse[3];                   /* the CU_MEMPOOL_ATTR_REUSE_* switches, stored only */
	struct sim_pool_chunk *chunks;
	struct CUmemPoolHandle_st *next; /* every pool, default ones first */
};

struct sim_device {
	size_t capacity;
	size_t reserved;
	struct sim_arena arena;
	struct CUctx_st primary;
	struct CUmemPoolHandle_st default_pool;
	CUmemoryPool current_pool;      /* cuDeviceSetMemPool; cuMemAllocAsync uses it */
};

/* All mutable driver state, under one lock: a test fixture needs to be
 * obviously correct far more than it needs to scale. */
struct sim_driver {
	pthread_mutex_t lock;
	int ndev;
	struct sim_device *dev;
	struct sim_blockmap contexts;  /* live contexts, keyed by CUcontext */
	struct sim_blockmap streams;   /* keyed by CUstream, owner = context id */
	struct sim_blockmap pinned;    /* pinned host memory, keyed by pointer */
	struct sim_blockmap registered; /* cuMemHostRegister'ed ranges, keyed by pointer */
	uint32_t next_id;              /* context ids; 0 is no context */
};

/* sim-driver.c */
extern struct sim_driver sim_drv;
CUresult sim_ready(void);
void sim_lock(void);
void sim_unlock(void);
struct sim_device *sim_device_get(CUdevice dev);
struct sim_device *sim_device_of(uintptr_t addr, size_t bytes);
uintptr_t sim_map_region(uintptr_t hint, size_t bytes, size_t align, int prot);

/* sim-driver-ctx.c: call with the lock held */
CUresult sim_ctx_enter(CUcontext *ctx);
CUresult sim_stream_check(CUstream stream, CUcontext ctx);

/* sim-driver-mem.c: call with the lock held */
void sim_pinned_release_owner(uint32_t owner);
CUresult sim_mem_free(CUdeviceptr dptr, CUstream stream);

/* sim-driver-pool.c: call with the lock held */
void sim_pool_init_default(CUmemoryPool pool, CUdevice dev);
CUresult sim_pool_alloc(CUmemoryPool pool, size_t bytes, uint32_t owner, CUdeviceptr *dptr);
bool sim_pool_free(uintptr_t addr);
const struct sim_block *sim_pool_block(uintptr_t addr);
void sim_pools_synchronize(CUdevice dev);
void sim_pools_release_owner(CUcontext ctx);

/* sim-driver-vmm.c: call with the lock held */
bool sim_vmm_owns(uintptr_t addr);
bool sim_vmm_mapped(uintptr_t addr, size_t bytes);
bool sim_vmm_range(uintptr_t addr, uintptr_t *base, size_t *size);

/* sim-driver-array.c: call with the lock held */
void sim_arrays_release_owner(uint32_t owner);

/* sim-driver-ipc.c: call with the lock held */
bool sim_ipc_imported(uintptr_t addr, size_t bytes);
bool sim_ipc_range(uintptr_t addr, uintptr_t *base, size_t *size);
void sim_ipc_release_owner(uint32_t owner);

/* Exported entry points that cuda.h does not declare in a default build:
 * the per-thread-default-stream twins, which the driver hands out through
 * cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					      CUstream hStream);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				    CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
				      size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				      CUstream hStream);

/* The older ABIs of two functions that cuda.h renames to their _v2 (the
 * signatures did not change; the real driver exports both, and so does
 * the simulator). Driver code calls the _v2 names explicitly. */
#undef cuMemHostRegister
#undef cuIpcOpenMemHandle
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
