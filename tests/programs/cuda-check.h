/* Shared by the test programs: an unexpected CUDA error ends the program
 * with a message on stderr, so stdout stays the program's deterministic
 * summary. Header only, so that the programs that load CUDA themselves
 * (dlopen) can use it without linking it. */
#pragma once

#include <cuda.h>
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

/* The same for a program that reaches the runtime through dlsym and
 * cannot name cudaGetErrorName: the error's number only. */
static inline void
must_dl(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "%s failed: cudaError_t %d\n", what, (int)err);
	exit(PROGRAM_CUDA_FAILED);
}

/* The same for a driver API call, in the programs that make them. Header
 * only: a program that is not linked against CUDA can use it. */
static inline void
must_drv(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return;
	fprintf(stderr, "%s failed: CUresult %d\n", what, (int)rc);
	exit(PROGRAM_CUDA_FAILED);
}
