/* build-leak: no graphs; a "model" built ten times, each build leaking
 * one buffer. Each build_model(i), after memtrace_mark("build i") when
 * the program runs under memtrace (dlsym, no-op otherwise):
 *
 *   load_weights    cudaMalloc(4194304)
 *   make_workspace  cudaMalloc(1048576)
 *   make_cache      cudaMalloc(2097152), never freed
 *   build_model     cudaFree of the weights and the workspace
 *
 * Expected numbers:
 *   cudaMalloc 30 (10 x 4194304 from load_weights, 10 x 1048576 from
 *   make_workspace, 10 x 2097152 from make_cache; 73400320 bytes),
 *   cudaFree 20 (the weights and workspaces; 52428800 bytes),
 *   memtrace_mark 10 ("build 0" ... "build 9"). Per build: 3 allocations
 *   (7340032 bytes), 2 frees, 2097152 bytes leaked.
 *   Live at exit (leaks): 10 allocations, 20971520 bytes, all from
 *   make_cache, one per build.
 *   Peak: 26214400 bytes (12 allocations), in build 9 after make_cache:
 *   ten caches, the weights and the workspace.
 *   Device in use (cuMemGetInfo) after build i: (i + 1) x 2097152; at
 *   exit 20971520 bytes.
 *   Exit status 0; 2 if a CUDA call fails.
 */
#include "cuda-check.h"
#include "mark.h"

#define MiB ((size_t)1 << 20)
#define BUILDS 10

static void *caches[BUILDS];

static size_t
device_in_use(void)
{
	size_t free_bytes, total;

	must(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
	return total - free_bytes;
}

static __attribute__((noinline)) void *
load_weights(void)
{
	void *p;

	must(cudaMalloc(&p, 4 * MiB), "load_weights: cudaMalloc");
	return p;
}

static __attribute__((noinline)) void *
make_workspace(void)
{
	void *p;

	must(cudaMalloc(&p, 1 * MiB), "make_workspace: cudaMalloc");
	return p;
}

static __attribute__((noinline)) void *
make_cache(void)
{
	void *p;

	must(cudaMalloc(&p, 2 * MiB), "make_cache: cudaMalloc");
	return p;
}

static __attribute__((noinline)) void
build_model(int i)
{
	void *weights = load_weights();
	void *workspace = make_workspace();

	caches[i] = make_cache();
	must(cudaFree(weights), "build_model: cudaFree");
	must(cudaFree(workspace), "build_model: cudaFree");
	printf("build %d: device in use %zu\n", i, device_in_use());
}

int
main(void)
{
	char label[32];

	for (int i = 0; i < BUILDS; i++) {
		snprintf(label, sizeof(label), "build %d", i);
		program_mark(label);
		build_model(i);
	}
	printf("device memory in use at exit: %zu bytes\n", device_in_use());
	return 0;
}
