/* typed-templates: C++ that allocates the way C++ CUDA code does, with the
 * typed templates cuda_runtime.h defines (cudaMalloc<T>, cudaMallocHost<T>,
 * cudaMallocAsync<T>), which are compiled into this program: built twice,
 * at -O0 (the templates are frames of their own, with their file and line
 * in cuda_runtime.h) and at -O2 (inlined into their callers). Either way
 * each allocation's site is the caller's own function and line, never the
 * template.
 *
 *   Model<float>::weights       cudaMalloc<float>(&w, 4 Mi floats): 16 MiB
 *   Model<float>::activations   cudaMalloc<float> x 2 (1 Mi floats each): 8 MiB
 *   staging_buffer              cudaMallocHost<char>(1 MiB): pinned host
 *   workspace                   cudaMallocAsync<int>(256 Ki ints): 1 MiB, freed
 *
 * Expected numbers: device allocations 4 (3 cudaMalloc, 1 cudaMallocAsync;
 * 26214400 bytes), 1 freed (workspace, 1048576 bytes); live at exit
 * 25165824 bytes in 3 allocations: 16777216 from weights, 8388608 from
 * activations (2); pinned host 1048576 bytes, live at exit. Three device
 * sites (weights, activations, workspace) and one host site
 * (staging_buffer), each named by its own function; the weights and
 * activations allocations are on the lines marked "site:" below.
 * Exit status 0; 2 if a CUDA call fails.
 */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

static void check(cudaError_t err, const char *what)
{
	if (err != cudaSuccess) {
		std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorName(err));
		std::exit(2);
	}
}

template <typename T> class Model {
public:
	__attribute__((noinline)) void weights(size_t n)
	{
		check(cudaMalloc(&w_, n * sizeof(T)), "cudaMalloc weights"); // site: weights
	}
	__attribute__((noinline)) void activations(size_t n)
	{
		for (T *&a : act_)
			check(cudaMalloc(&a, n * sizeof(T)), "cudaMalloc activations"); // site: activations
	}

private:
	T *w_ = nullptr;
	T *act_[2] = {};
};

__attribute__((noinline)) static char *staging_buffer(size_t bytes)
{
	char *p = nullptr;
	check(cudaMallocHost(&p, bytes), "cudaMallocHost"); // site: staging_buffer
	return p;
}

__attribute__((noinline)) static void workspace(cudaStream_t s, size_t n)
{
	int *ws = nullptr;
	check(cudaMallocAsync(&ws, n * sizeof(int), s), "cudaMallocAsync"); // site: workspace
	check(cudaFreeAsync(ws, s), "cudaFreeAsync");
	check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
}

int main()
{
	Model<float> model;
	cudaStream_t s;

	model.weights(size_t(4) << 20);
	model.activations(size_t(1) << 20);
	staging_buffer(size_t(1) << 20);
	check(cudaStreamCreate(&s), "cudaStreamCreate");
	workspace(s, size_t(256) << 10);
	check(cudaStreamDestroy(s), "cudaStreamDestroy");
	std::printf("typed-templates: 4 device allocations, 1 pinned, 1 freed\n");
	return 0;
}
