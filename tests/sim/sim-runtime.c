/* Simulated CUDA runtime (libcudart.so.13): a TEST FIXTURE. It reaches the
 * driver only the way NVIDIA's runtime does: dlopen("libcuda.so.1"), dlsym
 * of cuGetProcAddress_v2 alone, and every other driver function through
 * that, by base name. So an interposer that hooks only exported driver
 * symbols misses its calls, and one that hooks both layers sees each
 * allocation twice unless it guards against nesting.
 * Memory entry points: sim-runtime-mem.c; pools: sim-runtime-pool.c;
 * arrays and 3D memory: sim-runtime-array.c; stream capture and graphs:
 * sim-runtime-graph.c; events: sim-runtime-event.c; device code and
 * launches: sim-runtime-kernel.c; device properties:
 * sim-runtime-device.c. Errors: sim-runtime-error.c. */
#include "sim-runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#define SIM_RT_MAX_DEVICES 64

struct sim_rt_driver sim_rt_drv;

static pthread_once_t sim_rt_once = PTHREAD_ONCE_INIT;
static cudaError_t sim_rt_load_error = cudaErrorInitializationError;
static cudaError_t sim_rt_init_error = cudaErrorInitializationError;

/* Primary contexts this runtime holds, one retain each; bumping the
 * generation (cudaDeviceReset) makes every thread bind again. */
static pthread_mutex_t sim_rt_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext sim_rt_primary[SIM_RT_MAX_DEVICES];
static unsigned sim_rt_generation = 1;

static __thread int sim_rt_device;
static __thread CUcontext sim_rt_bound;
static __thread unsigned sim_rt_bound_generation;

static void *
driver_symbol(const char *name, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	if (sim_rt_drv.get_proc_address(name, &fn, SIM_RT_VERSION, flags, &status) !=
	    CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !fn) {
		fprintf(stderr, "cudasim runtime: the driver has no %s for CUDA %d\n",
			name, SIM_RT_VERSION);
		return NULL;
	}
	return fn;
}

static cudaError_t
load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	bool complete = true;

	if (!h)
		return cudaErrorInsufficientDriver;
	sim_rt_drv.get_proc_address =
		(PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	if (!sim_rt_drv.get_proc_address)
		return cudaErrorInsufficientDriver;
#define SIM_RT_LOOKUP(field, name, flags, type) \
	complete &= (sim_rt_drv.field = (type)driver_symbol(name, flags)) != NULL;
	SIM_RT_DRIVER_FUNCTIONS(SIM_RT_LOOKUP)
#undef SIM_RT_LOOKUP
	return complete ? cudaSuccess : cudaErrorInsufficientDriver;
}

/* fork: the runtime's lock is taken across fork() so that a child never
 * inherits it held. Registered after the driver's handlers, so that it is
 * taken first: the runtime holds its lock when it calls the driver. What
 * a child can do is the driver's business: after fork every call reaches
 * a driver that answers CUDA_ERROR_NOT_INITIALIZED, which the runtime
 * reports as cudaErrorInitializationError, as NVIDIA's does. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&sim_rt_lock);
}

static void
fork_release(void)
{
	pthread_mutex_unlock(&sim_rt_lock);
}

static void
init_once(void)
{
	sim_rt_load_error = load_driver();
	if (sim_rt_load_error != cudaSuccess)
		sim_rt_init_error = sim_rt_load_error;
	else
		sim_rt_init_error = sim_rt_from_driver(sim_rt_drv.init(0));
	pthread_atfork(fork_prepare, fork_release, fork_release);
	sim_rt_kernels_at_fork();
}

static cudaError_t
load(void)
{
	pthread_once(&sim_rt_once, init_once);
	return sim_rt_load_error;
}

/* The driver is loaded and initialised: enough for device queries. */
cudaError_t
sim_rt_init(void)
{
	pthread_once(&sim_rt_once, init_once);
	return sim_rt_init_error;
}

/* The device's primary context, retained once by the runtime. */
cudaError_t
sim_rt_primary_context(int device, CUcontext *ctx)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&sim_rt_lock);
	if (!sim_rt_primary[device])
		rc = sim_rt_drv.primary_retain(&sim_rt_primary[device], device);
	*ctx = sim_rt_primary[device];
	pthread_mutex_unlock(&sim_rt_lock);
	return sim_rt_from_driver(rc);
}

/* Make the thread's device's primary context current on this thread,
 * creating it on first use: what every runtime call that touches the
 * device does first. */
cudaError_t
sim_rt_enter(void)
{
	unsigned generation = __atomic_load_n(&sim_rt_generation, __ATOMIC_ACQUIRE);
	cudaError_t err = sim_rt_init();
	CUcontext ctx;

	if (err == cudaSuccess && sim_rt_bound && sim_rt_bound_generation == generation)
		return cudaSuccess;
	if (err == cudaSuccess)
		err = sim_rt_primary_context(sim_rt_device, &ctx);
	if (err == cudaSuccess)
		err = sim_rt_from_driver(sim_rt_drv.ctx_set_current(ctx));
	if (err == cudaSuccess) {
		sim_rt_bound = ctx;
		sim_rt_bound_generation = generation;
	}
	return err;
}

cudaError_t CUDARTAPI
cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return sim_rt_fail(cudaErrorInvalidValue);
	*runtimeVersion = SIM_RT_VERSION;
	return cudaSuccess;
}

/* 0 without a driver, and no error: how a program learns there is none. */
cudaError_t CUDARTAPI
cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return sim_rt_fail(cudaErrorInvalidValue);
	*driverVersion = 0;
	if (load() != cudaSuccess)
		return cudaSuccess;
	return sim_rt_check(sim_rt_drv.driver_get_version(driverVersion));
}

cudaError_t CUDARTAPI
cudaGetDeviceCount(int *count)
{
	cudaError_t err;

	if (!count)
		return sim_rt_fail(cudaErrorInvalidValue);
	*count = 0;
	err = sim_rt_init();
	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.device_get_count(count));
}

cudaError_t
sim_rt_check_device(int device)
{
	int count = 0;
	cudaError_t err = cudaGetDeviceCount(&count);

	if (err != cudaSuccess)
		return err;
	if (device < 0 || device >= count || device >= SIM_RT_MAX_DEVICES)
		return sim_rt_fail(cudaErrorInvalidDevice);
	return cudaSuccess;
}

/* Like CUDA 12 and later, cudaSetDevice initialises the device at once. */
cudaError_t CUDARTAPI
cudaSetDevice(int device)
{
	cudaError_t err = sim_rt_check_device(device);

	if (err != cudaSuccess)
		return err;
	if (device != sim_rt_device) {
		sim_rt_device = device;
		sim_rt_bound = NULL;
	}
	return sim_rt_fail(sim_rt_enter());
}

cudaError_t CUDARTAPI
cudaGetDevice(int *device)
{
	cudaError_t err = sim_rt_init();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	if (!device)
		return sim_rt_fail(cudaErrorInvalidValue);
	*device = sim_rt_device;
	return cudaSuccess;
}

cudaError_t CUDARTAPI
cudaDeviceSynchronize(void)
{
	cudaError_t err = sim_rt_enter();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.ctx_synchronize(NULL));
}

/* Releasing the runtime's only retain destroys the primary context, and
 * with it every allocation the process made on the device. */
cudaError_t CUDARTAPI
cudaDeviceReset(void)
{
	cudaError_t err = sim_rt_init();
	CUresult rc = CUDA_SUCCESS;
	int device = sim_rt_device;

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	pthread_mutex_lock(&sim_rt_lock);
	if (sim_rt_primary[device]) {
		rc = sim_rt_drv.primary_release(device);
		sim_rt_primary[device] = NULL;
		__atomic_add_fetch(&sim_rt_generation, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sim_rt_lock);
	return sim_rt_check(rc);
}

cudaError_t CUDARTAPI
cudaStreamCreate(cudaStream_t *pStream)
{
	return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t CUDARTAPI
cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	cudaError_t err = sim_rt_enter();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	if (!pStream || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return sim_rt_fail(cudaErrorInvalidValue);
	return sim_rt_check(sim_rt_drv.stream_create(pStream, flags));
}

cudaError_t CUDARTAPI
cudaStreamDestroy(cudaStream_t stream)
{
	cudaError_t err = sim_rt_enter();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.stream_destroy(stream));
}

cudaError_t CUDARTAPI
cudaStreamSynchronize(cudaStream_t stream)
{
	cudaError_t err = sim_rt_enter();

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	return sim_rt_check(sim_rt_drv.stream_synchronize(stream));
}

/* Driver entry points, as the real runtime hands them out: the driver's
 * own cuGetProcAddress answers, "not found" is a NULL pointer and success. */
static cudaError_t
entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
	    unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	cudaError_t err = sim_rt_init();
	int driver = 0;
	CUresult rc;

	if (err != cudaSuccess)
		return sim_rt_fail(err);
	sim_rt_drv.driver_get_version(&driver);
	if (!symbol || !funcPtr || cudaVersion > (unsigned int)driver)
		return sim_rt_fail(cudaErrorInvalidValue);
	rc = sim_rt_drv.get_proc_address(symbol, funcPtr, (int)cudaVersion, flags, &status);
	if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_FOUND)
		return sim_rt_check(rc);
	if (rc != CUDA_SUCCESS)
		*funcPtr = NULL;
	if (driverStatus)
		*driverStatus = (enum cudaDriverEntryPointQueryResult)status;
	return cudaSuccess;
}

/* The default search mode is that of the caller's build: legacy for the
 * plain names, per-thread for the _ptsz ones. */
static unsigned long long
per_thread_default(unsigned long long flags)
{
	return flags == cudaEnableDefault ? cudaEnablePerThreadDefaultStream : flags;
}

cudaError_t CUDARTAPI
cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
			enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, SIM_RT_VERSION, flags, driverStatus);
}

cudaError_t CUDARTAPI
cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
			     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, SIM_RT_VERSION, per_thread_default(flags),
			   driverStatus);
}

cudaError_t CUDARTAPI
cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
				 unsigned long long flags,
				 enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus);
}

cudaError_t CUDARTAPI
cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
				      unsigned int cudaVersion, unsigned long long flags,
				      enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, per_thread_default(flags),
			   driverStatus);
}
