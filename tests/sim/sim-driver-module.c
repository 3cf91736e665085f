/* Simulated driver: device code and kernel launches. The simulated device
 * runs no code: a launch checks what the real driver checks cheaply (the
 * function, the stream, the configuration) and does nothing, or, on a
 * stream being captured, becomes a kernel node that does nothing when the
 * graph runs.
 *
 * Device code comes as an image: a fatbinary (what nvcc embeds and the
 * runtime loads), an ELF cubin or PTX text. The driver keeps a copy, as
 * the caller may free its own, and looks kernel names up in it as whole
 * words (the ELF string tables and PTX entries hold them). An image with
 * neither ELF nor PTX in sight, or a fatbinary with a compressed entry
 * (TensorFlow's kernels), cannot be read here: any name is taken.
 *
 * Two routes, as in the real driver: libraries (cuLibraryLoadData,
 * context-independent, as the CUDA 12+ runtime loads device code), their
 * kernels (cuLibraryGetKernel) and each kernel's function in a context
 * (cuKernelGetFunction); and modules of one context (cuModuleLoadData,
 * cuModuleGetFunction). cuLaunchKernel takes a function, or a kernel cast
 * to one (then the context is the current one). */
#include "sim-driver.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SIM_FATBIN_MAGIC 0xBA55ED50u

struct sim_image {
	unsigned char *bytes;
	size_t size;
};

struct CUlib_st {
	struct sim_image image;
	struct CUlib_st *next;       /* every library */
};

/* A module's __device__ variable, given device memory at its first
 * cuModuleGetGlobal and freed with the module. */
struct sim_global {
	char *name;
	uintptr_t addr;
	size_t size;                 /* as the image's symbol table says */
	CUdevice device;
	struct sim_global *next;
};

struct CUmod_st {
	struct sim_image image;
	uint32_t owner;              /* the context it was loaded in */
	struct sim_global *globals;
	struct CUmod_st *next;       /* every module */
};

struct CUkern_st {
	CUlibrary library;
	char *name;
	int max_dynamic_shared;      /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
	struct CUkern_st *next;      /* every kernel */
};

struct CUfunc_st {
	char *name;
	int max_dynamic_shared;      /* as for kernels */
	CUkernel kernel;             /* from cuKernelGetFunction, or NULL */
	CUmodule module;             /* from cuModuleGetFunction, or NULL */
	uint32_t owner;              /* its context */
	struct CUfunc_st *next;      /* every function */
};

/* Under the driver lock. */
static CUlibrary sim_libraries;
static CUmodule sim_modules;
static CUkernel sim_kernels;
static CUfunction sim_functions;

/* ---- images ---- */

/* A fatbinary's header: magic, version, header size, then the size of
 * what follows it. */
static size_t
fatbin_size(const unsigned char *p)
{
	uint16_t header;
	uint64_t rest;

	memcpy(&header, p + 6, sizeof(header));
	memcpy(&rest, p + 8, sizeof(rest));
	if (header < 16 || rest > ((uint64_t)1 << 32))
		return 0;
	return header + (size_t)rest;
}

/* An ELF file ends with its section or its program header table. */
static size_t
elf_size(const unsigned char *p)
{
	Elf64_Ehdr h;
	size_t sections, segments, end = sizeof(h);

	if (p[EI_CLASS] != ELFCLASS64)
		return 0;
	memcpy(&h, p, sizeof(h));
	sections = h.e_shoff + (size_t)h.e_shnum * h.e_shentsize;
	segments = h.e_phoff + (size_t)h.e_phnum * h.e_phentsize;
	if (sections > end)
		end = sections;
	if (segments > end)
		end = segments;
	return end;
}

/* How many bytes the image at code has, 0 for anything that is not
 * device code. PTX is NUL-terminated text with a .version directive. */
static size_t
image_size(const void *code)
{
	const unsigned char *p = code;
	uint32_t magic = 0;
	size_t n;

	/* Text shorter than a magic number is read no further than its end. */
	if (strnlen(code, sizeof(magic)) == sizeof(magic))
		memcpy(&magic, p, sizeof(magic));
	if (magic == SIM_FATBIN_MAGIC)
		return fatbin_size(p);
	if (magic && memcmp(p, ELFMAG, SELFMAG) == 0)
		return elf_size(p);
	n = strlen(code);
	return memmem(code, n, ".version", 8) ? n + 1 : 0;
}

static CUresult
image_load(struct sim_image *im, const void *code)
{
	size_t size;

	if (!code)
		return CUDA_ERROR_INVALID_VALUE;
	size = image_size(code);
	if (size == 0)
		return CUDA_ERROR_INVALID_IMAGE;
	im->bytes = malloc(size);
	if (!im->bytes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(im->bytes, code, size);
	im->size = size;
	return CUDA_SUCCESS;
}

static bool
ident_char(unsigned char c)
{
	return c == '_' || c == '$' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* Whether name occurs in the image as a whole word. */
static bool
has_word(const struct sim_image *im, const char *name)
{
	size_t n = strlen(name);
	const unsigned char *end = im->bytes + im->size;
	const unsigned char *p = im->bytes;

	while (n && (p = memmem(p, (size_t)(end - p), name, n))) {
		bool starts = p == im->bytes || !ident_char(p[-1]);
		bool ends = p + n == end || !ident_char(p[n]);
		if (starts && ends)
			return true;
		p++;
	}
	return false;
}

/* Whether a fatbinary has an entry whose payload is compressed (flag
 * 0x2000 in the entry header: kind, version, header size, payload size,
 * ..., flags at byte 40). TensorFlow's kernels come so: an LZ4 stream
 * starts with literal bytes, so "\177ELF" shows though the names in it
 * are cut up. */
#define SIM_FATBIN_COMPRESSED 0x2000u
static bool
fatbin_compressed(const struct sim_image *im)
{
	uint32_t magic = 0, hsize;
	uint16_t header;
	uint64_t size, flags;
	size_t off;

	if (im->size < 16)
		return false;
	memcpy(&magic, im->bytes, sizeof(magic));
	if (magic != SIM_FATBIN_MAGIC)
		return false;
	memcpy(&header, im->bytes + 6, sizeof(header));
	for (off = header; off + 48 <= im->size; off += (size_t)hsize + size) {
		memcpy(&hsize, im->bytes + off + 4, sizeof(hsize));
		memcpy(&size, im->bytes + off + 8, sizeof(size));
		memcpy(&flags, im->bytes + off + 40, sizeof(flags));
		if (flags & SIM_FATBIN_COMPRESSED)
			return true;
		if (hsize < 48 || size > im->size)
			break;
	}
	return false;
}

/* Whether the image may hold a kernel of that name. */
static bool
image_has(const struct sim_image *im, const char *name)
{
	bool readable = (memmem(im->bytes, im->size, ELFMAG, SELFMAG) ||
			 memmem(im->bytes, im->size, ".entry", 6)) &&
			!fatbin_compressed(im);

	return name && (has_word(im, name) || (!readable && *name));
}

/* ---- lookups ---- */

static bool
library_alive(CUlibrary lib)
{
	for (CUlibrary l = sim_libraries; l; l = l->next)
		if (l == lib)
			return lib != NULL;
	return false;
}

static bool
module_alive(CUmodule mod)
{
	for (CUmodule m = sim_modules; m; m = m->next)
		if (m == mod)
			return mod != NULL;
	return false;
}

static bool
kernel_alive(CUkernel kernel)
{
	for (CUkernel k = sim_kernels; k; k = k->next)
		if (k == kernel)
			return kernel != NULL;
	return false;
}

static bool
function_alive(CUfunction func)
{
	for (CUfunction f = sim_functions; f; f = f->next)
		if (f == func)
			return func != NULL;
	return false;
}

/* The function of that name from that kernel or module in that context,
 * made on first use: the same name gives the same handle. */
static CUfunction
function_get(CUkernel kernel, CUmodule module, const char *name, uint32_t owner)
{
	CUfunction f;

	for (f = sim_functions; f; f = f->next)
		if (f->kernel == kernel && f->module == module && f->owner == owner &&
		    strcmp(f->name, name) == 0)
			return f;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name))) {
		free(f);
		return NULL;
	}
	f->kernel = kernel;
	f->module = module;
	f->owner = owner;
	f->max_dynamic_shared = kernel ? kernel->max_dynamic_shared : SIM_MAX_SHARED_PER_BLOCK;
	f->next = sim_functions;
	sim_functions = f;
	return f;
}

/* The functions of a kernel or module that goes, or of a context. */
static void
functions_drop(CUkernel kernel, CUmodule module, uint32_t owner)
{
	CUfunction *at = &sim_functions;

	while (*at) {
		CUfunction f = *at;
		bool drop = (kernel && f->kernel == kernel) || (module && f->module == module) ||
			    (owner && f->owner == owner);
		if (!drop) {
			at = &f->next;
			continue;
		}
		*at = f->next;
		free(f->name);
		free(f);
	}
}

static CUkernel
kernel_get(CUlibrary lib, const char *name)
{
	CUkernel k;

	for (k = sim_kernels; k; k = k->next)
		if (k->library == lib && strcmp(k->name, name) == 0)
			return k;
	k = calloc(1, sizeof(*k));
	if (!k || !(k->name = strdup(name))) {
		free(k);
		return NULL;
	}
	k->library = lib;
	k->max_dynamic_shared = SIM_MAX_SHARED_PER_BLOCK;
	k->next = sim_kernels;
	sim_kernels = k;
	return k;
}

static void
kernels_drop(CUlibrary lib)
{
	CUkernel *at = &sim_kernels;

	while (*at) {
		CUkernel k = *at;
		if (k->library != lib) {
			at = &k->next;
			continue;
		}
		*at = k->next;
		functions_drop(k, NULL, 0);
		free(k->name);
		free(k);
	}
}

static void
module_delete(CUmodule mod)
{
	CUmodule *at;

	functions_drop(NULL, mod, 0);
	for (struct sim_global *g = mod->globals, *next; g; g = next) {
		next = g->next;
		sim_arena_free(&sim_drv.dev[g->device].arena, g->addr);
		free(g->name);
		free(g);
	}
	for (at = &sim_modules; *at != mod; at = &(*at)->next)
		;
	*at = mod->next;
	free(mod->image.bytes);
	free(mod);
}

/* Lock held: a context is being destroyed: its modules and the functions
 * of kernels in it go; libraries and kernels are no context's. */
void
sim_modules_release_owner(uint32_t owner)
{
	CUmodule m, next;

	for (m = sim_modules; m; m = next) {
		next = m->next;
		if (m->owner == owner)
			module_delete(m);
	}
	functions_drop(NULL, NULL, owner);
}

/* ---- libraries and kernels ---- */

/* JIT and library options are accepted and ignored: nothing is compiled. */
CUresult CUDAAPI
cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
		  void **jitOptionsValues, unsigned int numJitOptions,
		  CUlibraryOption *libraryOptions, void **libraryOptionValues,
		  unsigned int numLibraryOptions)
{
	CUresult rc = sim_ready();
	CUlibrary lib;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!library || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	lib = calloc(1, sizeof(*lib));
	if (!lib)
		return CUDA_ERROR_OUT_OF_MEMORY;
	rc = image_load(&lib->image, code);
	if (rc != CUDA_SUCCESS) {
		free(lib);
		return rc;
	}
	sim_lock();
	lib->next = sim_libraries;
	sim_libraries = lib;
	sim_unlock();
	*library = lib;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI
cuLibraryUnload(CUlibrary library)
{
	CUresult rc = sim_ready();
	CUlibrary *at;

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!library_alive(library)) {
		rc = CUDA_ERROR_INVALID_HANDLE;
	} else {
		kernels_drop(library);
		for (at = &sim_libraries; *at != library; at = &(*at)->next)
			;
		*at = library->next;
		free(library->image.bytes);
		free(library);
	}
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!library_alive(library))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (!image_has(&library->image, name))
		rc = CUDA_ERROR_NOT_FOUND;
	else if (!(*pKernel = kernel_get(library, name)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return rc;
}

/* The kernel's function in the current context. */
CUresult CUDAAPI
cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !pFunc)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !kernel_alive(kernel))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS && !(*pFunc = function_get(kernel, NULL, kernel->name, ctx->id)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return rc;
}

/* ---- modules ---- */

CUresult CUDAAPI
cuModuleLoadData(CUmodule *module, const void *image)
{
	CUmodule mod = NULL;
	CUcontext ctx;
	CUresult rc;

	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !module)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !(mod = calloc(1, sizeof(*mod))))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS)
		rc = image_load(&mod->image, image);
	if (rc == CUDA_SUCCESS) {
		mod->owner = ctx->id;
		mod->next = sim_modules;
		sim_modules = mod;
		*module = mod;
	} else {
		free(mod);
	}
	sim_unlock();
	return rc;
}

/* JIT options are accepted and ignored: there is nothing to compile. */
CUresult CUDAAPI
cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
		   CUjit_option *options, void **optionValues)
{
	if (numOptions && (!options || !optionValues))
		return CUDA_ERROR_INVALID_VALUE;
	return cuModuleLoadData(module, image);
}

/* A fatbinary, or (as XLA passes what ptxas made) a cubin: one loader. */
CUresult CUDAAPI
cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadData(module, fatCubin);
}

CUresult CUDAAPI
cuModuleUnload(CUmodule hmod)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (module_alive(hmod))
		module_delete(hmod);
	else
		rc = CUDA_ERROR_INVALID_HANDLE;
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!module_alive(hmod))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (!image_has(&hmod->image, name))
		rc = CUDA_ERROR_NOT_FOUND;
	else if (!(*hfunc = function_get(NULL, hmod, name, hmod->owner)))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	return rc;
}

/* The size of the data object NAME in an ELF image's symbol table (a
 * cubin, as XLA loads them); false for anything else. */
static bool
elf_object(const struct sim_image *im, const char *name, size_t *size)
{
	const unsigned char *p = im->bytes;
	Elf64_Ehdr h;

	if (im->size < sizeof(h) || memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64)
		return false;
	memcpy(&h, p, sizeof(h));
	if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shoff > im->size ||
	    h.e_shnum > (im->size - h.e_shoff) / sizeof(Elf64_Shdr))
		return false;
	for (unsigned i = 0; i < h.e_shnum; i++) {
		Elf64_Shdr sh, strs;
		memcpy(&sh, p + h.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    sh.sh_link >= h.e_shnum || sh.sh_offset > im->size ||
		    sh.sh_size > im->size - sh.sh_offset)
			continue;
		memcpy(&strs, p + h.e_shoff + sh.sh_link * sizeof(strs), sizeof(strs));
		if (strs.sh_offset > im->size || strs.sh_size > im->size - strs.sh_offset)
			continue;
		for (size_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, p + sh.sh_offset + off, sizeof(sym));
			if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_name >= strs.sh_size)
				continue;
			const char *at = (const char *)p + strs.sh_offset + sym.st_name;
			size_t room = strs.sh_size - sym.st_name;
			if (strnlen(at, room) < room && strcmp(at, name) == 0) {
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

/* Lock held, module alive. */
static CUresult
global_new(CUmodule mod, CUcontext ctx, const char *name, struct sim_global **out)
{
	struct sim_global *g;
	size_t size;

	if (!elf_object(&mod->image, name, &size))
		return CUDA_ERROR_NOT_FOUND;
	if (!(g = calloc(1, sizeof(*g))) || !(g->name = strdup(name))) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!sim_arena_alloc(&sim_drv.dev[ctx->device].arena, size ? size : 1, mod->owner,
			     SIM_KIND_MODULE_GLOBAL, &g->addr)) {
		free(g->name);
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memset((void *)g->addr, 0, size);
	g->size = size;
	g->device = ctx->device;
	g->next = mod->globals;
	mod->globals = g;
	*out = g;
	return CUDA_SUCCESS;
}

/* A __device__ variable of a module (XLA keeps its constants so): device
 * memory of the symbol's size, given at the first request (the real
 * driver gives it at load) and zero-filled (the real one copies the
 * image's initial value), the same address after. */
CUresult CUDAAPI
cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
	struct sim_global *g = NULL;
	CUcontext ctx;
	CUresult rc;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	rc = sim_ctx_enter(&ctx);
	if (rc == CUDA_SUCCESS && !module_alive(hmod))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS) {
		for (g = hmod->globals; g && strcmp(g->name, name); g = g->next)
			;
		if (!g)
			rc = global_new(hmod, ctx, name, &g);
	}
	if (rc == CUDA_SUCCESS) {
		if (dptr)
			*dptr = (CUdeviceptr)g->addr;
		if (bytes)
			*bytes = g->size;
	}
	sim_unlock();
	return rc;
}

/* ---- launches ---- */

/* A function of the launching context, or a kernel passed as one. */
static bool
launchable(CUfunction f, CUcontext ctx)
{
	if (kernel_alive((CUkernel)f))
		return true;
	return function_alive(f) && f->owner == ctx->id;
}

/* The dynamic shared memory a launch may ask for: 48 KiB, or what
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES opted in to. */
static int *
dynamic_shared_of(CUfunction f)
{
	return kernel_alive((CUkernel)f) ? &((CUkernel)f)->max_dynamic_shared :
					    &f->max_dynamic_shared;
}

/* The limits a Hopper GPU has (the device attributes say the same). */
static bool
config_ok(const unsigned int *grid, const unsigned int *block, unsigned int shared,
	  unsigned int shared_max)
{
	static const unsigned int grid_max[3] = { SIM_MAX_GRID_DIM_X, SIM_MAX_GRID_DIM_Y,
						  SIM_MAX_GRID_DIM_Z };
	static const unsigned int block_max[3] = { SIM_MAX_BLOCK_DIM_X, SIM_MAX_BLOCK_DIM_Y,
						   SIM_MAX_BLOCK_DIM_Z };
	unsigned long long threads = 1;

	for (int i = 0; i < 3; i++) {
		if (grid[i] == 0 || grid[i] > grid_max[i] || block[i] == 0 ||
		    block[i] > block_max[i])
			return false;
		threads *= block[i];
	}
	return threads <= SIM_MAX_THREADS_PER_BLOCK && shared <= shared_max;
}

/* Lock held. */
static CUresult
launch(CUfunction f, const unsigned int *grid, const unsigned int *block, unsigned int shared,
       CUstream stream, void **params, void **extra)
{
	struct sim_capture *c;
	CUcontext ctx;
	CUresult rc = sim_ctx_enter(&ctx);

	if (rc == CUDA_SUCCESS)
		rc = sim_stream_check(stream, ctx);
	if (rc == CUDA_SUCCESS && !launchable(f, ctx))
		rc = CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_SUCCESS &&
	    (!config_ok(grid, block, shared, (unsigned int)*dynamic_shared_of(f)) ||
	     (params && extra)))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (c = sim_capture_of(stream)))
		rc = sim_capture_noop(c, CU_GRAPH_NODE_TYPE_KERNEL);
	return rc;
}

static CUresult
launch_locked(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
	      unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
	      void **params, void **extra)
{
	const unsigned int grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	CUresult rc;

	sim_lock();
	rc = launch(f, grid, block, shared, stream, params, extra);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
	       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
	       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
	return launch_locked(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, hStream, kernelParams, extra);
}

CUresult CUDAAPI
cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
		    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
		    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
		    void **kernelParams, void **extra)
{
	return launch_locked(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, sim_stream_per_thread(hStream), kernelParams, extra);
}

/* Cooperative launches: the simulated device runs nothing, so a grid
 * that could not be resident at once is not refused. */
CUresult CUDAAPI
cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			  unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			  unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			  void **kernelParams)
{
	return launch_locked(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, hStream, kernelParams, NULL);
}

CUresult CUDAAPI
cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX,
			       unsigned int blockDimY, unsigned int blockDimZ,
			       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
	return launch_locked(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			     sharedMemBytes, sim_stream_per_thread(hStream), kernelParams, NULL);
}

/* The launch attributes (cluster shape, priority, programmatic
 * serialisation...) are accepted and change nothing. */
CUresult CUDAAPI
cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
	if (!config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	return launch_locked(f, config->gridDimX, config->gridDimY, config->gridDimZ,
			     config->blockDimX, config->blockDimY, config->blockDimZ,
			     config->sharedMemBytes, config->hStream, kernelParams, extra);
}

CUresult CUDAAPI
cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
		      void **extra)
{
	CUlaunchConfig c;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	c = *config;
	c.hStream = sim_stream_per_thread(c.hStream);
	return cuLaunchKernelEx(&c, f, kernelParams, extra);
}

/* ---- function attributes and occupancy ---- */

/* What every simulated function reports: compiled for sm_90, 32
 * registers a thread, no static shared, constant or local memory. */
#define SIM_FUNC_REGS 32
#define SIM_FUNC_VERSION 90

/* Lock held: f is a function of a live context, or a kernel passed as
 * one (which the runtime does). */
static bool
function_known(CUfunction f)
{
	return kernel_alive((CUkernel)f) || function_alive(f);
}

static CUresult
attribute_get(int *pi, CUfunction_attribute attrib, CUfunction f)
{
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = SIM_MAX_THREADS_PER_BLOCK; break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = SIM_FUNC_REGS; break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = SIM_FUNC_VERSION; break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = *dynamic_shared_of(f); break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = 0; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* Only the dynamic shared memory limit is kept (launches are checked
 * against it); the other settable attributes are checked and dropped. */
static CUresult
attribute_set(CUfunction f, CUfunction_attribute attrib, int value)
{
	const int shared_max = 232448; /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */

	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (value < 0 || value > shared_max)
			return CUDA_ERROR_INVALID_VALUE;
		*dynamic_shared_of(f) = value;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return value < -1 || value > 100 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return value < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult
func_attribute(CUfunction f, CUfunction_attribute attrib, int *get, int set)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	sim_lock();
	if (!function_known(f))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else
		rc = get ? attribute_get(get, attrib, f) : attribute_set(f, attrib, set);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	return func_attribute(hfunc, attrib, pi, 0);
}

CUresult CUDAAPI
cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	return func_attribute(hfunc, attrib, NULL, value);
}

/* A kernel's attributes are the same on every simulated device. */
CUresult CUDAAPI
cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_ready() == CUDA_SUCCESS && !sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	return func_attribute((CUfunction)kernel, attrib, pi, 0);
}

CUresult CUDAAPI
cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
	if (sim_ready() == CUDA_SUCCESS && !sim_device_get(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	return func_attribute((CUfunction)kernel, attrib, NULL, val);
}

CUresult CUDAAPI
cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	int ignored;

	if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	return func_attribute(hfunc, CU_FUNC_ATTRIBUTE_NUM_REGS, &ignored, 0);
}

/* Blocks of blockSize threads that fit on one multiprocessor of the
 * simulated H100 at once: the least of what threads, the block limit,
 * registers (SIM_FUNC_REGS a thread, allocated per warp) and shared
 * memory (each block also takes 1 KiB reserved) allow. */
static int
occupancy(int block_size, size_t dynamic_shared)
{
	const int sm_threads = 2048, sm_blocks = 32, sm_regs = 65536;
	const size_t sm_shared = 233472, block_reserved = 1024;
	int warps = (block_size + 31) / 32;
	int n = sm_threads / (warps * 32);

	if (n > sm_blocks)
		n = sm_blocks;
	if (sm_regs / (warps * 32 * SIM_FUNC_REGS) < n)
		n = sm_regs / (warps * 32 * SIM_FUNC_REGS);
	if ((int)(sm_shared / (dynamic_shared + block_reserved)) < n)
		n = (int)(sm_shared / (dynamic_shared + block_reserved));
	return n;
}

CUresult CUDAAPI
cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
						     int blockSize, size_t dynamicSMemSize,
						     unsigned int flags)
{
	CUresult rc = sim_ready();

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!numBlocks || blockSize <= 0 ||
	    (flags & ~(unsigned int)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!function_known(func))
		rc = CUDA_ERROR_INVALID_HANDLE;
	else if (blockSize > SIM_MAX_THREADS_PER_BLOCK ||
		 dynamicSMemSize > (size_t)*dynamic_shared_of(func))
		*numBlocks = 0;
	else
		*numBlocks = occupancy(blockSize, dynamicSMemSize);
	sim_unlock();
	return rc;
}

CUresult CUDAAPI
cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
					    size_t dynamicSMemSize)
{
	return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		numBlocks, func, blockSize, dynamicSMemSize, CU_OCCUPANCY_DEFAULT);
}

/* ---- tensor maps ---- */

/* A TMA descriptor (what Triton's kernels on a 9.0 device take, and XLA's
 * autotuner makes for them): checked as cuda.h states (rank 1 to 5, a
 * 16-byte aligned global address, box sizes 1 to 256) and filled with
 * the address and dimensions; no kernel reads it here. */
CUresult CUDAAPI
cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
		       cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
		       const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
		       const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
		       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
		       CUtensorMapFloatOOBfill oobFill)
{
	cuuint64_t *words;

	if (!tensorMap || tensorRank < 1 || tensorRank > 5 || !globalAddress ||
	    ((uintptr_t)globalAddress & 15) || !globalDim || !boxDim || !elementStrides ||
	    (tensorRank > 1 && !globalStrides))
		return CUDA_ERROR_INVALID_VALUE;
	for (cuuint32_t i = 0; i < tensorRank; i++)
		if (!globalDim[i] || !boxDim[i] || boxDim[i] > 256 || !elementStrides[i] ||
		    elementStrides[i] > 8)
			return CUDA_ERROR_INVALID_VALUE;
	memset(tensorMap, 0, sizeof(*tensorMap));
	words = (cuuint64_t *)(void *)tensorMap->opaque;
	words[0] = (uintptr_t)globalAddress;
	words[1] = ((cuuint64_t)tensorDataType << 32) | tensorRank;
	for (cuuint32_t i = 0; i < tensorRank; i++)
		words[2 + i] = globalDim[i];
	(void)interleave, (void)swizzle, (void)l2Promotion, (void)oobFill;
	return CUDA_SUCCESS;
}
