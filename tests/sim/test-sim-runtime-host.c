/* Self-test of the simulated runtime: what PyTorch asks of streams,
 * devices and pointers besides memory (priorities, host functions and
 * callbacks, peers and PCI ids, pointer attributes, 2D and peer copies,
 * pool access, IPC events, graph node dependencies, generic nodes and
 * user objects). Run with sim_env: one 1 GiB device. */
#include "test-sim-runtime.h"

#include <cuda_profiler_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
count_call(void *data)
{
	(*(int *)data)++;
}

static void CUDART_CB
count_callback(cudaStream_t stream, cudaError_t status, void *data)
{
	if (status == cudaSuccess)
		(*(int *)data)++;
}

static void
test_priorities_and_host_work(void)
{
	int least = 1, greatest = 1, prio = 1, calls = 0;
	cudaStream_t s = NULL, c = NULL;
	cudaGraph_t g = NULL;
	size_t n = 0;

	EXPECT_ERR(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
	EXPECT(least == 0 && greatest == -5);
	EXPECT_ERR(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -3), cudaSuccess);
	EXPECT_ERR(cudaStreamGetPriority(s, &prio), cudaSuccess);
	EXPECT(prio == -3);
	EXPECT_ERR(cudaStreamCreateWithPriority(&c, cudaStreamDefault, -100), cudaSuccess);
	EXPECT_ERR(cudaStreamGetPriority(c, &prio), cudaSuccess);
	EXPECT(prio == -5);
	EXPECT_ERR(cudaStreamGetPriority(NULL, &prio), cudaSuccess);
	EXPECT(prio == 0);

	/* Work is done when issued: the function runs before the call returns. */
	EXPECT_ERR(cudaLaunchHostFunc(s, count_call, &calls), cudaSuccess);
	EXPECT(calls == 1);
	EXPECT_ERR(cudaStreamAddCallback(s, count_callback, &calls, 0), cudaSuccess);
	EXPECT(calls == 2);
	EXPECT_ERR(cudaStreamAddCallback(s, count_callback, &calls, 1), cudaErrorInvalidValue);

	/* Captured: a host node that does nothing now; a callback refused. */
	EXPECT_ERR(cudaStreamBeginCapture(c, cudaStreamCaptureModeRelaxed), cudaSuccess);
	EXPECT_ERR(cudaLaunchHostFunc(c, count_call, &calls), cudaSuccess);
	EXPECT(calls == 2);
	EXPECT_ERR(cudaStreamAddCallback(c, count_callback, &calls, 0),
		   cudaErrorStreamCaptureUnsupported);
	EXPECT_ERR(cudaStreamEndCapture(c, &g), cudaSuccess);
	EXPECT_ERR(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
	EXPECT(n == 1);
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT_ERR(cudaStreamDestroy(s), cudaSuccess);
	EXPECT_ERR(cudaStreamDestroy(c), cudaSuccess);
	cudaGetLastError();
}

static void
test_devices(void)
{
	char bus[32];
	int can = -1;

	EXPECT_ERR(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0), cudaSuccess);
	EXPECT(strcmp(bus, "00000000:01:00.0") == 0);
	EXPECT_ERR(cudaDeviceGetPCIBusId(bus, sizeof(bus), 1), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaDeviceCanAccessPeer(&can, 0, 0), cudaSuccess);
	EXPECT(can == 0);
	EXPECT_ERR(cudaDeviceCanAccessPeer(&can, 0, 1), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaDeviceEnablePeerAccess(1, 0), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaProfilerStart(), cudaSuccess);
	EXPECT_ERR(cudaProfilerStop(), cudaSuccess);
	cudaGetLastError();
}

static void
test_pointers_and_copies(void)
{
	struct cudaPointerAttributes a;
	char host[64] = "0123456789abcdef0123456789abcdef", back[64] = { 0 }, *dev = NULL;
	void *pinned = NULL, *managed = NULL;
	int local = 0;

	EXPECT_ERR(cudaMalloc((void **)&dev, 4096), cudaSuccess);
	EXPECT_ERR(cudaMallocHost(&pinned, 4096), cudaSuccess);
	EXPECT_ERR(cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal), cudaSuccess);
	EXPECT_ERR(cudaPointerGetAttributes(&a, dev + 100), cudaSuccess);
	EXPECT(a.type == cudaMemoryTypeDevice && a.device == 0 &&
	       a.devicePointer == dev + 100 && a.hostPointer == NULL);
	EXPECT_ERR(cudaPointerGetAttributes(&a, pinned), cudaSuccess);
	EXPECT(a.type == cudaMemoryTypeHost && a.hostPointer == pinned);
	EXPECT_ERR(cudaPointerGetAttributes(&a, managed), cudaSuccess);
	EXPECT(a.type == cudaMemoryTypeManaged && a.hostPointer == managed);
	EXPECT_ERR(cudaPointerGetAttributes(&a, &local), cudaSuccess);
	EXPECT(a.type == cudaMemoryTypeUnregistered);

	/* Two rows of 16 bytes, pitches 32 on the host and 64 on the device. */
	EXPECT_ERR(cudaMemcpy2DAsync(dev, 64, host, 32, 16, 2, cudaMemcpyHostToDevice, 0),
		   cudaSuccess);
	EXPECT_ERR(cudaMemcpy2DAsync(back, 16, dev, 64, 16, 2, cudaMemcpyDeviceToHost, 0),
		   cudaSuccess);
	EXPECT(memcmp(back, host, 16) == 0 && memcmp(back + 16, host + 32, 16) == 0);
	EXPECT_ERR(cudaMemcpy2DAsync(dev, 8, host, 32, 16, 2, cudaMemcpyHostToDevice, 0),
		   cudaErrorInvalidPitchValue);
	EXPECT_ERR(cudaMemcpy2DAsync(NULL, 64, host, 32, 16, 2, cudaMemcpyHostToDevice, 0),
		   cudaErrorInvalidValue);
	EXPECT_ERR(cudaMemcpyPeerAsync(dev + 1024, 0, dev, 0, 16, 0), cudaSuccess);
	EXPECT_ERR(cudaMemcpy(back, dev + 1024, 16, cudaMemcpyDeviceToHost), cudaSuccess);
	EXPECT(memcmp(back, host, 16) == 0);
	EXPECT_ERR(cudaMemcpyPeerAsync(dev, 1, dev, 0, 16, 0), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaFree(dev), cudaSuccess);
	EXPECT_ERR(cudaFreeHost(pinned), cudaSuccess);
	EXPECT_ERR(cudaFree(managed), cudaSuccess);
	cudaGetLastError();
}

static void
test_pool_access_and_ipc_events(void)
{
	struct cudaMemAccessDesc d = { .location = { cudaMemLocationTypeDevice, 0 },
				       .flags = cudaMemAccessFlagsProtReadWrite };
	cudaIpcEventHandle_t h;
	cudaMemPool_t pool = NULL;
	cudaEvent_t e = NULL;

	EXPECT_ERR(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
	EXPECT_ERR(cudaMemPoolSetAccess(pool, &d, 1), cudaSuccess);
	d.location.id = 3;
	EXPECT_ERR(cudaMemPoolSetAccess(pool, &d, 1), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess),
		   cudaSuccess);
	EXPECT_ERR(cudaIpcGetEventHandle(&h, e), cudaErrorNotSupported);
	EXPECT_ERR(cudaEventDestroy(e), cudaSuccess);
	cudaGetLastError();
}

static void
destroy_object(void *data)
{
	(*(int *)data)++;
}

static void
test_graph_extras(void)
{
	struct cudaGraphNodeParams p = { .type = cudaGraphNodeTypeEmpty };
	cudaGraphNode_t a = NULL, b = NULL, deps[2] = { NULL, NULL };
	cudaUserObject_t o = NULL;
	cudaGraph_t g = NULL;
	size_t n = 0;
	int destroyed = 0;

	EXPECT_ERR(cudaGraphCreate(&g, 0), cudaSuccess);
	EXPECT_ERR(cudaGraphAddNode(&a, g, NULL, NULL, 0, &p), cudaSuccess);
	EXPECT_ERR(cudaGraphAddNode(&b, g, &a, NULL, 1, &p), cudaSuccess);
	EXPECT_ERR(cudaGraphNodeGetDependencies(b, NULL, NULL, &n), cudaSuccess);
	EXPECT(n == 1);
	n = 2;
	EXPECT_ERR(cudaGraphNodeGetDependencies(b, deps, NULL, &n), cudaSuccess);
	EXPECT(n == 1 && deps[0] == a);
	p.type = cudaGraphNodeTypeKernel;
	EXPECT_ERR(cudaGraphAddNode(&b, g, NULL, NULL, 0, &p), cudaErrorNotSupported);

	/* The graph holds two references; its destruction drops them. */
	EXPECT_ERR(cudaUserObjectCreate(&o, &destroyed, destroy_object, 1,
					cudaUserObjectNoDestructorSync), cudaSuccess);
	EXPECT_ERR(cudaGraphRetainUserObject(g, o, 2, 0), cudaSuccess);
	EXPECT_ERR(cudaUserObjectRelease(o, 1), cudaSuccess);
	EXPECT(destroyed == 0);
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT(destroyed == 1);
	cudaGetLastError();
}

void
test_host_work(void)
{
	test_priorities_and_host_work();
	test_devices();
	test_pointers_and_copies();
	test_pool_access_and_ipc_events();
	test_graph_extras();
	EXPECT(used_bytes() == 0);
}
