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

/* What a block in a blockmap is, for the maps that mix kinds. */
enum sim_kind {
	SIM_KIND_DEVICE = 1,
	SIM_KIND_MANAGED,
	SIM_KIND_PINNED,
	SIM_KIND_STREAM,
	SIM_KIND_CONTEXT,
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

struct sim_device {
	size_t capacity;
	size_t reserved;
	struct sim_arena arena;
	struct CUctx_st primary;
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
	uint32_t next_id;
};

/* sim-driver.c */
extern struct sim_driver sim_drv;
CUresult sim_ready(void);
void sim_lock(void);
void sim_unlock(void);
struct sim_device *sim_device_get(CUdevice dev);
struct sim_device *sim_device_of(uintptr_t addr, size_t bytes);

/* sim-driver-ctx.c: call with the lock held */
CUresult sim_ctx_enter(CUcontext *ctx);
CUresult sim_stream_check(CUstream stream, CUcontext ctx);

/* sim-driver-mem.c: call with the lock held */
void sim_pinned_release_owner(uint32_t owner);

/* Exported entry points that cuda.h does not declare in a default build:
 * the per-thread-default-stream twins, which the driver hands out through
 * cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
				    CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
				      size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				      CUstream hStream);
