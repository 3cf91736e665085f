/* A pool allocation that CUPTI's record reaches the trace while it is
 * live: the writer must still know it as a pool allocation (mem 4) when
 * its free is written. The hooks record cudaMallocFromPoolAsync as pool
 * memory; CUPTI reports device memory from a pool.
 *
 * Numbers: one 1 MiB allocation from a created pool, memtrace_flush()
 * (found with dlsym, so that the program runs the same without memtrace),
 * then its free. Prints "done". */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct cudaMemPoolProps props;
	cudaMemPool_t pool;
	void *p;
	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	if (cudaMemPoolCreate(&pool, &props) != cudaSuccess ||
	    cudaMallocFromPoolAsync(&p, 1 << 20, pool, 0) != cudaSuccess) {
		printf("FAIL: pool allocation\n");
		return 1;
	}
	int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memtrace_flush");
	if (flush)
		flush();
	if (cudaFreeAsync(p, 0) != cudaSuccess || cudaStreamSynchronize(0) != cudaSuccess ||
	    cudaMemPoolDestroy(pool) != cudaSuccess) {
		printf("FAIL: free\n");
		return 1;
	}
	printf("done\n");
	return 0;
}
