/* Runtime self-test, part two: events and captures across streams through
 * the runtime, kernel launches through the interface nvcc generates code
 * for (registered here by hand, as nvcc's constructor would), and device
 * properties and attributes. */
#include "test-sim-runtime.h"

#include <fatbinary_section.h>
#include <stdint.h>
#include <string.h>

/* nvcc's side of the runtime, declared by its headers for C++ only. */
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
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					    void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
					       unsigned int flags);
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					   enum cudaMemcpyKind kind, cudaStream_t stream);

/* The device code: one kernel, "scale", as PTX (a fatbinary would do the
 * same), wrapped as nvcc wraps what it embeds. */
static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry scale(\n\t.param .u64 scale_param_0\n)\n{\n\tret;\n}\n";
static const __fatBinC_Wrapper_t wrapper = { FATBINC_MAGIC, FATBINC_VERSION,
					     (const unsigned long long *)ptx, NULL };

/* Host stubs: what <<<>>> and cudaLaunchKernel name a kernel by. */
static void
scale_stub(void)
{
}

static void
missing_stub(void)
{
}

static int device_var;

#define STUB(f) ((const void *)(uintptr_t)(f))

static void **
register_code(void)
{
	void **handle = __cudaRegisterFatBinary((void *)&wrapper);

	__cudaRegisterFunction(handle, STUB(scale_stub), (char *)"scale", "scale", -1, NULL, NULL,
			       NULL, NULL, NULL);
	__cudaRegisterFunction(handle, STUB(missing_stub), (char *)"missing", "missing", -1, NULL,
			       NULL, NULL, NULL, NULL);
	__cudaRegisterVar(handle, (char *)&device_var, (char *)"device_var", "device_var", 0,
			  sizeof(device_var), 0, 0);
	__cudaRegisterFatBinaryEnd(handle);
	return handle;
}

static dim3
d3(unsigned int x, unsigned int y, unsigned int z)
{
	return (dim3){ x, y, z };
}

static cudaError_t
launch(dim3 grid, dim3 block, size_t shared, cudaStream_t s)
{
	float *p = NULL;
	void *args[1] = { &p };

	return cudaLaunchKernel(STUB(scale_stub), grid, block, args, shared, s);
}

/* A configuration over the device's limits is the launch's last error. */
static void
test_launch_errors(cudaStream_t s)
{
	EXPECT_ERR(launch(d3(4, 1, 1), d3(256, 1, 1), 0, s), cudaSuccess);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(1025, 1, 1), 0, s), cudaErrorInvalidConfiguration);
	EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidConfiguration);
	EXPECT_ERR(cudaGetLastError(), cudaSuccess);
	EXPECT_ERR(launch(d3(0, 1, 1), d3(32, 1, 1), 0, s), cudaErrorInvalidConfiguration);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 32, 2), 0, s), cudaErrorInvalidConfiguration);
	EXPECT_ERR(launch(d3(1, 65536, 1), d3(1, 1, 1), 0, s), cudaErrorInvalidConfiguration);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 1, 1), 49152, s), cudaSuccess);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 1, 1), 49153, s), cudaErrorInvalidValue);
	EXPECT_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 1, 1), 0, (cudaStream_t)0x1000),
		   cudaErrorInvalidResourceHandle);
	EXPECT_ERR(cudaLaunchKernel(STUB(missing_stub), d3(1, 1, 1), d3(1, 1, 1), NULL, 0, s),
		   cudaErrorInvalidDeviceFunction);
	EXPECT_ERR(cudaLaunchKernel(STUB(test_launch_errors), d3(1, 1, 1), d3(1, 1, 1), NULL, 0,
				    s), cudaErrorInvalidDeviceFunction);
	EXPECT(strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration),
		      "invalid configuration argument") == 0);
	cudaGetLastError();
}

/* What torch asks of a kernel: attributes, occupancy, the opt-in to more
 * shared memory, extended and cooperative launches, device variables. */
static void
test_functions(cudaStream_t s)
{
	struct cudaFuncAttributes fa;
	cudaLaunchAttribute attr = { .id = cudaLaunchAttributePriority, .val.priority = 0 };
	cudaLaunchConfig_t config = { .gridDim = d3(2, 1, 1), .blockDim = d3(64, 1, 1),
				      .stream = s, .attrs = &attr, .numAttrs = 1 };
	float *p = NULL;
	void *args[1] = { &p }, *symbol = NULL;
	int n = -1, value = 42, back = 0;
	cudaKernel_t k = NULL;

	EXPECT_ERR(cudaFuncGetAttributes(&fa, STUB(scale_stub)), cudaSuccess);
	EXPECT(fa.maxThreadsPerBlock == 1024 && fa.numRegs == 32 && fa.binaryVersion == 90 &&
	       fa.sharedSizeBytes == 0 && fa.maxDynamicSharedSizeBytes == 49152);
	EXPECT_ERR(cudaFuncGetAttributes(&fa, STUB(test_functions)),
		   cudaErrorInvalidDeviceFunction);
	EXPECT_ERR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, STUB(scale_stub), 1024, 0),
		   cudaSuccess);
	EXPECT(n == 2);
	EXPECT_ERR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, STUB(scale_stub), 256, 0),
		   cudaSuccess);
	EXPECT(n == 8);
	EXPECT_ERR(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, STUB(scale_stub), 64,
									  0, 0), cudaSuccess);
	EXPECT(n == 32);
	EXPECT_ERR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, STUB(scale_stub), 128, 65536),
		   cudaSuccess);
	EXPECT(n == 0);

	/* More than 48 KiB of dynamic shared memory, once opted in to. */
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 1, 1), 65536, s), cudaErrorInvalidValue);
	EXPECT_ERR(cudaFuncSetAttribute(STUB(scale_stub), cudaFuncAttributeMaxDynamicSharedMemorySize,
					65536), cudaSuccess);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(32, 1, 1), 65536, s), cudaSuccess);
	EXPECT_ERR(cudaFuncSetAttribute(STUB(scale_stub), cudaFuncAttributeMaxDynamicSharedMemorySize,
					1 << 20), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetKernel(&k, STUB(scale_stub)), cudaSuccess);
	EXPECT_ERR(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
						   49152, 0), cudaSuccess);
	EXPECT_ERR(cudaFuncGetAttributes(&fa, k), cudaSuccess);
	EXPECT(fa.maxDynamicSharedSizeBytes == 49152);

	EXPECT_ERR(cudaLaunchKernelExC(&config, STUB(scale_stub), args), cudaSuccess);
	EXPECT_ERR(cudaLaunchKernelExC(&config, k, args), cudaSuccess);
	config.blockDim = d3(2048, 1, 1);
	EXPECT_ERR(cudaLaunchKernelExC(&config, STUB(scale_stub), args), cudaErrorInvalidValue);
	EXPECT_ERR(cudaLaunchCooperativeKernel(STUB(scale_stub), d3(4, 1, 1), d3(32, 1, 1), args, 0,
					       s), cudaSuccess);

	/* A device variable: storage of its size, written by symbol. */
	EXPECT_ERR(cudaMemcpyToSymbol(&device_var, &value, sizeof(value), 0,
				      cudaMemcpyHostToDevice), cudaSuccess);
	EXPECT_ERR(cudaGetSymbolAddress(&symbol, &device_var), cudaSuccess);
	EXPECT_ERR(cudaMemcpy(&back, symbol, sizeof(back), cudaMemcpyDefault), cudaSuccess);
	EXPECT(back == 42);
	EXPECT_ERR(cudaMemcpyToSymbol(&device_var, &value, sizeof(value), 1,
				      cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetSymbolAddress(&symbol, &value), cudaErrorInvalidSymbol);
	cudaGetLastError();
}

/* The path a <<<>>> launch takes through nvcc's stub. */
static void
test_stub_path(void **handle, cudaStream_t s)
{
	cudaKernel_t k = NULL, again = NULL;
	cudaStream_t popped = NULL;
	dim3 grid, block;
	size_t shared = 1;

	EXPECT(__cudaPushCallConfiguration(d3(8, 2, 1), d3(128, 1, 1), 256, s) == 0);
	EXPECT_ERR(__cudaGetKernel(&k, STUB(scale_stub)), cudaSuccess);
	EXPECT_ERR(__cudaPopCallConfiguration(&grid, &block, &shared, &popped), cudaSuccess);
	EXPECT(grid.x == 8 && grid.y == 2 && block.x == 128 && shared == 256 && popped == s);
	EXPECT_ERR(__cudaPopCallConfiguration(&grid, &block, &shared, &popped),
		   cudaErrorMissingConfiguration);
	EXPECT(k != NULL);
	EXPECT_ERR(__cudaLaunchKernel(k, grid, block, NULL, shared, popped), cudaSuccess);
	EXPECT_ERR(__cudaLaunchKernel_ptsz(k, grid, block, NULL, shared, 0), cudaSuccess);
	EXPECT_ERR(cudaLaunchKernel_ptsz(STUB(scale_stub), grid, block, NULL, 0, 0), cudaSuccess);
	EXPECT_ERR(__cudaLaunchKernel(NULL, grid, block, NULL, 0, s),
		   cudaErrorInvalidDeviceFunction);
	EXPECT_ERR(cudaGetKernel(&again, STUB(scale_stub)), cudaSuccess);
	EXPECT(again == k);
	EXPECT_ERR(__cudaGetKernel(&again, STUB(missing_stub)), cudaErrorInvalidDeviceFunction);
	EXPECT(__cudaInitModule(handle) == 1);
	cudaGetLastError();
}

static cudaStream_t
stream(void)
{
	cudaStream_t s = NULL;

	EXPECT_ERR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	return s;
}

static void
depend(cudaStream_t s, cudaStream_t on, cudaEvent_t e)
{
	EXPECT_ERR(cudaEventRecord(e, on), cudaSuccess);
	EXPECT_ERR(cudaStreamWaitEvent(s, e, 0), cudaSuccess);
}

static size_t
nodes_of(cudaGraph_t g, enum cudaGraphNodeType type)
{
	cudaGraphNode_t nodes[16];
	enum cudaGraphNodeType t;
	size_t n = 16, count = 0;

	EXPECT_ERR(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
	for (size_t i = 0; i < n; i++) {
		EXPECT_ERR(cudaGraphNodeGetType(nodes[i], &t), cudaSuccess);
		count += t == type;
	}
	return count;
}

/* Outside captures, events are complete at once and time the simulated
 * clock. */
static void
test_events(cudaStream_t s)
{
	cudaEvent_t a, b, untimed;
	float ms = 0;

	EXPECT_ERR(cudaEventCreate(&a), cudaSuccess);
	EXPECT_ERR(cudaEventCreateWithFlags(&b, cudaEventBlockingSync), cudaSuccess);
	EXPECT_ERR(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
	EXPECT_ERR(cudaEventCreateWithFlags(&untimed, cudaEventInterprocess), cudaErrorInvalidValue);
	EXPECT_ERR(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
	EXPECT_ERR(cudaEventRecord(a, s), cudaSuccess);
	EXPECT_ERR(cudaEventRecord_ptsz(b, 0), cudaSuccess);
	EXPECT_ERR(cudaEventQuery(b), cudaSuccess);
	EXPECT_ERR(cudaEventSynchronize(b), cudaSuccess);
	EXPECT_ERR(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
	EXPECT(ms == 0.001f);
	EXPECT_ERR(cudaEventRecordWithFlags(b, s, cudaEventRecordExternal), cudaErrorInvalidValue);
	EXPECT_ERR(cudaEventRecord(untimed, s), cudaSuccess);
	EXPECT_ERR(cudaEventElapsedTime(&ms, a, untimed), cudaErrorInvalidResourceHandle);
	EXPECT_ERR(cudaStreamWaitEvent(s, a, 0), cudaSuccess);
	EXPECT_ERR(cudaStreamWaitEvent_ptsz(0, a, 0), cudaSuccess);
	EXPECT_ERR(cudaStreamQuery(s), cudaSuccess);
	EXPECT_ERR(cudaStreamQuery_ptsz(0), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(a), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(b), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(untimed), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(untimed), cudaErrorInvalidResourceHandle);
	cudaGetLastError();
}

/* A forks to B and C; each allocates, launches, frees; both join back. */
static cudaGraph_t
capture_fork_join(cudaStream_t a, cudaStream_t b, cudaStream_t c)
{
	enum cudaStreamCaptureStatus status;
	unsigned long long ida = 0, idb = 1;
	cudaEvent_t fork, jb, jc;
	cudaGraph_t g = NULL;
	void *pa, *pb;

	EXPECT_ERR(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	EXPECT_ERR(cudaEventCreateWithFlags(&jb, cudaEventDisableTiming), cudaSuccess);
	EXPECT_ERR(cudaEventCreateWithFlags(&jc, cudaEventDisableTiming), cudaSuccess);
	EXPECT_ERR(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
	EXPECT_ERR(cudaMallocAsync(&pa, 3 * MiB, a), cudaSuccess);
	depend(b, a, fork);
	EXPECT_ERR(cudaStreamWaitEvent(c, fork, 0), cudaSuccess);
	EXPECT_ERR(cudaStreamGetCaptureInfo(a, &status, &ida, NULL, NULL, NULL, NULL), cudaSuccess);
	EXPECT_ERR(cudaStreamGetCaptureInfo(c, &status, &idb, NULL, NULL, NULL, NULL), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusActive && ida == idb);
	EXPECT_ERR(cudaMallocAsync(&pb, MiB, b), cudaSuccess);
	EXPECT_ERR(launch(d3(4, 1, 1), d3(256, 1, 1), 0, b), cudaSuccess);
	EXPECT_ERR(launch(d3(4, 1, 1), d3(256, 1, 1), 0, c), cudaSuccess);
	EXPECT_ERR(cudaMemcpyAsync_ptsz(pa, pb, 16, cudaMemcpyDeviceToDevice, c), cudaSuccess);
	EXPECT_ERR(cudaFreeAsync(pa, c), cudaSuccess);
	EXPECT_ERR(cudaFreeAsync(pb, b), cudaSuccess);
	depend(a, b, jb);
	depend(a, c, jc);
	EXPECT_ERR(cudaStreamEndCapture(a, &g), cudaSuccess);
	EXPECT_ERR(cudaStreamIsCapturing(b, &status), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusNone);
	EXPECT_ERR(cudaEventDestroy(fork), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(jb), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(jc), cudaSuccess);
	return g;
}

static void
test_fork_join(cudaStream_t a, cudaStream_t b, cudaStream_t c)
{
	cudaGraph_t g = capture_fork_join(a, b, c);
	cudaGraphExec_t e;
	cuuint64_t used = 0;

	EXPECT(nodes_of(g, cudaGraphNodeTypeKernel) == 2 && nodes_of(g, cudaGraphNodeTypeMemAlloc) == 2 &&
	       nodes_of(g, cudaGraphNodeTypeMemFree) == 2 && nodes_of(g, cudaGraphNodeTypeMemcpy) == 1);
	EXPECT_ERR(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	for (int i = 0; i < 3; i++)
		EXPECT_ERR(cudaGraphLaunch(e, a), cudaSuccess);
	EXPECT_ERR(cudaStreamSynchronize(a), cudaSuccess);
	EXPECT_ERR(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used),
		   cudaSuccess);
	EXPECT(used == 6 * MiB && used_bytes() == 6 * MiB);
	EXPECT_ERR(cudaGraphExecDestroy(e), cudaSuccess);
	EXPECT_ERR(cudaGraphDestroy(g), cudaSuccess);
	EXPECT_ERR(cudaDeviceGraphMemTrim(0), cudaSuccess);
	EXPECT(used_bytes() == 0);
}

/* The errors of captures across streams, as the runtime names them. */
static void
test_capture_errors(cudaStream_t a, cudaStream_t b)
{
	enum cudaStreamCaptureStatus status;
	cudaEvent_t e, outside;
	cudaGraph_t g = (cudaGraph_t)1;

	EXPECT_ERR(cudaEventCreate(&e), cudaSuccess);
	EXPECT_ERR(cudaEventCreate(&outside), cudaSuccess);
	EXPECT_ERR(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
	depend(b, a, e);
	EXPECT_ERR(launch(d3(1, 1, 1), d3(1, 1, 1), 0, b), cudaSuccess);
	EXPECT_ERR(cudaStreamEndCapture(a, &g), cudaErrorStreamCaptureUnjoined);
	EXPECT(g == NULL);
	EXPECT_ERR(cudaStreamIsCapturing(b, &status), cudaSuccess);
	EXPECT(status == cudaStreamCaptureStatusNone);

	EXPECT_ERR(cudaEventRecord(outside, b), cudaSuccess);
	EXPECT_ERR(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
	EXPECT_ERR(cudaStreamWaitEvent(a, outside, 0), cudaErrorStreamCaptureIsolation);
	EXPECT_ERR(cudaStreamEndCapture(a, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT_ERR(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), cudaSuccess);
	EXPECT_ERR(cudaEventRecord(e, a), cudaSuccess);
	EXPECT_ERR(cudaEventSynchronize(e), cudaErrorCapturedEvent);
	EXPECT_ERR(cudaStreamEndCapture(a, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(strcmp(cudaGetErrorString(cudaErrorStreamCaptureUnjoined),
		      "capturing stream has unjoined work") == 0);
	EXPECT(strcmp(cudaGetErrorName(cudaErrorStreamCaptureIsolation),
		      "cudaErrorStreamCaptureIsolation") == 0);
	EXPECT_ERR(cudaEventDestroy(e), cudaSuccess);
	EXPECT_ERR(cudaEventDestroy(outside), cudaSuccess);
	cudaGetLastError();
}

void
test_streams(void)
{
	void **handle = register_code();
	cudaStream_t a = stream(), b = stream(), c = stream();

	test_launch_errors(a);
	test_stub_path(handle, a);
	test_functions(a);
	test_events(a);
	test_fork_join(a, b, c);
	test_capture_errors(a, b);
	EXPECT_ERR(cudaStreamDestroy(a), cudaSuccess);
	EXPECT_ERR(cudaStreamDestroy(b), cudaSuccess);
	EXPECT_ERR(cudaStreamDestroy(c), cudaSuccess);
	__cudaUnregisterFatBinary(handle);
	EXPECT_ERR(cudaLaunchKernel(STUB(scale_stub), d3(1, 1, 1), d3(1, 1, 1), NULL, 0, 0),
		   cudaErrorInvalidDeviceFunction);
	cudaGetLastError();
	EXPECT(used_bytes() == 0);
}

static int
attribute(enum cudaDeviceAttr attr)
{
	int v = -7;

	EXPECT_ERR(cudaDeviceGetAttribute(&v, attr, 0), cudaSuccess);
	return v;
}

/* cudaDeviceProp is filled from the driver's attributes. */
void
test_device_attributes(void)
{
	struct cudaDeviceProp prop;
	int v;

	EXPECT(attribute(cudaDevAttrMultiProcessorCount) == 132);
	EXPECT(attribute(cudaDevAttrWarpSize) == 32);
	EXPECT(attribute(cudaDevAttrMaxThreadsPerBlock) == 1024);
	EXPECT(attribute(cudaDevAttrComputeCapabilityMajor) == 9);
	EXPECT(attribute(cudaDevAttrMemoryPoolsSupported) == 1);
	EXPECT_ERR(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 1), cudaErrorInvalidDevice);
	EXPECT_ERR(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)999, 0), cudaErrorInvalidValue);
	EXPECT_ERR(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
	EXPECT_ERR(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
	EXPECT(prop.maxThreadsDim[0] == 1024 && prop.maxThreadsDim[2] == 64 &&
	       prop.maxGridSize[0] == 2147483647 && prop.maxGridSize[1] == 65535);
	EXPECT(prop.sharedMemPerBlock == 49152 && prop.sharedMemPerBlockOptin == 232448 &&
	       prop.regsPerBlock == 65536 && prop.totalConstMem == 65536);
	EXPECT((unsigned char)prop.uuid.bytes[6] == 0x40 && (unsigned char)prop.uuid.bytes[8] == 0x80 &&
	       prop.uuid.bytes[15] == 0);
	EXPECT(prop.multiProcessorCount == 132 && prop.maxThreadsPerMultiProcessor == 2048 &&
	       prop.l2CacheSize == 50 << 20 && prop.pciBusID == 1);
	EXPECT(prop.memoryPoolSupportedHandleTypes == cudaMemHandleTypePosixFileDescriptor &&
	       prop.gpuPciDeviceID == 0x233010de && prop.deviceNumaId == -1);
	EXPECT(prop.concurrentKernels == 1 && prop.cooperativeLaunch == 1 &&
	       prop.clusterLaunch == 1 && prop.ipcEventSupported == 0);
	cudaGetLastError();
}
