/* The simulated cuDNN's legacy operations (README.md, "cuDNN"):
 * convolutions (algorithm choice, workspace sizes, forward, backward data
 * and filter), batch normalization, pooling, CTC loss, spatial
 * transformers. No kernel runs and no device memory is read or written:
 * each call checks its arguments as cuDNN documents (CUDNN_STATUS_BAD_PARAM
 * for NULL handles or descriptors, shapes that disagree, a workspace
 * smaller than the call needs) and returns. Workspace and reserve sizes
 * follow the one rule of sim_cudnn_space. */
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
typedef struct cudnnCTCLossStruct *cudnnCTCLossDescriptor_t;
typedef struct cudnnSpatialTransformerStruct *cudnnSpatialTransformerDescriptor_t;

/* cudnnConvolution{Fwd,BwdFilter,BwdData}AlgoPerf_t: one layout for all three. */
typedef struct {
	int algo;
	cudnnStatus_t status;
	float time;
	size_t memory;
	int determinism;
	int math_type;
	int reserved[3];
} sim_algo_perf;

enum { FWD_ALGOS = 8, BWD_FILTER_ALGOS = 7, BWD_DATA_ALGOS = 6 };

static size_t max3(size_t a, size_t b, size_t c)
{
	size_t m = a > b ? a : b;
	return m > c ? m : c;
}

/* x (N, C, spatial...), w (K, C/groups, kernel...), y (N, K, out...), as
 * cuDNN computes y's shape (cudnnGetConvolutionNdForwardOutputDim). */
static cudnnStatus_t conv_check(const struct cudnnTensorStruct *x,
		const struct cudnnFilterStruct *w, const struct cudnnConvolutionStruct *c,
		const struct cudnnTensorStruct *y)
{
	if (!x || !w || !c || !y || !x->nbdims || !w->nbdims || !c->nbdims || !y->nbdims)
		return CUDNN_STATUS_BAD_PARAM;
	if (x->nbdims != w->nbdims || y->nbdims != x->nbdims || x->nbdims != c->nbdims + 2)
		return CUDNN_STATUS_BAD_PARAM;
	if (x->dims[1] != w->dims[1] * c->groups || w->dims[0] % c->groups)
		return CUDNN_STATUS_BAD_PARAM;
	if (y->dims[0] != x->dims[0] || y->dims[1] != w->dims[0])
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < c->nbdims; i++) {
		int span = (w->dims[i + 2] - 1) * c->dilation[i] + 1;
		int out = 1 + (x->dims[i + 2] + 2 * c->pad[i] - span) / c->stride[i];
		if (x->dims[i + 2] + 2 * c->pad[i] < span || y->dims[i + 2] != out)
			return CUDNN_STATUS_BAD_PARAM;
	}
	return CUDNN_STATUS_SUCCESS;
}

static size_t conv_space(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
		const struct cudnnTensorStruct *y)
{
	return sim_cudnn_space(max3(sim_cudnn_tensor_bytes(x), sim_cudnn_filter_bytes(w),
			sim_cudnn_tensor_bytes(y)));
}

/* Every algorithm, fastest first (the order of their numbers), each with
 * the rule's workspace. */
static cudnnStatus_t conv_algos(cudnnHandle_t h, cudnnStatus_t ok, const struct cudnnConvolutionStruct *c,
		size_t space, int count, int requested, int *returned, sim_algo_perf *perf)
{
	if (!h || !returned || !perf || requested <= 0)
		return CUDNN_STATUS_BAD_PARAM;
	if (ok != CUDNN_STATUS_SUCCESS)
		return ok;
	int n = requested < count ? requested : count;
	for (int i = 0; i < n; i++)
		perf[i] = (sim_algo_perf){ .algo = i, .status = CUDNN_STATUS_SUCCESS,
			.time = 1.0f + (float)i, .memory = space, .determinism = 1,
			.math_type = c->math_type };
	*returned = n;
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t conv_run(cudnnHandle_t h, cudnnStatus_t ok, int algo, int count,
		const void *a, const void *b, const void *c, const void *ws, size_t ws_size,
		size_t need, const void *alpha, const void *beta)
{
	if (!h || !alpha || !beta)
		return CUDNN_STATUS_BAD_PARAM;
	if (ok != CUDNN_STATUS_SUCCESS)
		return ok;
	if (algo < 0 || algo >= count || !a || !b || !c)
		return CUDNN_STATUS_BAD_PARAM;
	if (ws_size < need || (need && !ws))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
		const int requested, int *returned, sim_algo_perf *perf);
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y,
		const int requested, int *returned, sim_algo_perf *perf)
{
	return conv_algos(h, conv_check(x, w, c, y), c, conv_space(x, w, y), FWD_ALGOS,
			requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t yd,
		void *y, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size);
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t yd,
		void *y, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size)
{
	(void)ws;
	(void)ws_size;
	if (!x || !w || !y)
		return CUDNN_STATUS_BAD_PARAM;
	return conv_algos(h, conv_check(xd, wd, c, yd), c, conv_space(xd, wd, yd), FWD_ALGOS,
			requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, int algo,
		size_t *size);
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t y, int algo,
		size_t *size)
{
	if (!h || !size || algo < 0 || algo >= FWD_ALGOS)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = conv_check(x, w, c, y);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = conv_space(x, w, y);
	return st;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, int algo, void *ws, size_t ws_size,
		const void *beta, const cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, int algo, void *ws, size_t ws_size,
		const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
	cudnnStatus_t st = conv_check(xd, wd, c, yd);
	return conv_run(h, st, algo, FWD_ALGOS, x, w, y, ws, ws_size,
			st ? 0 : conv_space(xd, wd, yd), alpha, beta);
}

EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(cudnnHandle_t h, const void *alpha1,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, int algo, void *ws, size_t ws_size,
		const void *alpha2, const cudnnTensorDescriptor_t zd, const void *z,
		const cudnnTensorDescriptor_t biasd, const void *bias,
		const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnConvolutionBiasActivationForward(cudnnHandle_t h, const void *alpha1,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
		const void *w, const cudnnConvolutionDescriptor_t c, int algo, void *ws, size_t ws_size,
		const void *alpha2, const cudnnTensorDescriptor_t zd, const void *z,
		const cudnnTensorDescriptor_t biasd, const void *bias,
		const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yd, void *y)
{
	cudnnStatus_t st = conv_check(xd, wd, c, yd);
	if (st == CUDNN_STATUS_SUCCESS && (!zd || !z || !biasd || !bias || !act))
		st = CUDNN_STATUS_BAD_PARAM;
	return conv_run(h, st, algo, FWD_ALGOS, x, w, y, ws, ws_size,
			st ? 0 : conv_space(xd, wd, yd), alpha1, alpha2);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h,
		const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
		const int requested, int *returned, sim_algo_perf *perf);
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h,
		const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx,
		const int requested, int *returned, sim_algo_perf *perf)
{
	return conv_algos(h, conv_check(dx, w, c, dy), c, conv_space(dx, w, dy), BWD_DATA_ALGOS,
			requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t h,
		const cudnnFilterDescriptor_t wd, const void *w, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dxd,
		void *dx, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size);
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t h,
		const cudnnFilterDescriptor_t wd, const void *w, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dxd,
		void *dx, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size)
{
	(void)ws;
	(void)ws_size;
	if (!w || !dy || !dx)
		return CUDNN_STATUS_BAD_PARAM;
	return conv_algos(h, conv_check(dxd, wd, c, dyd), c, conv_space(dxd, wd, dyd),
			BWD_DATA_ALGOS, requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h,
		const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, int algo,
		size_t *size);
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h,
		const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dx, int algo,
		size_t *size)
{
	if (!h || !size || algo < 0 || algo >= BWD_DATA_ALGOS)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = conv_check(dx, w, c, dy);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = conv_space(dx, w, dy);
	return st;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
		const cudnnFilterDescriptor_t wd, const void *w, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, int algo, void *ws,
		size_t ws_size, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx);
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
		const cudnnFilterDescriptor_t wd, const void *w, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, int algo, void *ws,
		size_t ws_size, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx)
{
	cudnnStatus_t st = conv_check(dxd, wd, c, dyd);
	return conv_run(h, st, algo, BWD_DATA_ALGOS, w, dy, dx, ws, ws_size,
			st ? 0 : conv_space(dxd, wd, dyd), alpha, beta);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
		const int requested, int *returned, sim_algo_perf *perf);
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw,
		const int requested, int *returned, sim_algo_perf *perf)
{
	return conv_algos(h, conv_check(x, dw, c, dy), c, conv_space(x, dw, dy),
			BWD_FILTER_ALGOS, requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t h,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dwd,
		void *dw, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size);
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t h,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dwd,
		void *dw, const int requested, int *returned, sim_algo_perf *perf, void *ws,
		size_t ws_size)
{
	(void)ws;
	(void)ws_size;
	if (!x || !dy || !dw)
		return CUDNN_STATUS_BAD_PARAM;
	return conv_algos(h, conv_check(xd, dwd, c, dyd), c, conv_space(xd, dwd, dyd),
			BWD_FILTER_ALGOS, requested, returned, perf);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, int algo,
		size_t *size);
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
		const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dw, int algo,
		size_t *size)
{
	if (!h || !size || algo < 0 || algo >= BWD_FILTER_ALGOS)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = conv_check(x, dw, c, dy);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = conv_space(x, dw, dy);
	return st;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, int algo, void *ws,
		size_t ws_size, const void *beta, const cudnnFilterDescriptor_t dwd, void *dw);
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnConvolutionDescriptor_t c, int algo, void *ws,
		size_t ws_size, const void *beta, const cudnnFilterDescriptor_t dwd, void *dw)
{
	cudnnStatus_t st = conv_check(xd, dwd, c, dyd);
	return conv_run(h, st, algo, BWD_FILTER_ALGOS, x, dy, dw, ws, ws_size,
			st ? 0 : conv_space(xd, dwd, dyd), alpha, beta);
}

/* Batch normalization: x, y (and z, dy, dx) of one shape; the scale, bias,
 * mean and variance descriptor 1xCx1x1 (spatial) or 1xCxHxW (per
 * activation). */
static int same_shape(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b)
{
	if (!a || !b || a->nbdims != b->nbdims || !a->nbdims)
		return 0;
	for (int i = 0; i < a->nbdims; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

static cudnnStatus_t bn_check(int mode, int ops, const struct cudnnTensorStruct *x,
		const struct cudnnTensorStruct *y, const struct cudnnTensorStruct *p)
{
	if (mode < 0 || mode > 2 || ops < 0 || ops > 2 || !same_shape(x, y) || !p ||
			p->nbdims != x->nbdims || x->nbdims < 4 || p->dims[0] != 1 ||
			p->dims[1] != x->dims[1])
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 2; i < x->nbdims; i++)
		if (p->dims[i] != (mode == 0 ? x->dims[i] : 1))
			return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t z,
		const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t p,
		const cudnnActivationDescriptor_t act, size_t *size);
cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t z,
		const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t p,
		const cudnnActivationDescriptor_t act, size_t *size)
{
	(void)z;
	(void)act;
	if (!h || !size)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = bn_check(mode, ops, x, y, p);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = sim_cudnn_space(sim_cudnn_tensor_bytes(x));
	return st;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t y,
		const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
		const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t p,
		const cudnnActivationDescriptor_t act, size_t *size);
cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t y,
		const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
		const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t p,
		const cudnnActivationDescriptor_t act, size_t *size)
{
	(void)y;
	(void)dz;
	(void)act;
	if (!h || !size || !same_shape(x, dy))
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = bn_check(mode, ops, x, dx, p);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = sim_cudnn_space(sim_cudnn_tensor_bytes(x));
	return st;
}

EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnActivationDescriptor_t act,
		const cudnnTensorDescriptor_t x, size_t *size);
cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t h,
		int mode, int ops, const cudnnActivationDescriptor_t act,
		const cudnnTensorDescriptor_t x, size_t *size)
{
	if (!h || !size || !x || !x->nbdims || mode < 0 || mode > 2 || ops < 0 || ops > 2 ||
			(ops && !act))
		return CUDNN_STATUS_BAD_PARAM;
	*size = sim_cudnn_space(sim_cudnn_tensor_bytes(x));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(cudnnHandle_t h, int mode, int ops,
		const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t yd,
		void *y, const cudnnTensorDescriptor_t pd, const void *scale, const void *bias,
		double factor, void *running_mean, void *running_var, double eps, void *save_mean,
		void *save_inv_var, const cudnnActivationDescriptor_t act, void *ws, size_t ws_size,
		void *reserve, size_t reserve_size);
cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(cudnnHandle_t h, int mode, int ops,
		const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t yd,
		void *y, const cudnnTensorDescriptor_t pd, const void *scale, const void *bias,
		double factor, void *running_mean, void *running_var, double eps, void *save_mean,
		void *save_inv_var, const cudnnActivationDescriptor_t act, void *ws, size_t ws_size,
		void *reserve, size_t reserve_size)
{
	(void)zd;
	(void)z;
	(void)factor;
	(void)running_mean;
	(void)running_var;
	(void)save_mean;
	(void)save_inv_var;
	(void)act;
	if (!h || !alpha || !beta || !x || !y || !scale || !bias || eps < 0.0)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = bn_check(mode, ops, xd, yd, pd);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	size_t need = sim_cudnn_space(sim_cudnn_tensor_bytes(xd));
	if ((ws_size && !ws) || (reserve && reserve_size < need))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t h, int mode,
		const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t yd, void *y, const cudnnTensorDescriptor_t pd,
		const void *scale, const void *bias, const void *mean, const void *var, double eps);
cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t h, int mode,
		const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t yd, void *y, const cudnnTensorDescriptor_t pd,
		const void *scale, const void *bias, const void *mean, const void *var, double eps)
{
	(void)eps;
	if (!h || !alpha || !beta || !x || !y || !scale || !bias || !mean || !var)
		return CUDNN_STATUS_BAD_PARAM;
	return bn_check(mode, 0, xd, yd, pd);
}

EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(cudnnHandle_t h, int mode, int ops,
		const void *alpha_data, const void *beta_data, const void *alpha_param,
		const void *beta_param, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnTensorDescriptor_t dzd, void *dz,
		const cudnnTensorDescriptor_t dxd, void *dx, const cudnnTensorDescriptor_t pd,
		const void *scale, const void *bias, void *dscale, void *dbias, double eps,
		const void *saved_mean, const void *saved_inv_var,
		const cudnnActivationDescriptor_t act, void *ws, size_t ws_size, void *reserve,
		size_t reserve_size);
cudnnStatus_t cudnnBatchNormalizationBackwardEx(cudnnHandle_t h, int mode, int ops,
		const void *alpha_data, const void *beta_data, const void *alpha_param,
		const void *beta_param, const cudnnTensorDescriptor_t xd, const void *x,
		const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyd,
		const void *dy, const cudnnTensorDescriptor_t dzd, void *dz,
		const cudnnTensorDescriptor_t dxd, void *dx, const cudnnTensorDescriptor_t pd,
		const void *scale, const void *bias, void *dscale, void *dbias, double eps,
		const void *saved_mean, const void *saved_inv_var,
		const cudnnActivationDescriptor_t act, void *ws, size_t ws_size, void *reserve,
		size_t reserve_size)
{
	(void)yd;
	(void)y;
	(void)dzd;
	(void)dz;
	(void)bias;
	(void)eps;
	(void)saved_mean;
	(void)saved_inv_var;
	(void)act;
	if (!h || !alpha_data || !beta_data || !alpha_param || !beta_param || !x || !dy ||
			!dx || !scale || !dscale || !dbias || !same_shape(xd, dyd))
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = bn_check(mode, ops, xd, dxd, pd);
	if (st != CUDNN_STATUS_SUCCESS)
		return st;
	size_t need = sim_cudnn_space(sim_cudnn_tensor_bytes(xd));
	if ((ws_size && !ws) || (reserve && reserve_size < need))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t pooling_check(const struct cudnnPoolingStruct *p,
		const struct cudnnTensorStruct *x, const struct cudnnTensorStruct *y)
{
	if (!p || !x || !y || !p->nbdims || x->nbdims != p->nbdims + 2 ||
			y->nbdims != x->nbdims || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < p->nbdims; i++)
		if (y->dims[i + 2] != sim_cudnn_pooling_out(p, i, x->dims[i + 2]))
			return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p,
		const void *alpha, const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnPoolingForward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p,
		const void *alpha, const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t yd, void *y)
{
	if (!h || !alpha || !beta || !x || !y)
		return CUDNN_STATUS_BAD_PARAM;
	return pooling_check(p, xd, yd);
}

EXPORT cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p,
		const void *alpha, const cudnnTensorDescriptor_t yd, const void *y,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t xd,
		const void *x, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx);
cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p,
		const void *alpha, const cudnnTensorDescriptor_t yd, const void *y,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t xd,
		const void *x, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx)
{
	if (!h || !alpha || !beta || !y || !dy || !x || !dx || !same_shape(yd, dyd) ||
			!same_shape(xd, dxd))
		return CUDNN_STATUS_BAD_PARAM;
	return pooling_check(p, xd, yd);
}

/* Activations: x and y (dy, dx) of one shape. */
EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t a,
		const void *alpha, const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t a,
		const void *alpha, const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t yd, void *y)
{
	if (!h || !a || !alpha || !beta || !x || !y || !same_shape(xd, yd))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnActivationBackward(cudnnHandle_t h, cudnnActivationDescriptor_t a,
		const void *alpha, const cudnnTensorDescriptor_t yd, const void *y,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t xd,
		const void *x, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx);
cudnnStatus_t cudnnActivationBackward(cudnnHandle_t h, cudnnActivationDescriptor_t a,
		const void *alpha, const cudnnTensorDescriptor_t yd, const void *y,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t xd,
		const void *x, const void *beta, const cudnnTensorDescriptor_t dxd, void *dx)
{
	if (!h || !a || !alpha || !beta || !y || !dy || !x || !dx || !same_shape(yd, dyd) ||
			!same_shape(xd, dxd) || !same_shape(xd, yd))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

/* CTC loss: probabilities T x N x A. The workspace follows the rule. */
static cudnnStatus_t ctc_check(cudnnHandle_t h, const struct cudnnTensorStruct *probs,
		const struct cudnnTensorStruct *grads, const cudnnCTCLossDescriptor_t d, int algo)
{
	if (!h || !probs || probs->nbdims != 3 || !d || algo < 0 || algo > 1 ||
			(grads && grads->nbdims && !same_shape(probs, grads)))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t probs, const cudnnTensorDescriptor_t grads,
		const int *labels, const int *label_lengths, const int *input_lengths, int algo,
		cudnnCTCLossDescriptor_t d, size_t *size);
cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t h,
		const cudnnTensorDescriptor_t probs, const cudnnTensorDescriptor_t grads,
		const int *labels, const int *label_lengths, const int *input_lengths, int algo,
		cudnnCTCLossDescriptor_t d, size_t *size)
{
	if (!labels || !label_lengths || !input_lengths || !size)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = ctc_check(h, probs, grads, d, algo);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = sim_cudnn_space(sim_cudnn_tensor_bytes(probs));
	return st;
}

EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t h, int algo,
		cudnnCTCLossDescriptor_t d, const cudnnTensorDescriptor_t probs,
		const cudnnTensorDescriptor_t grads, size_t *size);
cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t h, int algo,
		cudnnCTCLossDescriptor_t d, const cudnnTensorDescriptor_t probs,
		const cudnnTensorDescriptor_t grads, size_t *size)
{
	if (!size)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = ctc_check(h, probs, grads, d, algo);
	if (st == CUDNN_STATUS_SUCCESS)
		*size = sim_cudnn_space(sim_cudnn_tensor_bytes(probs));
	return st;
}

EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t h, const cudnnTensorDescriptor_t probsd,
		const void *probs, const int labels[], const int label_lengths[],
		const int input_lengths[], void *costs, const cudnnTensorDescriptor_t gradsd,
		void *grads, int algo, cudnnCTCLossDescriptor_t d, void *ws, size_t ws_size);
cudnnStatus_t cudnnCTCLoss(cudnnHandle_t h, const cudnnTensorDescriptor_t probsd,
		const void *probs, const int labels[], const int label_lengths[],
		const int input_lengths[], void *costs, const cudnnTensorDescriptor_t gradsd,
		void *grads, int algo, cudnnCTCLossDescriptor_t d, void *ws, size_t ws_size)
{
	(void)grads;
	if (!probs || !labels || !label_lengths || !input_lengths || !costs)
		return CUDNN_STATUS_BAD_PARAM;
	cudnnStatus_t st = ctc_check(h, probsd, gradsd, d, algo);
	if (st == CUDNN_STATUS_SUCCESS &&
			(ws_size < sim_cudnn_space(sim_cudnn_tensor_bytes(probsd)) || !ws))
		st = CUDNN_STATUS_BAD_PARAM;
	return st;
}

EXPORT cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t h, int algo, cudnnCTCLossDescriptor_t d,
		const cudnnTensorDescriptor_t probsd, const void *probs, const int labels[],
		const int label_lengths[], const int input_lengths[], void *costs,
		const cudnnTensorDescriptor_t gradsd, void *grads, size_t ws_size, void *ws);
cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t h, int algo, cudnnCTCLossDescriptor_t d,
		const cudnnTensorDescriptor_t probsd, const void *probs, const int labels[],
		const int label_lengths[], const int input_lengths[], void *costs,
		const cudnnTensorDescriptor_t gradsd, void *grads, size_t ws_size, void *ws)
{
	return cudnnCTCLoss(h, probsd, probs, labels, label_lengths, input_lengths, costs,
			gradsd, grads, algo, d, ws, ws_size);
}

/* Spatial transformers: theta N x 2 x 3, a grid N x H x W x 2. */
EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorForward(cudnnHandle_t h,
		const cudnnSpatialTransformerDescriptor_t d, const void *theta, void *grid);
cudnnStatus_t cudnnSpatialTfGridGeneratorForward(cudnnHandle_t h,
		const cudnnSpatialTransformerDescriptor_t d, const void *theta, void *grid)
{
	return !h || !d || !theta || !grid ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t h,
		const cudnnSpatialTransformerDescriptor_t d, const void *dgrid, void *dtheta);
cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t h,
		const cudnnSpatialTransformerDescriptor_t d, const void *dgrid, void *dtheta)
{
	return !h || !d || !dgrid || !dtheta ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSpatialTfSamplerForward(cudnnHandle_t h,
		cudnnSpatialTransformerDescriptor_t d, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const void *grid, const void *beta,
		cudnnTensorDescriptor_t yd, void *y);
cudnnStatus_t cudnnSpatialTfSamplerForward(cudnnHandle_t h,
		cudnnSpatialTransformerDescriptor_t d, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const void *grid, const void *beta,
		cudnnTensorDescriptor_t yd, void *y)
{
	if (!h || !d || !alpha || !beta || !xd || !x || !grid || !yd || !y)
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSpatialTfSamplerBackward(cudnnHandle_t h,
		cudnnSpatialTransformerDescriptor_t d, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t dxd, void *dx, const void *alpha_dgrid,
		const cudnnTensorDescriptor_t dyd, const void *dy, const void *grid,
		const void *beta_dgrid, void *dgrid);
cudnnStatus_t cudnnSpatialTfSamplerBackward(cudnnHandle_t h,
		cudnnSpatialTransformerDescriptor_t d, const void *alpha,
		const cudnnTensorDescriptor_t xd, const void *x, const void *beta,
		const cudnnTensorDescriptor_t dxd, void *dx, const void *alpha_dgrid,
		const cudnnTensorDescriptor_t dyd, const void *dy, const void *grid,
		const void *beta_dgrid, void *dgrid)
{
	if (!h || !d || !alpha || !beta || !xd || !x || !dxd || !dx || !alpha_dgrid || !dyd ||
			!dy || !grid || !beta_dgrid || !dgrid)
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}
