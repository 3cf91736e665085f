/* Another interposer, preloaded before libmemtrace.so: its cudaMalloc
 * forwards to dlsym(RTLD_NEXT, "cudaMalloc"), which must mean "the next
 * after this shim" (that is memtrace), not "the next after whoever
 * implements dlsym". It says on stderr which object the next one is in. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef cudaError_t (*malloc_fn)(void **, size_t);

__attribute__((visibility("default"))) cudaError_t cudaMalloc(void **p, size_t n)
{
	static malloc_fn next;
	if (!next) {
		next = (malloc_fn)dlsym(RTLD_NEXT, "cudaMalloc");
		Dl_info info;
		const char *where = next && dladdr((void *)next, &info) && info.dli_fname
					    ? strrchr(info.dli_fname, '/')
					    : NULL;
		fprintf(stderr, "shim: next cudaMalloc in %s\n", where ? where + 1 : "nothing");
	}
	return next ? next(p, n) : cudaErrorInitializationError;
}
