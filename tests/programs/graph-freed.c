/* graph-freed: graph-allocated memory freed properly, inside its graph.
 * One graph on one non-blocking stream, in this order:
 *
 *   build_graph     cudaGraphCreate; cudaGraphAddMemAllocNode of 4194304;
 *                   cudaGraphAddMemFreeNode of that address, depending on
 *                   the alloc node
 *   run_graph       cudaGraphInstantiate (flags 0), cudaGraphLaunch,
 *                   cudaStreamSynchronize
 *   tear_down       cudaGraphExecDestroy, cudaGraphDestroy,
 *                   cudaDeviceGraphMemTrim(0)
 *
 * Expected numbers:
 *   cudaGraphCreate 1, cudaGraphAddMemAllocNode 1 (4194304, in
 *   build_graph), cudaGraphAddMemFreeNode 1 (the same address),
 *   cudaGraphInstantiate 1 (flags 0), cudaGraphLaunch 1 (succeeds),
 *   cudaStreamSynchronize 1, cudaGraphExecDestroy 1, cudaGraphDestroy 1,
 *   cudaDeviceGraphMemTrim 1.
 *   Live at exit: nothing (the allocation is freed by its graph); nothing
 *   pinned.
 *   Device memory in use (cuMemGetInfo), graph memory used / reserved:
 *   before build_graph 0, 0 / 0; after build_graph 0, 0 / 0 (no memory
 *   until a launch); after run_graph 4194304, 4194304 / 4194304 (the
 *   executable graph keeps its mapping); after the destroys 4194304,
 *   0 / 4194304 (the pool keeps it); after the trim 0, 0 / 0: the device
 *   is back to its initial usage.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"

#define MiB ((size_t)1 << 20)

static cudaStream_t stream;

static unsigned long long
graph_mem(enum cudaGraphMemAttributeType attr)
{
	cuuint64_t v = 0;

	must(cudaDeviceGetGraphMemAttribute(0, attr, &v), "cudaDeviceGetGraphMemAttribute");
	return (unsigned long long)v;
}

static void
show(const char *when)
{
	size_t free_bytes, total;

	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("%s: device in use %zu; graph memory used %llu reserved %llu\n", when,
	       total - free_bytes, graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent));
}

static __attribute__((noinline)) cudaGraph_t
build_graph(void)
{
	struct cudaMemAllocNodeParams params = {
		.poolProps = { .allocType = cudaMemAllocationTypePinned,
			       .location = { .type = cudaMemLocationTypeDevice, .id = 0 } },
		.bytesize = 4 * MiB,
	};
	cudaGraphNode_t alloc, free_node;
	cudaGraph_t graph;

	must(cudaGraphCreate(&graph, 0), "build_graph: cudaGraphCreate");
	must(cudaGraphAddMemAllocNode(&alloc, graph, NULL, 0, &params),
	     "build_graph: cudaGraphAddMemAllocNode");
	must(cudaGraphAddMemFreeNode(&free_node, graph, &alloc, 1, params.dptr),
	     "build_graph: cudaGraphAddMemFreeNode");
	return graph;
}

static __attribute__((noinline)) cudaGraphExec_t
run_graph(cudaGraph_t graph)
{
	cudaGraphExec_t exec;

	must(cudaGraphInstantiate(&exec, graph, 0), "run_graph: cudaGraphInstantiate");
	must(cudaGraphLaunch(exec, stream), "run_graph: cudaGraphLaunch");
	must(cudaStreamSynchronize(stream), "run_graph: cudaStreamSynchronize");
	return exec;
}

static __attribute__((noinline)) void
tear_down(cudaGraph_t graph, cudaGraphExec_t exec)
{
	must(cudaGraphExecDestroy(exec), "tear_down: cudaGraphExecDestroy");
	must(cudaGraphDestroy(graph), "tear_down: cudaGraphDestroy");
	show("after the destroys");
	must(cudaDeviceGraphMemTrim(0), "tear_down: cudaDeviceGraphMemTrim");
	show("after the trim");
}

int
main(void)
{
	cudaGraphExec_t exec;
	cudaGraph_t graph;

	must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
	show("before build_graph");
	graph = build_graph();
	show("after build_graph");
	exec = run_graph(graph);
	show("after run_graph");
	tear_down(graph, exec);
	must(cudaStreamDestroy(stream), "cudaStreamDestroy");
	return 0;
}
