/* fork-join: one CUDA graph captured from three streams, as a framework
 * captures a step that runs branches concurrently. Streams a, b and c are
 * non-blocking; events are made with cudaEventDisableTiming.
 *
 *   capture         memtrace_mark("capture") when under memtrace;
 *                   cudaStreamBeginCapture(a, global), then:
 *     produce_on_a  a: cudaMallocAsync(x, 4194304) and fill<float> over x;
 *                   cudaEventRecord(forked, a); b and c
 *                   cudaStreamWaitEvent(forked): both join the capture.
 *     branch_b      b: cudaMallocAsync(y, 1572864), scale<float> from the
 *                   first half of x into y; cudaEventRecord(b_read, b);
 *                   cudaFreeAsync(y, b): b frees its own allocation.
 *     branch_c      c: square<float> over the second half of x;
 *                   cudaStreamWaitEvent(c, b_read), then cudaFreeAsync(x,
 *                   c): c frees a's allocation, after b has read it.
 *     join          cudaEventRecord(b_done, b), cudaEventRecord(c_done,
 *                   c); a waits on both; cudaStreamEndCapture(a).
 *   instantiate     cudaGraphInstantiate(flags 0).
 *   launch          memtrace_mark("launch"); cudaGraphLaunch(exec, a) five
 *                   times, then cudaStreamSynchronize(a).
 *   teardown        memtrace_mark("teardown"); cudaGraphExecDestroy,
 *                   cudaGraphDestroy, cudaDeviceGraphMemTrim(0); events and
 *                   streams destroyed.
 *
 * Expected numbers:
 *   Captured, one graph: cudaMallocAsync 2 (x 4194304 bytes on a in
 *   produce_on_a, y 1572864 bytes on the joined stream b in branch_b;
 *   5767168 bytes), cudaFreeAsync 2 (x on c in branch_c, y on b in
 *   branch_b), kernel launches 3 (fill on a, scale on b, square on c).
 *   Nothing is allocated or freed at these calls, and no kernel is
 *   launched outside the capture. The graph has 7 nodes: 2 memory-alloc,
 *   2 memory-free, 3 kernel (event records and waits are edges, not
 *   nodes). cudaGraphInstantiate 1, cudaGraphLaunch 5 (all succeed): each
 *   launch allocates x and y and frees both, so nothing is live between
 *   launches (10 graph allocations made live, 10 freed, 28835840 bytes
 *   each way). cudaStreamSynchronize 1, cudaGraphExecDestroy 1,
 *   cudaGraphDestroy 1, cudaDeviceGraphMemTrim 1, memtrace_mark 3.
 *   No cudaMalloc, no pool allocation outside the graph.
 *   Physical graph memory on the simulated device (each allocation
 *   rounded up to 2 MiB: 4 MiB + 2 MiB): used and reserved 6291456 after
 *   the launches (high 6291456, 6291456), the device shows 6291456 bytes
 *   in use; after the executable graph is destroyed used 0, reserved
 *   6291456; after the trim 0 and 0, and the device 0.
 *   Live at exit: nothing. Exit status 0; 2 if a CUDA call fails.
 */
#include <cstdio>
#include <initializer_list>

#include <cuda_runtime.h>

#include "cuda-check.h"
#include "cuda-kernels.cuh"
#include "mark.h"

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kXBytes = 4 * kMiB;
constexpr size_t kYBytes = 3 * kMiB / 2;
constexpr int kLaunches = 5;

static cudaStream_t a, b, c;
static cudaEvent_t forked, b_read, b_done, c_done;

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

static unsigned long long
capture_id(cudaStream_t s)
{
	cudaStreamCaptureStatus status;
	unsigned long long id = 0;

	must(cudaStreamGetCaptureInfo(s, &status, &id), "cudaStreamGetCaptureInfo");
	return status == cudaStreamCaptureStatusActive ? id : 0;
}

static __attribute__((noinline)) float *
produce_on_a(size_t n)
{
	float *x;

	must(cudaMallocAsync(&x, kXBytes, a), "produce_on_a: cudaMallocAsync");
	fill<float><<<blocks_for(n), kThreads, 0, a>>>(x, n, 1.0f);
	must(cudaGetLastError(), "produce_on_a: fill");
	return x;
}

static __attribute__((noinline)) void
branch_b(const float *x)
{
	size_t m = kYBytes / sizeof(float);
	float *y;

	must(cudaMallocAsync(&y, kYBytes, b), "branch_b: cudaMallocAsync");
	scale<float><<<blocks_for(m), kThreads, 0, b>>>(y, x, m, 2.0f);
	must(cudaGetLastError(), "branch_b: scale");
	must(cudaEventRecord(b_read, b), "branch_b: cudaEventRecord");
	must(cudaFreeAsync(y, b), "branch_b: cudaFreeAsync");
}

static __attribute__((noinline)) void
branch_c(float *x, size_t n)
{
	size_t half = n / 2;

	square<float><<<blocks_for(n - half), kThreads, 0, c>>>(x + half, n - half);
	must(cudaGetLastError(), "branch_c: square");
	must(cudaStreamWaitEvent(c, b_read, 0), "branch_c: cudaStreamWaitEvent");
	must(cudaFreeAsync(x, c), "branch_c: cudaFreeAsync");
}

static void
join()
{
	must(cudaEventRecord(b_done, b), "join: cudaEventRecord b");
	must(cudaEventRecord(c_done, c), "join: cudaEventRecord c");
	must(cudaStreamWaitEvent(a, b_done, 0), "join: cudaStreamWaitEvent b");
	must(cudaStreamWaitEvent(a, c_done, 0), "join: cudaStreamWaitEvent c");
}

static __attribute__((noinline)) cudaGraph_t
capture()
{
	size_t n = kXBytes / sizeof(float);
	cudaGraph_t graph;
	float *x;

	program_mark("capture");
	must(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
	x = produce_on_a(n);
	must(cudaEventRecord(forked, a), "cudaEventRecord forked");
	must(cudaStreamWaitEvent(b, forked, 0), "cudaStreamWaitEvent b");
	must(cudaStreamWaitEvent(c, forked, 0), "cudaStreamWaitEvent c");
	printf("capture: b and c joined a's capture: %s\n",
	       capture_id(b) == capture_id(a) && capture_id(c) == capture_id(a) ? "yes" : "no");
	branch_b(x);
	branch_c(x, n);
	join();
	must(cudaStreamEndCapture(a, &graph), "cudaStreamEndCapture");
	printf("capture ended: b and c capturing: %s\n",
	       capture_id(b) || capture_id(c) ? "yes" : "no");
	return graph;
}

static void
print_nodes(cudaGraph_t graph)
{
	cudaGraphNode_t nodes[16];
	size_t n = 16, allocs = 0, frees = 0, kernels = 0;
	cudaGraphNodeType type;

	must(cudaGraphGetNodes(graph, nodes, &n), "cudaGraphGetNodes");
	for (size_t i = 0; i < n; i++) {
		must(cudaGraphNodeGetType(nodes[i], &type), "cudaGraphNodeGetType");
		allocs += type == cudaGraphNodeTypeMemAlloc;
		frees += type == cudaGraphNodeTypeMemFree;
		kernels += type == cudaGraphNodeTypeKernel;
	}
	printf("graph: %zu nodes: %zu alloc, %zu free, %zu kernel\n", n, allocs, frees, kernels);
}

static void
print_graph_memory(const char *when)
{
	printf("%s: graph memory used %llu reserved %llu; device memory in use %zu\n", when,
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent), device_in_use());
}

static void
make_streams()
{
	must(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "cudaStreamCreateWithFlags a");
	must(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "cudaStreamCreateWithFlags b");
	must(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking), "cudaStreamCreateWithFlags c");
	for (cudaEvent_t *e : { &forked, &b_read, &b_done, &c_done })
		must(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
}

static void
destroy_streams()
{
	for (cudaEvent_t e : { forked, b_read, b_done, c_done })
		must(cudaEventDestroy(e), "cudaEventDestroy");
	for (cudaStream_t s : { a, b, c })
		must(cudaStreamDestroy(s), "cudaStreamDestroy");
}

int
main()
{
	cudaGraphExec_t exec;
	cudaGraph_t graph;

	must(cudaSetDevice(0), "cudaSetDevice");
	make_streams();
	graph = capture();
	print_nodes(graph);
	must(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

	program_mark("launch");
	for (int i = 0; i < kLaunches; i++)
		must(cudaGraphLaunch(exec, a), "cudaGraphLaunch");
	must(cudaStreamSynchronize(a), "cudaStreamSynchronize");
	print_graph_memory("after 5 launches");
	printf("high-water marks: used %llu reserved %llu\n",
	       graph_mem(cudaGraphMemAttrUsedMemHigh), graph_mem(cudaGraphMemAttrReservedMemHigh));

	program_mark("teardown");
	must(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
	must(cudaGraphDestroy(graph), "cudaGraphDestroy");
	print_graph_memory("executable graph destroyed");
	must(cudaDeviceGraphMemTrim(0), "cudaDeviceGraphMemTrim");
	print_graph_memory("after trim");
	destroy_streams();
	return 0;
}
