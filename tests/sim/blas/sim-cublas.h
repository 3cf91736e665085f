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

/* Not in cublas_api.h: NVIDIA's cuSOLVER calls it on its cuBLAS handle
 * (its getter, cublasGetEnvironmentMode, takes an int *). */
cublasStatus_t cublasSetEnvironmentMode(cublasHandle_t handle, int mode);

/* Level 1: sizes of n <= 0 are a quick return, not an error. A scalar
 * result in host pointer mode is 0 (an index: 1 when n > 0, else 0); in
 * device pointer mode it is not written. */
cublasStatus_t sim_cublas_level1(cublasHandle_t handle);
cublasStatus_t sim_cublas_result(cublasHandle_t handle, int64_t n, void *result, size_t size);
cublasStatus_t sim_cublas_index(cublasHandle_t handle, int64_t n, int *result);

/* Level 2 */
cublasStatus_t sim_cublas_gemv(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			       int64_t lda, int64_t incx, int64_t incy, int64_t batch);
cublasStatus_t sim_cublas_ger(cublasHandle_t handle, int64_t m, int64_t n, int64_t incx,
			      int64_t incy, int64_t lda);
cublasStatus_t sim_cublas_symv(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n, int64_t lda,
			       int64_t incx, int64_t incy);
cublasStatus_t sim_cublas_trmv(cublasHandle_t handle, cublasFillMode_t uplo,
			       cublasOperation_t trans, cublasDiagType_t diag, int64_t n,
			       int64_t lda, int64_t incx);

/* Level 3 and batched. A ldc of 0 means the routine has no C. */
cublasStatus_t sim_cublas_geam(cublasHandle_t handle, cublasOperation_t transa,
			       cublasOperation_t transb, int64_t m, int64_t n, int64_t lda,
			       int64_t ldb, int64_t ldc);
cublasStatus_t sim_cublas_dgmm(cublasHandle_t handle, cublasSideMode_t mode, int64_t m, int64_t n,
			       int64_t lda, int64_t ldc);
cublasStatus_t sim_cublas_gemm(cublasHandle_t handle, cublasOperation_t transa,
			       cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
			       int64_t lda, int64_t ldb, int64_t ldc, int64_t batch);
cublasStatus_t sim_cublas_symm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
			       int64_t m, int64_t n, int64_t lda, int64_t ldb, int64_t ldc);
cublasStatus_t sim_cublas_syrk(cublasHandle_t handle, cublasFillMode_t uplo,
			       cublasOperation_t trans, bool hermitian, int64_t n, int64_t k,
			       int64_t lda, int64_t ldb, int64_t ldc);
cublasStatus_t sim_cublas_trsm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
			       cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
			       int64_t lda, int64_t ldb, int64_t ldc, int64_t batch);

/* The batched LAPACK-like routines. Where cuBLAS reports through a host
 * int *info, it is 0, or -i for the i-th argument (the handle not
 * counted) found wrong, with INVALID_VALUE. Device info arrays are not
 * written. */
cublasStatus_t sim_cublas_getrf(cublasHandle_t handle, int64_t n, int64_t lda, int64_t batch);
cublasStatus_t sim_cublas_getrs(cublasHandle_t handle, cublasOperation_t trans, int64_t n,
				int64_t nrhs, int64_t lda, int64_t ldb, int *info, int64_t batch);
cublasStatus_t sim_cublas_geqrf(cublasHandle_t handle, int64_t m, int64_t n, int64_t lda, int *info,
				int64_t batch);
cublasStatus_t sim_cublas_gels(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			       int64_t nrhs, int64_t lda, int64_t ldc, int *info, int64_t batch);
