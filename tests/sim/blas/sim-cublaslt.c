/* The simulated libcublasLt.so.13: handles, the matmul, matrix layout and
 * preference descriptors with the attributes, sizes and defaults NVIDIA's
 * 13.4 library has (read off it: each attribute's size answers a size
 * query, a buffer of any other size is CUBLAS_STATUS_INVALID_VALUE),
 * heuristics that offer one algorithm, and a matmul that checks its
 * arguments and computes nothing. Exports: libcublasLt.map. */
#include <stdlib.h>
#include <string.h>

#include "sim-blas.h"

/* The workspace the one algorithm asks for, when the preference allows
 * that much: a split-K GEMM's worth. */
#define SIM_LT_ALGO_WORKSPACE ((size_t)1 << 20)

struct attr {
	int id;
	unsigned char size;
	int64_t initial;
};

#define ATTR_MAX 48

/* A descriptor: its kind's attribute table and one value per attribute. */
struct desc {
	const struct attr *attrs;
	size_t count;
	unsigned char value[ATTR_MAX][8];
};

static const struct attr matmul_attrs[] = {
	{CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 4, 0}, {CUBLASLT_MATMUL_DESC_SCALE_TYPE, 4, 0},
	{CUBLASLT_MATMUL_DESC_POINTER_MODE, 4, 0}, {CUBLASLT_MATMUL_DESC_TRANSA, 4, 0},
	{CUBLASLT_MATMUL_DESC_TRANSB, 4, 0}, {CUBLASLT_MATMUL_DESC_TRANSC, 4, 0},
	{CUBLASLT_MATMUL_DESC_FILL_MODE, 4, CUBLAS_FILL_MODE_FULL},
	{CUBLASLT_MATMUL_DESC_EPILOGUE, 4, CUBLASLT_EPILOGUE_DEFAULT},
	{CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8, 0}, {CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 8, 0},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 8, 0}, {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 8, 0},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 8, 0},
	{CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, 8, 0},
	{CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, 4, 0}, {16, 4, 0},
	{CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 8, 0}, {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 8, 0},
	{CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 8, 0}, {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 8, 0},
	{CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 8, 0},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 4, -1},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, 8, 0},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, 8, 0},
	{CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1, 0}, {CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4, -1},
	{CUBLASLT_MATMUL_DESC_A_SCALE_MODE, 4, 0}, {CUBLASLT_MATMUL_DESC_B_SCALE_MODE, 4, 0},
	{CUBLASLT_MATMUL_DESC_C_SCALE_MODE, 4, 0}, {CUBLASLT_MATMUL_DESC_D_SCALE_MODE, 4, 0},
	{CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, 4, 0},
	{CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, 8, 0}, {CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, 4, 0},
	{CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, 8, 0}, {39, 8, 0}, {40, 8, 0},
};

static const struct attr layout_attrs[] = {
	{CUBLASLT_MATRIX_LAYOUT_TYPE, 4, 0}, {CUBLASLT_MATRIX_LAYOUT_ORDER, 4, CUBLASLT_ORDER_COL},
	{CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0}, {CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0},
	{CUBLASLT_MATRIX_LAYOUT_LD, 8, 0}, {CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1},
	{CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 8, 0},
	{CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 8, 0}, {CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 4, 0},
	{9, 8, 0}, {10, 8, 0}, {11, 8, 0}, {12, 4, 0}, {13, 4, 0},
};

static const struct attr preference_attrs[] = {
	{CUBLASLT_MATMUL_PREF_SEARCH_MODE, 4, CUBLASLT_SEARCH_BEST_FIT},
	{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 8, 0},
	{CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, 4, CUBLASLT_REDUCTION_SCHEME_MASK},
	{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 4, 256},
	{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 4, 256},
	{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 4, 256},
	{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 4, 256},
	{CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, 4, 0},
	{CUBLASLT_MATMUL_PREF_IMPL_MASK, 8, -1}, {13, 8, 0}, {14, 8, 0}, {15, 8, 0},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct attr *
find(const struct desc *d, int id, size_t *slot)
{
	for (size_t i = 0; i < d->count; i++)
		if (d->attrs[i].id == id) {
			*slot = i;
			return &d->attrs[i];
		}
	return NULL;
}

static struct desc *
desc_new(const struct attr *attrs, size_t count)
{
	struct desc *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->attrs = attrs;
	d->count = count;
	for (size_t i = 0; i < count; i++)
		memcpy(d->value[i], &attrs[i].initial, attrs[i].size); /* little endian */
	return d;
}

/* The value must have exactly the attribute's size. */
static cublasStatus_t
desc_set(struct desc *d, int id, const void *buf, size_t size)
{
	size_t slot;
	const struct attr *a = d ? find(d, id, &slot) : NULL;

	if (!a || !buf || size != a->size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(d->value[slot], buf, size);
	return CUBLAS_STATUS_SUCCESS;
}

/* sizeInBytes 0 and buf NULL: a size query. sizeWritten is set even when
 * the buffer has the wrong size, as the real library does. */
static cublasStatus_t
desc_get(const struct desc *d, int id, void *buf, size_t size, size_t *written)
{
	size_t slot;
	const struct attr *a = d ? find(d, id, &slot) : NULL;

	if (!a)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (size == 0 && !buf) {
		if (!written)
			return CUBLAS_STATUS_INVALID_VALUE;
		*written = a->size;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (written)
		*written = a->size;
	if (!buf || size != a->size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, d->value[slot], size);
	return CUBLAS_STATUS_SUCCESS;
}

static int64_t
desc_int(const struct desc *d, int id)
{
	size_t slot;
	const struct attr *a = find(d, id, &slot);
	int64_t v = 0;

	if (a)
		memcpy(&v, d->value[slot], a->size);
	if (a && a->size == 4)
		v = (int32_t)v;
	return v;
}

/* Handles. */

static bool
handle_ok(cublasLtHandle_t handle)
{
	const struct sim_blas_handle *h = (const struct sim_blas_handle *)handle;

	return h && h->magic == SIM_BLAS_MAGIC;
}

cublasStatus_t
cublasLtCreate(cublasLtHandle_t *handle)
{
	struct sim_blas_handle *h;
	cublasStatus_t status;

	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUBLAS_STATUS_ALLOC_FAILED;
	status = sim_blas_attach(h);
	if (status != CUBLAS_STATUS_SUCCESS) {
		free(h);
		return status;
	}
	h->magic = SIM_BLAS_MAGIC;
	*handle = (cublasLtHandle_t)h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtDestroy(cublasLtHandle_t handle)
{
	struct sim_blas_handle *h = (struct sim_blas_handle *)handle;

	if (!handle_ok(handle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->magic = 0;
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

size_t
cublasLtGetVersion(void)
{
	return SIM_BLAS_VERSION;
}

cublasStatus_t
cublasLtGetProperty(libraryPropertyType type, int *value)
{
	if (!value)
		return CUBLAS_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION: *value = SIM_BLAS_MAJOR; return CUBLAS_STATUS_SUCCESS;
	case MINOR_VERSION: *value = SIM_BLAS_MINOR; return CUBLAS_STATUS_SUCCESS;
	case PATCH_LEVEL: *value = SIM_BLAS_PATCH; return CUBLAS_STATUS_SUCCESS;
	default: return CUBLAS_STATUS_INVALID_VALUE;
	}
}

const char *
cublasLtGetStatusName(cublasStatus_t status)
{
	return sim_blas_status_name(status);
}

const char *
cublasLtGetStatusString(cublasStatus_t status)
{
	return sim_blas_status_string(status);
}

/* Matmul descriptors. */

cublasStatus_t
cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
			 cudaDataType_t scaleType)
{
	struct desc *d;

	if (!matmulDesc)
		return CUBLAS_STATUS_INVALID_VALUE;
	d = desc_new(matmul_attrs, COUNT(matmul_attrs));
	if (!d)
		return CUBLAS_STATUS_ALLOC_FAILED;
	memcpy(d->value[0], &computeType, 4);
	memcpy(d->value[1], &scaleType, 4);
	*matmulDesc = (cublasLtMatmulDesc_t)d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	free(matmulDesc);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
			       const void *buf, size_t sizeInBytes)
{
	return desc_set((struct desc *)matmulDesc, attr, buf, sizeInBytes);
}

cublasStatus_t
cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
			       void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	return desc_get((struct desc *)matmulDesc, attr, buf, sizeInBytes, sizeWritten);
}

/* Matrix layouts: the real library accepts any type, size and leading
 * dimension here and judges them at the matmul. */

cublasStatus_t
cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
			   uint64_t cols, int64_t ld)
{
	struct desc *d;

	if (!matLayout)
		return CUBLAS_STATUS_INVALID_VALUE;
	d = desc_new(layout_attrs, COUNT(layout_attrs));
	if (!d)
		return CUBLAS_STATUS_ALLOC_FAILED;
	memcpy(d->value[0], &type, 4);
	memcpy(d->value[2], &rows, 8);
	memcpy(d->value[3], &cols, 8);
	memcpy(d->value[4], &ld, 8);
	*matLayout = (cublasLtMatrixLayout_t)d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatrixLayoutDestroy(const cublasLtMatrixLayout_t matLayout)
{
	free(matLayout);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
				 const void *buf, size_t sizeInBytes)
{
	return desc_set((struct desc *)matLayout, attr, buf, sizeInBytes);
}

cublasStatus_t
cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr,
				 void *buf, size_t sizeInBytes, size_t *sizeWritten)
{
	return desc_get((struct desc *)matLayout, attr, buf, sizeInBytes, sizeWritten);
}

/* Preferences. */

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	struct desc *d;

	if (!pref)
		return CUBLAS_STATUS_INVALID_VALUE;
	d = desc_new(preference_attrs, COUNT(preference_attrs));
	if (!d)
		return CUBLAS_STATUS_ALLOC_FAILED;
	*pref = (cublasLtMatmulPreference_t)d;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	free(pref);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
				     cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
				     size_t sizeInBytes)
{
	return desc_set((struct desc *)pref, attr, buf, sizeInBytes);
}

cublasStatus_t
cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
				     cublasLtMatmulPreferenceAttributes_t attr, void *buf,
				     size_t sizeInBytes, size_t *sizeWritten)
{
	return desc_get((struct desc *)pref, attr, buf, sizeInBytes, sizeWritten);
}

/* Algorithms: the opaque 64 bytes of cublasLtMatmulAlgo_t hold a mark of
 * AlgoInit or the heuristics and the configuration attributes (seven of
 * 4 bytes, then three of 2, as the real library sizes them). Configuring
 * an algorithm that neither made is CUBLAS_STATUS_INVALID_VALUE, as there. */

#define SIM_ALGO_MAGIC 0x414c474fu /* "ALGO" */

struct sim_algo {
	uint32_t magic;
	uint32_t config32[7]; /* CUBLASLT_ALGO_CONFIG_ID ... _STAGES_ID */
	uint16_t config16[3]; /* _INNER_SHAPE_ID, _CLUSTER_SHAPE_ID, 10 */
};

_Static_assert(sizeof(struct sim_algo) <= sizeof(cublasLtMatmulAlgo_t), "algo fits");

static void *
algo_field(struct sim_algo *a, int attr, size_t *size)
{
	if (attr >= 0 && attr < 7) {
		*size = 4;
		return &a->config32[attr];
	}
	if (attr == 7 || attr == 8 || attr == 10) {
		*size = 2;
		return &a->config16[attr == 10 ? 2 : attr - 7];
	}
	return NULL;
}

static void
algo_init(cublasLtMatmulAlgo_t *algo, int id)
{
	struct sim_algo *a = (struct sim_algo *)algo;

	memset(algo, 0, sizeof(*algo));
	a->magic = SIM_ALGO_MAGIC;
	a->config32[CUBLASLT_ALGO_CONFIG_ID] = (uint32_t)id;
}

cublasStatus_t
cublasLtMatmulAlgoInit(cublasLtHandle_t lightHandle, cublasComputeType_t computeType,
		       cudaDataType_t scaleType, cudaDataType_t Atype, cudaDataType_t Btype,
		       cudaDataType_t Ctype, cudaDataType_t Dtype, int algoId,
		       cublasLtMatmulAlgo_t *algo)
{
	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!algo || algoId < 0)
		return CUBLAS_STATUS_INVALID_VALUE;
	algo_init(algo, algoId);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr,
				     const void *buf, size_t sizeInBytes)
{
	struct sim_algo *a = (struct sim_algo *)algo;
	size_t size = 0;
	void *field;

	if (!a || a->magic != SIM_ALGO_MAGIC || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	field = algo_field(a, attr, &size);
	if (!field || sizeInBytes != size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(field, buf, size);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
				     cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
				     size_t sizeInBytes, size_t *sizeWritten)
{
	struct sim_algo *a = (struct sim_algo *)(uintptr_t)algo;
	size_t size = 0;
	void *field = a ? algo_field(a, attr, &size) : NULL;

	if (!field)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (sizeInBytes == 0 && !buf) {
		if (!sizeWritten)
			return CUBLAS_STATUS_INVALID_VALUE;
		*sizeWritten = size;
		return CUBLAS_STATUS_SUCCESS;
	}
	if (sizeWritten)
		*sizeWritten = size;
	if (!buf || sizeInBytes != size)
		return CUBLAS_STATUS_INVALID_VALUE;
	memcpy(buf, field, size);
	return CUBLAS_STATUS_SUCCESS;
}

/* The shapes must agree: op(A) is m x k, op(B) k x n, C and D m x n, and
 * the operations must be ones cuBLAS knows. Else INVALID_VALUE. */
static cublasStatus_t
check_matmul(cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
	     cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc)
{
	const struct desc *op = (const struct desc *)operationDesc;
	const struct desc *a = (const struct desc *)Adesc, *b = (const struct desc *)Bdesc;
	const struct desc *c = (const struct desc *)Cdesc, *d = (const struct desc *)Ddesc;
	int64_t ta, tb, m, n, k, kb;

	if (!op || !a || !b || !c || !d)
		return CUBLAS_STATUS_INVALID_VALUE;
	ta = desc_int(op, CUBLASLT_MATMUL_DESC_TRANSA);
	tb = desc_int(op, CUBLASLT_MATMUL_DESC_TRANSB);
	if (ta < CUBLAS_OP_N || ta > CUBLAS_OP_C || tb < CUBLAS_OP_N || tb > CUBLAS_OP_C)
		return CUBLAS_STATUS_INVALID_VALUE;
	m = desc_int(a, ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_ROWS : CUBLASLT_MATRIX_LAYOUT_COLS);
	k = desc_int(a, ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS);
	kb = desc_int(b, tb == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_ROWS : CUBLASLT_MATRIX_LAYOUT_COLS);
	n = desc_int(b, tb == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS);
	if (k != kb || desc_int(c, CUBLASLT_MATRIX_LAYOUT_ROWS) != m ||
	    desc_int(c, CUBLASLT_MATRIX_LAYOUT_COLS) != n ||
	    desc_int(d, CUBLASLT_MATRIX_LAYOUT_ROWS) != m ||
	    desc_int(d, CUBLASLT_MATRIX_LAYOUT_COLS) != n)
		return CUBLAS_STATUS_INVALID_VALUE;
	return CUBLAS_STATUS_SUCCESS;
}

static void
one_result(cublasLtMatmulHeuristicResult_t *r, size_t max_workspace)
{
	memset(r, 0, sizeof(*r));
	algo_init(&r->algo, 0);
	r->workspaceSize = max_workspace < SIM_LT_ALGO_WORKSPACE ? max_workspace : SIM_LT_ALGO_WORKSPACE;
	r->state = CUBLAS_STATUS_SUCCESS;
	r->wavesCount = 1.0f;
}

/* One algorithm, whose workspace is within the preference's maximum. */
cublasStatus_t
cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
			       cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
			       cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
			       cublasLtMatmulPreference_t preference, int requestedAlgoCount,
			       cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
			       int *returnAlgoCount)
{
	cublasStatus_t status;

	if (!preference || requestedAlgoCount < 1 || !heuristicResultsArray || !returnAlgoCount)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	status = check_matmul(operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
	if (status != CUBLAS_STATUS_SUCCESS)
		return status;
	one_result(&heuristicResultsArray[0],
		   (size_t)desc_int((const struct desc *)preference,
				    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES));
	*returnAlgoCount = 1;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulAlgoCheck(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
			cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
			cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
			const cublasLtMatmulAlgo_t *algo, cublasLtMatmulHeuristicResult_t *result)
{
	const struct sim_algo *a = (const struct sim_algo *)algo;
	cublasStatus_t status;

	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!a || a->magic != SIM_ALGO_MAGIC || !result)
		return CUBLAS_STATUS_INVALID_VALUE;
	status = check_matmul(operationDesc, Adesc, Bdesc, Cdesc, Ddesc);
	if (status != CUBLAS_STATUS_SUCCESS)
		return status;
	one_result(result, SIM_LT_ALGO_WORKSPACE);
	result->algo = *algo;
	return CUBLAS_STATUS_SUCCESS;
}

/* Checks its arguments; the kernel runs nothing, so C, D and the
 * workspace are not touched. */
cublasStatus_t
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
	       const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
	       const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
	       cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
	       size_t workspaceSizeInBytes, cudaStream_t stream)
{
	const struct sim_algo *a = (const struct sim_algo *)algo;

	if (!handle_ok(lightHandle))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!alpha || !beta || (a && a->magic != SIM_ALGO_MAGIC) ||
	    (!workspace && workspaceSizeInBytes))
		return CUBLAS_STATUS_INVALID_VALUE;
	return check_matmul(computeDesc, Adesc, Bdesc, Cdesc, Ddesc);
}
