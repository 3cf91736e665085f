/* A program with a private route to the driver, as a statically linked
 * runtime or a vendor library may have: it reads libcuda.so.1's dynamic
 * symbol table itself (no dlsym, no cuGetProcAddress, nothing a hook can
 * see) and calls the driver through the pointers it found. Alongside, it
 * uses the runtime the ordinary way, which the hooks do see.
 *
 * The numbers the tests assert (1 GiB simulated device):
 *   through the runtime (hooked):  cudaMalloc 1 MiB (freed), cudaMalloc
 *     2 MiB (kept), cudaMallocHost 8192 (kept): 3 allocations, 1 free;
 *   through the private route (CUPTI alone): cuMemAlloc_v2 3,000,000
 *     (freed), cuMemAlloc_v2 5,242,883 (kept), cuMemAllocManaged 12,288
 *     (kept): 3 allocations of 8,255,171 bytes, 5,255,171 live at exit;
 *   graphs, privately: created g, exec e of g, clone c of g; e and c
 *     destroyed, g never: CUPTI ids g = 1, c = 2, e = 1.
 * With the argument "oom" it then asks the runtime for 2 GiB, prints
 * "out of memory" when that fails, and is killed by SIGKILL. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1024 * 1024)

/* ---- the private table ---- */

struct dynsyms {
	ElfW(Addr) base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
};

/* glibc relocates these entries of the dynamic section in place; a
 * loader that does not leaves them as offsets from the base. */
static const void *dyn_ptr(const struct dynsyms *d, ElfW(Addr) p)
{
	return (const void *)(p < d->base ? p + d->base : p);
}

static int dynsyms_of(void *handle, struct dynsyms *d)
{
	struct link_map *lm;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0)
		return 0;
	d->base = lm->l_addr;
	for (const ElfW(Dyn) *dyn = lm->l_ld; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			d->symtab = dyn_ptr(d, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			d->strtab = dyn_ptr(d, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_GNU_HASH)
			d->gnu_hash = dyn_ptr(d, dyn->d_un.d_ptr);
	}
	return d->symtab && d->strtab && d->gnu_hash;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* A lookup in the GNU hash table (without its Bloom filter). */
static void *lookup(const struct dynsyms *d, const char *name)
{
	const uint32_t nbuckets = d->gnu_hash[0], symoffset = d->gnu_hash[1];
	const uint32_t bloom_words = d->gnu_hash[2];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)&d->gnu_hash[4];
	const uint32_t *buckets = (const uint32_t *)&bloom[bloom_words];
	const uint32_t *chain = &buckets[nbuckets];
	uint32_t h = gnu_hash(name);
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		const ElfW(Sym) *s = &d->symtab[i];
		uint32_t h2 = chain[i - symoffset];
		if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
		    !strcmp(name, d->strtab + s->st_name))
			return (void *)(d->base + s->st_value);
		if (h2 & 1)
			return NULL;
	}
}

static struct {
	CUresult (*init)(unsigned int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*alloc_managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*free)(CUdeviceptr);
	CUresult (*graph_create)(CUgraph *, unsigned int);
	CUresult (*graph_clone)(CUgraph *, CUgraph);
	CUresult (*graph_destroy)(CUgraph);
	CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*exec_destroy)(CUgraphExec);
} drv;

#define FIND(field, name) (*(void **)&drv.field = lookup(&d, name))

static int driver_open(void)
{
	struct dynsyms d = { 0 };
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h || !dynsyms_of(h, &d))
		return 0;
	return FIND(init, "cuInit") && FIND(retain, "cuDevicePrimaryCtxRetain") &&
	       FIND(set_current, "cuCtxSetCurrent") && FIND(alloc, "cuMemAlloc_v2") &&
	       FIND(alloc_managed, "cuMemAllocManaged") && FIND(free, "cuMemFree_v2") &&
	       FIND(graph_create, "cuGraphCreate") && FIND(graph_clone, "cuGraphClone") &&
	       FIND(graph_destroy, "cuGraphDestroy") &&
	       FIND(instantiate, "cuGraphInstantiateWithFlags") &&
	       FIND(exec_destroy, "cuGraphExecDestroy");
}

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL: %s\n", what);
		exit(1);
	}
}

/* Where the allocations come from: the tests find these functions'
 * addresses in the CUPTI records' program counters. */
static __attribute__((noinline)) CUdeviceptr private_alloc(size_t bytes)
{
	CUdeviceptr p = 0;
	check(drv.alloc(&p, bytes) == CUDA_SUCCESS, "private cuMemAlloc_v2");
	return p;
}

static __attribute__((noinline)) CUdeviceptr private_alloc_managed(size_t bytes)
{
	CUdeviceptr p = 0;
	check(drv.alloc_managed(&p, bytes, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS,
	      "private cuMemAllocManaged");
	return p;
}

static void private_setup(void)
{
	CUcontext ctx;
	check(driver_open(), "reading libcuda.so.1's symbol table");
	check(drv.init(0) == CUDA_SUCCESS, "private cuInit");
	check(drv.retain(&ctx, 0) == CUDA_SUCCESS, "private cuDevicePrimaryCtxRetain");
	check(drv.set_current(ctx) == CUDA_SUCCESS, "private cuCtxSetCurrent");
}

static void private_graphs(void)
{
	CUgraph g, c;
	CUgraphExec e;
	check(drv.graph_create(&g, 0) == CUDA_SUCCESS, "private cuGraphCreate");
	check(drv.instantiate(&e, g, 0) == CUDA_SUCCESS, "private cuGraphInstantiateWithFlags");
	check(drv.graph_clone(&c, g) == CUDA_SUCCESS, "private cuGraphClone");
	check(drv.exec_destroy(e) == CUDA_SUCCESS, "private cuGraphExecDestroy");
	check(drv.graph_destroy(c) == CUDA_SUCCESS, "private cuGraphDestroy");
}

int main(int argc, char **argv)
{
	void *a, *b, *host;
	check(cudaMalloc(&a, 1 * MiB) == cudaSuccess, "cudaMalloc 1 MiB");
	private_setup();
	CUdeviceptr p1 = private_alloc(3000000);
	private_alloc(5242883);
	private_alloc_managed(12288);
	check(drv.free(p1) == CUDA_SUCCESS, "private cuMemFree_v2");
	check(cudaFree(a) == cudaSuccess, "cudaFree");
	check(cudaMalloc(&b, 2 * MiB) == cudaSuccess, "cudaMalloc 2 MiB");
	check(cudaMallocHost(&host, 8192) == cudaSuccess, "cudaMallocHost 8192");
	private_graphs();
	if (argc > 1 && !strcmp(argv[1], "oom")) {
		void *big;
		check(cudaMalloc(&big, (size_t)2048 * MiB) == cudaErrorMemoryAllocation,
		      "2 GiB on a 1 GiB device fails");
		printf("out of memory\n");
		fflush(stdout);
		kill(getpid(), SIGKILL);
	}
	printf("done\n");
	return 0;
}
