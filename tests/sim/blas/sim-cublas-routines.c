/* The BLAS routines of the simulated libcublas.so.13: every one that a library
 * of torch 2.15.0 or the cuSOLVER torch loads imports (libcublas.map), with
 * cublas_api.h's prototypes (the _64 ones take 64-bit sizes).
 * Each checks its arguments by family (sim-cublas-check.c) and runs
 * nothing: device memory is never touched. To add one: its name in
 * libcublas.map, and here its definition, under its level, returning its
 * family's check. */
#include "sim-cublas.h"

/* Level 1 */

cublasStatus_t
cublasCaxpy_v2(cublasHandle_t handle, int n, const cuComplex *alpha, const cuComplex *x, int incx,
	       cuComplex *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCcopy_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, cuComplex *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCcopy_v2_64(cublasHandle_t handle, int64_t n, const cuComplex *x, int64_t incx, cuComplex *y,
		  int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCdotc_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, const cuComplex *y,
	       int incy, cuComplex *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasCdotu_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, const cuComplex *y,
	       int incy, cuComplex *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasCrot_v2(cublasHandle_t handle, int n, cuComplex *x, int incx, cuComplex *y, int incy,
	      const float *c, const cuComplex *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCrotg_v2(cublasHandle_t handle, cuComplex *a, cuComplex *b, float *c, cuComplex *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCscal_v2(cublasHandle_t handle, int n, const cuComplex *alpha, cuComplex *x, int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCscal_v2_64(cublasHandle_t handle, int64_t n, const cuComplex *alpha, cuComplex *x,
		  int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCsrot_v2(cublasHandle_t handle, int n, cuComplex *x, int incx, cuComplex *y, int incy,
	       const float *c, const float *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCsrot_v2_64(cublasHandle_t handle, int64_t n, cuComplex *x, int64_t incx, cuComplex *y,
		  int64_t incy, const float *c, const float *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCsscal_v2(cublasHandle_t handle, int n, const float *alpha, cuComplex *x, int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCsscal_v2_64(cublasHandle_t handle, int64_t n, const float *alpha, cuComplex *x, int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCswap_v2(cublasHandle_t handle, int n, cuComplex *x, int incx, cuComplex *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasCswap_v2_64(cublasHandle_t handle, int64_t n, cuComplex *x, int64_t incx, cuComplex *y,
		  int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDasum_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasDaxpy_v2(cublasHandle_t handle, int n, const double *alpha, const double *x, int incx,
	       double *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDcopy_v2(cublasHandle_t handle, int n, const double *x, int incx, double *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDcopy_v2_64(cublasHandle_t handle, int64_t n, const double *x, int64_t incx, double *y,
		  int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDdot_v2(cublasHandle_t handle, int n, const double *x, int incx, const double *y, int incy,
	      double *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasDnrm2_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasDotEx(cublasHandle_t handle, int n, const void *x, cudaDataType xType, int incx,
	    const void *y, cudaDataType yType, int incy, void *result, cudaDataType resultType,
	    cudaDataType executionType)
{
	return sim_cublas_result(handle, n, result, sim_blas_type_size(resultType));
}

cublasStatus_t
cublasDrot_v2(cublasHandle_t handle, int n, double *x, int incx, double *y, int incy,
	      const double *c, const double *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDrot_v2_64(cublasHandle_t handle, int64_t n, double *x, int64_t incx, double *y, int64_t incy,
		 const double *c, const double *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDrotg_v2(cublasHandle_t handle, double *a, double *b, double *c, double *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDrotm_v2(cublasHandle_t handle, int n, double *x, int incx, double *y, int incy,
	       const double *param)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDrotmg_v2(cublasHandle_t handle, double *d1, double *d2, double *x1, const double *y1,
		double *param)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDscal_v2(cublasHandle_t handle, int n, const double *alpha, double *x, int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDscal_v2_64(cublasHandle_t handle, int64_t n, const double *alpha, double *x, int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDswap_v2(cublasHandle_t handle, int n, double *x, int incx, double *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDswap_v2_64(cublasHandle_t handle, int64_t n, double *x, int64_t incx, double *y,
		  int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasDzasum_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx, double *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasDznrm2_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx, double *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasIcamax_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIcamin_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIdamax_v2(cublasHandle_t handle, int n, const double *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIdamin_v2(cublasHandle_t handle, int n, const double *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIsamax_v2(cublasHandle_t handle, int n, const float *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIsamin_v2(cublasHandle_t handle, int n, const float *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIzamax_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasIzamin_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx, int *result)
{
	return sim_cublas_index(handle, n, result);
}

cublasStatus_t
cublasSasum_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasSaxpy_v2(cublasHandle_t handle, int n, const float *alpha, const float *x, int incx, float *y,
	       int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasScasum_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, float *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasScnrm2_v2(cublasHandle_t handle, int n, const cuComplex *x, int incx, float *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasScopy_v2(cublasHandle_t handle, int n, const float *x, int incx, float *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasScopy_v2_64(cublasHandle_t handle, int64_t n, const float *x, int64_t incx, float *y,
		  int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx, const float *y, int incy,
	      float *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasSnrm2_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasSrot_v2(cublasHandle_t handle, int n, float *x, int incx, float *y, int incy, const float *c,
	      const float *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSrot_v2_64(cublasHandle_t handle, int64_t n, float *x, int64_t incx, float *y, int64_t incy,
		 const float *c, const float *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSrotg_v2(cublasHandle_t handle, float *a, float *b, float *c, float *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSrotm_v2(cublasHandle_t handle, int n, float *x, int incx, float *y, int incy,
	       const float *param)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSrotmg_v2(cublasHandle_t handle, float *d1, float *d2, float *x1, const float *y1,
		float *param)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSscal_v2(cublasHandle_t handle, int n, const float *alpha, float *x, int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSscal_v2_64(cublasHandle_t handle, int64_t n, const float *alpha, float *x, int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSswap_v2(cublasHandle_t handle, int n, float *x, int incx, float *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasSswap_v2_64(cublasHandle_t handle, int64_t n, float *x, int64_t incx, float *y, int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZaxpy_v2(cublasHandle_t handle, int n, const cuDoubleComplex *alpha, const cuDoubleComplex *x,
	       int incx, cuDoubleComplex *y, int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZcopy_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx, cuDoubleComplex *y,
	       int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZcopy_v2_64(cublasHandle_t handle, int64_t n, const cuDoubleComplex *x, int64_t incx,
		  cuDoubleComplex *y, int64_t incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZdotc_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx,
	       const cuDoubleComplex *y, int incy, cuDoubleComplex *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasZdotu_v2(cublasHandle_t handle, int n, const cuDoubleComplex *x, int incx,
	       const cuDoubleComplex *y, int incy, cuDoubleComplex *result)
{
	return sim_cublas_result(handle, n, result, sizeof(*result));
}

cublasStatus_t
cublasZdrot_v2(cublasHandle_t handle, int n, cuDoubleComplex *x, int incx, cuDoubleComplex *y,
	       int incy, const double *c, const double *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZdrot_v2_64(cublasHandle_t handle, int64_t n, cuDoubleComplex *x, int64_t incx,
		  cuDoubleComplex *y, int64_t incy, const double *c, const double *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZdscal_v2(cublasHandle_t handle, int n, const double *alpha, cuDoubleComplex *x, int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZdscal_v2_64(cublasHandle_t handle, int64_t n, const double *alpha, cuDoubleComplex *x,
		   int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZrot_v2(cublasHandle_t handle, int n, cuDoubleComplex *x, int incx, cuDoubleComplex *y,
	      int incy, const double *c, const cuDoubleComplex *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZrotg_v2(cublasHandle_t handle, cuDoubleComplex *a, cuDoubleComplex *b, double *c,
	       cuDoubleComplex *s)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZscal_v2(cublasHandle_t handle, int n, const cuDoubleComplex *alpha, cuDoubleComplex *x,
	       int incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZscal_v2_64(cublasHandle_t handle, int64_t n, const cuDoubleComplex *alpha,
		  cuDoubleComplex *x, int64_t incx)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZswap_v2(cublasHandle_t handle, int n, cuDoubleComplex *x, int incx, cuDoubleComplex *y,
	       int incy)
{
	return sim_cublas_level1(handle);
}

cublasStatus_t
cublasZswap_v2_64(cublasHandle_t handle, int64_t n, cuDoubleComplex *x, int64_t incx,
		  cuDoubleComplex *y, int64_t incy)
{
	return sim_cublas_level1(handle);
}

/* Level 2 */

cublasStatus_t
cublasCgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			     const cuComplex *alpha, const cuComplex *A, int64_t lda,
			     long long int strideA, const cuComplex *x, int64_t incx,
			     long long int stridex, const cuComplex *beta, cuComplex *y,
			     int64_t incy, long long int stridey, int64_t batchCount)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, batchCount);
}

cublasStatus_t
cublasCgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const cuComplex *alpha,
	       const cuComplex *A, int lda, const cuComplex *x, int incx, const cuComplex *beta,
	       cuComplex *y, int incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasCgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
		  const cuComplex *alpha, const cuComplex *A, int64_t lda, const cuComplex *x,
		  int64_t incx, const cuComplex *beta, cuComplex *y, int64_t incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasCgerc_v2(cublasHandle_t handle, int m, int n, const cuComplex *alpha, const cuComplex *x,
	       int incx, const cuComplex *y, int incy, cuComplex *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasCgerc_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const cuComplex *alpha,
		  const cuComplex *x, int64_t incx, const cuComplex *y, int64_t incy, cuComplex *A,
		  int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasCgeru_v2(cublasHandle_t handle, int m, int n, const cuComplex *alpha, const cuComplex *x,
	       int incx, const cuComplex *y, int incy, cuComplex *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasCgeru_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const cuComplex *alpha,
		  const cuComplex *x, int64_t incx, const cuComplex *y, int64_t incy, cuComplex *A,
		  int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasChemv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuComplex *alpha,
	       const cuComplex *A, int lda, const cuComplex *x, int incx, const cuComplex *beta,
	       cuComplex *y, int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasChemv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n, const cuComplex *alpha,
		  const cuComplex *A, int64_t lda, const cuComplex *x, int64_t incx,
		  const cuComplex *beta, cuComplex *y, int64_t incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasCher2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuComplex *alpha,
	       const cuComplex *x, int incx, const cuComplex *y, int incy, cuComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasCher_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const float *alpha,
	      const cuComplex *x, int incx, cuComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasCsymv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuComplex *alpha,
	       const cuComplex *A, int lda, const cuComplex *x, int incx, const cuComplex *beta,
	       cuComplex *y, int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasCsyr2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuComplex *alpha,
	       const cuComplex *x, int incx, const cuComplex *y, int incy, cuComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasCsyr_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuComplex *alpha,
	      const cuComplex *x, int incx, cuComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasCtrmv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const cuComplex *A, int lda, cuComplex *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasCtrmv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		  cublasDiagType_t diag, int64_t n, const cuComplex *A, int64_t lda, cuComplex *x,
		  int64_t incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasCtrsv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const cuComplex *A, int lda, cuComplex *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasDgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			     const double *alpha, const double *A, int64_t lda,
			     long long int strideA, const double *x, int64_t incx,
			     long long int stridex, const double *beta, double *y, int64_t incy,
			     long long int stridey, int64_t batchCount)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, batchCount);
}

cublasStatus_t
cublasDgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double *alpha,
	       const double *A, int lda, const double *x, int incx, const double *beta, double *y,
	       int incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasDgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
		  const double *alpha, const double *A, int64_t lda, const double *x, int64_t incx,
		  const double *beta, double *y, int64_t incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasDger_v2(cublasHandle_t handle, int m, int n, const double *alpha, const double *x, int incx,
	      const double *y, int incy, double *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasDger_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const double *alpha, const double *x,
		 int64_t incx, const double *y, int64_t incy, double *A, int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasDsymv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const double *alpha,
	       const double *A, int lda, const double *x, int incx, const double *beta, double *y,
	       int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasDsymv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n, const double *alpha,
		  const double *A, int64_t lda, const double *x, int64_t incx, const double *beta,
		  double *y, int64_t incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasDsyr2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const double *alpha,
	       const double *x, int incx, const double *y, int incy, double *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasDsyr_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const double *alpha,
	      const double *x, int incx, double *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasDtrmv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const double *A, int lda, double *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasDtrmv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		  cublasDiagType_t diag, int64_t n, const double *A, int64_t lda, double *x,
		  int64_t incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasDtrsv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const double *A, int lda, double *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasSgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			     const float *alpha, const float *A, int64_t lda, long long int strideA,
			     const float *x, int64_t incx, long long int stridex, const float *beta,
			     float *y, int64_t incy, long long int stridey, int64_t batchCount)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, batchCount);
}

cublasStatus_t
cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha,
	       const float *A, int lda, const float *x, int incx, const float *beta, float *y,
	       int incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasSgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
		  const float *alpha, const float *A, int64_t lda, const float *x, int64_t incx,
		  const float *beta, float *y, int64_t incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasSger_v2(cublasHandle_t handle, int m, int n, const float *alpha, const float *x, int incx,
	      const float *y, int incy, float *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasSger_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const float *alpha, const float *x,
		 int64_t incx, const float *y, int64_t incy, float *A, int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasSsymv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const float *alpha,
	       const float *A, int lda, const float *x, int incx, const float *beta, float *y,
	       int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasSsymv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n, const float *alpha,
		  const float *A, int64_t lda, const float *x, int64_t incx, const float *beta,
		  float *y, int64_t incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasSsyr2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const float *alpha,
	       const float *x, int incx, const float *y, int incy, float *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasSsyr_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const float *alpha,
	      const float *x, int incx, float *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasStrmv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const float *A, int lda, float *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasStrmv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		  cublasDiagType_t diag, int64_t n, const float *A, int64_t lda, float *x,
		  int64_t incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasStrsv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const float *A, int lda, float *x, int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasZgemvStridedBatched_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
			     const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
			     long long int strideA, const cuDoubleComplex *x, int64_t incx,
			     long long int stridex, const cuDoubleComplex *beta, cuDoubleComplex *y,
			     int64_t incy, long long int stridey, int64_t batchCount)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, batchCount);
}

cublasStatus_t
cublasZgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *x, int incx, const cuDoubleComplex *beta, cuDoubleComplex *y,
	       int incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasZgemv_v2_64(cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n,
		  const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		  const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *beta,
		  cuDoubleComplex *y, int64_t incy)
{
	return sim_cublas_gemv(handle, trans, m, n, lda, incx, incy, 1);
}

cublasStatus_t
cublasZgerc_v2(cublasHandle_t handle, int m, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *x, int incx, const cuDoubleComplex *y, int incy,
	       cuDoubleComplex *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasZgerc_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const cuDoubleComplex *alpha,
		  const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *y, int64_t incy,
		  cuDoubleComplex *A, int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasZgeru_v2(cublasHandle_t handle, int m, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *x, int incx, const cuDoubleComplex *y, int incy,
	       cuDoubleComplex *A, int lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasZgeru_v2_64(cublasHandle_t handle, int64_t m, int64_t n, const cuDoubleComplex *alpha,
		  const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *y, int64_t incy,
		  cuDoubleComplex *A, int64_t lda)
{
	return sim_cublas_ger(handle, m, n, incx, incy, lda);
}

cublasStatus_t
cublasZhemv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *A, int lda, const cuDoubleComplex *x, int incx,
	       const cuDoubleComplex *beta, cuDoubleComplex *y, int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasZhemv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, int64_t n,
		  const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		  const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *beta,
		  cuDoubleComplex *y, int64_t incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasZher2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *x, int incx, const cuDoubleComplex *y, int incy,
	       cuDoubleComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasZher_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const double *alpha,
	      const cuDoubleComplex *x, int incx, cuDoubleComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasZsymv_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *A, int lda, const cuDoubleComplex *x, int incx,
	       const cuDoubleComplex *beta, cuDoubleComplex *y, int incy)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasZsyr2_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuDoubleComplex *alpha,
	       const cuDoubleComplex *x, int incx, const cuDoubleComplex *y, int incy,
	       cuDoubleComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, incy);
}

cublasStatus_t
cublasZsyr_v2(cublasHandle_t handle, cublasFillMode_t uplo, int n, const cuDoubleComplex *alpha,
	      const cuDoubleComplex *x, int incx, cuDoubleComplex *A, int lda)
{
	return sim_cublas_symv(handle, uplo, n, lda, incx, 1);
}

cublasStatus_t
cublasZtrmv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const cuDoubleComplex *A, int lda, cuDoubleComplex *x,
	       int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasZtrmv_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
		  cublasDiagType_t diag, int64_t n, const cuDoubleComplex *A, int64_t lda,
		  cuDoubleComplex *x, int64_t incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

cublasStatus_t
cublasZtrsv_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans,
	       cublasDiagType_t diag, int n, const cuDoubleComplex *A, int lda, cuDoubleComplex *x,
	       int incx)
{
	return sim_cublas_trmv(handle, uplo, trans, diag, n, lda, incx);
}

/* Level 3 */

cublasStatus_t
cublasCdgmm(cublasHandle_t handle, cublasSideMode_t mode, int m, int n, const cuComplex *A, int lda,
	    const cuComplex *x, int incx, cuComplex *C, int ldc)
{
	return sim_cublas_dgmm(handle, mode, m, n, lda, ldc);
}

cublasStatus_t
cublasCgeam_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
	       int64_t n, const cuComplex *alpha, const cuComplex *A, int64_t lda,
	       const cuComplex *beta, const cuComplex *B, int64_t ldb, cuComplex *C, int64_t ldc)
{
	return sim_cublas_geam(handle, transa, transb, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasCgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
		   int n, int k, const cuComplex *alpha, const cuComplex *const Aarray[], int lda,
		   const cuComplex *const Barray[], int ldb, const cuComplex *beta,
		   cuComplex *const Carray[], int ldc, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasCgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
			  int m, int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
			  long long int strideA, const cuComplex *B, int ldb, long long int strideB,
			  const cuComplex *beta, cuComplex *C, int ldc, long long int strideC,
			  int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasCgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
			     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
			     const cuComplex *alpha, const cuComplex *A, int64_t lda,
			     long long int strideA, const cuComplex *B, int64_t ldb,
			     long long int strideB, const cuComplex *beta, cuComplex *C,
			     int64_t ldc, long long int strideC, int64_t batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	       int n, int k, const cuComplex *alpha, const cuComplex *A, int lda,
	       const cuComplex *B, int ldb, const cuComplex *beta, cuComplex *C, int ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasCgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		  int64_t m, int64_t n, int64_t k, const cuComplex *alpha, const cuComplex *A,
		  int64_t lda, const cuComplex *B, int64_t ldb, const cuComplex *beta, cuComplex *C,
		  int64_t ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasChemm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
	       const cuComplex *beta, cuComplex *C, int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasChemm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
		  int64_t n, const cuComplex *alpha, const cuComplex *A, int64_t lda,
		  const cuComplex *B, int64_t ldb, const cuComplex *beta, cuComplex *C, int64_t ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasCher2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
		const float *beta, cuComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasCher2k_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
		   int64_t k, const cuComplex *alpha, const cuComplex *A, int64_t lda,
		   const cuComplex *B, int64_t ldb, const float *beta, cuComplex *C, int64_t ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasCherk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const float *alpha, const cuComplex *A, int lda, const float *beta, cuComplex *C,
	       int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasCsymm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
	       const cuComplex *beta, cuComplex *C, int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasCsyr2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
		const cuComplex *beta, cuComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasCsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *beta,
	       cuComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasCsyrkx(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	     const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
	     const cuComplex *beta, cuComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasCtrmm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const cuComplex *alpha,
	       const cuComplex *A, int lda, const cuComplex *B, int ldb, cuComplex *C, int ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasCtrmm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const cuComplex *alpha, const cuComplex *A, int64_t lda, const cuComplex *B,
		  int64_t ldb, cuComplex *C, int64_t ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasCtrsmBatched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		   cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
		   const cuComplex *alpha, const cuComplex *const A[], int lda,
		   cuComplex *const B[], int ldb, int batchCount)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, batchCount);
}

cublasStatus_t
cublasCtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const cuComplex *alpha,
	       const cuComplex *A, int lda, cuComplex *B, int ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasCtrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const cuComplex *alpha, const cuComplex *A, int64_t lda, cuComplex *B,
		  int64_t ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasDdgmm(cublasHandle_t handle, cublasSideMode_t mode, int m, int n, const double *A, int lda,
	    const double *x, int incx, double *C, int ldc)
{
	return sim_cublas_dgmm(handle, mode, m, n, lda, ldc);
}

cublasStatus_t
cublasDgeam_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
	       int64_t n, const double *alpha, const double *A, int64_t lda, const double *beta,
	       const double *B, int64_t ldb, double *C, int64_t ldc)
{
	return sim_cublas_geam(handle, transa, transb, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
		   int n, int k, const double *alpha, const double *const Aarray[], int lda,
		   const double *const Barray[], int ldb, const double *beta,
		   double *const Carray[], int ldc, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
			  int m, int n, int k, const double *alpha, const double *A, int lda,
			  long long int strideA, const double *B, int ldb, long long int strideB,
			  const double *beta, double *C, int ldc, long long int strideC,
			  int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
			     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
			     const double *alpha, const double *A, int64_t lda,
			     long long int strideA, const double *B, int64_t ldb,
			     long long int strideB, const double *beta, double *C, int64_t ldc,
			     long long int strideC, int64_t batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	       int n, int k, const double *alpha, const double *A, int lda, const double *B,
	       int ldb, const double *beta, double *C, int ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		  int64_t m, int64_t n, int64_t k, const double *alpha, const double *A,
		  int64_t lda, const double *B, int64_t ldb, const double *beta, double *C,
		  int64_t ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasDsymm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const double *alpha, const double *A, int lda, const double *B, int ldb,
	       const double *beta, double *C, int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasDsymm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
		  int64_t n, const double *alpha, const double *A, int64_t lda, const double *B,
		  int64_t ldb, const double *beta, double *C, int64_t ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasDsyr2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const double *alpha, const double *A, int lda, const double *B, int ldb,
		const double *beta, double *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasDsyr2k_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
		   int64_t k, const double *alpha, const double *A, int64_t lda, const double *B,
		   int64_t ldb, const double *beta, double *C, int64_t ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasDsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const double *alpha, const double *A, int lda, const double *beta, double *C,
	       int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasDsyrkx(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	     const double *alpha, const double *A, int lda, const double *B, int ldb,
	     const double *beta, double *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasDtrmm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const double *alpha,
	       const double *A, int lda, const double *B, int ldb, double *C, int ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasDtrmm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const double *alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
		  double *C, int64_t ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasDtrsmBatched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		   cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
		   const double *alpha, const double *const A[], int lda, double *const B[],
		   int ldb, int batchCount)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, batchCount);
}

cublasStatus_t
cublasDtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const double *alpha,
	       const double *A, int lda, double *B, int ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasDtrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const double *alpha, const double *A, int64_t lda, double *B, int64_t ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	     int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
	     const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
	     cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
			   cublasOperation_t transb, int m, int n, int k, const void *alpha,
			   const void *A, cudaDataType Atype, int lda, long long int strideA,
			   const void *B, cudaDataType Btype, int ldb, long long int strideB,
			   const void *beta, void *C, cudaDataType Ctype, int ldc,
			   long long int strideC, int batchCount, cublasComputeType_t computeType,
			   cublasGemmAlgo_t algo)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasSdgmm(cublasHandle_t handle, cublasSideMode_t mode, int m, int n, const float *A, int lda,
	    const float *x, int incx, float *C, int ldc)
{
	return sim_cublas_dgmm(handle, mode, m, n, lda, ldc);
}

cublasStatus_t
cublasSgeam_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
	       int64_t n, const float *alpha, const float *A, int64_t lda, const float *beta,
	       const float *B, int64_t ldb, float *C, int64_t ldc)
{
	return sim_cublas_geam(handle, transa, transb, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
		   int n, int k, const float *alpha, const float *const Aarray[], int lda,
		   const float *const Barray[], int ldb, const float *beta, float *const Carray[],
		   int ldc, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	      int n, int k, const float *alpha, const void *A, cudaDataType Atype, int lda,
	      const void *B, cudaDataType Btype, int ldb, const float *beta, void *C,
	      cudaDataType Ctype, int ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
			  int m, int n, int k, const float *alpha, const float *A, int lda,
			  long long int strideA, const float *B, int ldb, long long int strideB,
			  const float *beta, float *C, int ldc, long long int strideC, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
			     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
			     const float *alpha, const float *A, int64_t lda, long long int strideA,
			     const float *B, int64_t ldb, long long int strideB, const float *beta,
			     float *C, int64_t ldc, long long int strideC, int64_t batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	       int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
	       const float *beta, float *C, int ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		  int64_t m, int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda,
		  const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasSsymm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const float *alpha, const float *A, int lda, const float *B, int ldb,
	       const float *beta, float *C, int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasSsymm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
		  int64_t n, const float *alpha, const float *A, int64_t lda, const float *B,
		  int64_t ldb, const float *beta, float *C, int64_t ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasSsyr2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const float *alpha, const float *A, int lda, const float *B, int ldb,
		const float *beta, float *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasSsyr2k_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
		   int64_t k, const float *alpha, const float *A, int64_t lda, const float *B,
		   int64_t ldb, const float *beta, float *C, int64_t ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasSsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const float *alpha, const float *A, int lda, const float *beta, float *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasSsyrkx(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	     const float *alpha, const float *A, int lda, const float *B, int ldb,
	     const float *beta, float *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasStrmm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const float *alpha,
	       const float *A, int lda, const float *B, int ldb, float *C, int ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasStrmm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const float *alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
		  float *C, int64_t ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasStrsmBatched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		   cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const float *alpha,
		   const float *const A[], int lda, float *const B[], int ldb, int batchCount)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, batchCount);
}

cublasStatus_t
cublasStrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const float *alpha,
	       const float *A, int lda, float *B, int ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasStrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const float *alpha, const float *A, int64_t lda, float *B, int64_t ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasZdgmm(cublasHandle_t handle, cublasSideMode_t mode, int m, int n, const cuDoubleComplex *A,
	    int lda, const cuDoubleComplex *x, int incx, cuDoubleComplex *C, int ldc)
{
	return sim_cublas_dgmm(handle, mode, m, n, lda, ldc);
}

cublasStatus_t
cublasZgeam_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
	       int64_t n, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
	       const cuDoubleComplex *beta, const cuDoubleComplex *B, int64_t ldb,
	       cuDoubleComplex *C, int64_t ldc)
{
	return sim_cublas_geam(handle, transa, transb, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasZgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
		   int n, int k, const cuDoubleComplex *alpha,
		   const cuDoubleComplex *const Aarray[], int lda,
		   const cuDoubleComplex *const Barray[], int ldb, const cuDoubleComplex *beta,
		   cuDoubleComplex *const Carray[], int ldc, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
			  int m, int n, int k, const cuDoubleComplex *alpha,
			  const cuDoubleComplex *A, int lda, long long int strideA,
			  const cuDoubleComplex *B, int ldb, long long int strideB,
			  const cuDoubleComplex *beta, cuDoubleComplex *C, int ldc,
			  long long int strideC, int batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasZgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
			     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
			     const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
			     long long int strideA, const cuDoubleComplex *B, int64_t ldb,
			     long long int strideB, const cuDoubleComplex *beta, cuDoubleComplex *C,
			     int64_t ldc, long long int strideC, int64_t batchCount)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, batchCount);
}

cublasStatus_t
cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
	       int n, int k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
	       int ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasZgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
		  int64_t m, int64_t n, int64_t k, const cuDoubleComplex *alpha,
		  const cuDoubleComplex *A, int64_t lda, const cuDoubleComplex *B, int64_t ldb,
		  const cuDoubleComplex *beta, cuDoubleComplex *C, int64_t ldc)
{
	return sim_cublas_gemm(handle, transa, transb, m, n, k, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasZhemm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
	       int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasZhemm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
		  int64_t n, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		  const cuDoubleComplex *B, int64_t ldb, const cuDoubleComplex *beta,
		  cuDoubleComplex *C, int64_t ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasZher2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
		const cuDoubleComplex *B, int ldb, const double *beta, cuDoubleComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasZher2k_v2_64(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
		   int64_t k, const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		   const cuDoubleComplex *B, int64_t ldb, const double *beta, cuDoubleComplex *C,
		   int64_t ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasZherk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const double *alpha, const cuDoubleComplex *A, int lda, const double *beta,
	       cuDoubleComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, true, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasZsymm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
	       int ldc)
{
	return sim_cublas_symm(handle, side, uplo, m, n, lda, ldb, ldc);
}

cublasStatus_t
cublasZsyr2k_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
		const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
		const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
		int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasZsyrk_v2(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *beta, cuDoubleComplex *C, int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, 0, ldc);
}

cublasStatus_t
cublasZsyrkx(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
	     const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	     const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
	     int ldc)
{
	return sim_cublas_syrk(handle, uplo, trans, false, n, k, lda, ldb, ldc);
}

cublasStatus_t
cublasZtrmm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
	       const cuDoubleComplex *B, int ldb, cuDoubleComplex *C, int ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasZtrmm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		  const cuDoubleComplex *B, int64_t ldb, cuDoubleComplex *C, int64_t ldc)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, ldc, 1);
}

cublasStatus_t
cublasZtrsmBatched(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		   cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
		   const cuDoubleComplex *alpha, const cuDoubleComplex *const A[], int lda,
		   cuDoubleComplex *const B[], int ldb, int batchCount)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, batchCount);
}

cublasStatus_t
cublasZtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
	       cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
	       const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda, cuDoubleComplex *B,
	       int ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

cublasStatus_t
cublasZtrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
		  cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
		  const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda,
		  cuDoubleComplex *B, int64_t ldb)
{
	return sim_cublas_trsm(handle, side, uplo, trans, diag, m, n, lda, ldb, 0, 1);
}

/* Batched factorisations and solvers */

cublasStatus_t
cublasCgelsBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n, int nrhs,
		   cuComplex *const Aarray[], int lda, cuComplex *const Carray[], int ldc,
		   int *info, int *devInfoArray, int batchSize)
{
	return sim_cublas_gels(handle, trans, m, n, nrhs, lda, ldc, info, batchSize);
}

cublasStatus_t
cublasCgeqrfBatched(cublasHandle_t handle, int m, int n, cuComplex *const Aarray[], int lda,
		    cuComplex *const TauArray[], int *info, int batchSize)
{
	return sim_cublas_geqrf(handle, m, n, lda, info, batchSize);
}

cublasStatus_t
cublasCgetrfBatched(cublasHandle_t handle, int n, cuComplex *const A[], int lda, int *P, int *info,
		    int batchSize)
{
	return sim_cublas_getrf(handle, n, lda, batchSize);
}

cublasStatus_t
cublasCgetrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,
		    const cuComplex *const Aarray[], int lda, const int *devIpiv,
		    cuComplex *const Barray[], int ldb, int *info, int batchSize)
{
	return sim_cublas_getrs(handle, trans, n, nrhs, lda, ldb, info, batchSize);
}

cublasStatus_t
cublasDgelsBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n, int nrhs,
		   double *const Aarray[], int lda, double *const Carray[], int ldc, int *info,
		   int *devInfoArray, int batchSize)
{
	return sim_cublas_gels(handle, trans, m, n, nrhs, lda, ldc, info, batchSize);
}

cublasStatus_t
cublasDgeqrfBatched(cublasHandle_t handle, int m, int n, double *const Aarray[], int lda,
		    double *const TauArray[], int *info, int batchSize)
{
	return sim_cublas_geqrf(handle, m, n, lda, info, batchSize);
}

cublasStatus_t
cublasDgetrfBatched(cublasHandle_t handle, int n, double *const A[], int lda, int *P, int *info,
		    int batchSize)
{
	return sim_cublas_getrf(handle, n, lda, batchSize);
}

cublasStatus_t
cublasDgetrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,
		    const double *const Aarray[], int lda, const int *devIpiv,
		    double *const Barray[], int ldb, int *info, int batchSize)
{
	return sim_cublas_getrs(handle, trans, n, nrhs, lda, ldb, info, batchSize);
}

cublasStatus_t
cublasSgelsBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n, int nrhs,
		   float *const Aarray[], int lda, float *const Carray[], int ldc, int *info,
		   int *devInfoArray, int batchSize)
{
	return sim_cublas_gels(handle, trans, m, n, nrhs, lda, ldc, info, batchSize);
}

cublasStatus_t
cublasSgeqrfBatched(cublasHandle_t handle, int m, int n, float *const Aarray[], int lda,
		    float *const TauArray[], int *info, int batchSize)
{
	return sim_cublas_geqrf(handle, m, n, lda, info, batchSize);
}

cublasStatus_t
cublasSgetrfBatched(cublasHandle_t handle, int n, float *const A[], int lda, int *P, int *info,
		    int batchSize)
{
	return sim_cublas_getrf(handle, n, lda, batchSize);
}

cublasStatus_t
cublasSgetrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,
		    const float *const Aarray[], int lda, const int *devIpiv, float *const Barray[],
		    int ldb, int *info, int batchSize)
{
	return sim_cublas_getrs(handle, trans, n, nrhs, lda, ldb, info, batchSize);
}

cublasStatus_t
cublasZgelsBatched(cublasHandle_t handle, cublasOperation_t trans, int m, int n, int nrhs,
		   cuDoubleComplex *const Aarray[], int lda, cuDoubleComplex *const Carray[],
		   int ldc, int *info, int *devInfoArray, int batchSize)
{
	return sim_cublas_gels(handle, trans, m, n, nrhs, lda, ldc, info, batchSize);
}

cublasStatus_t
cublasZgeqrfBatched(cublasHandle_t handle, int m, int n, cuDoubleComplex *const Aarray[], int lda,
		    cuDoubleComplex *const TauArray[], int *info, int batchSize)
{
	return sim_cublas_geqrf(handle, m, n, lda, info, batchSize);
}

cublasStatus_t
cublasZgetrfBatched(cublasHandle_t handle, int n, cuDoubleComplex *const A[], int lda, int *P,
		    int *info, int batchSize)
{
	return sim_cublas_getrf(handle, n, lda, batchSize);
}

cublasStatus_t
cublasZgetrsBatched(cublasHandle_t handle, cublasOperation_t trans, int n, int nrhs,
		    const cuDoubleComplex *const Aarray[], int lda, const int *devIpiv,
		    cuDoubleComplex *const Barray[], int ldb, int *info, int batchSize)
{
	return sim_cublas_getrs(handle, trans, n, nrhs, lda, ldb, info, batchSize);
}
