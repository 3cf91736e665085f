/* graph-rebuilds: a "model" built ten times, as a framework rebuilds its
 * CUDA graph after each recompilation. Each build_model(i), after
 * memtrace_mark("build i") when the program runs under memtrace (dlsym,
 * no-op otherwise):
 *
 *   capture_model   cudaStreamBeginCapture(stream, global) on a
 *                   non-blocking stream;
 *     forward       cudaMallocAsync(activation, 8388608) and
 *                   cudaFreeAsync(activation): freed inside the graph;
 *     keep_state    cudaMallocAsync(state, 1048576): not freed in the
 *                   graph;
 *                   cudaStreamEndCapture. Captured: nothing is allocated
 *                   or freed at these calls.
 *   instantiate     cudaGraphInstantiate(flags 0: no auto-free)
 *   launch          cudaGraphLaunch, cudaStreamSynchronize: the state
 *                   becomes live (the activation lives and dies inside)
 *   build_model     cudaGraphDestroy always; for even i only:
 *                   cudaGraphExecDestroy and cudaFree(state). Odd builds
 *                   leave their executable graph and their state behind.
 * Then main calls cudaDeviceGraphMemTrim(0).
 *
 * Expected numbers:
 *   cudaStreamBeginCapture 10, cudaStreamEndCapture 10, cudaMallocAsync
 *   20, all captured (graph memory, 10 x 8388608 from forward, 10 x
 *   1048576 from keep_state; 94371840 bytes), cudaFreeAsync 10, all
 *   captured (free nodes of the activations), cudaGraphInstantiate 10
 *   (flags 0), cudaGraphLaunch 10 (all succeed), cudaStreamSynchronize
 *   10, cudaGraphDestroy 10, cudaGraphExecDestroy 5 (builds 0, 2, 4, 6,
 *   8), cudaFree 5 (the states of builds 0, 2, 4, 6, 8; 1048576 each),
 *   cudaDeviceGraphMemTrim 1, memtrace_mark 10 ("build 0" ... "build 9").
 *   Per build: 1 capture, 2 graph allocations (9437184 bytes), 1 graph
 *   free node, 1 instantiation, 1 launch.
 *   Addresses: graph addresses are reserved at capture and come back when
 *   nothing holds them, so each odd build gets the addresses of the even
 *   build before it (activation, state), and no two live or held
 *   allocations share one.
 *   At exit: 5 executable graphs never destroyed (builds 1, 3, 5, 7, 9;
 *   their graphs are destroyed); live (leaked) graph memory: 5
 *   allocations, 5242880 bytes, the states of builds 1, 3, 5, 7, 9 from
 *   keep_state; the activations are freed in their graphs (not leaked).
 *   Physical graph memory on the simulated device: each allocation takes
 *   its size rounded up to 2 MiB; after each build (graph memory used /
 *   reserved, MiB): 0/10, 10/10, 10/12, 12/12, 12/14, 14/14, 14/16,
 *   16/16, 16/18, 18/18 (used: the live states plus the 8 MiB the kept
 *   executable graphs map, shared). After the trim: used 10485760,
 *   reserved 10485760 (the five live states, 2 MiB each); high-water
 *   marks 18874368 and 18874368. The device shows 10485760 bytes in use
 *   at exit (cuMemGetInfo); nothing else is allocated.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"
#include "mark.h"

#define MiB ((size_t)1 << 20)
#define BUILDS 10
#define ACTIVATION_BYTES (8 * MiB)
#define STATE_BYTES (1 * MiB)

static cudaStream_t stream;
static cudaGraphExec_t kept[BUILDS];

static unsigned long long
graph_mem(enum cudaGraphMemAttributeType attr)
{
	cuuint64_t v = 0;

	must(cudaDeviceGetGraphMemAttribute(0, attr, &v), "cudaDeviceGetGraphMemAttribute");
	return (unsigned long long)v;
}

static size_t
device_in_use(void)
{
	size_t free_bytes, total;

	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	return total - free_bytes;
}

static __attribute__((noinline)) void
forward(void)
{
	void *activation;

	must(cudaMallocAsync(&activation, ACTIVATION_BYTES, stream), "forward: cudaMallocAsync");
	must(cudaFreeAsync(activation, stream), "forward: cudaFreeAsync");
}

static __attribute__((noinline)) void *
keep_state(void)
{
	void *state;

	must(cudaMallocAsync(&state, STATE_BYTES, stream), "keep_state: cudaMallocAsync");
	return state;
}

static __attribute__((noinline)) cudaGraph_t
capture_model(void **state)
{
	cudaGraph_t graph;

	must(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal),
	     "capture_model: cudaStreamBeginCapture");
	forward();
	*state = keep_state();
	must(cudaStreamEndCapture(stream, &graph), "capture_model: cudaStreamEndCapture");
	return graph;
}

static __attribute__((noinline)) cudaGraphExec_t
instantiate(cudaGraph_t graph)
{
	cudaGraphExec_t exec;

	must(cudaGraphInstantiate(&exec, graph, 0), "instantiate: cudaGraphInstantiate");
	return exec;
}

static __attribute__((noinline)) void
launch(cudaGraphExec_t exec)
{
	must(cudaGraphLaunch(exec, stream), "launch: cudaGraphLaunch");
	must(cudaStreamSynchronize(stream), "launch: cudaStreamSynchronize");
}

static __attribute__((noinline)) void
build_model(int i)
{
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	void *state;

	graph = capture_model(&state);
	exec = instantiate(graph);
	launch(exec);
	must(cudaGraphDestroy(graph), "build_model: cudaGraphDestroy");
	if (i % 2 == 0) {
		must(cudaGraphExecDestroy(exec), "build_model: cudaGraphExecDestroy");
		must(cudaFree(state), "build_model: cudaFree");
	} else {
		kept[i] = exec;
	}
	printf("build %d: graph memory used %llu reserved %llu; device in use %zu\n", i,
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent), device_in_use());
}

int
main(void)
{
	char label[32];

	must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
	for (int i = 0; i < BUILDS; i++) {
		snprintf(label, sizeof(label), "build %d", i);
		program_mark(label);
		build_model(i);
	}
	must(cudaDeviceGraphMemTrim(0), "cudaDeviceGraphMemTrim");
	printf("after trim: graph memory used %llu reserved %llu (high %llu, %llu)\n",
	       graph_mem(cudaGraphMemAttrUsedMemCurrent),
	       graph_mem(cudaGraphMemAttrReservedMemCurrent),
	       graph_mem(cudaGraphMemAttrUsedMemHigh), graph_mem(cudaGraphMemAttrReservedMemHigh));
	must(cudaStreamDestroy(stream), "cudaStreamDestroy");
	printf("device memory in use at exit: %zu bytes\n", device_in_use());
	return 0;
}
