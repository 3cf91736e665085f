/* graph-footprint: three graphs with memory nodes sharing the device's
 * graph memory pool, and what cudaDeviceGetGraphMemAttribute says of it
 * at each step. Streams s (the origin of every capture), t and u are
 * non-blocking.
 *
 *   build_explicit  g1: cudaGraphCreate; cudaGraphAddMemAllocNode(8388608
 *                   bytes); then cudaStreamBeginCaptureToGraph(s, g1,
 *                   after the alloc node) and fill<float> over it, so the
 *                   kernel node follows the alloc node;
 *                   cudaStreamEndCapture; cudaGraphAddMemFreeNode after
 *                   the kernel node. 3 nodes.
 *   build_stateful  g2, captured on s: cudaMallocAsync(scratch, 6291455),
 *                   fill<float>, cudaMallocAsync(state, 3145728),
 *                   scale<float> from scratch into state,
 *                   cudaFreeAsync(scratch). The state is not freed in the
 *                   graph. 5 nodes.
 *   build_branches  g3, captured on s across streams: s:
 *                   cudaMallocAsync(d, 2097152), fill<float>; t and u join
 *                   through an event; t: cudaMallocAsync(e, 5242880) and
 *                   scale<float> from d into e, then an event that u waits
 *                   on; u: square<float> over d, then (after t's event)
 *                   cudaFreeAsync(d); t: cudaFreeAsync(e); both joined back
 *                   into s. 7 nodes.
 *   main            instantiate g1 (flags 0), g2 (auto-free on launch), g3
 *                   (flags 0); then, printing the graph memory after each:
 *                   launch g1, launch g2, cudaGraphUpload g3, launch g3,
 *                   launch g1 again, launch g2 again (which frees the first
 *                   launch's state before it runs), cudaFree(state),
 *                   destroy the three executable graphs and the graphs,
 *                   cudaDeviceGraphMemTrim(0), and last the high-water
 *                   marks, before and after they are reset (set to 0).
 *                   cudaStreamSynchronize(s) after each launch.
 *
 * Expected numbers:
 *   Graph allocations: 5 nodes, 25165823 bytes: g1 1 explicit (8388608),
 *   g2 2 captured (6291455 scratch, 3145728 state), g3 2 captured (2097152
 *   on the origin s, 5242880 on the joined stream t). Free nodes: g1 1
 *   explicit, g2 1 captured (scratch), g3 2 captured (d on u, e on t).
 *   Launches: g1 2, g2 2, g3 1; uploads 1. Each launch allocates all of its
 *   graph's allocations and frees all but g2's state; g2's first state is
 *   freed by g2's second launch (auto-free), the second by cudaFree after
 *   it. Kernel nodes: 1 + 2 + 3 = 6 (no launch outside the graphs).
 *   No cudaMalloc, no pool allocation outside the graphs. Live at exit:
 *   nothing.
 *   On the simulated device (allocations rounded up to 2 MiB: g1 8 MiB,
 *   g2 6 + 4 MiB, g3 2 + 6 MiB; graph memory used = live allocations plus
 *   the largest mapping an executable graph keeps), used / reserved in
 *   MiB: instantiated 0/0 (nothing is mapped before a launch or upload),
 *   launch g1 8/8, launch g2 12/12 (the 4 MiB state plus g1's
 *   8 MiB mapping), upload g3 12/12, launch g3 12/12, relaunch g1 12/12,
 *   relaunch g2 12/12, cudaFree(state) 10/12 (g2's mapping now takes the
 *   state's 4 MiB too), executable graphs destroyed 0/12, trim 0/0;
 *   high-water marks 12582912 and 12582912, 0 and 0 after the reset. The
 *   device shows the reserved bytes in use at each step.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include <cstdio>
#include <initializer_list>

#include <cuda_runtime.h>

#include "cuda-check.h"
#include "cuda-kernels.cuh"

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kG1Bytes = 8 * kMiB;
constexpr size_t kScratchBytes = 6 * kMiB - 1;
constexpr size_t kStateBytes = 3 * kMiB;
constexpr size_t kDBytes = 2 * kMiB;
constexpr size_t kEBytes = 5 * kMiB;

static cudaStream_t s, t, u;

static unsigned long long
graph_mem(cudaGraphMemAttributeType attr)
{
	cuuint64_t v = 0;

	must(cudaDeviceGetGraphMemAttribute(0, attr, &v), "cudaDeviceGetGraphMemAttribute");
	return static_cast<unsigned long long>(v);
}

static size_t
device_in_use()
{
	size_t free_bytes, total;

	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	return total - free_bytes;
}

static void
report(const char *step)
{
	printf("%s: graph memory used %llu reserved %llu; device memory in use %zu\n", step,
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent), device_in_use());
}

static size_t
node_count(cudaGraph_t g)
{
	size_t n = 0;

	must(cudaGraphGetNodes(g, nullptr, &n), "cudaGraphGetNodes");
	return n;
}

/* The node a capture's next node would depend on: the last one captured. */
static cudaGraphNode_t
last_captured(cudaStream_t stream)
{
	const cudaGraphNode_t *deps = nullptr;
	cudaStreamCaptureStatus status;
	size_t n = 0;

	must(cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr, &n),
	     "cudaStreamGetCaptureInfo");
	return n == 1 ? deps[0] : nullptr;
}

static __attribute__((noinline)) cudaGraph_t
build_explicit()
{
	cudaMemAllocNodeParams params = {};
	cudaGraphNode_t alloc, kernel, release;
	size_t n = kG1Bytes / sizeof(float);
	cudaGraph_t g, captured;

	params.poolProps.allocType = cudaMemAllocationTypePinned;
	params.poolProps.location.type = cudaMemLocationTypeDevice;
	params.poolProps.location.id = 0;
	params.bytesize = kG1Bytes;
	must(cudaGraphCreate(&g, 0), "build_explicit: cudaGraphCreate");
	must(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params),
	     "build_explicit: cudaGraphAddMemAllocNode");
	must(cudaStreamBeginCaptureToGraph(s, g, &alloc, nullptr, 1, cudaStreamCaptureModeGlobal),
	     "build_explicit: cudaStreamBeginCaptureToGraph");
	fill<float><<<blocks_for(n), kThreads, 0, s>>>(static_cast<float *>(params.dptr), n, 0.5f);
	must(cudaGetLastError(), "build_explicit: fill");
	kernel = last_captured(s);
	must(cudaStreamEndCapture(s, &captured), "build_explicit: cudaStreamEndCapture");
	must(cudaGraphAddMemFreeNode(&release, g, &kernel, 1, params.dptr),
	     "build_explicit: cudaGraphAddMemFreeNode");
	return g;
}

static __attribute__((noinline)) cudaGraph_t
build_stateful(float **state)
{
	size_t n = kScratchBytes / sizeof(float), m = kStateBytes / sizeof(float);
	float *scratch;
	cudaGraph_t g;

	must(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "build_stateful: begin");
	must(cudaMallocAsync(&scratch, kScratchBytes, s), "build_stateful: cudaMallocAsync scratch");
	fill<float><<<blocks_for(n), kThreads, 0, s>>>(scratch, n, 3.0f);
	must(cudaGetLastError(), "build_stateful: fill");
	must(cudaMallocAsync(state, kStateBytes, s), "build_stateful: cudaMallocAsync state");
	scale<float><<<blocks_for(m), kThreads, 0, s>>>(*state, scratch, m, 0.25f);
	must(cudaGetLastError(), "build_stateful: scale");
	must(cudaFreeAsync(scratch, s), "build_stateful: cudaFreeAsync scratch");
	must(cudaStreamEndCapture(s, &g), "build_stateful: end");
	return g;
}

static void
wait_for(cudaStream_t waiter, cudaStream_t on, cudaEvent_t e)
{
	must(cudaEventRecord(e, on), "cudaEventRecord");
	must(cudaStreamWaitEvent(waiter, e, 0), "cudaStreamWaitEvent");
}

static __attribute__((noinline)) cudaGraph_t
build_branches()
{
	size_t nd = kDBytes / sizeof(float);
	cudaEvent_t forked, t_read, t_done, u_done;
	float *d, *e;
	cudaGraph_t g;

	for (cudaEvent_t *ev : { &forked, &t_read, &t_done, &u_done })
		must(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreateWithFlags");
	must(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "build_branches: begin");
	must(cudaMallocAsync(&d, kDBytes, s), "build_branches: cudaMallocAsync d");
	fill<float><<<blocks_for(nd), kThreads, 0, s>>>(d, nd, 1.0f);
	must(cudaGetLastError(), "build_branches: fill");
	wait_for(t, s, forked);
	must(cudaStreamWaitEvent(u, forked, 0), "build_branches: fork u");
	must(cudaMallocAsync(&e, kEBytes, t), "build_branches: cudaMallocAsync e");
	scale<float><<<blocks_for(nd), kThreads, 0, t>>>(e, d, nd, 2.0f);
	must(cudaGetLastError(), "build_branches: scale");
	must(cudaEventRecord(t_read, t), "build_branches: t read");
	square<float><<<blocks_for(nd), kThreads, 0, u>>>(d, nd);
	must(cudaGetLastError(), "build_branches: square");
	must(cudaStreamWaitEvent(u, t_read, 0), "build_branches: u waits for t");
	must(cudaFreeAsync(d, u), "build_branches: cudaFreeAsync d");
	must(cudaFreeAsync(e, t), "build_branches: cudaFreeAsync e");
	wait_for(s, t, t_done);
	wait_for(s, u, u_done);
	must(cudaStreamEndCapture(s, &g), "build_branches: end");
	for (cudaEvent_t ev : { forked, t_read, t_done, u_done })
		must(cudaEventDestroy(ev), "cudaEventDestroy");
	return g;
}

static void
launch(cudaGraphExec_t exec, const char *step)
{
	must(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
	must(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	report(step);
}

static void
print_high(const char *when)
{
	printf("%s: high-water marks used %llu reserved %llu\n", when,
	       graph_mem(cudaGraphMemAttrUsedMemHigh), graph_mem(cudaGraphMemAttrReservedMemHigh));
}

static void
reset_high()
{
	cuuint64_t zero = 0;

	must(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero),
	     "cudaDeviceSetGraphMemAttribute used");
	must(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero),
	     "cudaDeviceSetGraphMemAttribute reserved");
}

int
main()
{
	cudaGraphExec_t e1, e2, e3;
	cudaGraph_t g1, g2, g3;
	float *state;

	must(cudaSetDevice(0), "cudaSetDevice");
	for (cudaStream_t *st : { &s, &t, &u })
		must(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
	g1 = build_explicit();
	g2 = build_stateful(&state);
	g3 = build_branches();
	printf("graphs: g1 %zu nodes, g2 %zu nodes, g3 %zu nodes\n", node_count(g1),
	       node_count(g2), node_count(g3));
	must(cudaGraphInstantiate(&e1, g1, 0), "cudaGraphInstantiate g1");
	must(cudaGraphInstantiate(&e2, g2, cudaGraphInstantiateFlagAutoFreeOnLaunch),
	     "cudaGraphInstantiate g2");
	must(cudaGraphInstantiate(&e3, g3, 0), "cudaGraphInstantiate g3");
	report("instantiated");

	launch(e1, "launch g1");
	launch(e2, "launch g2");
	must(cudaGraphUpload(e3, s), "cudaGraphUpload g3");
	report("upload g3");
	launch(e3, "launch g3");
	launch(e1, "relaunch g1");
	launch(e2, "relaunch g2");
	must(cudaFree(state), "cudaFree state");
	report("free state");

	for (cudaGraphExec_t e : { e1, e2, e3 })
		must(cudaGraphExecDestroy(e), "cudaGraphExecDestroy");
	for (cudaGraph_t g : { g1, g2, g3 })
		must(cudaGraphDestroy(g), "cudaGraphDestroy");
	report("executable graphs destroyed");
	must(cudaDeviceGraphMemTrim(0), "cudaDeviceGraphMemTrim");
	report("trim");
	print_high("before reset");
	reset_high();
	print_high("after reset");
	for (cudaStream_t st : { s, t, u })
		must(cudaStreamDestroy(st), "cudaStreamDestroy");
	return 0;
}
