/* Internals of the simulated libcublas.so.13: the argument checks every
 * BLAS routine of sim-cublas-routines.c makes, by family, with the
 * statuses NVIDIA's cuBLAS gives (a NULL handle: NOT_INITIALIZED; a
 * negative size, a leading dimension too small for its matrix, an
 * increment of 0, an operation, side, fill mode or diagonal type that is
 * not one of cuBLAS's: INVALID_VALUE). The routines run no kernel: after
 * the checks they return CUBLAS_STATUS_SUCCESS without touching device
 * memory. */
#pragma once

#include "sim-blas.h"

struct sim_blas_handle *sim_cublas_handle(cublasHandle_t handle);

/* Level 1: sizes of n <= 0 are a quick return, not an error. A scalar
 * result in host pointer mode is 0 (an index: 1 when n > 0, else 0); in
 * device pointer mode it is not written. */
cublasStatus_t sim_cublas_level1(cublasHandle_t handle);
cublasStatus_t sim_cublas_result(cublasHandle_t handle, int n, void *result, size_t size);
cublasStatus_t sim_cublas_index(cublasHandle_t handle, int n, int *result);

/* Level 2 */
cublasStatus_t sim_cublas_gemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
			       int lda, int incx, int incy);
cublasStatus_t sim_cublas_ger(cublasHandle_t handle, int m, int n, int incx, int incy, int lda);
cublasStatus_t sim_cublas_symv(cublasHandle_t handle, cublasFillMode_t uplo, int n, int lda,
			       int incx, int incy);
cublasStatus_t sim_cublas_trmv(cublasHandle_t handle, cublasFillMode_t uplo,
			       cublasOperation_t trans, cublasDiagType_t diag, int n, int lda,
			       int incx);

/* Level 3 and batched. A ldc of 0 means the routine has no C. */
cublasStatus_t sim_cublas_gemm(cublasHandle_t handle, cublasOperation_t transa,
			       cublasOperation_t transb, int m, int n, int k, int lda, int ldb,
			       int ldc, int batch);
cublasStatus_t sim_cublas_symm(cublasHandle_t handle, cublasSideMode_t side,
			       cublasFillMode_t uplo, int m, int n, int lda, int ldb, int ldc);
cublasStatus_t sim_cublas_syrk(cublasHandle_t handle, cublasFillMode_t uplo,
			       cublasOperation_t trans, bool hermitian, int n, int k, int lda,
			       int ldb, int ldc);
cublasStatus_t sim_cublas_trsm(cublasHandle_t handle, cublasSideMode_t side,
			       cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
			       int m, int n, int lda, int ldb, int ldc, int batch);

/* The batched LAPACK-like routines. Where cuBLAS reports through a host
 * int *info, it is 0, or -i for the i-th argument (the handle not
 * counted) found wrong, with INVALID_VALUE. Device info arrays are not
 * written. */
cublasStatus_t sim_cublas_getrf(cublasHandle_t handle, int n, int lda, int batch);
cublasStatus_t sim_cublas_getrs(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,
				int lda, int ldb, int *info, int batch);
cublasStatus_t sim_cublas_geqrf(cublasHandle_t handle, int m, int n, int lda, int *info,
				int batch);
cublasStatus_t sim_cublas_gels(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
			       int nrhs, int lda, int ldc, int *info, int batch);
