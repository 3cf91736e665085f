/* libcxx-local.so: C++ that cxx-local.c loads with dlopen(RTLD_LOCAL), so
 * that libstdc++ is in the process but not in its global scope (as in a
 * Python program: its extensions are loaded so). ns::Pool<float>::grow
 * keeps 64 MiB, then asks for 2 GiB, which the 1 GiB device refuses;
 * cxx_local_run returns 0 when the second call failed for lack of memory,
 * 2 otherwise. */
#include <cuda_runtime.h>

#include <cstddef>

namespace ns {
template <typename T> class Pool {
public:
	__attribute__((noinline)) cudaError_t grow(std::size_t n)
	{
		T *p = nullptr;
		cudaError_t err = cudaMalloc(&p, n * sizeof(T)); // site: grow
		if (err == cudaSuccess)
			kept_ = p;
		return err;
	}

private:
	T *kept_ = nullptr;
};
} // namespace ns

extern "C" __attribute__((visibility("default"))) int cxx_local_run(void)
{
	/* operator new: libstdc++ is this library's, loaded with it */
	static ns::Pool<float> *pool = new ns::Pool<float>;
	if (pool->grow(16u << 20) != cudaSuccess)
		return 2;
	return pool->grow(std::size_t(512) << 20) == cudaErrorMemoryAllocation ? 0 : 2;
}
