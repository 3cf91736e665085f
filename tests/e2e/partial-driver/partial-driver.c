/* A CUDA driver with only cuInit, cuMemAlloc_v2 and cuMemFree_v2: memtrace's
 * own calls (cuCtxGetDevice, cuMemGetInfo_v2) find nothing in it. Addresses
 * come from a bump pointer; nothing is real. Built as libcuda.so.1 in a
 * directory of its own, for own-lookup.c. */
#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

static CUdeviceptr next_address = 0x10000000;

EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	if (!p || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*p = next_address;
	next_address += (bytes + 0xfff) & ~(size_t)0xfff;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
