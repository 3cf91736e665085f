/* What the simulated cuBLAS and cuBLASLt share, built into both, hidden:
 * the driver, which each library loads by itself, as NVIDIA's do (neither
 * links libcudart): dlopen of libcuda.so.1, cuGetProcAddress_v2 by dlsym
 * and every other driver function through it, so memtrace sees their
 * device memory come from the driver by the same route as on a GPU; the
 * handle's context and default workspace; status names, type sizes. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-blas.h"

/* The CUDA version the libraries ask the driver's entry points for. */
#define SIM_BLAS_CUDA_VERSION 13000

static struct sim_blas_driver drv;
static bool drv_ok;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void *
lookup(PFN_cuGetProcAddress_v12000 get_proc, const char *name)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	if (get_proc(name, &fn, SIM_BLAS_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
		     &status) != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS)
		return NULL;
	return fn;
}

static void
load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	PFN_cuGetProcAddress_v12000 get_proc;

	if (!lib)
		return;
	get_proc = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
	if (!get_proc)
		return;
	drv.init = (PFN_cuInit_v2000)lookup(get_proc, "cuInit");
	drv.device_get = (PFN_cuDeviceGet_v2000)lookup(get_proc, "cuDeviceGet");
	drv.device_get_attribute =
		(PFN_cuDeviceGetAttribute_v2000)lookup(get_proc, "cuDeviceGetAttribute");
	drv.primary_retain =
		(PFN_cuDevicePrimaryCtxRetain_v7000)lookup(get_proc, "cuDevicePrimaryCtxRetain");
	drv.ctx_get_current = (PFN_cuCtxGetCurrent_v4000)lookup(get_proc, "cuCtxGetCurrent");
	drv.ctx_set_current = (PFN_cuCtxSetCurrent_v4000)lookup(get_proc, "cuCtxSetCurrent");
	drv.ctx_get_device = (PFN_cuCtxGetDevice_v13000)lookup(get_proc, "cuCtxGetDevice");
	drv.mem_alloc = (PFN_cuMemAlloc_v3020)lookup(get_proc, "cuMemAlloc");
	drv.mem_free = (PFN_cuMemFree_v3020)lookup(get_proc, "cuMemFree");
	drv.memcpy_async = (PFN_cuMemcpyAsync_v4000)lookup(get_proc, "cuMemcpyAsync");
	drv_ok = drv.init && drv.device_get && drv.device_get_attribute &&
		 drv.primary_retain && drv.ctx_get_current && drv.ctx_set_current &&
		 drv.ctx_get_device && drv.mem_alloc && drv.mem_free && drv.memcpy_async;
	if (!drv_ok)
		fprintf(stderr, "cudasim blas: libcuda.so.1 lacks a driver function it needs\n");
}

/* NULL when there is no usable driver. */
const struct sim_blas_driver *
sim_blas_driver(void)
{
	pthread_once(&drv_once, load);
	return drv_ok ? &drv : NULL;
}

/* Ties a new handle to the current context, making the primary context of
 * device 0 current first when there is none, as the CUDA runtime inside
 * NVIDIA's libraries does. No driver, or one that fails to initialise:
 * CUBLAS_STATUS_NOT_INITIALIZED ("CUDA runtime initialization failed"). */
cublasStatus_t
sim_blas_attach(struct sim_blas_handle *h)
{
	const struct sim_blas_driver *d = sim_blas_driver();
	CUcontext ctx = NULL;

	if (!d || d->init(0) != CUDA_SUCCESS || d->ctx_get_current(&ctx) != CUDA_SUCCESS)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!ctx) {
		CUdevice dev;

		if (d->device_get(&dev, 0) != CUDA_SUCCESS ||
		    d->primary_retain(&ctx, dev) != CUDA_SUCCESS ||
		    d->ctx_set_current(ctx) != CUDA_SUCCESS)
			return CUBLAS_STATUS_NOT_INITIALIZED;
	}
	if (d->ctx_get_device(&h->device, ctx) != CUDA_SUCCESS)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->ctx = ctx;
	return CUBLAS_STATUS_SUCCESS;
}

/* CUBLAS_WORKSPACE_CONFIG=:SIZE:COUNT[:SIZE:COUNT...], SIZE in KiB, as
 * cuBLAS reads it; the pool is their total. Anything else: -1. */
static long long
workspace_config(const char *s)
{
	long long total = 0;

	while (*s) {
		char *end;
		long long size, count;

		if (*s != ':')
			return -1;
		size = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end != ':' || size < 0)
			return -1;
		s = end;
		count = strtoll(s + 1, &end, 10);
		if (end == s + 1 || count < 0)
			return -1;
		s = end;
		total += size * 1024 * count;
	}
	return total;
}

/* The default workspace pool that cuBLAS allocates when a handle is made
 * (cublasSetWorkspace: "the default workspace pool allocated during the
 * cuBLAS context creation"), with the size NVIDIA recommends for the
 * device (32 MiB from Hopper on, 4 MiB before), or the total of
 * CUBLAS_WORKSPACE_CONFIG when that is set and well formed (":0:0": none).
 * Through cuMemAlloc_v2 in the handle's context, which is current. */
cublasStatus_t
sim_blas_default_workspace(struct sim_blas_handle *h)
{
	const struct sim_blas_driver *d = sim_blas_driver();
	const char *config = getenv("CUBLAS_WORKSPACE_CONFIG");
	long long size = config ? workspace_config(config) : -1;
	int major = 0;

	if (size < 0) {
		d->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					h->device);
		size = major >= 9 ? 32 << 20 : 4 << 20;
	}
	if (size > 0 && d->mem_alloc(&h->default_workspace, (size_t)size) != CUDA_SUCCESS)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->default_workspace_size = (size_t)size;
	h->workspace = h->default_workspace;
	h->workspace_size = h->default_workspace_size;
	return CUBLAS_STATUS_SUCCESS;
}

/* Frees the default pool in the handle's context, whatever is current. */
void
sim_blas_release_workspace(struct sim_blas_handle *h)
{
	const struct sim_blas_driver *d = sim_blas_driver();
	CUcontext current = NULL;

	if (!h->default_workspace || !d)
		return;
	d->ctx_get_current(&current);
	if (current != h->ctx)
		d->ctx_set_current(h->ctx);
	d->mem_free(h->default_workspace);
	if (current != h->ctx)
		d->ctx_set_current(current);
	h->default_workspace = 0;
}

size_t
sim_blas_type_size(cudaDataType type)
{
	switch (type) {
	case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2:
		return 1;
	case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U:
		return 2;
	case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF:
		return 4;
	case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U:
		return 8;
	case CUDA_C_64F:
		return 16;
	default:
		return 0;
	}
}

/* The names and descriptions NVIDIA's libraries give (the descriptions
 * are the simulator's words). */
#define SIM_BLAS_STATUSES(X) \
	X(CUBLAS_STATUS_SUCCESS, "the operation completed successfully") \
	X(CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialized") \
	X(CUBLAS_STATUS_ALLOC_FAILED, "the resource allocation failed") \
	X(CUBLAS_STATUS_INVALID_VALUE, "an unsupported value or parameter was passed to the function") \
	X(CUBLAS_STATUS_ARCH_MISMATCH, "the function requires a feature absent from the device architecture") \
	X(CUBLAS_STATUS_MAPPING_ERROR, "an access to GPU memory space failed") \
	X(CUBLAS_STATUS_EXECUTION_FAILED, "the GPU program failed to execute") \
	X(CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed") \
	X(CUBLAS_STATUS_NOT_SUPPORTED, "the functionality requested is not supported") \
	X(CUBLAS_STATUS_LICENSE_ERROR, "the functionality requested requires some license")

const char *
sim_blas_status_name(cublasStatus_t status)
{
	switch (status) {
#define NAME(s, text) case s: return #s;
	SIM_BLAS_STATUSES(NAME)
#undef NAME
	default: return "unrecognized status";
	}
}

const char *
sim_blas_status_string(cublasStatus_t status)
{
	switch (status) {
#define TEXT(s, text) case s: return text;
	SIM_BLAS_STATUSES(TEXT)
#undef TEXT
	default: return "unrecognized status";
	}
}
