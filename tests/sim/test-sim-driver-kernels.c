/* Driver self-test, part five: device code and kernel launches
 * (sim-driver-module.c). Runs on device 0 with its primary context
 * current and nothing allocated, and leaves it so. */
#include "test-sim-driver.h"

#include <stdint.h>
#include <string.h>

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				     unsigned int gridDimZ, unsigned int blockDimX,
				     unsigned int blockDimY, unsigned int blockDimZ,
				     unsigned int sharedMemBytes, CUstream hStream,
				     void **kernelParams, void **extra);

/* Device code as the driver takes it: PTX text, and fatbinaries (a
 * 16-byte header, then entries) with an ELF inside, or compressed. */
static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry scale(\n\t.param .u64 scale_param_0\n)\n{\n\tret;\n}\n";

struct fatbin {
	uint32_t magic;
	uint16_t version, header;
	uint64_t size;
	char payload[48];
};

static const struct fatbin readable = {
	0xBA55ED50u, 1, 16, 48, "\x02\x00\x01\x01....\x7f" "ELF\x02\x01\x01.\0.text.axpy\0axpy\0",
};
static const struct fatbin compressed = { 0xBA55ED50u, 1, 16, 48, "\x02\x00\x01\x01 zz" };
/* As TensorFlow's kernels come: an entry flagged compressed (0x2000 at
 * byte 40 of its header) whose LZ4 stream starts with literal bytes, so
 * that "\177ELF" shows though the kernel's name is cut up. */
static const struct {
	uint32_t magic;
	uint16_t version, header;
	uint64_t size;
	char payload[96];
} lz4 = {
	0xBA55ED50u, 1, 16, 96,
	"\x02\x00\x01\x01\x40\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00"
	"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	"\x11\x20\x00\x00\x00\x00\x00\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	"\xf1\x7f" "ELF\x02\x01\x01.text.Ca\x07st_kernel",
};

static CUresult
launch(CUfunction f, unsigned int grid, unsigned int block, CUstream s)
{
	return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, NULL, NULL);
}

static CUlibrary
library(const void *code)
{
	CUlibrary lib = NULL;

	EXPECT_RC(cuLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	return lib;
}

/* Names are looked up in what the image shows of itself. */
static void
test_libraries(void)
{
	CUlibrary lib = library(ptx), fat = library(&readable), opaque = library(&compressed),
		  packed = library(&lz4);
	CUkernel k = NULL, again = NULL;
	CUlibrary bad;

	EXPECT_RC(cuLibraryLoadData(&bad, "no code here", NULL, NULL, 0, NULL, NULL, 0),
		  CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RC(cuLibraryLoadData(&bad, "", NULL, NULL, 0, NULL, NULL, 0),
		  CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RC(cuLibraryLoadData(&bad, NULL, NULL, NULL, 0, NULL, NULL, 0),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLibraryLoadData(&bad, ptx, NULL, NULL, 1, NULL, NULL, 0),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLibraryGetKernel(&k, lib, "scale"), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryGetKernel(&again, lib, "scale"), CUDA_SUCCESS);
	EXPECT(k && k == again);
	EXPECT_RC(cuLibraryGetKernel(&again, lib, "scal"), CUDA_ERROR_NOT_FOUND);
	EXPECT_RC(cuLibraryGetKernel(&again, lib, "scale_param"), CUDA_ERROR_NOT_FOUND);
	EXPECT_RC(cuLibraryGetKernel(&again, fat, "axpy"), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryGetKernel(&again, fat, "scale"), CUDA_ERROR_NOT_FOUND);
	EXPECT_RC(cuLibraryGetKernel(&again, opaque, "anything"), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryGetKernel(&again, packed, "Cast_kernel"), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryUnload(packed), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryGetKernel(&again, (CUlibrary)&k, "scale"), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuLibraryUnload(opaque), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryUnload(opaque), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuLibraryUnload(fat), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryUnload(lib), CUDA_SUCCESS);
}

/* The configuration is checked against the device's limits. */
static void
test_launch_config(CUfunction f, CUstream s)
{
	void *params[1] = { &s }, *extra[1] = { CU_LAUNCH_PARAM_END };

	EXPECT_RC(launch(f, 1, 1024, s), CUDA_SUCCESS);
	EXPECT_RC(launch(f, 2147483647u, 32, s), CUDA_SUCCESS);
	EXPECT_RC(launch(f, 1, 1025, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(launch(f, 0, 32, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(launch(f, 1, 0, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 1, 1, 65, 0, s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLaunchKernel(f, 1, 65536, 1, 1, 1, 1, 0, s, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 49152, s, params, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 49153, s, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, extra), CUDA_SUCCESS);
	EXPECT_RC(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, extra),
		  CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(launch(f, 1, 32, (CUstream)params), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch(NULL, 1, 32, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch((CUfunction)params, 1, 32, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch(f, 1, 32, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
}

/* Kernels and functions: a kernel launches as a function of the current
 * context; a function belongs to its context. */
static void
test_functions(CUcontext primary, CUstream s)
{
	CUlibrary lib = library(ptx);
	CUfunction f = NULL, again = NULL, other = NULL, fm = NULL;
	CUmodule mod = NULL;
	CUcontext ctx;
	CUkernel k;

	EXPECT_RC(cuLibraryGetKernel(&k, lib, "scale"), CUDA_SUCCESS);
	EXPECT_RC(cuKernelGetFunction(&f, k), CUDA_SUCCESS);
	EXPECT_RC(cuKernelGetFunction(&again, k), CUDA_SUCCESS);
	EXPECT(f && f == again && f != (CUfunction)k);
	EXPECT_RC(cuKernelGetFunction(&again, (CUkernel)lib), CUDA_ERROR_INVALID_HANDLE);
	test_launch_config(f, s);
	EXPECT_RC(launch((CUfunction)k, 4, 256, s), CUDA_SUCCESS);

	EXPECT_RC(cuModuleLoadData(&mod, "not code"), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RC(cuModuleLoadData(&mod, ptx), CUDA_SUCCESS);
	EXPECT_RC(cuModuleGetFunction(&fm, mod, "scale"), CUDA_SUCCESS);
	EXPECT_RC(cuModuleGetFunction(&again, mod, "nothing"), CUDA_ERROR_NOT_FOUND);
	EXPECT(fm && fm != f);
	EXPECT_RC(launch(fm, 1, 1, s), CUDA_SUCCESS);

	EXPECT_RC(cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS);
	EXPECT_RC(launch(f, 1, 1, NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch((CUfunction)k, 1, 1, NULL), CUDA_SUCCESS);
	EXPECT_RC(cuKernelGetFunction(&other, k), CUDA_SUCCESS);
	EXPECT(other && other != f);
	EXPECT_RC(cuCtxDestroy(ctx), CUDA_SUCCESS);
	EXPECT_RC(cuCtxSetCurrent(primary), CUDA_SUCCESS);
	EXPECT_RC(launch(other, 1, 1, s), CUDA_ERROR_INVALID_HANDLE);

	EXPECT_RC(cuModuleUnload(mod), CUDA_SUCCESS);
	EXPECT_RC(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch(fm, 1, 1, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(cuLibraryUnload(lib), CUDA_SUCCESS);
	EXPECT_RC(launch(f, 1, 1, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RC(launch((CUfunction)k, 1, 1, s), CUDA_ERROR_INVALID_HANDLE);
}

/* Captured launches, on the origin and on a joined stream, are kernel
 * nodes; a launch of the graph runs them (as nothing). */
static void
test_captured_launches(CUstream s)
{
	CUlibrary lib = library(ptx);
	CUstream t;
	CUevent e;
	CUgraph g;
	CUgraphExec x;
	CUgraphNode nodes[3];
	CUgraphNodeType type;
	CUstreamCaptureStatus status;
	CUkernel k;
	size_t n = 3;

	EXPECT_RC(cuLibraryGetKernel(&k, lib, "scale"), CUDA_SUCCESS);
	EXPECT_RC(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	EXPECT_RC(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(launch((CUfunction)k, 8, 128, s), CUDA_SUCCESS);
	EXPECT_RC(launch((CUfunction)k, 1, 2048, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RC(cuEventRecord(e, s), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(t, e, 0), CUDA_SUCCESS);
	EXPECT_RC(launch((CUfunction)k, 8, 128, t), CUDA_SUCCESS);
	EXPECT_RC(launch((CUfunction)k, 8, 128, s), CUDA_SUCCESS);
	EXPECT_RC(cuEventRecord(e, t), CUDA_SUCCESS);
	EXPECT_RC(cuStreamWaitEvent(s, e, 0), CUDA_SUCCESS);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	EXPECT_RC(cuGraphGetNodes(g, nodes, &n), CUDA_SUCCESS);
	EXPECT(n == 3);
	for (size_t i = 0; i < n; i++) {
		EXPECT_RC(cuGraphNodeGetType(nodes[i], &type), CUDA_SUCCESS);
		EXPECT(type == CU_GRAPH_NODE_TYPE_KERNEL);
	}
	EXPECT_RC(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(x, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphLaunch(x, s), CUDA_SUCCESS);
	EXPECT_RC(cuGraphExecDestroy(x), CUDA_SUCCESS);
	EXPECT_RC(cuGraphDestroy(g), CUDA_SUCCESS);

	/* A launch into an invalidated capture fails like any captured call. */
	EXPECT_RC(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	EXPECT_RC(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RC(launch((CUfunction)k, 1, 1, s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuStreamIsCapturing(s, &status), CUDA_SUCCESS);
	EXPECT(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RC(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RC(cuEventDestroy(e), CUDA_SUCCESS);
	EXPECT_RC(cuStreamDestroy(t), CUDA_SUCCESS);
	EXPECT_RC(cuLibraryUnload(lib), CUDA_SUCCESS);
}

void
test_kernels(CUcontext primary)
{
	CUstream s;

	EXPECT_RC(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	test_libraries();
	test_functions(primary, s);
	test_captured_launches(s);
	EXPECT_RC(cuStreamDestroy(s), CUDA_SUCCESS);
	EXPECT(used_bytes() == 0);
}
