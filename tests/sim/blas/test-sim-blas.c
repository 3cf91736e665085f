/* Self-test of the simulated cuBLAS and cuBLASLt, built like a program that
 * uses them (real headers, linked against the toolkit's libcublas,
 * libcublasLt and libcudart) and run on the simulator (sim_blas_env: one
 * 1 GiB device): a handle with its stream, workspace and modes, an SGEMM,
 * a cuBLASLt matmul chosen by the heuristics, on the cuBLAS handle as
 * PyTorch does, and the statuses bad arguments get. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                                   \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                    \
		}                                                                      \
	} while (0)

#define EXPECT_ST(call, want)                                                          \
	do {                                                                           \
		int got_ = (int)(call);                                                \
		if (got_ != (int)(want)) {                                             \
			fprintf(stderr, "%s:%d: FAIL: %s = %d, want %s (%d)\n", __FILE__,  \
				__LINE__, #call, got_, #want, (int)(want));            \
			failures++;                                                    \
		}                                                                      \
	} while (0)

#define MiB (1024UL * 1024)

static size_t
used_bytes(void)
{
	size_t free_bytes = 0, total = 0;

	EXPECT_ST(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
	return total - free_bytes;
}

/* cublasCreate allocates its default workspace pool on the device (32 MiB
 * on this Hopper-class device, or what CUBLAS_WORKSPACE_CONFIG says);
 * cublasDestroy gives it back. */
static void
test_handle_memory(void)
{
	size_t before = used_bytes();
	cublasHandle_t h = NULL;

	unsetenv("CUBLAS_WORKSPACE_CONFIG"); /* one in the caller's environment */
	EXPECT_ST(cublasCreate(NULL), CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	EXPECT(used_bytes() - before == 32 * MiB);
	EXPECT_ST(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
	EXPECT(used_bytes() == before);
	EXPECT_ST(cublasDestroy(NULL), CUBLAS_STATUS_NOT_INITIALIZED);

	setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:2:16:8", 1);
	EXPECT_ST(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	EXPECT(used_bytes() - before == 2 * 4096 * 1024 + 8 * 16 * 1024);
	EXPECT_ST(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
	setenv("CUBLAS_WORKSPACE_CONFIG", ":0:0", 1);
	EXPECT_ST(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	EXPECT(used_bytes() == before);
	EXPECT_ST(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
	unsetenv("CUBLAS_WORKSPACE_CONFIG");
	EXPECT(used_bytes() == before);
}

static void
test_versions(cublasHandle_t h)
{
	int v = 0;

	EXPECT_ST(cublasGetVersion(h, &v), CUBLAS_STATUS_SUCCESS);
	EXPECT(v == 130401);
	EXPECT(cublasLtGetVersion() == 130401);
	EXPECT_ST(cublasGetProperty(MAJOR_VERSION, &v), CUBLAS_STATUS_SUCCESS);
	EXPECT(v == 13);
	EXPECT_ST(cublasGetProperty(MINOR_VERSION, &v), CUBLAS_STATUS_SUCCESS);
	EXPECT(v == 4);
	EXPECT_ST(cublasGetProperty(PATCH_LEVEL, &v), CUBLAS_STATUS_SUCCESS);
	EXPECT(v == 1);
	EXPECT(strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
		      "CUBLAS_STATUS_INVALID_VALUE") == 0);
}

/* What PyTorch does with each handle it takes from its pool: the stream,
 * then its own workspace (the stream resets it), then the math mode. */
static void
test_state(cublasHandle_t h, cudaStream_t stream, void *workspace)
{
	cudaStream_t got = NULL;
	cublasMath_t math = CUBLAS_DEFAULT_MATH;
	cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;

	EXPECT_ST(cublasSetStream(h, stream), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasGetStream(h, &got), CUBLAS_STATUS_SUCCESS);
	EXPECT(got == stream);
	EXPECT_ST(cublasSetStream(NULL, stream), CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasSetWorkspace(h, workspace, 4 * MiB), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSetWorkspace(h, (char *)workspace + 16, 4 * MiB),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSetWorkspace(NULL, workspace, 4 * MiB), CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasGetMathMode(h, &math), CUBLAS_STATUS_SUCCESS);
	EXPECT(math == CUBLAS_TF32_TENSOR_OP_MATH);
	EXPECT_ST(cublasGetPointerMode(h, &mode), CUBLAS_STATUS_SUCCESS);
	EXPECT(mode == CUBLAS_POINTER_MODE_HOST);
	EXPECT_ST(cublasSetPointerMode(h, (cublasPointerMode_t)7), CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSetSmCountTarget(h, 0), CUBLAS_STATUS_SUCCESS);
}

/* An SGEMM succeeds and leaves C as it was: the kernel runs nothing. */
static void
test_sgemm(cublasHandle_t h)
{
	enum { M = 64, N = 32, K = 16 };
	float *a = NULL, *b = NULL, *c = NULL, alpha = 1, beta = 0;
	static float host[M * N], back[M * N];

	for (int i = 0; i < M * N; i++)
		host[i] = (float)i;
	EXPECT_ST(cudaMalloc((void **)&a, M * K * sizeof(float)), cudaSuccess);
	EXPECT_ST(cudaMalloc((void **)&b, K * N * sizeof(float)), cudaSuccess);
	EXPECT_ST(cudaMalloc((void **)&c, M * N * sizeof(float)), cudaSuccess);
	EXPECT_ST(cublasSetMatrixAsync(M, N, sizeof(float), host, M, c, M, NULL),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, a, M, b, K, &beta, c, M),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &alpha, a, K, b, K, &beta, c, M),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasGetMatrixAsync(M, N, sizeof(float), c, M, back, M, NULL),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(memcmp(host, back, sizeof(host)) == 0);

	EXPECT_ST(cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, a, M, b, K, &beta, c, M),
		  CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, N, K, &alpha, a, M, b, K, &beta, c, M),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, -1, &alpha, a, M, b, K, &beta, c, M),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, a, M - 1, b, K, &beta, c,
			      M),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSgemm(h, (cublasOperation_t)9, CUBLAS_OP_N, M, N, K, &alpha, a, M, b, K, &beta,
			      c, M),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, a,
					     CUDA_R_32F, M, 0, b, CUDA_R_32F, K, 0, &beta, c,
					     CUDA_R_32F, M, 0, -1, CUBLAS_COMPUTE_32F,
					     CUBLAS_GEMM_DEFAULT),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, a, CUDA_R_32F, M, b,
			       CUDA_R_32F, K, &beta, c, CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
			       CUBLAS_GEMM_DEFAULT),
		  CUBLAS_STATUS_SUCCESS);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
}

static void
test_other_routines(cublasHandle_t h)
{
	float x = 0, result = -1;
	int index = -1, info = 1;

	EXPECT_ST(cublasSdot(h, 4, &x, 1, &x, 1, &result), CUBLAS_STATUS_SUCCESS);
	EXPECT(result == 0);
	EXPECT_ST(cublasIsamax(h, 4, &x, 1, &index), CUBLAS_STATUS_SUCCESS);
	EXPECT(index == 1);
	EXPECT_ST(cublasSaxpy(h, -1, &x, &x, 1, &x, 1), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSaxpy(NULL, 4, &x, &x, 1, &x, 1), CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasSgemv(h, CUBLAS_OP_N, 4, 4, &x, &x, 4, &x, 0, &x, &x, 1),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
			      CUBLAS_DIAG_NON_UNIT, 4, 4, &x, &x, 3, &x, 4),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSgetrsBatched(h, CUBLAS_OP_N, -1, 1, NULL, 1, NULL, NULL, 1, &info, 1),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT(info == -2);
	EXPECT_ST(cublasSgetrsBatched(h, CUBLAS_OP_N, 4, 1, NULL, 4, NULL, NULL, 4, &info, 1),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(info == 0);
}

/* What NVIDIA's cuSOLVER calls on its handles: the 64-bit API, geam, dgmm,
 * and its settings. */
static void
test_cusolver_needs(cublasHandle_t h)
{
	float x = 0;
	int bits = 0;

	EXPECT_ST(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &x, &x, 4, &x, 4, &x, &x, 4),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)1 << 32, 4, 4, &x, &x,
				 (int64_t)1 << 32, &x, 4, &x, &x, 4),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSgeam_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 2, &x, &x, 2, &x, &x, 4, &x, 4),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSgeam_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, &x, &x, 2, &x, &x, 4, &x, 4),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasSdgmm(h, CUBLAS_SIDE_LEFT, 4, 4, &x, 4, &x, 1, &x, 4),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasSetFixedPointEmulationMaxMantissaBitCount(h, 40), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasGetFixedPointEmulationMaxMantissaBitCount(h, &bits), CUBLAS_STATUS_SUCCESS);
	EXPECT(bits == 40);
	EXPECT_ST(cublasGetFixedPointEmulationMaxMantissaBitCount(NULL, &bits),
		  CUBLAS_STATUS_NOT_INITIALIZED);
}

static cublasLtMatrixLayout_t
layout(uint64_t rows, uint64_t cols)
{
	cublasLtMatrixLayout_t l = NULL;

	EXPECT_ST(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, (int64_t)rows),
		  CUBLAS_STATUS_SUCCESS);
	return l;
}

/* PyTorch's cublasLt path: its cuBLAS handle cast to a cuBLASLt one. */
static void
test_lt_matmul(cublasLtHandle_t lt, void *workspace)
{
	enum { M = 64, N = 32, K = 16 };
	cublasLtMatmulDesc_t desc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t result[2];
	cublasLtMatrixLayout_t a = layout(K, M), b = layout(K, N), c = layout(M, N), bad = layout(M, M);
	int32_t trans = CUBLAS_OP_T, got32 = -1, count = 0;
	uint64_t max_ws = 4 * MiB;
	size_t written = 0;
	float alpha = 1, beta = 0;
	char *p = (char *)workspace;

	EXPECT_ST(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans,
						 sizeof(trans)),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, 8),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, NULL, 0,
						 &written),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(written == 4);
	EXPECT_ST(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &got32, 4,
						 &written),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(got32 == CUBLAS_OP_T);
	EXPECT_ST(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &got32, 4,
						 &written),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(got32 == CUBLASLT_EPILOGUE_DEFAULT);
	EXPECT_ST(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						       &max_ws, sizeof(max_ws)),
		  CUBLAS_STATUS_SUCCESS);

	EXPECT_ST(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 2, result, &count),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(count == 1 && result[0].state == CUBLAS_STATUS_SUCCESS);
	EXPECT(result[0].workspaceSize <= max_ws);
	EXPECT_ST(cublasLtMatmul(lt, desc, &alpha, p, a, p, b, &beta, p, c, p, c, &result[0].algo,
				 workspace, max_ws, NULL),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmul(NULL, desc, &alpha, p, a, p, b, &beta, p, c, p, c, &result[0].algo,
				 workspace, max_ws, NULL),
		  CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasLtMatmul(lt, desc, &alpha, p, a, p, b, &beta, p, bad, p, bad, NULL,
				 workspace, max_ws, NULL),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, bad, bad, pref, 1, result, &count),
		  CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasLtMatmulAlgoGetHeuristic(NULL, desc, a, b, c, c, pref, 1, result, &count),
		  CUBLAS_STATUS_NOT_INITIALIZED);
	EXPECT_ST(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 0, result, &count),
		  CUBLAS_STATUS_INVALID_VALUE);

	/* an algorithm's configuration, kept in its opaque bytes */
	got32 = 3;
	EXPECT_ST(cublasLtMatmulAlgoConfigSetAttribute(&result[0].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
						       &got32, sizeof(got32)),
		  CUBLAS_STATUS_SUCCESS);
	got32 = 0;
	EXPECT_ST(cublasLtMatmulAlgoConfigGetAttribute(&result[0].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
						       &got32, sizeof(got32), &written),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(got32 == 3 && written == 4);
	memset(&result[1].algo, 0, sizeof(result[1].algo));
	EXPECT_ST(cublasLtMatmulAlgoConfigSetAttribute(&result[1].algo, CUBLASLT_ALGO_CONFIG_ID,
						       &got32, sizeof(got32)),
		  CUBLAS_STATUS_INVALID_VALUE);

	max_ws = 0;
	EXPECT_ST(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						       &max_ws, sizeof(max_ws)),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, result, &count),
		  CUBLAS_STATUS_SUCCESS);
	EXPECT(count == 1 && result[0].workspaceSize == 0);

	EXPECT_ST(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
	EXPECT_ST(cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
	cublasLtMatrixLayoutDestroy(a);
	cublasLtMatrixLayoutDestroy(b);
	cublasLtMatrixLayoutDestroy(c);
	cublasLtMatrixLayoutDestroy(bad);
}

/* A cuBLASLt handle of its own allocates no device memory. */
static void
test_lt_handle(void *workspace)
{
	size_t before = used_bytes();
	cublasLtHandle_t lt = NULL;

	EXPECT_ST(cublasLtCreate(NULL), CUBLAS_STATUS_INVALID_VALUE);
	EXPECT_ST(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
	EXPECT(used_bytes() == before);
	EXPECT_ST(cublasSetStream((cublasHandle_t)lt, NULL), CUBLAS_STATUS_NOT_INITIALIZED);
	test_lt_matmul(lt, workspace);
	EXPECT_ST(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
}

int
main(void)
{
	cublasHandle_t h = NULL;
	cudaStream_t stream = NULL;
	void *workspace = NULL;

	EXPECT_ST(cudaFree(NULL), cudaSuccess);
	test_handle_memory();
	EXPECT_ST(cudaStreamCreate(&stream), cudaSuccess);
	EXPECT_ST(cudaMalloc(&workspace, 4 * MiB), cudaSuccess);
	EXPECT_ST(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
	test_versions(h);
	test_state(h, stream, workspace);
	test_sgemm(h);
	test_other_routines(h);
	test_cusolver_needs(h);
	test_lt_matmul((cublasLtHandle_t)h, workspace);
	test_lt_handle(workspace);
	EXPECT_ST(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
	cudaFree(workspace);
	cudaStreamDestroy(stream);
	EXPECT(used_bytes() == 0);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("sim-blas ok\n");
	return 0;
}
