/* Self-test of the simulated runtime, built like a test program (real
 * headers, linked against the toolkit's libcudart) and run with sim_env:
 * one 1 GiB device. Covers what the programs do not: error semantics,
 * entry points, reset, capture and graphs; events, launches and device
 * properties are in test-sim-runtime-streams.c. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-sim-runtime.h"

int failures;

static void test_properties_v2(const struct cudaDeviceProp *p13);

size_t
used_bytes(void)
{
	size_t free_bytes = 0, total = 0;

	EXPECT_ERR(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
	EXPECT(total == GiB);
	return total - free_bytes;
}

static void
test_versions_and_device(void)
{
	struct cudaDeviceProp prop;
	int v = 0, count = 0, dev = -1;

	EXPECT_ERR(cudaRuntimeGetVersion(&v), cudaSuccess);
	EXPECT(v == 13000);
	EXPECT_ERR(cudaDriverGetVersion(&v), cudaSuccess);
	EXPECT(v == 13000);
	EXPECT_ERR(cudaGetDeviceCount(&count), cudaSuccess);
	EXPECT(count == 1);
	EXPECT_ERR(cudaGetDevice(&dev), cudaSuccess);
	EXPECT(dev == 0);
	EXPECT_ERR(cudaSetDevice(1), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaSetDevice(0), cudaSuccess);
	EXPECT_ERR(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
	EXPECT(strcmp(prop.name, "cudasim device 0") == 0);
	EXPECT(prop.totalGlobalMem == GiB && prop.warpSize == 32 && prop.major == 9);
	EXPECT(prop.unifiedAddressing == 1 && prop.memoryPoolsSupported == 1);
	test_properties_v2(&prop);
}

/* cudaGetDeviceProperties_v2@libcudart.so.12, which TensorFlow (CUDA 12)
 * finds by name: CUDA 12's cudaDeviceProp, 1032 bytes, whose fields after
 * maxGridSize lie where CUDA 12.9's driver_types.h puts them (major at 360,
 * multiProcessorCount at 388, maxThreadsPerMultiProcessor at 624). */
static void
test_properties_v2(const struct cudaDeviceProp *p13)
{
	int (*v2)(void *, int) = (int (*)(void *, int))dlvsym(RTLD_DEFAULT,
		"cudaGetDeviceProperties_v2", "libcudart.so.12");
	unsigned char buf[1032 + 8];
	int major, mp, mtpm;

	EXPECT(v2 != NULL);
	if (!v2)
		return;
	memset(buf, 0xa5, sizeof(buf));
	EXPECT(v2(buf, 0) == cudaSuccess);
	memcpy(&major, buf + 360, sizeof(int));
	memcpy(&mp, buf + 388, sizeof(int));
	memcpy(&mtpm, buf + 624, sizeof(int));
	EXPECT(strcmp((char *)buf, "cudasim device 0") == 0);
	EXPECT(major == 9 && mp == p13->multiProcessorCount && mp > 0);
	EXPECT(mtpm == p13->maxThreadsPerMultiProcessor && mtpm > 0);
	EXPECT(buf[1032] == 0xa5);
	EXPECT(v2(buf, 1) == cudaErrorInvalidDevice);
	cudaGetLastError();
}

/* The last error is per thread, sticky until cudaGetLastError reads it. */
static void
test_errors(void)
{
	void *p = (void *)0x1234;

	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	EXPECT_ERR(cudaMalloc(&p, 2 * GiB), cudaErrorMemoryAllocation);
	EXPECT(p == (void *)0x1234);
	EXPECT_ERR(cudaMalloc(&p, 512), cudaSuccess);
	EXPECT_ERR(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
	EXPECT_ERR(cudaGetLastError(), cudaErrorMemoryAllocation);
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	EXPECT_ERR(cudaFree(p), cudaSuccess);
	EXPECT_ERR(cudaFree(p), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
	EXPECT_ERR(cudaFree(NULL), cudaSuccess);
	EXPECT_ERR(cudaMalloc(&p, 0), cudaSuccess);
	EXPECT(p == NULL);
	EXPECT_ERR(cudaFreeHost((void *)0x1000), cudaErrorInvalidValue);
	EXPECT_ERR(cudaStreamDestroy((cudaStream_t)0x1000), cudaErrorInvalidResourceHandle);
	EXPECT_ERR(cudaMemcpy(&p, &p, sizeof(p), (enum cudaMemcpyKind)9),
		   cudaErrorInvalidMemcpyDirection);
	EXPECT(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
	EXPECT(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation),
		      "cudaErrorMemoryAllocation") == 0);
	cudaGetLastError();
	EXPECT(used_bytes() == 0);
}

static void
test_copies_and_async(void)
{
	char in[1000], out[1000];
	void *p, *q;

	memset(in, 'x', sizeof(in));
	EXPECT_ERR(cudaMalloc(&p, sizeof(in)), cudaSuccess);
	EXPECT(used_bytes() == 1024);
	EXPECT_ERR(cudaMemcpy(p, in, sizeof(in), cudaMemcpyHostToDevice), cudaSuccess);
	EXPECT_ERR(cudaMemset(p, 'y', 10), cudaSuccess);
	EXPECT_ERR(cudaMemcpyAsync(out, p, sizeof(out), cudaMemcpyDefault, 0), cudaSuccess);
	EXPECT(out[9] == 'y' && out[10] == 'x');
	EXPECT_ERR(cudaMallocAsync_ptsz(&q, 512, 0), cudaSuccess);
	EXPECT_ERR(cudaFreeAsync_ptsz(q, 0), cudaSuccess);
	EXPECT_ERR(cudaFree(p), cudaSuccess);
	EXPECT_ERR(cudaDeviceSynchronize(), cudaSuccess);
}

/* Entry points are the driver's own functions, found by its cuGetProcAddress. */
static void
test_entry_points(void)
{
	enum cudaDriverEntryPointQueryResult status;
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn = NULL;
	CUdeviceptr dptr = 0;

	EXPECT(driver != NULL);
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault,
						    &status), cudaSuccess);
	EXPECT(status == cudaDriverEntryPointSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuMemAlloc_v2"));
	if (fn) {
		EXPECT(((PFN_cuMemAlloc_v3020)fn)(&dptr, 4096) == CUDA_SUCCESS);
		EXPECT(used_bytes() == 4096);
		EXPECT_ERR(cudaFree((void *)(uintptr_t)dptr), cudaSuccess);
	}
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 3000, cudaEnableDefault,
						    &status), cudaSuccess);
	EXPECT(fn == NULL && status == cudaDriverEntryPointVersionNotSufficent);
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuNoSuchThing", &fn, 13000, 0, &status),
		   cudaSuccess);
	EXPECT(fn == NULL && status == cudaDriverEntryPointSymbolNotFound);
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 13010, 0, NULL),
		   cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 13000,
						    cudaEnablePerThreadDefaultStream, NULL),
		   cudaSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuMemAllocAsync_ptsz"));
	/* The routes frameworks take: the exported function of that ABI. */
	/* Deprecated in CUDA 13, still exported and still used. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	EXPECT_ERR(cudaGetDriverEntryPoint("cuMemCreate", &fn, cudaEnableDefault, &status),
		   cudaSuccess);
#pragma GCC diagnostic pop
	EXPECT(driver && fn == dlsym(driver, "cuMemCreate"));
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemHostRegister", &fn, 12000,
						    cudaEnableDefault, &status), cudaSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuMemHostRegister_v2"));
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuIpcOpenMemHandle", &fn, 12000,
						    cudaEnableDefault, &status), cudaSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuIpcOpenMemHandle_v2"));
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuArrayCreate", &fn, 12000,
						    cudaEnableDefault, &status), cudaSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuArrayCreate_v2"));
	EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAllocFromPoolAsync", &fn, 12000,
						    cudaEnablePerThreadDefaultStream, &status),
		   cudaSuccess);
	EXPECT(driver && fn == dlsym(driver, "cuMemAllocFromPoolAsync_ptsz"));
	cudaGetLastError();
}

static size_t
pool_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr)
{
	cuuint64_t v = 0;

	EXPECT_ERR(cudaMemPoolGetAttribute(pool, attr, &v), cudaSuccess);
	return (size_t)v;
}

/* The driver's pool model seen through the runtime: reserved (and
 * counted as used on the device) until a synchronisation. */
static void
test_pools(void)
{
	struct cudaMemPoolProps props = { .allocType = cudaMemAllocationTypePinned,
					  .location = { cudaMemLocationTypeDevice, 0 } };
	cudaMemPool_t def = NULL, cur = NULL, pool = NULL;
	cudaStream_t s;
	void *a, *b;

	EXPECT_ERR(cudaDeviceGetDefaultMemPool(&def, 0), cudaSuccess);
	EXPECT_ERR(cudaDeviceGetMemPool(&cur, 0), cudaSuccess);
	EXPECT(def != NULL && cur == def);
	EXPECT_ERR(cudaStreamCreate(&s), cudaSuccess);
	EXPECT_ERR(cudaMallocAsync(&a, 1000, s), cudaSuccess);
	EXPECT(used_bytes() == 2 * MiB && pool_attr(def, cudaMemPoolAttrUsedMemCurrent) == 1024);
	EXPECT_ERR(cudaFreeAsync(a, s), cudaSuccess);
	EXPECT(used_bytes() == 2 * MiB && pool_attr(def, cudaMemPoolAttrReservedMemCurrent) == 2 * MiB);
	EXPECT_ERR(cudaStreamSynchronize(s), cudaSuccess);
	EXPECT(used_bytes() == 0);
	EXPECT_ERR(cudaMemPoolCreate(&pool, &props), cudaSuccess);
	EXPECT_ERR(cudaMallocFromPoolAsync(&a, 3 * MiB, pool, s), cudaSuccess);
	EXPECT_ERR(cudaMallocFromPoolAsync_ptsz(&b, 512, pool, 0), cudaSuccess);
	EXPECT(used_bytes() == 4 * MiB && pool_attr(pool, cudaMemPoolAttrUsedMemCurrent) == 3 * MiB + 512);
	EXPECT_ERR(cudaFreeAsync(a, s), cudaSuccess);
	EXPECT_ERR(cudaFree(b), cudaSuccess);
	EXPECT_ERR(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
	EXPECT(used_bytes() == 0);
	EXPECT_ERR(cudaMemPoolDestroy(pool), cudaSuccess);
	EXPECT_ERR(cudaMemPoolDestroy(def), cudaErrorInvalidValue);
	EXPECT_ERR(cudaStreamDestroy(s), cudaSuccess);
	cudaGetLastError();
}

static void
test_arrays(void)
{
	struct cudaChannelFormatDesc rgba32f = { 32, 32, 32, 32, cudaChannelFormatKindFloat };
	struct cudaChannelFormatDesc r8 = { 8, 0, 0, 0, cudaChannelFormatKindUnsigned };
	struct cudaChannelFormatDesc bad = { 8, 16, 0, 0, cudaChannelFormatKindUnsigned };
	struct cudaPitchedPtr pitched = { 0 };
	cudaArray_t a2 = NULL, a3 = NULL;

	EXPECT_ERR(cudaMallocArray(&a2, &rgba32f, 100, 10, cudaArrayDefault), cudaSuccess);
	EXPECT(used_bytes() == 16384);
	EXPECT_ERR(cudaMalloc3DArray(&a3, &r8, (struct cudaExtent){ 64, 64, 8 }, 0),
		   cudaSuccess);
	EXPECT(used_bytes() == 16384 + 32768);
	EXPECT_ERR(cudaMallocArray(&a2, &bad, 100, 10, 0), cudaErrorInvalidChannelDescriptor);
	EXPECT_ERR(cudaFreeArray(a2), cudaSuccess);
	EXPECT_ERR(cudaFreeArray(a3), cudaSuccess);
	EXPECT_ERR(cudaFreeArray(a3), cudaErrorInvalidResourceHandle);
	EXPECT_ERR(cudaFreeArray(NULL), cudaSuccess);
	EXPECT_ERR(cudaMalloc3D(&pitched, (struct cudaExtent){ 1000, 16, 4 }), cudaSuccess);
	EXPECT(pitched.pitch == 1024 && pitched.xsize == 1000 && pitched.ysize == 16);
	EXPECT(used_bytes() == 1024 * 16 * 4);
	EXPECT_ERR(cudaFree(pitched.ptr), cudaSuccess);
	EXPECT(used_bytes() == 0);
	cudaGetLastError();
}

static void
test_host_register_and_ipc(void)
{
	static char buf[8192];
	cudaIpcMemHandle_t h;
	void *p, *q = NULL;

	EXPECT_ERR(cudaHostRegister(buf, sizeof(buf), cudaHostRegisterPortable), cudaSuccess);
	EXPECT_ERR(cudaHostRegister(buf, 4096, 0), cudaErrorHostMemoryAlreadyRegistered);
	EXPECT_ERR(cudaHostUnregister(buf), cudaSuccess);
	EXPECT_ERR(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
	EXPECT(used_bytes() == 0);
	/* Opening one's own handle fails as on real CUDA: invalid device context. */
	EXPECT_ERR(cudaMalloc(&p, 4096), cudaSuccess);
	EXPECT_ERR(cudaIpcGetMemHandle(&h, p), cudaSuccess);
	EXPECT_ERR(cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess),
		   cudaErrorDeviceUninitialized);
	EXPECT(q == NULL);
	EXPECT_ERR(cudaIpcCloseMemHandle(p), cudaErrorInvalidValue);
	EXPECT_ERR(cudaFree(p), cudaSuccess);
	cudaGetLastError();
}

/* A child forked after the runtime started cannot use CUDA: every call
 * fails with cudaErrorInitializationError, as with NVIDIA's runtime. */
static void
test_fork(void)
{
	int status = -1;
	pid_t pid = fork();
	void *p;

	if (pid == 0) {
		int count = 0, code = 0;
		if (cudaMalloc(&p, 512) != cudaErrorInitializationError)
			code |= 1;
		if (cudaGetDeviceCount(&count) != cudaErrorInitializationError)
			code |= 2;
		if (cudaDeviceSynchronize() != cudaErrorInitializationError)
			code |= 4;
		_exit(code);
	}
	EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_ERR(cudaMalloc(&p, 512), cudaSuccess);
	EXPECT_ERR(cudaFree(p), cudaSuccess);
}

static size_t
graph_attr(enum cudaGraphMemAttributeType attr)
{
	cuuint64_t v = 0;

	EXPECT_ERR(cudaDeviceGetGraphMemAttribute(0, attr, &v), cudaSuccess);
	return (size_t)v;
}

/* The driver's graph model through the runtime: a captured model whose
 * activation is freed in the graph and whose state is not. */
static void
test_graph_capture(cudaStream_t s)
{
	enum cudaStreamCaptureStatus status;
	unsigned long long id = 0;
	cudaGraph_t g = NULL, during = NULL;
	cudaGraphExec_t e;
	void *act, *state;

	EXPECT_ERR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	EXPECT_ERR(cudaStreamGetCaptureInfo(s, &status, &id, &during, NULL, NULL, NULL),
		   cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusActive && id && during);
	EXPECT_ERR(cudaMallocAsync(&act, 8 * MiB, s), cudaSuccess);
	EXPECT_ERR(cudaMemsetAsync(act, 0, 8 * MiB, s), cudaSuccess);
	EXPECT_ERR(cudaFreeAsync(act, s), cudaSuccess);
	EXPECT_ERR(cudaMallocAsync(&state, MiB, s), cudaSuccess);
	EXPECT_ERR(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g == during && used_bytes() == 0);
	EXPECT_ERR(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	EXPECT_ERR(cudaGraphLaunch(e, s), cudaSuccess);
	EXPECT(used_bytes() == 10 * MiB && graph_attr(cudaGraphMemAttrUsedMemCurrent) == 10 * MiB);
	EXPECT_ERR(cudaGraphLaunch(e, s), cudaErrorInvalidValue);
	EXPECT_ERR(cudaMemset(state, 1, MiB), cudaSuccess);
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT_ERR(cudaGraphExecDestroy(e), cudaSuccess);
	EXPECT(graph_attr(cudaGraphMemAttrUsedMemCurrent) == 2 * MiB);
	EXPECT_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
	EXPECT(used_bytes() == 2 * MiB && graph_attr(cudaGraphMemAttrReservedMemCurrent) == 2 * MiB);
	EXPECT_ERR(cudaFree(state), cudaSuccess);
	EXPECT_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
	EXPECT(used_bytes() == 0);
	EXPECT_ERR(cudaDeviceGraphMemTrim(1), cudaErrorInvalidDevice);
	cudaGetLastError();
}

/* Explicit nodes, auto-free, upload at instantiation. */
static void
test_graph_nodes(cudaStream_t s)
{
	struct cudaMemAllocNodeParams p = {
		.poolProps = { .allocType = cudaMemAllocationTypePinned,
			       .location = { cudaMemLocationTypeDevice, 0 } },
		.bytesize = 4 * MiB,
	};
	cudaGraphInstantiateParams ip = { .flags = cudaGraphInstantiateFlagUpload |
						   cudaGraphInstantiateFlagAutoFreeOnLaunch,
					  .uploadStream = s };
	struct cudaMemAllocNodeParams got;
	cudaGraphNode_t alloc, free_node;
	unsigned long long flags = 0;
	cudaGraph_t g;
	cudaGraphExec_t e;
	void *freed = NULL;

	EXPECT_ERR(cudaGraphCreate(&g, 0), cudaSuccess);
	EXPECT_ERR(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &p), cudaSuccess);
	EXPECT(p.dptr != NULL);
	EXPECT_ERR(cudaGraphMemAllocNodeGetParams(alloc, &got), cudaSuccess);
	EXPECT(got.bytesize == 4 * MiB && got.dptr == p.dptr &&
	       got.poolProps.location.type == cudaMemLocationTypeDevice);
	EXPECT_ERR(cudaGraphInstantiateWithParams(&e, g, &ip), cudaSuccess);
	EXPECT(ip.result_out == cudaGraphInstantiateSuccess);
	EXPECT(used_bytes() == 4 * MiB && graph_attr(cudaGraphMemAttrUsedMemCurrent) == 4 * MiB);
	EXPECT_ERR(cudaGraphExecGetFlags(e, &flags), cudaSuccess);
	EXPECT(flags == (cudaGraphInstantiateFlagUpload | cudaGraphInstantiateFlagAutoFreeOnLaunch));
	EXPECT_ERR(cudaGraphLaunch(e, s), cudaSuccess);
	EXPECT_ERR(cudaGraphLaunch(e, s), cudaSuccess);
	EXPECT_ERR(cudaGraphExecDestroy(e), cudaSuccess);
	EXPECT_ERR(cudaGraphAddMemFreeNode(&free_node, g, &alloc, 1, p.dptr), cudaSuccess);
	EXPECT_ERR(cudaGraphMemFreeNodeGetParams(free_node, &freed), cudaSuccess);
	EXPECT(freed == p.dptr);
	EXPECT_ERR(cudaGraphAddMemFreeNode(&free_node, g, NULL, 0, p.dptr), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGraphClone(&g, g), cudaErrorNotSupported);
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT_ERR(cudaFree(p.dptr), cudaSuccess);
	EXPECT_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
	EXPECT(used_bytes() == 0);
	cudaGetLastError();
}

/* cudaMalloc during a global capture: refused, and the capture is lost. */
static void
test_graph_capture_errors(cudaStream_t s)
{
	enum cudaStreamCaptureStatus status;
	cudaGraph_t g = (cudaGraph_t)1;
	void *p;

	EXPECT_ERR(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
		   cudaErrorStreamCaptureUnsupported);
	EXPECT_ERR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	EXPECT_ERR(cudaMalloc(&p, 512), cudaErrorStreamCaptureUnsupported);
	EXPECT_ERR(cudaStreamIsCapturing(s, &status), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusInvalidated);
	EXPECT_ERR(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	EXPECT_ERR(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
	EXPECT(strcmp(cudaGetErrorString(cudaErrorStreamCaptureUnsupported),
		      "operation not permitted when stream is capturing") == 0);
	EXPECT(strcmp(cudaGetErrorName(cudaErrorStreamCaptureInvalidated),
		      "cudaErrorStreamCaptureInvalidated") == 0);

	/* The per-thread default stream, through the _ptsz entry points. */
	EXPECT_ERR(cudaStreamBeginCapture_ptsz(0, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	EXPECT_ERR(cudaStreamIsCapturing_ptsz(0, &status), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusActive);
	EXPECT_ERR(cudaStreamIsCapturing(0, &status), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusNone);
	EXPECT_ERR(cudaMallocAsync_ptsz(&p, MiB, 0), cudaSuccess);
	EXPECT_ERR(cudaMemsetAsync_ptsz(p, 0, MiB, 0), cudaSuccess);
	EXPECT_ERR(cudaStreamEndCapture_ptsz(0, &g), cudaSuccess);
	EXPECT(g != NULL);
	{
		cudaGraphExec_t e;
		EXPECT_ERR(cudaGraphInstantiateWithFlags(&e, g, 0), cudaSuccess);
		EXPECT_ERR(cudaGraphLaunch_ptsz(e, 0), cudaSuccess);
		EXPECT(used_bytes() == 2 * MiB);
		EXPECT_ERR(cudaGraphExecDestroy(e), cudaSuccess);
	}
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT_ERR(cudaFreeAsync(p, s), cudaSuccess);
	EXPECT_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
	EXPECT(used_bytes() == 0);
	cudaGetLastError();
}

/* Graph entry points from cudaGetDriverEntryPoint: the exported ABIs. */
static void
test_graph_entry_points(void)
{
	static const struct { const char *name; unsigned long long flags; const char *symbol; }
	routes[] = {
		{ "cuStreamBeginCapture", cudaEnableDefault, "cuStreamBeginCapture_v2" },
		{ "cuStreamBeginCapture", cudaEnablePerThreadDefaultStream,
		  "cuStreamBeginCapture_v2_ptsz" },
		{ "cuStreamGetCaptureInfo", cudaEnableDefault, "cuStreamGetCaptureInfo_v3" },
		{ "cuGraphInstantiate", cudaEnableDefault, "cuGraphInstantiateWithFlags" },
		{ "cuGraphLaunch", cudaEnablePerThreadDefaultStream, "cuGraphLaunch_ptsz" },
		{ "cuGraphAddMemAllocNode", cudaEnableDefault, "cuGraphAddMemAllocNode" },
		{ "cuDeviceGraphMemTrim", cudaEnableDefault, "cuDeviceGraphMemTrim" },
	};
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	enum cudaDriverEntryPointQueryResult status;
	void *fn;

	EXPECT(driver != NULL);
	for (size_t i = 0; driver && i < sizeof(routes) / sizeof(routes[0]); i++) {
		fn = NULL;
		EXPECT_ERR(cudaGetDriverEntryPointByVersion(routes[i].name, &fn, 13000,
							    routes[i].flags, &status),
			   cudaSuccess);
		if (fn != dlsym(driver, routes[i].symbol) || !fn)
			fprintf(stderr, "entry point %s: want %s\n", routes[i].name,
				routes[i].symbol);
		EXPECT(fn && fn == dlsym(driver, routes[i].symbol));
	}
}

static void
test_graphs(void)
{
	cudaStream_t s;

	EXPECT_ERR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	test_graph_capture(s);
	test_graph_nodes(s);
	test_graph_capture_errors(s);
	test_graph_entry_points();
	EXPECT_ERR(cudaStreamDestroy(s), cudaSuccess);
}

/* cudaDeviceReset frees everything; the next call starts afresh. */
static void
test_reset(void)
{
	void *p, *host;

	EXPECT_ERR(cudaMalloc(&p, 64 << 20), cudaSuccess);
	EXPECT_ERR(cudaMallocHost(&host, 4096), cudaSuccess);
	EXPECT(used_bytes() == 64 << 20);
	EXPECT_ERR(cudaDeviceReset(), cudaSuccess);
	EXPECT(used_bytes() == 0);
	EXPECT_ERR(cudaFree(p), cudaErrorInvalidValue);
	EXPECT_ERR(cudaFreeHost(host), cudaErrorInvalidValue);
	cudaGetLastError();
}

int
main(void)
{
	test_versions_and_device();
	test_errors();
	test_copies_and_async();
	test_entry_points();
	test_pools();
	test_arrays();
	test_host_register_and_ipc();
	test_graphs();
	test_streams();
	test_device_attributes();
	test_host_work();
	test_fork();
	test_reset();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
