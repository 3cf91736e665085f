/* The simulated cuDNN's RNN v8 API (README.md, "cuDNN"): RNN and RNN data
 * descriptors, the weight space and its layout (cudnnGetRNNWeightParams),
 * temp and reserve space sizes, forward, backward data and weights. The
 * weight space has the size cuDNN documents (per layer and direction: the
 * gates' input and recurrent matrices, the projection, the biases); the
 * workspace and the reserve space follow the one rule (the largest tensor
 * described: x), with no reserve space for inference. No kernel runs. */
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

enum { RNN_RELU, RNN_TANH, LSTM, GRU };
enum { NO_BIAS, SINGLE_INP_BIAS, DOUBLE_BIAS, SINGLE_REC_BIAS };
enum { FWD_INFERENCE, FWD_TRAINING };

struct cudnnRNNStruct {
	int set;
	int algo, cell, bias, dir, input_mode;
	cudnnDataType_t dtype, math_prec;
	int math_type, input, hidden, proj, layers;
	cudnnDropoutDescriptor_t dropout;
	unsigned aux;
};
typedef struct cudnnRNNStruct *cudnnRNNDescriptor_t;

struct cudnnRNNDataStruct {
	int set;
	cudnnDataType_t dtype;
	int layout, max_seq, batch, vec;
	int *seq_lengths;
};
typedef struct cudnnRNNDataStruct *cudnnRNNDataDescriptor_t;

EXPORT cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d);
EXPORT cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t d);
EXPORT cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int algo, int cell,
		int bias, int dir, int input_mode, cudnnDataType_t dtype, cudnnDataType_t math_prec,
		int math_type, int32_t input, int32_t hidden, int32_t proj, int32_t layers,
		cudnnDropoutDescriptor_t dropout, uint32_t aux);
EXPORT cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d);
EXPORT cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t d);
EXPORT cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t dtype,
		int layout, int max_seq, int batch, int vec, const int seq_lengths[], void *fill);
EXPORT cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		size_t *size);
EXPORT cudnnStatus_t cudnnGetRNNWeightParams(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int32_t layer, size_t space_size, const void *space, int32_t lin,
		cudnnTensorDescriptor_t mdesc, void **maddr, cudnnTensorDescriptor_t bdesc,
		void **baddr);
EXPORT cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int mode, cudnnRNNDataDescriptor_t x, size_t *work, size_t *reserve);
EXPORT cudnnStatus_t cudnnRNNForward(cudnnHandle_t h, cudnnRNNDescriptor_t d, int mode,
		const int32_t seq_lengths[], cudnnRNNDataDescriptor_t xd, const void *x,
		cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd, const void *hx,
		void *hy, cudnnTensorDescriptor_t cd, const void *cx, void *cy, size_t w_size,
		const void *w, size_t work_size, void *work, size_t reserve_size, void *reserve);
EXPORT cudnnStatus_t cudnnRNNBackwardData_v8(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		const int32_t seq_lengths[], cudnnRNNDataDescriptor_t yd, const void *y,
		const void *dy, cudnnRNNDataDescriptor_t xd, void *dx, cudnnTensorDescriptor_t hd,
		const void *hx, const void *dhy, void *dhx, cudnnTensorDescriptor_t cd,
		const void *cx, const void *dcy, void *dcx, size_t w_size, const void *w,
		size_t work_size, void *work, size_t reserve_size, void *reserve);
EXPORT cudnnStatus_t cudnnRNNBackwardWeights_v8(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int add_grad, const int32_t seq_lengths[], cudnnRNNDataDescriptor_t xd,
		const void *x, cudnnTensorDescriptor_t hd, const void *hx, cudnnRNNDataDescriptor_t yd,
		const void *y, size_t w_size, void *dw, size_t work_size, void *work,
		size_t reserve_size, void *reserve);

cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM;
	*d = calloc(1, sizeof(**d));
	return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t d)
{
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int algo, int cell,
		int bias, int dir, int input_mode, cudnnDataType_t dtype, cudnnDataType_t math_prec,
		int math_type, int32_t input, int32_t hidden, int32_t proj, int32_t layers,
		cudnnDropoutDescriptor_t dropout, uint32_t aux)
{
	if (!d || algo < 0 || algo > 3 || cell < 0 || cell > 3 || bias < 0 || bias > 3 ||
			dir < 0 || dir > 1 || input_mode < 0 || input_mode > 1 ||
			!sim_cudnn_elem_size(dtype) || !sim_cudnn_elem_size(math_prec) ||
			input <= 0 || hidden <= 0 || proj <= 0 || proj > hidden || layers <= 0 ||
			(proj < hidden && cell != LSTM) || (input_mode == 1 && input != hidden))
		return CUDNN_STATUS_BAD_PARAM;
	*d = (struct cudnnRNNStruct){ 1, algo, cell, bias, dir, input_mode, dtype, math_prec,
		math_type, input, hidden, proj, layers, dropout, aux };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM;
	*d = calloc(1, sizeof(**d));
	return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t d)
{
	if (d)
		free(d->seq_lengths);
	free(d);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t dtype,
		int layout, int max_seq, int batch, int vec, const int seq_lengths[], void *fill)
{
	(void)fill;
	if (!d || !seq_lengths || layout < 0 || layout > 2 || max_seq <= 0 || batch <= 0 ||
			vec <= 0 || !sim_cudnn_elem_size(dtype))
		return CUDNN_STATUS_BAD_PARAM;
	for (int i = 0; i < batch; i++)
		if (seq_lengths[i] < 0 || seq_lengths[i] > max_seq)
			return CUDNN_STATUS_BAD_PARAM;
	int *copy = malloc((size_t)batch * sizeof(int));
	if (!copy)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	memcpy(copy, seq_lengths, (size_t)batch * sizeof(int));
	free(d->seq_lengths);
	*d = (struct cudnnRNNDataStruct){ 1, dtype, layout, max_seq, batch, vec, copy };
	return CUDNN_STATUS_SUCCESS;
}

static int gates(const struct cudnnRNNStruct *d)
{
	return d->cell == LSTM ? 4 : d->cell == GRU ? 3 : 1;
}

static int dirs(const struct cudnnRNNStruct *d)
{
	return d->dir + 1;
}

/* A pseudo-layer's input width: the input, or the layer below's output. */
static size_t layer_input(const struct cudnnRNNStruct *d, int pseudo)
{
	return pseudo < dirs(d) ? (size_t)d->input : (size_t)d->proj * (size_t)dirs(d);
}

/* Elements of one pseudo-layer, in the order of the space: the gates'
 * input matrices (none for SKIP_INPUT), their recurrent matrices, the
 * projection (LSTM with proj < hidden), the input biases, the recurrent
 * biases. */
struct rnn_layout {
	size_t w, r, p, bw, br;
};

static struct rnn_layout layout(const struct cudnnRNNStruct *d, int pseudo)
{
	size_t g = (size_t)gates(d), hid = (size_t)d->hidden;
	struct rnn_layout l;
	l.w = d->input_mode == 1 ? 0 : g * hid * layer_input(d, pseudo);
	l.r = g * hid * (size_t)d->proj;
	l.p = d->proj < d->hidden ? (size_t)d->proj * hid : 0;
	l.bw = d->bias == DOUBLE_BIAS || d->bias == SINGLE_INP_BIAS ? g * hid : 0;
	l.br = d->bias == DOUBLE_BIAS || d->bias == SINGLE_REC_BIAS ? g * hid : 0;
	return l;
}

static size_t weight_space(const struct cudnnRNNStruct *d)
{
	size_t n = 0;
	for (int i = 0; i < d->layers * dirs(d); i++) {
		struct rnn_layout l = layout(d, i);
		n += l.w + l.r + l.p + l.bw + l.br;
	}
	return n * sim_cudnn_elem_size(d->dtype);
}

cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, cudnnRNNDescriptor_t d, size_t *size)
{
	if (!h || !d || !d->set || !size)
		return CUDNN_STATUS_BAD_PARAM;
	*size = weight_space(d);
	return CUDNN_STATUS_SUCCESS;
}

/* A matrix rows x cols, or a bias rows x 1, as cuDNN describes them: 3-D. */
static void describe(cudnnTensorDescriptor_t t, cudnnDataType_t dtype, int rows, int cols)
{
	if (!t)
		return;
	*t = (struct cudnnTensorStruct){ dtype, 3, { 1, rows, cols }, { rows * cols, cols, 1 } };
}

cudnnStatus_t cudnnGetRNNWeightParams(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int32_t layer, size_t space_size, const void *space, int32_t lin,
		cudnnTensorDescriptor_t mdesc, void **maddr, cudnnTensorDescriptor_t bdesc,
		void **baddr)
{
	if (!h || !d || !d->set || layer < 0 || layer >= d->layers * dirs(d) || lin < 0 ||
			space_size < weight_space(d))
		return CUDNN_STATUS_BAD_PARAM;
	int g = gates(d), nlin = 2 * g + (d->proj < d->hidden);
	if (lin >= nlin)
		return CUDNN_STATUS_BAD_PARAM;
	size_t es = sim_cudnn_elem_size(d->dtype), start = 0;
	for (int i = 0; i < layer; i++) {
		struct rnn_layout l = layout(d, i);
		start += l.w + l.r + l.p + l.bw + l.br;
	}
	struct rnn_layout l = layout(d, layer);
	const char *base = (const char *)space + start * es;
	size_t hid = (size_t)d->hidden, m_off = 0, b_off = 0;
	int rows = d->hidden, cols = 0, has_m = 1, has_b = 0;
	if (lin < g) {
		cols = (int)layer_input(d, layer);
		has_m = l.w != 0;
		m_off = (size_t)lin * hid * (size_t)cols;
		has_b = l.bw != 0;
		b_off = l.w + l.r + l.p + (size_t)lin * hid;
	} else if (lin < 2 * g) {
		cols = d->proj;
		m_off = l.w + (size_t)(lin - g) * hid * (size_t)cols;
		has_b = l.br != 0;
		b_off = l.w + l.r + l.p + l.bw + (size_t)(lin - g) * hid;
	} else { /* the projection: proj x hidden, no bias */
		rows = d->proj;
		cols = d->hidden;
		m_off = l.w + l.r;
	}
	if (maddr) {
		*maddr = has_m && space ? (void *)(base + m_off * es) : NULL;
		if (has_m)
			describe(mdesc, d->dtype, rows, cols);
	}
	if (baddr) {
		*baddr = has_b && space ? (void *)(base + b_off * es) : NULL;
		if (has_b)
			describe(bdesc, d->dtype, rows, 1);
	}
	return CUDNN_STATUS_SUCCESS;
}

static size_t data_bytes(const struct cudnnRNNDataStruct *x)
{
	return (size_t)x->max_seq * (size_t)x->batch * (size_t)x->vec * sim_cudnn_elem_size(x->dtype);
}

cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int mode, cudnnRNNDataDescriptor_t x, size_t *work, size_t *reserve)
{
	if (!h || !d || !d->set || !x || !x->set || mode < 0 || mode > 1 || x->vec != d->input)
		return CUDNN_STATUS_BAD_PARAM;
	if (work)
		*work = sim_cudnn_space(data_bytes(x));
	if (reserve)
		*reserve = mode == FWD_TRAINING ? sim_cudnn_space(data_bytes(x)) : 0;
	return CUDNN_STATUS_SUCCESS;
}

/* h and c: (layers x directions) x batch x (proj for h, hidden for c),
 * with any further dimensions 1. */
static int state_ok(const struct cudnnRNNStruct *d, const struct cudnnTensorStruct *t,
		int batch, int width)
{
	if (!t || t->nbdims < 3 || t->dims[0] != d->layers * dirs(d) || t->dims[1] != batch ||
			t->dims[2] != width)
		return 0;
	for (int i = 3; i < t->nbdims; i++)
		if (t->dims[i] != 1)
			return 0;
	return 1;
}

static cudnnStatus_t rnn_check(cudnnHandle_t h, const struct cudnnRNNStruct *d, int mode,
		const int32_t seq_lengths[], const struct cudnnRNNDataStruct *x,
		const struct cudnnRNNDataStruct *y, const struct cudnnTensorStruct *hd,
		const struct cudnnTensorStruct *cd, int check_c, size_t w_size, const void *w, size_t work_size,
		const void *work, size_t reserve_size, const void *reserve)
{
	/* devSeqLengths (device memory) may be NULL: cuDNN 9 takes the lengths
	 * from the data descriptors, and torch passes NULL */
	(void)seq_lengths;
	if (!h || !d || !d->set || !x || !x->set || !y || !y->set || !w || mode < 0 || mode > 1)
		return CUDNN_STATUS_BAD_PARAM;
	if (x->vec != d->input || y->vec != d->proj * dirs(d) || x->batch != y->batch ||
			x->max_seq != y->max_seq || x->layout != y->layout ||
			!state_ok(d, hd, x->batch, d->proj) ||
			(check_c && d->cell == LSTM && !state_ok(d, cd, x->batch, d->hidden)))
		return CUDNN_STATUS_BAD_PARAM;
	if (w_size != weight_space(d))
		return CUDNN_STATUS_BAD_PARAM;
	size_t need = sim_cudnn_space(data_bytes(x));
	if (work_size < need || (need && !work))
		return CUDNN_STATUS_BAD_PARAM;
	if (mode == FWD_TRAINING && (reserve_size < need || !reserve))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnRNNForward(cudnnHandle_t h, cudnnRNNDescriptor_t d, int mode,
		const int32_t seq_lengths[], cudnnRNNDataDescriptor_t xd, const void *x,
		cudnnRNNDataDescriptor_t yd, void *y, cudnnTensorDescriptor_t hd, const void *hx,
		void *hy, cudnnTensorDescriptor_t cd, const void *cx, void *cy, size_t w_size,
		const void *w, size_t work_size, void *work, size_t reserve_size, void *reserve)
{
	(void)hx;
	(void)hy;
	(void)cx;
	(void)cy;
	if (!x || !y)
		return CUDNN_STATUS_BAD_PARAM;
	return rnn_check(h, d, mode, seq_lengths, xd, yd, hd, cd, 1, w_size, w, work_size,
			work, reserve_size, reserve);
}

cudnnStatus_t cudnnRNNBackwardData_v8(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		const int32_t seq_lengths[], cudnnRNNDataDescriptor_t yd, const void *y,
		const void *dy, cudnnRNNDataDescriptor_t xd, void *dx, cudnnTensorDescriptor_t hd,
		const void *hx, const void *dhy, void *dhx, cudnnTensorDescriptor_t cd,
		const void *cx, const void *dcy, void *dcx, size_t w_size, const void *w,
		size_t work_size, void *work, size_t reserve_size, void *reserve)
{
	(void)hx;
	(void)dhy;
	(void)dhx;
	(void)cx;
	(void)dcy;
	(void)dcx;
	if (!y || !dy || !dx)
		return CUDNN_STATUS_BAD_PARAM;
	return rnn_check(h, d, FWD_TRAINING, seq_lengths, xd, yd, hd, cd, 1, w_size, w, work_size,
			work, reserve_size, reserve);
}

cudnnStatus_t cudnnRNNBackwardWeights_v8(cudnnHandle_t h, cudnnRNNDescriptor_t d,
		int add_grad, const int32_t seq_lengths[], cudnnRNNDataDescriptor_t xd,
		const void *x, cudnnTensorDescriptor_t hd, const void *hx, cudnnRNNDataDescriptor_t yd,
		const void *y, size_t w_size, void *dw, size_t work_size, void *work,
		size_t reserve_size, void *reserve)
{
	(void)hx;
	/* CUDNN_WGRAD_MODE_ADD (0) only: SET is documented as not supported */
	if (add_grad == 1)
		return CUDNN_STATUS_NOT_SUPPORTED;
	if (add_grad != 0 || !x || !y)
		return CUDNN_STATUS_BAD_PARAM;
	return rnn_check(h, d, FWD_TRAINING, seq_lengths, xd, yd, hd, NULL, 0, w_size, dw,
			work_size, work, reserve_size, reserve);
}

EXPORT cudnnStatus_t cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int *algo, int *cell,
		int *bias, int *dir, int *input_mode, cudnnDataType_t *dtype,
		cudnnDataType_t *math_prec, int *math_type, int32_t *input, int32_t *hidden,
		int32_t *proj, int32_t *layers, cudnnDropoutDescriptor_t *dropout, uint32_t *aux);

/* Each output may be NULL (not asked for). */
cudnnStatus_t cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int *algo, int *cell,
		int *bias, int *dir, int *input_mode, cudnnDataType_t *dtype,
		cudnnDataType_t *math_prec, int *math_type, int32_t *input, int32_t *hidden,
		int32_t *proj, int32_t *layers, cudnnDropoutDescriptor_t *dropout, uint32_t *aux)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM;
#define OUT(p, v) do { if (p) *(p) = (v); } while (0)
	OUT(algo, d->algo);
	OUT(cell, d->cell);
	OUT(bias, d->bias);
	OUT(dir, d->dir);
	OUT(input_mode, d->input_mode);
	OUT(dtype, d->dtype);
	OUT(math_prec, d->math_prec);
	OUT(math_type, d->math_type);
	OUT(input, d->input);
	OUT(hidden, d->hidden);
	OUT(proj, d->proj);
	OUT(layers, d->layers);
	OUT(dropout, d->dropout);
	OUT(aux, d->aux);
#undef OUT
	return CUDNN_STATUS_SUCCESS;
}
