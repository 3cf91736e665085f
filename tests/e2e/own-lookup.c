/* Three allocations through a driver that lacks cuCtxGetDevice and
 * cuMemGetInfo_v2 (partial-driver/): memtrace cannot ask the device, says
 * once that its own lookup failed, and never that the program's call did;
 * the program's calls all succeed, with or without memtrace. */
#include <cuda.h>
#include <stdio.h>

int main(void)
{
	CUdeviceptr p[3];

	if (cuInit(0) != CUDA_SUCCESS)
		return 1;
	for (int i = 0; i < 3; i++) {
		if (cuMemAlloc(&p[i], (size_t)(i + 1) << 20) != CUDA_SUCCESS) {
			printf("cuMemAlloc %d failed\n", i);
			return 1;
		}
	}
	for (int i = 0; i < 3; i++)
		if (cuMemFree(p[i]) != CUDA_SUCCESS)
			return 1;
	printf("3 allocations of 1, 2 and 3 MiB, freed\n");
	return 0;
}
