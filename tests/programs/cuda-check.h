/* Shared by the test programs: an unexpected CUDA error ends the program
 * with a message on stderr, so stdout stays the program's deterministic
 * summary. */
#pragma once

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* Exit status of a program whose CUDA call failed unexpectedly. */
#define PROGRAM_CUDA_FAILED 2

static inline void
must(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s failed: %s (%s)\n", what, cudaGetErrorName(err),
		cudaGetErrorString(err));
	exit(PROGRAM_CUDA_FAILED);
}
