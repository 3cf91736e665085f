/* Shared by the files of the runtime self-test: test-sim-runtime.c
 * (errors, memory, pools, arrays, IPC, fork, capture and graphs, reset)
 * test-sim-runtime-streams.c (events, captures across streams, kernel
 * launches and attributes, device properties) and test-sim-runtime-host.c
 * (priorities, host work, peers, pointers, 2D copies, user objects).
 * Run with sim_env: one 1 GiB device. */
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#define GiB ((size_t)1 << 30)
#define MiB ((size_t)1 << 20)

/* Exported by the real library too, declared only for per-thread builds. */
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
						   cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamBeginCapture_ptsz(cudaStream_t stream,
						  enum cudaStreamCaptureMode mode);
cudaError_t CUDARTAPI cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph);
cudaError_t CUDARTAPI cudaStreamIsCapturing_ptsz(cudaStream_t stream,
						 enum cudaStreamCaptureStatus *pCaptureStatus);
cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
					   cudaStream_t stream);

extern int failures;

#define EXPECT(cond)                                                         \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__,    \
				__LINE__, #cond);                            \
			failures++;                                          \
		}                                                            \
	} while (0)

#define EXPECT_ERR(call, want)                                               \
	do {                                                                 \
		cudaError_t got_ = (call);                                   \
		if (got_ != (want)) {                                        \
			fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", \
				__FILE__, __LINE__, #call,                   \
				cudaGetErrorName(got_), #want);              \
			failures++;                                          \
		}                                                            \
	} while (0)

size_t used_bytes(void);

/* test-sim-runtime-streams.c */
void test_device_attributes(void);
void test_streams(void);

/* test-sim-runtime-host.c */
void test_host_work(void);
