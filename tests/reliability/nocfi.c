/* Built without unwind tables (tests/reliability/meson.build): an unwinder
 * that reaches this frame finds no CFI for it and falls back to the frame
 * pointer chain. */
#include "nocfi.h"

__attribute__((noinline)) cudaError_t nocfi_cuda_malloc(void **p, size_t bytes)
{
	cudaError_t err = cudaMalloc(p, bytes);
	__asm__ volatile("" ::: "memory"); /* not a tail call: keep the frame */
	return err;
}
