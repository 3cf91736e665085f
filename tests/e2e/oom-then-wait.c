/* oom-then-wait: holds 3 x 100 MiB, asks for 2 GiB (fails on the 1 GiB
 * simulated device), prints "waiting" and sleeps until killed. Used to
 * read the trace while the program runs and after SIGKILL: the OOM and
 * everything before it must already be in the file when "waiting" is
 * printed, since an OOM is committed before the hook returns.
 *
 * Expected: 3 allocations of 104857600 bytes from hold_buffers, one OOM of
 * 2147483648 bytes from huge_request with 314572800 bytes live. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <unistd.h>

static void *held[3];

static __attribute__((noinline)) int hold_buffers(void)
{
	for (int i = 0; i < 3; i++)
		if (cudaMalloc(&held[i], (size_t)100 << 20) != cudaSuccess)
			return -1;
	return 0;
}

static __attribute__((noinline)) cudaError_t huge_request(void)
{
	void *p;
	return cudaMalloc(&p, (size_t)2 << 30);
}

int main(void)
{
	if (hold_buffers())
		return 2;
	cudaError_t err = huge_request();
	printf("%s\nwaiting\n", cudaGetErrorName(err));
	fflush(stdout);
	for (;;)
		pause();
}
