/* The simulated cuDNN's legacy descriptors (README.md, "cuDNN"): tensors,
 * filters, convolutions, pooling, activation, dropout, CTC loss, spatial
 * transformers. Host memory only. Bad arguments get the statuses cuDNN
 * documents: NULL pointers, sizes of zero or less, more dimensions than
 * CUDNN_DIM_MAX (8). */
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

size_t sim_cudnn_elem_size(cudnnDataType_t t)
{
	switch (t) {
	case 0: return 4;  /* FLOAT */
	case 1: return 8;  /* DOUBLE */
	case 2: return 2;  /* HALF */
	case 3: return 1;  /* INT8 */
	case 4: return 4;  /* INT32 */
	case 5: return 4;  /* INT8x4 */
	case 6: return 1;  /* UINT8 */
	case 7: return 4;  /* UINT8x4 */
	case 8: return 32; /* INT8x32 */
	case 9: return 2;  /* BFLOAT16 */
	case 10: return 8; /* INT64 */
	case 11: return 1; /* BOOLEAN */
	case 12: case 13: case 15: return 1; /* FP8 */
	case 14: return 4; /* FAST_FLOAT_FOR_FP8 */
	}
	return 0;
}

size_t sim_cudnn_tensor_bytes(const struct cudnnTensorStruct *t)
{
	if (!t || t->nbdims <= 0)
		return 0;
	size_t last = 0;
	for (int i = 0; i < t->nbdims; i++)
		last += (size_t)(t->dims[i] - 1) * (size_t)t->strides[i];
	return (last + 1) * sim_cudnn_elem_size(t->dtype);
}

size_t sim_cudnn_filter_bytes(const struct cudnnFilterStruct *f)
{
	if (!f || f->nbdims <= 0)
		return 0;
	size_t n = 1;
	for (int i = 0; i < f->nbdims; i++)
		n *= (size_t)f->dims[i];
	return n * sim_cudnn_elem_size(f->dtype);
}

size_t sim_cudnn_space(size_t largest)
{
	return (largest + 255) / 256 * 256;
}

/* Create and destroy, the same for every legacy descriptor. */
#define SIM_DESC(Name, type)                                                  \
	EXPORT cudnnStatus_t cudnnCreate##Name##Descriptor(type *d);          \
	EXPORT cudnnStatus_t cudnnDestroy##Name##Descriptor(type d);          \
	cudnnStatus_t cudnnCreate##Name##Descriptor(type *d)                  \
	{                                                                     \
		if (!d)                                                       \
			return CUDNN_STATUS_BAD_PARAM;                        \
		*d = calloc(1, sizeof(**d));                                  \
		return *d ? CUDNN_STATUS_SUCCESS                              \
			  : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED; \
	}                                                                     \
	cudnnStatus_t cudnnDestroy##Name##Descriptor(type d)                  \
	{                                                                     \
		free(d);                                                      \
		return CUDNN_STATUS_SUCCESS;                                  \
	}

struct cudnnActivationStruct {
	int mode, nan_opt;
	double coef;
};
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
struct cudnnCTCLossStruct {
	int comp_type, norm_mode, grad_mode, max_label_length;
};
typedef struct cudnnCTCLossStruct *cudnnCTCLossDescriptor_t;
struct cudnnSpatialTransformerStruct {
	int sampler, dtype, nbdims, dims[SIM_CUDNN_MAX_DIMS];
};
typedef struct cudnnSpatialTransformerStruct *cudnnSpatialTransformerDescriptor_t;

SIM_DESC(Tensor, cudnnTensorDescriptor_t)
SIM_DESC(Filter, cudnnFilterDescriptor_t)
SIM_DESC(Convolution, cudnnConvolutionDescriptor_t)
SIM_DESC(Pooling, cudnnPoolingDescriptor_t)
SIM_DESC(Activation, cudnnActivationDescriptor_t)
SIM_DESC(Dropout, cudnnDropoutDescriptor_t)
SIM_DESC(CTCLoss, cudnnCTCLossDescriptor_t)
SIM_DESC(SpatialTransformer, cudnnSpatialTransformerDescriptor_t)

EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t t,
		int nbdims, const int dims[], const int strides[]);
EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int requested,
		cudnnDataType_t *t, int *nbdims, int dims[], int strides[]);
EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t,
		int format, int nbdims, const int dims[]);
EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int requested,
		cudnnDataType_t *t, int *format, int *nbdims, int dims[]);
EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n,
		const int pad[], const int stride[], const int dilation[], int mode, cudnnDataType_t t);
EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups);
EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, int math);
EXPORT cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, int mode, int nan_opt,
		int wh, int ww, int ph, int pw, int sh, int sw);
EXPORT cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t d, int mode,
		int nan_opt, int n, const int window[], const int pad[], const int stride[]);
EXPORT cudnnStatus_t cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t d,
		const cudnnTensorDescriptor_t x, int n, int out[]);
EXPORT cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t d,
		const cudnnTensorDescriptor_t x, int mode);
EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, int mode,
		int nan_opt, double coef);
EXPORT cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *size);
EXPORT cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float dropout, void *states, size_t size, unsigned long long seed);
EXPORT cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float dropout, void *states, size_t size, unsigned long long seed);
EXPORT cudnnStatus_t cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t d, cudnnDataType_t t,
		int norm, int nan_opt);
EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t d, cudnnDataType_t t,
		int norm, int grad, int max_label_length);
EXPORT cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t d,
		int sampler, cudnnDataType_t t, const int nbdims, const int dims[]);

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t t,
		int nbdims, const int dims[], const int strides[])
{
	if (!d || !dims || !strides)
		return CUDNN_STATUS_BAD_PARAM;
	if (nbdims > SIM_CUDNN_MAX_DIMS)
		return CUDNN_STATUS_NOT_SUPPORTED;
	if (nbdims <= 0 || !sim_cudnn_elem_size(t))
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < nbdims; i++)
		if (dims[i] <= 0 || strides[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	d->dtype = t;
	d->nbdims = nbdims;
	memcpy(d->dims, dims, (size_t)nbdims * sizeof(int));
	memcpy(d->strides, strides, (size_t)nbdims * sizeof(int));
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int requested,
		cudnnDataType_t *t, int *nbdims, int dims[], int strides[])
{
	if (!d || requested < 0 || !t || !nbdims || (requested && (!dims || !strides)))
		return CUDNN_STATUS_BAD_PARAM;
	*t = d->dtype;
	*nbdims = d->nbdims;
	for (int i = 0; i < requested && i < d->nbdims; i++) {
		dims[i] = d->dims[i];
		strides[i] = d->strides[i];
	}
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t,
		int format, int nbdims, const int dims[])
{
	if (!d || !dims)
		return CUDNN_STATUS_BAD_PARAM;
	if (nbdims > SIM_CUDNN_MAX_DIMS)
		return CUDNN_STATUS_NOT_SUPPORTED;
	/* at least three dimensions, "for historical reasons" */
	if (nbdims < 3 || !sim_cudnn_elem_size(t) || format < 0 || format > 2)
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < nbdims; i++)
		if (dims[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	d->dtype = t;
	d->format = format;
	d->nbdims = nbdims;
	memcpy(d->dims, dims, (size_t)nbdims * sizeof(int));
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int requested,
		cudnnDataType_t *t, int *format, int *nbdims, int dims[])
{
	if (!d || requested < 0 || !t || !format || !nbdims || (requested && !dims))
		return CUDNN_STATUS_BAD_PARAM;
	*t = d->dtype;
	*format = d->format;
	*nbdims = d->nbdims;
	for (int i = 0; i < requested && i < d->nbdims; i++)
		dims[i] = d->dims[i];
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n,
		const int pad[], const int stride[], const int dilation[], int mode, cudnnDataType_t t)
{
	if (!d || !pad || !stride || !dilation || n <= 0 || mode < 0 || mode > 1 ||
			!sim_cudnn_elem_size(t))
		return CUDNN_STATUS_BAD_PARAM;
	if (n > SIM_CUDNN_MAX_DIMS - 2)
		return CUDNN_STATUS_NOT_SUPPORTED;
	for (int i = 0; i < n; i++)
		if (pad[i] < 0 || stride[i] <= 0 || dilation[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	d->nbdims = n;
	memcpy(d->pad, pad, (size_t)n * sizeof(int));
	memcpy(d->stride, stride, (size_t)n * sizeof(int));
	memcpy(d->dilation, dilation, (size_t)n * sizeof(int));
	d->mode = mode;
	d->compute_type = t;
	if (!d->groups)
		d->groups = 1;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups)
{
	if (!d || groups < 1)
		return CUDNN_STATUS_BAD_PARAM;
	d->groups = groups;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, int math)
{
	/* DEFAULT_MATH 0, TENSOR_OP_MATH 1, ..._ALLOW_CONVERSION 2, FMA_MATH 3 */
	if (!d || math < 0 || math > 3)
		return CUDNN_STATUS_BAD_PARAM;
	d->math_type = math;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t d, int mode, int nan_opt,
		int n, const int window[], const int pad[], const int stride[])
{
	if (!d || !window || !pad || !stride || mode < 0 || mode > 3 || nan_opt < 0 ||
			nan_opt > 1 || n <= 0)
		return CUDNN_STATUS_BAD_PARAM;
	if (n > SIM_CUDNN_MAX_DIMS - 2)
		return CUDNN_STATUS_NOT_SUPPORTED;
	for (int i = 0; i < n; i++)
		if (window[i] <= 0 || pad[i] < 0 || stride[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	d->mode = mode;
	d->nan_opt = nan_opt;
	d->nbdims = n;
	memcpy(d->window, window, (size_t)n * sizeof(int));
	memcpy(d->pad, pad, (size_t)n * sizeof(int));
	memcpy(d->stride, stride, (size_t)n * sizeof(int));
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, int mode, int nan_opt,
		int wh, int ww, int ph, int pw, int sh, int sw)
{
	return cudnnSetPoolingNdDescriptor(d, mode, nan_opt, 2, (int[]){ wh, ww },
			(int[]){ ph, pw }, (int[]){ sh, sw });
}

cudnnStatus_t cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t d,
		const cudnnTensorDescriptor_t x, int n, int out[])
{
	if (!d || !x || !out || n != x->nbdims || n != d->nbdims + 2)
		return CUDNN_STATUS_BAD_PARAM;
	out[0] = x->dims[0];
	out[1] = x->dims[1];
	for (int i = 0; i < d->nbdims; i++)
		out[i + 2] = sim_cudnn_pooling_out(d, i, x->dims[i + 2]);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t d,
		const cudnnTensorDescriptor_t x, int mode)
{
	/* 1xCx1x1 (spatial modes) or 1xCxHxW (per activation), packed */
	if (!d || !x || x->nbdims < 4 || mode < 0 || mode > 2)
		return CUDNN_STATUS_BAD_PARAM;
	int dims[SIM_CUDNN_MAX_DIMS], strides[SIM_CUDNN_MAX_DIMS];
	dims[0] = 1;
	for (int i = 1; i < x->nbdims; i++)
		dims[i] = i == 1 || mode == 0 ? x->dims[i] : 1;
	strides[x->nbdims - 1] = 1;
	for (int i = x->nbdims - 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
	/* half and bfloat16 data keep float parameters */
	int t = x->dtype == 2 || x->dtype == 9 ? 0 : x->dtype;
	return cudnnSetTensorNdDescriptor(d, t, x->nbdims, dims, strides);
}

int sim_cudnn_pooling_out(const struct cudnnPoolingStruct *p, int axis, int in)
{
	return 1 + (in + 2 * p->pad[axis] - p->window[axis]) / p->stride[axis];
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, int mode,
		int nan_opt, double coef)
{
	/* SIGMOID 0, RELU 1, TANH 2, CLIPPED_RELU 3, ELU 4, IDENTITY 5, SWISH 6 */
	if (!d || mode < 0 || mode > 6 || nan_opt < 0 || nan_opt > 1)
		return CUDNN_STATUS_BAD_PARAM;
	d->mode = mode;
	d->nan_opt = nan_opt;
	d->coef = coef;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *size)
{
	if (!h || !size)
		return CUDNN_STATUS_BAD_PARAM;
	*size = SIM_CUDNN_DROPOUT_STATES_SIZE;
	return CUDNN_STATUS_SUCCESS;
}

/* Set initializes the states (a kernel, which runs nothing here); Restore
 * takes states already initialized. */
static cudnnStatus_t dropout_set(cudnnDropoutDescriptor_t d, cudnnHandle_t h, float dropout,
		void *states, size_t size, unsigned long long seed)
{
	if (!d || !h || dropout < 0.0f || dropout > 1.0f)
		return CUDNN_STATUS_BAD_PARAM;
	if (states && size < SIM_CUDNN_DROPOUT_STATES_SIZE)
		return CUDNN_STATUS_BAD_PARAM;
	*d = (struct cudnnDropoutStruct){ dropout, states, size, seed };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float dropout, void *states, size_t size, unsigned long long seed)
{
	return dropout_set(d, h, dropout, states, size, seed);
}

cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float dropout, void *states, size_t size, unsigned long long seed)
{
	return dropout_set(d, h, dropout, states, size, seed);
}

cudnnStatus_t cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t d, cudnnDataType_t t,
		int norm, int nan_opt)
{
	if (!d || !sim_cudnn_elem_size(t) || norm < 0 || norm > 1 || nan_opt < 0 || nan_opt > 1)
		return CUDNN_STATUS_BAD_PARAM;
	*d = (struct cudnnCTCLossStruct){ t, norm, 0, 0 };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetCTCLossDescriptor_v9(cudnnCTCLossDescriptor_t d, cudnnDataType_t t,
		int norm, int grad, int max_label_length)
{
	if (!d || !sim_cudnn_elem_size(t) || norm < 0 || norm > 1 || grad < 0 || grad > 1 ||
			max_label_length < 0)
		return CUDNN_STATUS_BAD_PARAM;
	*d = (struct cudnnCTCLossStruct){ t, norm, grad, max_label_length };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t d,
		int sampler, cudnnDataType_t t, const int nbdims, const int dims[])
{
	if (!d || !dims || sampler != 0 || nbdims != 4 || !sim_cudnn_elem_size(t))
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < nbdims; i++)
		if (dims[i] <= 0)
			return CUDNN_STATUS_BAD_PARAM;
	d->sampler = sampler;
	d->dtype = t;
	d->nbdims = nbdims;
	memcpy(d->dims, dims, (size_t)nbdims * sizeof(int));
	return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float *dropout, void **states, unsigned long long *seed);
EXPORT cudnnStatus_t cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t x, size_t *size);
EXPORT cudnnStatus_t cudnnDropoutForward(cudnnHandle_t h, const cudnnDropoutDescriptor_t d,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t yd,
		void *y, void *reserve, size_t reserve_size);
EXPORT cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t h, const cudnnDropoutDescriptor_t d,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t dxd,
		void *dx, void *reserve, size_t reserve_size);

cudnnStatus_t cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
		float *dropout, void **states, unsigned long long *seed)
{
	if (!d || !h || !dropout || !states || !seed)
		return CUDNN_STATUS_BAD_PARAM;
	*dropout = d->dropout;
	*states = d->states;
	*seed = d->seed;
	return CUDNN_STATUS_SUCCESS;
}

/* The reserve space keeps the mask: by the rule, x's size rounded to 256. */
cudnnStatus_t cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t x, size_t *size)
{
	if (!x || !x->nbdims || !size)
		return CUDNN_STATUS_BAD_PARAM;
	*size = sim_cudnn_space(sim_cudnn_tensor_bytes(x));
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t dropout_run(cudnnHandle_t h, const struct cudnnDropoutStruct *d,
		const struct cudnnTensorStruct *a, const void *ap, const struct cudnnTensorStruct *b,
		void *bp, void *reserve, size_t reserve_size)
{
	if (!h || !d || !a || !b || !ap || !bp || a->nbdims != b->nbdims || !a->nbdims)
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < a->nbdims; i++)
		if (a->dims[i] != b->dims[i])
			return CUDNN_STATUS_BAD_PARAM;
	if (!reserve || reserve_size < sim_cudnn_space(sim_cudnn_tensor_bytes(a)))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDropoutForward(cudnnHandle_t h, const cudnnDropoutDescriptor_t d,
		const cudnnTensorDescriptor_t xd, const void *x, const cudnnTensorDescriptor_t yd,
		void *y, void *reserve, size_t reserve_size)
{
	return dropout_run(h, d, xd, x, yd, y, reserve, reserve_size);
}

cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t h, const cudnnDropoutDescriptor_t d,
		const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnTensorDescriptor_t dxd,
		void *dx, void *reserve, size_t reserve_size)
{
	return dropout_run(h, d, dyd, dy, dxd, dx, reserve, reserve_size);
}
