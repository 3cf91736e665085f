/* dl-lookups: the program's own dlopen/dlsym/dlerror results are the same
 * with and without memtrace. It does not link the CUDA runtime: it opens
 * libcudart.so.13 RTLD_LOCAL, as Python's ctypes and frameworks do, and
 * prints each lookup as "module+offset" (stable across runs) and what
 * dlerror() says after it. Hooked functions looked up on a handle are
 * memtrace's wrappers under the preload (that is how calls through dlsym
 * are seen), so for those it prints only that they work.
 * Exit status 0; 2 when the runtime cannot be opened. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);

static void where(const char *what, const void *p)
{
	Dl_info info;
	const char *name;

	if (!p) {
		printf("%-40s NULL\n", what);
		return;
	}
	if (!dladdr(p, &info) || !info.dli_fname) {
		printf("%-40s in no module\n", what);
		return;
	}
	name = strrchr(info.dli_fname, '/');
	name = name ? name + 1 : info.dli_fname;
	/* the executable's own name is empty in some link maps */
	printf("%-40s %s+0x%zx\n", what, *name ? name : "(main)",
	       (size_t)((const char *)p - (const char *)info.dli_fbase));
}

static void error_now(const char *after)
{
	const char *e = dlerror();
	printf("%-40s dlerror: %s\n", after, e ? e : "(none)");
}

int main(void)
{
	void *p = NULL;
	struct link_map *lm = NULL;

	void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!rt) {
		fprintf(stderr, "dl-lookups: %s\n", dlerror());
		return 2;
	}
	error_now("dlopen libcudart.so.13");
	if (dlinfo(rt, RTLD_DI_LINKMAP, &lm) == 0 && lm)
		printf("%-40s %s\n", "libcudart link map name",
		       strrchr(lm->l_name, '/') ? strrchr(lm->l_name, '/') + 1 : lm->l_name);

	malloc_fn cuda_malloc = (malloc_fn)dlsym(rt, "cudaMalloc");
	error_now("dlsym cudaMalloc");
	free_fn cuda_free = (free_fn)dlsym(rt, "cudaFree");
	error_now("dlsym cudaFree");
	printf("%-40s %d\n", "cudaMalloc through dlsym", cuda_malloc(&p, 4096));
	error_now("after cudaMalloc (first CUDA call)");
	printf("%-40s %d\n", "cudaFree through dlsym", cuda_free(p));
	error_now("after cudaFree");

	where("dlsym(rt, cudaGetErrorName)", dlsym(rt, "cudaGetErrorName"));
	where("dlvsym(rt, cudaMalloc, libcudart.so.13)",
	      dlvsym(rt, "cudaMalloc", "libcudart.so.13"));
	where("dlsym(rt, no_such_function)", dlsym(rt, "no_such_function"));
	error_now("after the failed lookup");
	error_now("dlerror again");
	where("dlsym(RTLD_DEFAULT, cudaGetErrorName)", dlsym(RTLD_DEFAULT, "cudaGetErrorName"));
	error_now("after RTLD_DEFAULT lookup");
	where("dlsym(RTLD_DEFAULT, getpid)", dlsym(RTLD_DEFAULT, "getpid"));
	where("dlsym(RTLD_NEXT, getpid)", dlsym(RTLD_NEXT, "getpid"));
	where("dlsym(RTLD_NEXT, no_such_function)", dlsym(RTLD_NEXT, "no_such_function"));
	error_now("after the failed RTLD_NEXT lookup");
	where("dlsym(RTLD_DEFAULT, main)", dlsym(RTLD_DEFAULT, "main"));

	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	error_now("dlopen libcuda.so.1 NOLOAD");
	where("dlsym(libcuda, cuGetErrorName)", drv ? dlsym(drv, "cuGetErrorName") : NULL);
	where("dlsym(libcuda, cuMemAlloc_v3)", drv ? dlsym(drv, "cuMemAlloc_v3") : NULL);
	error_now("after the failed libcuda lookup");
	printf("%-40s %d\n", "dlclose libcuda", drv ? dlclose(drv) : -1);
	printf("%-40s %d\n", "dlclose libcudart", dlclose(rt));
	error_now("the end");
	return 0;
}
