/* The argument checks of the simulated cuBLAS routines (sim-cublas.h). */
#include <string.h>

#include "sim-cublas.h"

#define MAX1(x) ((x) > 1 ? (x) : 1)

static bool
op_ok(cublasOperation_t op)
{
	return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static bool
fill_ok(cublasFillMode_t uplo)
{
	return uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER;
}

static bool
side_ok(cublasSideMode_t side)
{
	return side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT;
}

static bool
diag_ok(cublasDiagType_t diag)
{
	return diag == CUBLAS_DIAG_NON_UNIT || diag == CUBLAS_DIAG_UNIT;
}

static cublasStatus_t
verdict(cublasHandle_t handle, bool ok)
{
	if (!sim_cublas_handle(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t
sim_cublas_level1(cublasHandle_t handle)
{
	return verdict(handle, true);
}

cublasStatus_t
sim_cublas_result(cublasHandle_t handle, int64_t n, void *result, size_t size)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!result)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (h->pointer_mode == CUBLAS_POINTER_MODE_HOST)
		memset(result, 0, size);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
sim_cublas_index(cublasHandle_t handle, int64_t n, int *result)
{
	struct sim_blas_handle *h = sim_cublas_handle(handle);

	if (!h)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!result)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (h->pointer_mode == CUBLAS_POINTER_MODE_HOST)
		*result = n > 0 ? 1 : 0;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
sim_cublas_gemv(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n, int64_t lda,
		int64_t incx, int64_t incy, int64_t batch)
{
	return verdict(handle, op_ok(trans) && m >= 0 && n >= 0 && lda >= MAX1(m) && incx != 0 &&
				       incy != 0 && batch >= 0);
}

cublasStatus_t
sim_cublas_ger(cublasHandle_t handle, int64_t m, int64_t n, int64_t incx, int64_t incy, int64_t lda)
{
	return verdict(handle, m >= 0 && n >= 0 && incx != 0 && incy != 0 && lda >= MAX1(m));
}

cublasStatus_t
sim_cublas_symv(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n, int64_t lda, int64_t incx,
		int64_t incy)
{
	return verdict(handle, fill_ok(uplo) && n >= 0 && lda >= MAX1(n) && incx != 0 && incy != 0);
}

cublasStatus_t
sim_cublas_trmv(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		cublasDiagType_t diag, int64_t n, int64_t lda, int64_t incx)
{
	return verdict(handle, fill_ok(uplo) && op_ok(trans) && diag_ok(diag) && n >= 0 &&
				       lda >= MAX1(n) && incx != 0);
}

/* C = op(A) + op(B), all m x n once transposed. */
cublasStatus_t
sim_cublas_geam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		int64_t m, int64_t n, int64_t lda, int64_t ldb, int64_t ldc)
{
	int64_t rows_a = transa == CUBLAS_OP_N ? m : n;
	int64_t rows_b = transb == CUBLAS_OP_N ? m : n;

	return verdict(handle, op_ok(transa) && op_ok(transb) && m >= 0 && n >= 0 &&
				       lda >= MAX1(rows_a) && ldb >= MAX1(rows_b) &&
				       ldc >= MAX1(m));
}

/* C = A diag(x) or diag(x) A, A and C m x n. */
cublasStatus_t
sim_cublas_dgmm(cublasHandle_t handle, cublasSideMode_t mode, int64_t m, int64_t n, int64_t lda,
		int64_t ldc)
{
	return verdict(handle, side_ok(mode) && m >= 0 && n >= 0 && lda >= MAX1(m) &&
				       ldc >= MAX1(m));
}

/* op(A) is m x k, op(B) k x n, C m x n, column major. */
cublasStatus_t
sim_cublas_gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
		int64_t batch)
{
	int64_t rows_a = transa == CUBLAS_OP_N ? m : k;
	int64_t rows_b = transb == CUBLAS_OP_N ? k : n;

	return verdict(handle, op_ok(transa) && op_ok(transb) && m >= 0 && n >= 0 && k >= 0 &&
				       lda >= MAX1(rows_a) && ldb >= MAX1(rows_b) &&
				       ldc >= MAX1(m) && batch >= 0);
}

cublasStatus_t
sim_cublas_symm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
		int64_t n, int64_t lda, int64_t ldb, int64_t ldc)
{
	int64_t order = side == CUBLAS_SIDE_LEFT ? m : n;

	return verdict(handle, side_ok(side) && fill_ok(uplo) && m >= 0 && n >= 0 &&
				       lda >= MAX1(order) && ldb >= MAX1(m) && ldc >= MAX1(m));
}

/* C is n x n; A (and B) n x k, or k x n when transposed. The Hermitian
 * ones take no plain transpose; a ldb of 0: no B (syrk, herk). */
cublasStatus_t
sim_cublas_syrk(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		bool hermitian, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc)
{
	int64_t rows = trans == CUBLAS_OP_N ? n : k;
	bool trans_ok = hermitian ? trans == CUBLAS_OP_N || trans == CUBLAS_OP_C : op_ok(trans);

	return verdict(handle, fill_ok(uplo) && trans_ok && n >= 0 && k >= 0 &&
				       lda >= MAX1(rows) && (ldb == 0 || ldb >= MAX1(rows)) &&
				       ldc >= MAX1(n));
}

cublasStatus_t
sim_cublas_trsm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n, int64_t lda,
		int64_t ldb, int64_t ldc, int64_t batch)
{
	int64_t order = side == CUBLAS_SIDE_LEFT ? m : n;

	return verdict(handle, side_ok(side) && fill_ok(uplo) && op_ok(trans) && diag_ok(diag) &&
				       m >= 0 && n >= 0 && lda >= MAX1(order) && ldb >= MAX1(m) &&
				       (ldc == 0 || ldc >= MAX1(m)) && batch >= 0);
}

cublasStatus_t
sim_cublas_getrf(cublasHandle_t handle, int64_t n, int64_t lda, int64_t batch)
{
	return verdict(handle, n >= 0 && lda >= MAX1(n) && batch >= 0);
}

/* The first wrong argument, numbered from 1 after the handle, or 0. */
static int
first_wrong(const bool *ok, int count)
{
	for (int i = 0; i < count; i++)
		if (!ok[i])
			return i + 1;
	return 0;
}

static cublasStatus_t
report(cublasHandle_t handle, int *info, int wrong)
{
	if (!sim_cublas_handle(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!info)
		return CUBLAS_STATUS_INVALID_VALUE;
	*info = -wrong;
	return wrong ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
}

/* (trans, n, nrhs, A, lda, ipiv, B, ldb, info, batchSize) */
cublasStatus_t
sim_cublas_getrs(cublasHandle_t handle, cublasOperation_t trans, int64_t n, int64_t nrhs,
		 int64_t lda, int64_t ldb, int *info, int64_t batch)
{
	bool ok[] = {op_ok(trans), n >= 0, nrhs >= 0, true, lda >= MAX1(n), true, true,
		     ldb >= MAX1(n), true, batch >= 0};

	return report(handle, info, first_wrong(ok, 10));
}

/* (m, n, A, lda, tau, info, batchSize) */
cublasStatus_t
sim_cublas_geqrf(cublasHandle_t handle, int64_t m, int64_t n, int64_t lda, int *info, int64_t batch)
{
	bool ok[] = {m >= 0, n >= 0, true, lda >= MAX1(m), true, true, batch >= 0};

	return report(handle, info, first_wrong(ok, 7));
}

/* (trans, m, n, nrhs, A, lda, C, ldc, info, devInfo, batchSize): only the
 * non-transposed, overdetermined (m >= n) case is supported by cuBLAS. */
cublasStatus_t
sim_cublas_gels(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n, int64_t nrhs,
		int64_t lda, int64_t ldc, int *info, int64_t batch)
{
	bool ok[] = {trans == CUBLAS_OP_N, m >= 0, n >= 0 && n <= m, nrhs >= 0, true,
		     lda >= MAX1(m), true, ldc >= MAX1(m), true, true, batch >= 0};

	return report(handle, info, first_wrong(ok, 11));
}
