/* A plain CUDA C program built by nvcc with its default, static runtime:
 * cudart is inside the executable and reaches the driver by dlopen and
 * cuGetProcAddress, never through a libcudart symbol. Under memtrace the
 * hooks see its calls as driver calls (cuMemAlloc_v2, ...) and CUPTI sees
 * them too: every allocation should be matched, none seen by CUPTI alone.
 *
 * Numbers: cudaMalloc 64 MiB (kept), 1 MiB (freed), 3,000,000 bytes
 * (kept); cudaMallocAsync 8 MiB (freed); a kernel writes the 64 MiB; then a
 * request for twice the device's memory fails (one OOM). Exit status 0. */
#include <cstdio>
#include <cuda_runtime.h>

#define MiB ((size_t)1 << 20)

__global__ void fill(float *p, size_t n, float v)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

static int check(cudaError_t rc, const char *what)
{
	if (rc != cudaSuccess) {
		printf("FAIL: %s: %s\n", what, cudaGetErrorString(rc));
		return 1;
	}
	return 0;
}

int main(void)
{
	float *big, *small, *odd, *async;
	cudaStream_t s;
	size_t free_b, total_b;
	if (check(cudaMalloc(&big, 64 * MiB), "cudaMalloc 64 MiB") ||
	    check(cudaMalloc(&small, 1 * MiB), "cudaMalloc 1 MiB") ||
	    check(cudaMalloc(&odd, 3000000), "cudaMalloc 3000000") ||
	    check(cudaStreamCreate(&s), "cudaStreamCreate") ||
	    check(cudaMallocAsync(&async, 8 * MiB, s), "cudaMallocAsync 8 MiB"))
		return 1;
	size_t n = 64 * MiB / sizeof(float);
	fill<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(big, n, 1.0f);
	if (check(cudaFreeAsync(async, s), "cudaFreeAsync") ||
	    check(cudaStreamSynchronize(s), "cudaStreamSynchronize") ||
	    check(cudaFree(small), "cudaFree") ||
	    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
		return 1;
	void *too_big;
	cudaError_t rc = cudaMalloc(&too_big, 2 * total_b);
	printf("%s\n", rc == cudaErrorMemoryAllocation ? "out of memory, as asked" : "no OOM?");
	cudaGetLastError(); /* the failure is not sticky; clear it */
	return rc == cudaErrorMemoryAllocation ? 0 : 1;
}
