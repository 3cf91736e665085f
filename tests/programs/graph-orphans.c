/* graph-orphans: six graphs built and launched one after another over one
 * graph memory pool, half of their executable graphs forgotten. Graphs
 * that never run at the same time share the pool's physical memory (the
 * CUDA programming guide, graph memory nodes), so what the forgotten
 * ones keep reachable is one graph's worth, not the sum. Each build(i):
 *
 *   capture   cudaStreamBeginCapture(stream, global), then
 *     scratch cudaMallocAsync(work, 33554432) and cudaFreeAsync(work):
 *             freed inside the graph (transient)
 *     output  cudaMallocAsync(out, 2097152): not freed in the graph
 *             cudaStreamEndCapture
 *   run       cudaGraphInstantiate(flags 0), cudaGraphLaunch,
 *             cudaStreamSynchronize: out becomes live, work lives and
 *             dies inside the launch
 *   then      cudaFree(out) (every build), and
 *             build 0-3: cudaGraphDestroy; 4 and 5: the graph is kept
 *             even i: cudaGraphExecDestroy; odd i: the exec is kept
 * No trim at the end.
 *
 * Expected numbers:
 *   6 captures, 12 cudaMallocAsync (all captured: 6 x 33554432 from
 *   scratch, 6 x 2097152 from output), 6 captured frees (the works), 6
 *   instantiations, 6 launches, 6 cudaFree (the outs), 4
 *   cudaGraphDestroy, 3 cudaGraphExecDestroy (builds 0, 2, 4).
 *   Left at exit: 3 executable graphs (builds 1, 3, 5) and 2 graphs
 *   (builds 4 and 5; build 5's exec is one of the three); no graph memory
 *   live (every out freed, every work freed in its graph).
 *   Graph memory pool (sizes are multiples of 2 MiB already): an
 *   executable graph maps its graph's 33554432 + 2097152 bytes at its
 *   first launch and keeps them until it is destroyed or trimmed; graphs
 *   that never run at once map the same memory, and live memory cannot be
 *   shared. After each build, graph memory used / reserved: build 0:
 *   0 / 35651584 (its exec is destroyed; the pool keeps the memory until
 *   a trim); build 1: 35651584 / 35651584; builds 2 to 5: 35651584 /
 *   37748736 (the launch of build 2 holds its 2097152-byte output live
 *   while build 1's exec keeps its 35651584 mapped). The device shows
 *   37748736 bytes in use at exit (cuMemGetInfo).
 *   What the orphans keep reachable: each kept exec alone keeps its
 *   graph's 35651584 bytes mapped (none of them live), and together the
 *   same 35651584 bytes once, less than the pool's 37748736; the kept
 *   graphs add nothing (build 4's has no exec left to map it; build 5's
 *   is its exec's).
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"

#define MiB ((size_t)1 << 20)
#define BUILDS 6
#define WORK_BYTES (32 * MiB)
#define OUT_BYTES (2 * MiB)

static cudaStream_t stream;

static unsigned long long
graph_mem(enum cudaGraphMemAttributeType attr)
{
	cuuint64_t v = 0;

	must(cudaDeviceGetGraphMemAttribute(0, attr, &v), "cudaDeviceGetGraphMemAttribute");
	return (unsigned long long)v;
}

static __attribute__((noinline)) void
scratch(void)
{
	void *work;

	must(cudaMallocAsync(&work, WORK_BYTES, stream), "scratch: cudaMallocAsync");
	must(cudaFreeAsync(work, stream), "scratch: cudaFreeAsync");
}

static __attribute__((noinline)) void *
output(void)
{
	void *out;

	must(cudaMallocAsync(&out, OUT_BYTES, stream), "output: cudaMallocAsync");
	return out;
}

static __attribute__((noinline)) cudaGraph_t
capture(void **out)
{
	cudaGraph_t graph;

	must(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal),
	     "capture: cudaStreamBeginCapture");
	scratch();
	*out = output();
	must(cudaStreamEndCapture(stream, &graph), "capture: cudaStreamEndCapture");
	return graph;
}

static __attribute__((noinline)) cudaGraphExec_t
run(cudaGraph_t graph)
{
	cudaGraphExec_t exec;

	must(cudaGraphInstantiate(&exec, graph, 0), "run: cudaGraphInstantiate");
	must(cudaGraphLaunch(exec, stream), "run: cudaGraphLaunch");
	must(cudaStreamSynchronize(stream), "run: cudaStreamSynchronize");
	return exec;
}

static __attribute__((noinline)) void
build(int i)
{
	void *out;
	cudaGraph_t graph = capture(&out);
	cudaGraphExec_t exec = run(graph);

	must(cudaFree(out), "build: cudaFree");
	if (i < 4)
		must(cudaGraphDestroy(graph), "build: cudaGraphDestroy");
	if (i % 2 == 0)
		must(cudaGraphExecDestroy(exec), "build: cudaGraphExecDestroy");
	printf("build %d: graph memory used %llu reserved %llu\n", i,
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent));
}

int
main(void)
{
	size_t free_bytes, total;

	must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
	for (int i = 0; i < BUILDS; i++)
		build(i);
	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	printf("device in use at exit: %zu\n", total - free_bytes);
	return 0;
}
