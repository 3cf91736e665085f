/* The simulated cuDNN called directly (README.md, "cuDNN"): the one rule
 * for workspace and reserve sizes, the RNN weight space and its layout,
 * the statuses of bad arguments, and a convolution through the backend
 * (graph) API as cudnn-frontend builds it. Exits 1 at the first failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

static int failures;
#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                            \
		}                                                              \
	} while (0)
#define OK(call) CHECK((call) == CUDNN_STATUS_SUCCESS)

/* The exports used, declared as a program would (cudnn.h is not here). */
size_t cudnnGetVersion(void);
cudnnStatus_t cudnnCreate(cudnnHandle_t *h);
cudnnStatus_t cudnnDestroy(cudnnHandle_t h);
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d);
cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, int t, int n, const int *dims,
		const int *strides);
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d);
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, int t, int format, int n,
		const int *dims);
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d);
cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int n,
		const int *pad, const int *stride, const int *dilation, int mode, int t);
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x,
		cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y,
		int algo, size_t *size);
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
		cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w,
		cudnnConvolutionDescriptor_t c, int algo, void *ws, size_t ws_size, const void *beta,
		cudnnTensorDescriptor_t yd, void *y);
typedef struct {
	int algo;
	cudnnStatus_t status;
	float time;
	size_t memory;
	int determinism, math_type, reserved[3];
} perf_t;
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, cudnnTensorDescriptor_t x,
		cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y,
		int requested, int *returned, perf_t *perf);
cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t h, int mode,
		int ops, void *act, cudnnTensorDescriptor_t x, size_t *size);
cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *size);
typedef struct cudnnRNNStruct *rnn_t;
typedef struct cudnnRNNDataStruct *rnn_data_t;
cudnnStatus_t cudnnCreateRNNDescriptor(rnn_t *d);
cudnnStatus_t cudnnSetRNNDescriptor_v8(rnn_t d, int algo, int cell, int bias, int dir,
		int input_mode, int dtype, int math_prec, int math_type, int32_t input, int32_t hidden,
		int32_t proj, int32_t layers, cudnnDropoutDescriptor_t dropout, uint32_t aux);
cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, rnn_t d, size_t *size);
cudnnStatus_t cudnnGetRNNWeightParams(cudnnHandle_t h, rnn_t d, int32_t layer, size_t size,
		const void *space, int32_t lin, cudnnTensorDescriptor_t m, void **maddr,
		cudnnTensorDescriptor_t b, void **baddr);
cudnnStatus_t cudnnCreateRNNDataDescriptor(rnn_data_t *d);
cudnnStatus_t cudnnSetRNNDataDescriptor(rnn_data_t d, int dtype, int layout, int max_seq,
		int batch, int vec, const int *lengths, void *fill);
cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, rnn_t d, int mode, rnn_data_t x,
		size_t *work, size_t *reserve);
cudnnStatus_t cudnnRNNBackwardWeights_v8(cudnnHandle_t h, rnn_t d, int add, const int32_t *lens,
		rnn_data_t xd, const void *x, cudnnTensorDescriptor_t hd, const void *hx, rnn_data_t yd,
		const void *y, size_t w_size, void *dw, size_t work_size, void *work,
		size_t reserve_size, void *reserve);
typedef struct bdesc *bdesc_t;
cudnnStatus_t cudnnBackendCreateDescriptor(int type, bdesc_t *d);
cudnnStatus_t cudnnBackendDestroyDescriptor(bdesc_t d);
cudnnStatus_t cudnnBackendSetAttribute(bdesc_t d, int name, int type, int64_t n, const void *v);
cudnnStatus_t cudnnBackendGetAttribute(bdesc_t d, int name, int type, int64_t requested,
		int64_t *n, void *v);
cudnnStatus_t cudnnBackendFinalize(bdesc_t d);
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, bdesc_t plan, bdesc_t pack);

enum { FLOAT = 0, HALF = 2 };
enum { T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_FLOAT = 4, T_VOID_PTR = 6,
       T_CONV_MODE = 7, T_HEUR_MODE = 8, T_DESC = 15 };

static size_t rule(size_t largest)
{
	return (largest + 255) / 256 * 256;
}

static cudnnTensorDescriptor_t tensor4(int n, int c, int h, int w)
{
	cudnnTensorDescriptor_t t;
	int dims[4] = { n, c, h, w }, strides[4] = { c * h * w, h * w, w, 1 };
	OK(cudnnCreateTensorDescriptor(&t));
	OK(cudnnSetTensorNdDescriptor(t, FLOAT, 4, dims, strides));
	return t;
}

static void test_legacy(cudnnHandle_t h)
{
	/* x 2x3x10x10, w 5x3x3x3, pad 1: y 2x5x10x10, the largest (4000 bytes) */
	cudnnTensorDescriptor_t x = tensor4(2, 3, 10, 10), y = tensor4(2, 5, 10, 10),
				bad = tensor4(2, 5, 9, 9), t;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionDescriptor_t c;
	int wdims[4] = { 5, 3, 3, 3 }, pad[2] = { 1, 1 }, one[2] = { 1, 1 };
	OK(cudnnCreateFilterDescriptor(&w));
	OK(cudnnSetFilterNdDescriptor(w, FLOAT, 0, 4, wdims));
	OK(cudnnCreateConvolutionDescriptor(&c));
	OK(cudnnSetConvolutionNdDescriptor(c, 2, pad, one, one, 1, FLOAT));
	size_t ws = 0;
	OK(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, 0, &ws));
	CHECK(ws == rule(2 * 5 * 10 * 10 * 4));
	CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, bad, 0, &ws) ==
			CUDNN_STATUS_BAD_PARAM);
	perf_t perf[10];
	int n = 0;
	OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 10, &n, perf));
	CHECK(n == 8);
	for (int i = 0; i < n; i++)
		CHECK(perf[i].algo == i && perf[i].status == 0 && perf[i].memory == rule(4000));
	float alpha = 1, beta = 0;
	char buf[8192];
	OK(cudnnConvolutionForward(h, &alpha, x, buf, w, buf, c, 0, buf, rule(4000), &beta, y, buf));
	CHECK(cudnnConvolutionForward(h, &alpha, x, buf, w, buf, c, 0, buf, rule(4000) - 256, &beta,
			y, buf) == CUDNN_STATUS_BAD_PARAM);
	CHECK(cudnnConvolutionForward(NULL, &alpha, x, buf, w, buf, c, 0, buf, rule(4000), &beta,
			y, buf) == CUDNN_STATUS_BAD_PARAM);
	/* tensors: sizes of zero or less, too many dimensions */
	int dims9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, zero[4] = { 2, 0, 3, 3 };
	OK(cudnnCreateTensorDescriptor(&t));
	CHECK(cudnnSetTensorNdDescriptor(t, FLOAT, 9, dims9, dims9) == CUDNN_STATUS_NOT_SUPPORTED);
	CHECK(cudnnSetTensorNdDescriptor(t, FLOAT, 4, zero, dims9) == CUDNN_STATUS_BAD_PARAM);
	/* batch norm's reserve space and dropout's states */
	OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, 1, 0, NULL, x, &ws));
	CHECK(ws == rule(2 * 3 * 10 * 10 * 4));
	OK(cudnnDropoutGetStatesSize(h, &ws));
	CHECK(ws == SIM_CUDNN_DROPOUT_STATES_SIZE);
}

static void test_rnn(cudnnHandle_t h)
{
	/* an LSTM, 2 layers, bidirectional, input 20, hidden 32, double bias */
	rnn_t r;
	OK(cudnnCreateRNNDescriptor(&r));
	OK(cudnnSetRNNDescriptor_v8(r, 0, 2, 2, 1, 0, FLOAT, FLOAT, 0, 20, 32, 32, 2, NULL, 0));
	size_t size = 0;
	OK(cudnnGetRNNWeightSpaceSize(h, r, &size));
	size_t layer0 = 4 * 32 * (20 + 32) + 2 * 4 * 32, layer1 = 4 * 32 * (64 + 32) + 2 * 4 * 32;
	CHECK(size == 4 * 2 * (layer0 + layer1)); /* as torch counts the LSTM's parameters */
	char *space = malloc(size);
	cudnnTensorDescriptor_t m, b;
	OK(cudnnCreateTensorDescriptor(&m));
	OK(cudnnCreateTensorDescriptor(&b));
	/* every matrix and bias inside the space, none overlapping, all of it used */
	size_t used = 0;
	for (int layer = 0; layer < 4; layer++)
		for (int lin = 0; lin < 8; lin++) {
			void *ma = NULL, *ba = NULL;
			OK(cudnnGetRNNWeightParams(h, r, layer, size, space, lin, m, &ma, b, &ba));
			CHECK(ma && ba && (char *)ma >= space && (char *)ba < space + size);
			CHECK(m->nbdims == 3 && m->dims[1] == 32 &&
					m->dims[2] == (lin >= 4 ? 32 : layer < 2 ? 20 : 64));
			used += (size_t)m->dims[1] * (size_t)m->dims[2] * 4 + (size_t)b->dims[1] * 4;
		}
	CHECK(used == size);
	CHECK(cudnnGetRNNWeightParams(h, r, 4, size, space, 0, m, NULL, b, NULL) ==
			CUDNN_STATUS_BAD_PARAM);
	rnn_data_t x;
	int lens[6] = { 12, 12, 12, 12, 12, 12 };
	OK(cudnnCreateRNNDataDescriptor(&x));
	OK(cudnnSetRNNDataDescriptor(x, FLOAT, 0, 12, 6, 20, lens, NULL));
	size_t work = 0, reserve = 1;
	OK(cudnnGetRNNTempSpaceSizes(h, r, 0, x, &work, &reserve));
	CHECK(work == rule(12 * 6 * 20 * 4) && reserve == 0);
	OK(cudnnGetRNNTempSpaceSizes(h, r, 1, x, &work, &reserve));
	CHECK(reserve == rule(12 * 6 * 20 * 4));
	CHECK(cudnnRNNBackwardWeights_v8(h, r, 1, NULL, x, space, NULL, NULL, x, space, size, space,
			work, space, reserve, space) == CUDNN_STATUS_NOT_SUPPORTED);
	free(space);
}

static bdesc_t backend_tensor(int64_t uid, int64_t n, int64_t c, int64_t hw, int is_virtual)
{
	bdesc_t t;
	int64_t dims[4] = { n, c, hw, hw }, strides[4] = { c * hw * hw, hw * hw, hw, 1 }, align = 16;
	int dtype = HALF;
	_Bool v = is_virtual;
	OK(cudnnBackendCreateDescriptor(17, &t));
	OK(cudnnBackendSetAttribute(t, 901, T_DATA_TYPE, 1, &dtype));
	OK(cudnnBackendSetAttribute(t, 902, T_INT64, 4, dims));
	OK(cudnnBackendSetAttribute(t, 903, T_INT64, 4, strides));
	OK(cudnnBackendSetAttribute(t, 906, T_INT64, 1, &uid));
	OK(cudnnBackendSetAttribute(t, 900, T_INT64, 1, &align));
	OK(cudnnBackendSetAttribute(t, 907, T_BOOLEAN, 1, &v));
	OK(cudnnBackendFinalize(t));
	return t;
}

static void test_backend(cudnnHandle_t h)
{
	/* y = conv(x, w): x 4x8x16x16, w 16x8x3x3, y 4x16x16x16 (half: 32 KiB) */
	bdesc_t x = backend_tensor(1, 4, 8, 16, 0), w = backend_tensor(2, 16, 8, 3, 0),
		y = backend_tensor(3, 4, 16, 16, 0), conv, op, graph, heur, cfg, engine, plan, pack;
	int64_t two = 2, pads[2] = { 1, 1 }, ones[2] = { 1, 1 };
	int mode = 1, comp = FLOAT;
	OK(cudnnBackendCreateDescriptor(1, &conv));
	OK(cudnnBackendSetAttribute(conv, 100, T_DATA_TYPE, 1, &comp));
	OK(cudnnBackendSetAttribute(conv, 101, T_CONV_MODE, 1, &mode));
	OK(cudnnBackendSetAttribute(conv, 102, T_INT64, 2, ones));  /* dilations */
	OK(cudnnBackendSetAttribute(conv, 103, T_INT64, 2, ones));  /* strides */
	OK(cudnnBackendSetAttribute(conv, 104, T_INT64, 2, pads));  /* post paddings */
	OK(cudnnBackendSetAttribute(conv, 105, T_INT64, 2, pads));  /* pre paddings */
	OK(cudnnBackendSetAttribute(conv, 106, T_INT64, 1, &two)); /* spatial dims */
	OK(cudnnBackendFinalize(conv));
	CHECK(cudnnBackendSetAttribute(conv, 101, T_CONV_MODE, 1, &mode) ==
			CUDNN_STATUS_NOT_INITIALIZED);
	OK(cudnnBackendCreateDescriptor(10, &op));
	float alpha = 1, beta = 0;
	OK(cudnnBackendSetAttribute(op, 700, T_FLOAT, 1, &alpha));
	OK(cudnnBackendSetAttribute(op, 701, T_FLOAT, 1, &beta));
	OK(cudnnBackendSetAttribute(op, 702, T_DESC, 1, &conv));
	OK(cudnnBackendSetAttribute(op, 703, T_DESC, 1, &w));
	OK(cudnnBackendSetAttribute(op, 704, T_DESC, 1, &x));
	OK(cudnnBackendSetAttribute(op, 705, T_DESC, 1, &y));
	OK(cudnnBackendFinalize(op));
	/* the descriptors are copied: the caller's may go */
	OK(cudnnBackendDestroyDescriptor(x));
	OK(cudnnBackendDestroyDescriptor(conv));
	OK(cudnnBackendCreateDescriptor(15, &graph));
	CHECK(cudnnBackendFinalize(graph) == CUDNN_STATUS_BAD_PARAM); /* no operations */
	OK(cudnnBackendSetAttribute(graph, 801, T_DESC, 1, &op));
	OK(cudnnBackendFinalize(graph));
	int64_t count = 0;
	OK(cudnnBackendGetAttribute(graph, 802, T_INT64, 1, &count, &count));
	CHECK(count == 1);
	OK(cudnnBackendCreateDescriptor(4, &heur));
	int hmode = 0;
	OK(cudnnBackendSetAttribute(heur, 201, T_DESC, 1, &graph));
	OK(cudnnBackendSetAttribute(heur, 200, T_HEUR_MODE, 1, &hmode));
	OK(cudnnBackendFinalize(heur));
	OK(cudnnBackendGetAttribute(heur, 202, T_DESC, 0, &count, NULL));
	CHECK(count == 1);
	OK(cudnnBackendCreateDescriptor(3, &cfg));
	OK(cudnnBackendGetAttribute(heur, 202, T_DESC, 1, &count, &cfg));
	OK(cudnnBackendCreateDescriptor(2, &engine));
	OK(cudnnBackendGetAttribute(cfg, 300, T_DESC, 1, &count, &engine));
	int64_t index = -1, ws = -1;
	OK(cudnnBackendGetAttribute(engine, 1301, T_INT64, 1, &count, &index));
	CHECK(index == 0);
	OK(cudnnBackendGetAttribute(engine, 1303, 11, 10, &count, NULL)); /* notes: none */
	CHECK(count == 0);
	OK(cudnnBackendCreateDescriptor(5, &plan));
	OK(cudnnBackendSetAttribute(plan, 400, T_HANDLE, 1, &h));
	OK(cudnnBackendSetAttribute(plan, 401, T_DESC, 1, &cfg));
	OK(cudnnBackendFinalize(plan));
	OK(cudnnBackendGetAttribute(plan, 402, T_INT64, 1, &count, &ws));
	CHECK(ws == (int64_t)rule(4 * 16 * 16 * 16 * 2));
	/* the variant pack: every tensor's pointer and the workspace */
	char buf[64];
	int64_t uids[3] = { 1, 2, 3 }, two_uids[2] = { 1, 2 };
	void *ptrs[3] = { buf, buf, buf }, *wsp = buf;
	OK(cudnnBackendCreateDescriptor(16, &pack));
	OK(cudnnBackendSetAttribute(pack, 1000, T_INT64, 2, two_uids));
	OK(cudnnBackendSetAttribute(pack, 1001, T_VOID_PTR, 2, ptrs));
	OK(cudnnBackendSetAttribute(pack, 1003, T_VOID_PTR, 1, &wsp));
	OK(cudnnBackendFinalize(pack));
	CHECK(cudnnBackendExecute(h, plan, pack) == CUDNN_STATUS_BAD_PARAM); /* no y */
	OK(cudnnBackendDestroyDescriptor(pack));
	OK(cudnnBackendCreateDescriptor(16, &pack));
	OK(cudnnBackendSetAttribute(pack, 1000, T_INT64, 3, uids));
	OK(cudnnBackendSetAttribute(pack, 1001, T_VOID_PTR, 3, ptrs));
	OK(cudnnBackendSetAttribute(pack, 1003, T_VOID_PTR, 1, &wsp));
	OK(cudnnBackendFinalize(pack));
	OK(cudnnBackendExecute(h, plan, pack));
	for (bdesc_t *d = (bdesc_t[]){ w, y, op, graph, heur, cfg, engine, plan, pack, NULL }; *d; d++)
		OK(cudnnBackendDestroyDescriptor(*d));
}

int main(void)
{
	cudnnHandle_t h;
	CHECK(cudnnGetVersion() / 10000 == 9);
	OK(cudnnCreate(&h));
	test_legacy(h);
	test_rnn(h);
	test_backend(h);
	OK(cudnnDestroy(h));
	if (failures)
		return 1;
	printf("sim-dnn: ok\n");
	return 0;
}
