/* Simulated runtime: device code that nvcc compiled into the program, and
 * kernel launches. What nvcc generates (crt/host_runtime.h) calls, from a
 * constructor before main, __cudaRegisterFatBinary with the embedded
 * fatbinary, __cudaRegisterFunction for each kernel (its host stub and
 * device name), __cudaRegisterVar for each device variable and
 * __cudaRegisterFatBinaryEnd; __cudaUnregisterFatBinary at exit. A
 * <<<grid, block, shared, stream>>> launch pushes its configuration
 * (__cudaPushCallConfiguration), then calls the host stub, which looks
 * the kernel up once (__cudaGetKernel), pops the configuration and calls
 * __cudaLaunchKernel with the arguments.
 *
 * Registration only takes notes: nothing reaches the driver before the
 * program's first call that needs it. Then, as the CUDA 12+ runtime does,
 * each fatbinary is loaded as a library (cuLibraryLoadData) and each
 * kernel found in it (cuLibraryGetKernel); a launch checks the
 * configuration against the device's limits (cudaErrorInvalidConfiguration)
 * and passes the kernel to cuLaunchKernel, which takes a kernel for a
 * function of the current context. The simulated device runs nothing.
 *
 * Device variables (__device__, __constant__) get storage at their first
 * use by a symbol call (cudaGetSymbolAddress, cudaMemcpyToSymbol): zeroed
 * host memory of the registered size, outside the device's capacity, as
 * a module's globals are on a real device (loaded with the module, not
 * allocated by the program). */
#include "sim-runtime.h"

#include <fatbinary_section.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* nvcc's side of the interface, declared by crt/host_runtime.h and
 * crt/device_functions.h for C++ only. */
void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
				      const char *deviceName, int thread_limit, uint3 *tid,
				      uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void CUDARTAPI __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
				 const char *deviceName, int ext, size_t size, int constant,
				 int global);
char CUDARTAPI __cudaInitModule(void **fatCubinHandle);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
					       struct CUstream_st *stream);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
						 size_t *sharedMem, void *stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					 void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					      void **args, size_t sharedMem,
					      cudaStream_t stream);

/* One registered fatbinary; its address is the handle nvcc's code keeps. */
struct sim_rt_fatbin {
	const void *image;       /* the fatbinary itself, out of nvcc's wrapper */
	bool loaded;             /* tried: library or error is the outcome */
	CUlibrary library;
	CUresult error;
	struct sim_rt_fatbin *next;
};

/* One registered kernel: its host stub names it. */
struct sim_rt_function {
	const void *host;
	const char *name;        /* device name, nvcc's string */
	struct sim_rt_fatbin *fatbin;
	CUkernel kernel;         /* found at first use */
	struct sim_rt_function *next;
};

/* One registered device variable: its host shadow names it. */
struct sim_rt_var {
	const void *host;
	size_t size;
	void *storage;           /* made at first use */
	struct sim_rt_var *next;
};

/* Launch configurations pushed by <<<>>> and not popped yet, per thread:
 * an argument of a launch may launch too. */
struct sim_rt_config {
	dim3 grid, block;
	size_t shared;
	cudaStream_t stream;
};
#define SIM_RT_CONFIG_DEPTH 16

/* Registrations come from constructors, lookups from any thread. */
static pthread_mutex_t sim_rt_kernel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_rt_fatbin *sim_rt_fatbins;
static struct sim_rt_function *sim_rt_functions;
static struct sim_rt_var *sim_rt_vars;

static __thread struct sim_rt_config sim_rt_configs[SIM_RT_CONFIG_DEPTH];
static __thread unsigned sim_rt_config_depth;

/* fork: the lock is taken across fork() (after the runtime's and the
 * driver's, which it may take while held), so a child never inherits it
 * held. */
static void
kernels_lock(void)
{
	pthread_mutex_lock(&sim_rt_kernel_lock);
}

static void
kernels_unlock(void)
{
	pthread_mutex_unlock(&sim_rt_kernel_lock);
}

void
sim_rt_kernels_at_fork(void)
{
	pthread_atfork(kernels_lock, kernels_unlock, kernels_unlock);
}

/* ---- registration ---- */

/* nvcc passes its wrapper; the driver takes what it wraps. */
void **CUDARTAPI
__cudaRegisterFatBinary(void *fatCubin)
{
	const __fatBinC_Wrapper_t *w = fatCubin;
	struct sim_rt_fatbin *fb = calloc(1, sizeof(*fb));

	if (!fb)
		return NULL;
	fb->image = w && w->magic == FATBINC_MAGIC ? (const void *)w->data : fatCubin;
	kernels_lock();
	fb->next = sim_rt_fatbins;
	sim_rt_fatbins = fb;
	kernels_unlock();
	return (void **)fb;
}

void CUDARTAPI
__cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

void CUDARTAPI
__cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
		       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
		       dim3 *bDim, dim3 *gDim, int *wSize)
{
	struct sim_rt_function *f = calloc(1, sizeof(*f));

	if (!f || !fatCubinHandle) {
		free(f);
		return;
	}
	*f = (struct sim_rt_function){ .host = hostFun,
				       .name = deviceName,
				       .fatbin = (struct sim_rt_fatbin *)fatCubinHandle };
	kernels_lock();
	f->next = sim_rt_functions;
	sim_rt_functions = f;
	kernels_unlock();
}

/* Noted; the storage comes later (see above). */
void CUDARTAPI
__cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
		  const char *deviceName, int ext, size_t size, int constant, int global)
{
	struct sim_rt_var *v = calloc(1, sizeof(*v));

	if (!v)
		return;
	v->host = hostVar;
	v->size = size;
	kernels_lock();
	v->next = sim_rt_vars;
	sim_rt_vars = v;
	kernels_unlock();
}

/* The storage of the variable whose host shadow is symbol. */
static cudaError_t
symbol_storage(const void *symbol, void **storage, size_t *size)
{
	struct sim_rt_var *v;
	cudaError_t err = sim_rt_enter();

	if (err != cudaSuccess)
		return err;
	kernels_lock();
	for (v = sim_rt_vars; v && v->host != symbol; v = v->next)
		;
	if (v && !v->storage)
		v->storage = calloc(1, v->size ? v->size : 1);
	if (v && v->storage) {
		*storage = v->storage;
		*size = v->size;
	}
	kernels_unlock();
	return !v ? cudaErrorInvalidSymbol : v->storage ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t CUDARTAPI
cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	size_t size;

	if (!devPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	return sim_rt_fail(symbol_storage(symbol, devPtr, &size));
}

cudaError_t CUDARTAPI
cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
		   enum cudaMemcpyKind kind)
{
	void *storage = NULL;
	size_t size = 0;
	cudaError_t err = symbol_storage(symbol, &storage, &size);

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
	    kind != cudaMemcpyDefault)
		return sim_rt_fail(cudaErrorInvalidMemcpyDirection);
	if (offset > size || count > size - offset || (count && !src))
		return sim_rt_fail(cudaErrorInvalidValue);
	memcpy((char *)storage + offset, src, count);
	return cudaSuccess;
}

/* At exit: the library goes, and the notes. A forked child's driver
 * refuses, which changes nothing here. */
void CUDARTAPI
__cudaUnregisterFatBinary(void **fatCubinHandle)
{
	struct sim_rt_fatbin *fb = (struct sim_rt_fatbin *)fatCubinHandle, **at;
	struct sim_rt_function **f;

	if (!fb)
		return;
	kernels_lock();
	for (f = &sim_rt_functions; *f;) {
		struct sim_rt_function *dead = *f;
		if (dead->fatbin != fb) {
			f = &dead->next;
			continue;
		}
		*f = dead->next;
		free(dead);
	}
	for (at = &sim_rt_fatbins; *at && *at != fb; at = &(*at)->next)
		;
	if (*at)
		*at = fb->next;
	if (fb->loaded && fb->library)
		sim_rt_drv.library_unload(fb->library);
	kernels_unlock();
	free(fb);
}

/* ---- lookups ---- */

/* Lock held, driver loaded: the fatbinary as a library, loaded once. */
static CUresult
fatbin_library(struct sim_rt_fatbin *fb)
{
	if (!fb->loaded) {
		fb->error = sim_rt_drv.library_load_data(&fb->library, fb->image, NULL, NULL, 0,
							 NULL, NULL, 0);
		fb->loaded = true;
	}
	return fb->error;
}

/* A kernel the library lacks is no device function of this program. */
static cudaError_t
kernel_error(CUresult rc)
{
	return rc == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : sim_rt_from_driver(rc);
}

/* Lock held, driver loaded. */
static cudaError_t
function_kernel(struct sim_rt_function *f, CUkernel *out)
{
	CUresult rc = CUDA_SUCCESS;

	if (!f->kernel)
		rc = fatbin_library(f->fatbin);
	if (!f->kernel && rc == CUDA_SUCCESS)
		rc = sim_rt_drv.library_get_kernel(&f->kernel, f->fatbin->library, f->name);
	if (rc == CUDA_SUCCESS)
		*out = f->kernel;
	return kernel_error(rc);
}

/* The kernel of a registered host stub. */
cudaError_t
sim_rt_kernel_of(const void *host, CUkernel *out)
{
	cudaError_t err = sim_rt_init();
	struct sim_rt_function *f;

	if (err != cudaSuccess)
		return err;
	kernels_lock();
	for (f = sim_rt_functions; f && f->host != host; f = f->next)
		;
	err = f ? function_kernel(f, out) : cudaErrorInvalidDeviceFunction;
	kernels_unlock();
	return err;
}

/* What managed variables need before main's first use: the module. */
char CUDARTAPI
__cudaInitModule(void **fatCubinHandle)
{
	struct sim_rt_fatbin *fb = (struct sim_rt_fatbin *)fatCubinHandle;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	if (!fb || sim_rt_init() != cudaSuccess)
		return 0;
	kernels_lock();
	rc = fatbin_library(fb);
	kernels_unlock();
	return rc == CUDA_SUCCESS;
}

cudaError_t CUDARTAPI
__cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	if (!kernel)
		return sim_rt_fail(cudaErrorInvalidValue);
	return sim_rt_fail(sim_rt_kernel_of(func, kernel));
}

cudaError_t CUDARTAPI
cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

/* The function of a registered host stub in the current context: its
 * kernel's (XLA launches its own built-in kernels so, through the driver). */
cudaError_t CUDARTAPI
cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
	CUkernel kernel;
	CUfunction fn;
	cudaError_t err;

	if (!functionPtr || !symbolPtr)
		return sim_rt_fail(cudaErrorInvalidValue);
	err = sim_rt_kernel_of(symbolPtr, &kernel);
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	err = sim_rt_check(sim_rt_drv.kernel_get_function(&fn, kernel));
	if (err == cudaSuccess)
		*functionPtr = (cudaFunction_t)fn;
	return sim_rt_fail(err);
}

/* ---- launches ---- */

unsigned CUDARTAPI
__cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
			    struct CUstream_st *stream)
{
	if (sim_rt_config_depth == SIM_RT_CONFIG_DEPTH) {
		sim_rt_fail(cudaErrorInvalidConfiguration);
		return 1; /* the launch is skipped */
	}
	sim_rt_configs[sim_rt_config_depth++] =
		(struct sim_rt_config){ gridDim, blockDim, sharedMem, stream };
	return 0;
}

/* stream is a cudaStream_t * in all but name. */
cudaError_t CUDARTAPI
__cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
	const struct sim_rt_config *c;

	if (sim_rt_config_depth == 0)
		return sim_rt_fail(cudaErrorMissingConfiguration);
	c = &sim_rt_configs[--sim_rt_config_depth];
	*gridDim = c->grid;
	*blockDim = c->block;
	*sharedMem = c->shared;
	*(cudaStream_t *)stream = c->stream;
	return cudaSuccess;
}

/* The device's limits, what a launch may ask for: read once per thread
 * (the simulated devices are all alike). */
struct sim_rt_limits {
	bool known;
	int block[3], grid[3], threads;
};

static cudaError_t
limits_of_current(struct sim_rt_limits *out)
{
	static const CUdevice_attribute attrs[7] = {
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
		CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
	};
	int value[7], device = 0;
	cudaError_t err = cudaGetDevice(&device);

	for (int i = 0; i < 7 && err == cudaSuccess; i++)
		err = sim_rt_from_driver(sim_rt_drv.device_get_attribute(&value[i], attrs[i], device));
	if (err != cudaSuccess)
		return err;
	*out = (struct sim_rt_limits){ .known = true,
				       .block = { value[0], value[1], value[2] },
				       .grid = { value[3], value[4], value[5] },
				       .threads = value[6] };
	return cudaSuccess;
}

static bool
dims_ok(const unsigned int *d, const int *max)
{
	for (int i = 0; i < 3; i++)
		if (d[i] == 0 || d[i] > (unsigned int)max[i])
			return false;
	return true;
}

static cudaError_t
config_check(dim3 grid, dim3 block, size_t shared)
{
	static __thread struct sim_rt_limits limits;
	const unsigned int g[3] = { grid.x, grid.y, grid.z }, b[3] = { block.x, block.y, block.z };
	cudaError_t err = limits.known ? cudaSuccess : limits_of_current(&limits);

	if (err != cudaSuccess)
		return err;
	if (!dims_ok(g, limits.grid) || !dims_ok(b, limits.block) ||
	    (unsigned long long)b[0] * b[1] * b[2] > (unsigned long long)limits.threads)
		return cudaErrorInvalidConfiguration;
	return shared > UINT32_MAX ? cudaErrorInvalidValue : cudaSuccess;
}

static cudaError_t
launch(CUkernel kernel, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t stream,
       bool per_thread)
{
	cudaError_t err = sim_rt_enter();
	PFN_cuLaunchKernel_v4000 fn = per_thread ? sim_rt_drv.launch_kernel_ptsz :
						   sim_rt_drv.launch_kernel;

	if (err == cudaSuccess && !kernel)
		err = cudaErrorInvalidDeviceFunction;
	if (err == cudaSuccess)
		err = config_check(grid, block, shared);
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(fn((CUfunction)kernel, grid.x, grid.y, grid.z, block.x, block.y,
			       block.z, (unsigned int)shared, stream, args, NULL));
}

cudaError_t CUDARTAPI
__cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
		   size_t sharedMem, cudaStream_t stream)
{
	return launch(kernel, gridDim, blockDim, args, sharedMem, stream, false);
}

cudaError_t CUDARTAPI
__cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			size_t sharedMem, cudaStream_t stream)
{
	return launch(kernel, gridDim, blockDim, args, sharedMem, stream, true);
}

static cudaError_t
launch_stub(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
	    cudaStream_t stream, bool per_thread)
{
	CUkernel kernel = NULL;
	cudaError_t err = sim_rt_kernel_of(func, &kernel);

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return launch(kernel, grid, block, args, shared, stream, per_thread);
}

cudaError_t CUDARTAPI
cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
		 cudaStream_t stream)
{
	return launch_stub(func, gridDim, blockDim, args, sharedMem, stream, false);
}

cudaError_t CUDARTAPI
cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
		      size_t sharedMem, cudaStream_t stream)
{
	return launch_stub(func, gridDim, blockDim, args, sharedMem, stream, true);
}
