/* Element-wise kernels shared by the CUDA C++ test programs, templates as
 * real CUDA code writes them, and the launch shape they use. On the
 * simulated device a launch runs nothing (tests/sim/README.md), so the
 * programs print what they allocate, never what the kernels compute. */
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

/* Threads per block of every launch. */
constexpr unsigned int kThreads = 256;

/* Blocks that cover n elements, one thread each. */
inline unsigned int
blocks_for(size_t n)
{
	return static_cast<unsigned int>((n + kThreads - 1) / kThreads);
}

__device__ inline size_t
element_index()
{
	return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

template <typename T>
__global__ void
fill(T *data, size_t n, T value)
{
	size_t i = element_index();

	if (i < n)
		data[i] = value;
}

template <typename T>
__global__ void
scale(T *out, const T *in, size_t n, T factor)
{
	size_t i = element_index();

	if (i < n)
		out[i] = in[i] * factor;
}

template <typename T>
__global__ void
square(T *data, size_t n)
{
	size_t i = element_index();

	if (i < n)
		data[i] *= data[i];
}

template <typename T>
__global__ void
vector_add(const T *a, const T *b, T *c, size_t n)
{
	size_t i = element_index();

	if (i < n)
		c[i] = a[i] + b[i];
}
