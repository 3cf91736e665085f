/* graph-leak: graph-allocated memory that is never freed, and what
 * relaunching does to unfreed graph memory. Three graphs, each with one
 * explicit memory-alloc node (cudaGraphAddMemAllocNode) and no free
 * node, on one non-blocking stream, in this order:
 *
 *   leak_graph_memory     graph A, alloc node of 4194304; instantiated
 *                         (flags 0), launched once, synchronised; then
 *                         cudaGraphExecDestroy and cudaGraphDestroy. The
 *                         allocation is never freed: destroying the graph
 *                         frees nothing.
 *   relaunch_without_free graph B, alloc node of 2097152; instantiated
 *                         (flags 0), launched (succeeds), launched again
 *                         while its allocation is live: fails with
 *                         cudaErrorInvalidValue (printed); then
 *                         cudaFree(allocation), cudaGraphExecDestroy,
 *                         cudaGraphDestroy.
 *   relaunch_auto_free    graph C, alloc node of 1048576; instantiated
 *                         with cudaGraphInstantiateFlagAutoFreeOnLaunch
 *                         (1), launched three times (all succeed: each
 *                         relaunch frees the previous allocation first);
 *                         then cudaFreeAsync(allocation) on the stream,
 *                         cudaStreamSynchronize, cudaGraphExecDestroy,
 *                         cudaGraphDestroy.
 * Then main calls cudaDeviceGraphMemTrim(0).
 *
 * Expected numbers:
 *   cudaGraphCreate 3, cudaGraphAddMemAllocNode 3 (4194304 in
 *   leak_graph_memory, 2097152 in relaunch_without_free, 1048576 in
 *   relaunch_auto_free; 7340032 bytes; each address fixed for its
 *   graph's life), no free node, cudaGraphInstantiate 3 (flags 0, 0, 1),
 *   cudaGraphLaunch 6: 1 in leak_graph_memory, 2 in
 *   relaunch_without_free (the second fails: cudaErrorInvalidValue, 1),
 *   3 in relaunch_auto_free (all succeed). cudaFree 1 (2097152),
 *   cudaFreeAsync 1 (1048576, not captured: the stream is not being
 *   captured), cudaStreamSynchronize 2, cudaGraphExecDestroy 3,
 *   cudaGraphDestroy 3, cudaDeviceGraphMemTrim 1.
 *   Live at exit (leak): 1 graph allocation, 4194304 bytes, from
 *   leak_graph_memory; its graph and executable graph are destroyed.
 *   Physical graph memory on the simulated device (each allocation its
 *   size rounded up to 2 MiB), used / reserved: after leak_graph_memory
 *   4194304 / 4194304; after relaunch_without_free 4194304 / 6291456;
 *   after relaunch_auto_free 4194304 / 6291456; after the trim 4194304 /
 *   4194304; high-water marks 6291456 and 6291456. The device shows
 *   4194304 bytes in use at exit (cuMemGetInfo): the leaked allocation
 *   stays pinned.
 *   Exit status 0; 2 if a CUDA call fails unexpectedly.
 */
#include "cuda-check.h"

#define MiB ((size_t)1 << 20)

static cudaStream_t stream;

static struct cudaMemAllocNodeParams
device_alloc(size_t bytes)
{
	return (struct cudaMemAllocNodeParams){
		.poolProps = { .allocType = cudaMemAllocationTypePinned,
			       .location = { .type = cudaMemLocationTypeDevice, .id = 0 } },
		.bytesize = bytes,
	};
}

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
	printf("%s: graph memory used %llu reserved %llu\n", when,
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent));
}

static __attribute__((noinline)) void
leak_graph_memory(void)
{
	struct cudaMemAllocNodeParams params = device_alloc(4 * MiB);
	cudaGraphNode_t node;
	cudaGraphExec_t exec;
	cudaGraph_t graph;

	must(cudaGraphCreate(&graph, 0), "leak_graph_memory: cudaGraphCreate");
	must(cudaGraphAddMemAllocNode(&node, graph, NULL, 0, &params),
	     "leak_graph_memory: cudaGraphAddMemAllocNode");
	must(cudaGraphInstantiate(&exec, graph, 0), "leak_graph_memory: cudaGraphInstantiate");
	must(cudaGraphLaunch(exec, stream), "leak_graph_memory: cudaGraphLaunch");
	must(cudaStreamSynchronize(stream), "leak_graph_memory: cudaStreamSynchronize");
	must(cudaGraphExecDestroy(exec), "leak_graph_memory: cudaGraphExecDestroy");
	must(cudaGraphDestroy(graph), "leak_graph_memory: cudaGraphDestroy");
	show("leak_graph_memory");
}

static __attribute__((noinline)) void
relaunch_without_free(void)
{
	struct cudaMemAllocNodeParams params = device_alloc(2 * MiB);
	cudaGraphNode_t node;
	cudaGraphExec_t exec;
	cudaGraph_t graph;
	cudaError_t err;

	must(cudaGraphCreate(&graph, 0), "relaunch_without_free: cudaGraphCreate");
	must(cudaGraphAddMemAllocNode(&node, graph, NULL, 0, &params),
	     "relaunch_without_free: cudaGraphAddMemAllocNode");
	must(cudaGraphInstantiate(&exec, graph, 0), "relaunch_without_free: cudaGraphInstantiate");
	must(cudaGraphLaunch(exec, stream), "relaunch_without_free: cudaGraphLaunch");
	err = cudaGraphLaunch(exec, stream);
	printf("relaunch_without_free: relaunch with its allocation live: %s\n",
	       cudaGetErrorName(err));
	cudaGetLastError();
	must(cudaFree(params.dptr), "relaunch_without_free: cudaFree");
	must(cudaGraphExecDestroy(exec), "relaunch_without_free: cudaGraphExecDestroy");
	must(cudaGraphDestroy(graph), "relaunch_without_free: cudaGraphDestroy");
	show("relaunch_without_free");
}

static __attribute__((noinline)) void
relaunch_auto_free(void)
{
	struct cudaMemAllocNodeParams params = device_alloc(1 * MiB);
	cudaGraphNode_t node;
	cudaGraphExec_t exec;
	cudaGraph_t graph;

	must(cudaGraphCreate(&graph, 0), "relaunch_auto_free: cudaGraphCreate");
	must(cudaGraphAddMemAllocNode(&node, graph, NULL, 0, &params),
	     "relaunch_auto_free: cudaGraphAddMemAllocNode");
	must(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch),
	     "relaunch_auto_free: cudaGraphInstantiate");
	for (int i = 0; i < 3; i++)
		must(cudaGraphLaunch(exec, stream), "relaunch_auto_free: cudaGraphLaunch");
	printf("relaunch_auto_free: 3 launches\n");
	must(cudaFreeAsync(params.dptr, stream), "relaunch_auto_free: cudaFreeAsync");
	must(cudaStreamSynchronize(stream), "relaunch_auto_free: cudaStreamSynchronize");
	must(cudaGraphExecDestroy(exec), "relaunch_auto_free: cudaGraphExecDestroy");
	must(cudaGraphDestroy(graph), "relaunch_auto_free: cudaGraphDestroy");
	show("relaunch_auto_free");
}

int
main(void)
{
	size_t free_bytes, total;

	must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
	leak_graph_memory();
	relaunch_without_free();
	relaunch_auto_free();
	must(cudaDeviceGraphMemTrim(0), "cudaDeviceGraphMemTrim");
	show("after trim");
	printf("graph memory high-water marks: used %llu reserved %llu\n",
	       graph_mem(cudaGraphMemAttrUsedMemHigh), graph_mem(cudaGraphMemAttrReservedMemHigh));
	must(cudaStreamDestroy(stream), "cudaStreamDestroy");
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
