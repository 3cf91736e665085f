/* The simulated cuDNN's shared declarations (README.md, "cuDNN"). cudnn.h
 * is not in the toolkit: the types and values the frameworks use are
 * declared here, with cuDNN 9's names and numbers. */
#ifndef SIM_CUDNN_H
#define SIM_CUDNN_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

typedef enum {
	CUDNN_STATUS_SUCCESS = 0,
	CUDNN_STATUS_NOT_INITIALIZED = 1001,
	CUDNN_STATUS_BAD_PARAM = 2000,
	CUDNN_STATUS_BAD_PARAM_NULL_POINTER = 2002,
	CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 2004,
	CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 2005,
	CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT = 2006,
	CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH = 2008,
	CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE = 2010,
	CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE = 2012,
	CUDNN_STATUS_NOT_SUPPORTED = 3000,
	CUDNN_STATUS_INTERNAL_ERROR = 4000,
	CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 4003,
	CUDNN_STATUS_EXECUTION_FAILED = 5000,
} cudnnStatus_t;

typedef struct CUstream_st *cudaStream_t;
struct cudnnContext {
	cudaStream_t stream;
};
typedef struct cudnnContext *cudnnHandle_t;

/* cudnnDataType_t: CUDNN_DATA_FLOAT 0, DOUBLE 1, HALF 2, INT8 3, INT32 4,
 * INT8x4 5, UINT8 6, UINT8x4 7, INT8x32 8, BFLOAT16 9, INT64 10,
 * BOOLEAN 11, FP8_E4M3 12, FP8_E5M2 13, FAST_FLOAT_FOR_FP8 14 ... */
typedef int cudnnDataType_t;
#define SIM_CUDNN_MAX_DIMS 8

struct cudnnTensorStruct {
	cudnnDataType_t dtype;
	int nbdims;
	int dims[SIM_CUDNN_MAX_DIMS];
	int strides[SIM_CUDNN_MAX_DIMS];
};
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;

struct cudnnFilterStruct {
	cudnnDataType_t dtype;
	int format;
	int nbdims;
	int dims[SIM_CUDNN_MAX_DIMS];
};
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;

struct cudnnConvolutionStruct {
	int nbdims; /* spatial */
	int pad[SIM_CUDNN_MAX_DIMS], stride[SIM_CUDNN_MAX_DIMS], dilation[SIM_CUDNN_MAX_DIMS];
	int mode, compute_type, groups, math_type;
};
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;

struct cudnnDropoutStruct {
	float dropout;
	void *states;
	size_t states_size;
	unsigned long long seed;
};
typedef struct cudnnDropoutStruct *cudnnDropoutDescriptor_t;

struct cudnnPoolingStruct {
	int mode, nan_opt, nbdims, window[SIM_CUDNN_MAX_DIMS - 2], pad[SIM_CUDNN_MAX_DIMS - 2],
		stride[SIM_CUDNN_MAX_DIMS - 2];
};
typedef struct cudnnPoolingStruct *cudnnPoolingDescriptor_t;
/* The output size of a pooling along spatial axis `axis` (0: the first
 * after N and C). */
int sim_cudnn_pooling_out(const struct cudnnPoolingStruct *p, int axis, int in);

/* Bytes of a dense element of a data type; 0 for one cuDNN does not have. */
size_t sim_cudnn_elem_size(cudnnDataType_t t);
/* Bytes a tensor spans (its strides), or 0 for a descriptor never set. */
size_t sim_cudnn_tensor_bytes(const struct cudnnTensorStruct *t);
size_t sim_cudnn_filter_bytes(const struct cudnnFilterStruct *f);
/* THE rule (README.md): a workspace or reserve space is the largest
 * tensor the call describes, rounded up to a multiple of 256 bytes. */
size_t sim_cudnn_space(size_t largest_tensor_bytes);
/* The dropout states' size, per handle (not per tensor). */
#define SIM_CUDNN_DROPOUT_STATES_SIZE ((size_t)64 << 10)

#endif
