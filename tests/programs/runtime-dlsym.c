/* runtime-dlsym: the ctypes / CuPy-binding way to the runtime. Not linked
 * against CUDA: it dlopens libcudart.so.13 with RTLD_LOCAL and takes
 * cudaMalloc, cudaFree, cudaMallocManaged and cudaMemGetInfo with dlsym
 * on that handle, so that the calls go to the runtime's own definitions
 * whatever else is loaded. On the simulated 1 GiB device, in this order:
 *
 *   make_buffers  2 x cudaMalloc(2097152), both freed with cudaFree
 *   make_managed  cudaMallocManaged(1048576, cudaMemAttachGlobal), freed
 *                 with cudaFree
 *   leak_one      cudaMalloc(3000) (charged 3072), never freed
 *   main          cudaMemGetInfo, printed
 *
 * Expected numbers:
 *   cudaMalloc calls 3, 4197304 bytes (make_buffers 2 x 2097152, leak_one
 *   3000); cudaMallocManaged 1 (1048576, make_managed); cudaFree 3
 *   (make_buffers 2, make_managed 1).
 *   Live at exit: 1 allocation, 3000 bytes (3072 charged), leak_one.
 *   Peak: 4194304 bytes (both make_buffers blocks).
 *   Exit status 0; 2 if a CUDA call fails, 3 if libcudart.so.13 or one of
 *   its functions cannot be found.
 */
#include "cuda-check.h"

#include <dlfcn.h>

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);
typedef cudaError_t (*malloc_managed_fn)(void **, size_t, unsigned int);
typedef cudaError_t (*mem_get_info_fn)(size_t *, size_t *);

static struct {
	malloc_fn malloc;
	free_fn free;
	malloc_managed_fn malloc_managed;
	mem_get_info_fn mem_get_info;
} rt;

static void *leaked;

static void *
symbol(void *h, const char *name)
{
	void *fn = dlsym(h, name);

	if (!fn) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(3);
	}
	return fn;
}

static __attribute__((noinline)) void
load_runtime(void)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen libcudart.so.13: %s\n", dlerror());
		exit(3);
	}
	rt.malloc = (malloc_fn)symbol(h, "cudaMalloc");
	rt.free = (free_fn)symbol(h, "cudaFree");
	rt.malloc_managed = (malloc_managed_fn)symbol(h, "cudaMallocManaged");
	rt.mem_get_info = (mem_get_info_fn)symbol(h, "cudaMemGetInfo");
	printf("load_runtime: 4 functions from libcudart.so.13\n");
}

static __attribute__((noinline)) void
make_buffers(void)
{
	void *a, *b;

	must_dl(rt.malloc(&a, (size_t)2 << 20), "make_buffers: cudaMalloc");
	must_dl(rt.malloc(&b, (size_t)2 << 20), "make_buffers: cudaMalloc");
	must_dl(rt.free(a), "make_buffers: cudaFree");
	must_dl(rt.free(b), "make_buffers: cudaFree");
	printf("make_buffers: 2 x 2097152 bytes, freed\n");
}

static __attribute__((noinline)) void
make_managed(void)
{
	void *m;

	must_dl(rt.malloc_managed(&m, (size_t)1 << 20, cudaMemAttachGlobal),
	     "make_managed: cudaMallocManaged");
	must_dl(rt.free(m), "make_managed: cudaFree");
	printf("make_managed: 1048576 managed bytes, freed\n");
}

static __attribute__((noinline)) void
leak_one(void)
{
	must_dl(rt.malloc(&leaked, 3000), "leak_one: cudaMalloc");
	printf("leak_one: 3000 bytes, kept\n");
}

int
main(void)
{
	size_t free_bytes, total;

	load_runtime();
	make_buffers();
	make_managed();
	leak_one();
	must_dl(rt.mem_get_info(&free_bytes, &total), "cudaMemGetInfo");
	printf("device memory in use at exit: %zu bytes\n", total - free_bytes);
	return 0;
}
