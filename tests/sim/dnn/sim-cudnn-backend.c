/* The simulated cuDNN's backend (graph) API (README.md, "cuDNN"): what
 * cudnn-frontend builds for torch's convolutions and attention and for
 * XLA. A descriptor keeps every attribute set on it (type, count, values;
 * a descriptor-valued attribute keeps its own copy of each descriptor, as
 * cuDNN does, so the caller may destroy its own). Finalize checks the
 * attributes each kind needs. What cuDNN computes is answered from the
 * operation graph: one engine (global index 0) for any graph, heuristics
 * that return it in every mode, no knobs, no numerical or behaviour notes,
 * and a workspace by the one rule: the largest tensor any of the graph's
 * operations names, rounded up to 256 bytes. Execute checks that the
 * variant pack gives a pointer for every non-virtual tensor of the graph,
 * and the workspace, and runs nothing. CUDASIM_CUDNN_LOG=1 prints each
 * attribute asked for that is neither set nor computed (to stderr). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-cudnn.h"

enum { /* cudnnBackendDescriptorType_t */
	D_ENGINE = 2, D_ENGINECFG = 3, D_ENGINEHEUR = 4, D_EXECUTION_PLAN = 5,
	D_INTERMEDIATE_INFO = 6, D_KNOB_CHOICE = 7, D_KNOB_INFO = 8, D_LAYOUT_INFO = 9,
	D_OPERATIONGRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17, D_TYPE_LAST = 50,
};
enum { /* cudnnBackendAttributeType_t, those with a size other than 4 */
	T_HANDLE = 0, T_BOOLEAN = 2, T_INT64 = 3, T_DOUBLE = 5, T_VOID_PTR = 6,
	T_BACKEND_DESCRIPTOR = 15, T_INT32 = 23, T_CHAR = 24, T_FRACTION = 26, T_TYPE_LAST = 32,
};
enum { /* cudnnBackendAttributeName_t */
	A_ENGINEHEUR_MODE = 200, A_ENGINEHEUR_OPERATION_GRAPH = 201, A_ENGINEHEUR_RESULTS = 202,
	A_ENGINECFG_ENGINE = 300, A_ENGINECFG_INTERMEDIATE_INFO = 301,
	A_ENGINECFG_KNOB_CHOICES = 302, A_ENGINECFG_WORKSPACE_SIZE = 303,
	A_ENGINECFG_SHARED_MEMORY_USED = 304,
	A_EXECUTION_PLAN_ENGINE_CONFIG = 401,
	A_EXECUTION_PLAN_WORKSPACE_SIZE = 402, A_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS = 403,
	A_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS = 404, A_EXECUTION_PLAN_JSON = 405,
	A_OPERATIONGRAPH_OPS = 801,
	A_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 802,
	A_TENSOR_BYTE_ALIGNMENT = 900, A_TENSOR_DATA_TYPE = 901, A_TENSOR_DIMENSIONS = 902,
	A_TENSOR_STRIDES = 903, A_TENSOR_UNIQUE_ID = 906, A_TENSOR_IS_VIRTUAL = 907,
	A_VARIANT_PACK_UNIQUE_IDS = 1000, A_VARIANT_PACK_DATA_POINTERS = 1001,
	A_VARIANT_PACK_WORKSPACE = 1003,
	A_ENGINE_OPERATION_GRAPH = 1300, A_ENGINE_GLOBAL_INDEX = 1301, A_ENGINE_KNOB_INFO = 1302,
	A_ENGINE_NUMERICAL_NOTE = 1303, A_ENGINE_LAYOUT_INFO = 1304,
	A_ENGINE_BEHAVIOR_NOTE = 1305,
};
#define SIM_ENGINE_COUNT 1

struct attr {
	int name, type;
	int64_t count;
	void *data; /* count values; for descriptors, owned copies */
};

struct bdesc {
	int type;
	bool finalized;
	int n, cap;
	struct attr *attrs;
};
typedef struct bdesc *cudnnBackendDescriptor_t;

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(int type, cudnnBackendDescriptor_t *d);
EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d);
EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t d);
EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d);
EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, int name, int type,
		int64_t count, const void *values);
EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, int name,
		int type, int64_t requested, int64_t *count, void *values);
EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
		cudnnBackendDescriptor_t pack);

static bool logging(void)
{
	static int on = -1;
	if (on < 0) {
		const char *v = getenv("CUDASIM_CUDNN_LOG");
		on = v && *v && strcmp(v, "0");
	}
	return on;
}

static size_t type_size(int type)
{
	switch (type) {
	case T_BOOLEAN: case T_CHAR: return 1;
	case T_HANDLE: case T_INT64: case T_DOUBLE: case T_VOID_PTR: case T_BACKEND_DESCRIPTOR:
		return 8;
	case T_FRACTION: return 16;
	}
	return 4;
}

static void attrs_free(struct bdesc *d);

static void desc_free(struct bdesc *d)
{
	if (!d)
		return;
	attrs_free(d);
	free(d);
}

static void attr_free(struct attr *a)
{
	if (a->type == T_BACKEND_DESCRIPTOR)
		for (int64_t i = 0; i < a->count; i++)
			desc_free(((struct bdesc **)a->data)[i]);
	free(a->data);
}

static void attrs_free(struct bdesc *d)
{
	for (int i = 0; i < d->n; i++)
		attr_free(&d->attrs[i]);
	free(d->attrs);
	d->attrs = NULL;
	d->n = d->cap = 0;
}

static struct bdesc *desc_clone(const struct bdesc *d);

/* Copies count values of a type; descriptors deeply. */
static void *values_copy(int type, int64_t count, const void *values)
{
	size_t bytes = type_size(type) * (size_t)count;
	void *data = malloc(bytes ? bytes : 1);
	if (!data)
		return NULL;
	if (type != T_BACKEND_DESCRIPTOR) {
		memcpy(data, values, bytes);
		return data;
	}
	for (int64_t i = 0; i < count; i++) {
		const struct bdesc *src = ((struct bdesc *const *)values)[i];
		struct bdesc *c = src ? desc_clone(src) : NULL;
		if (src && !c) {
			for (int64_t j = 0; j < i; j++)
				desc_free(((struct bdesc **)data)[j]);
			free(data);
			return NULL;
		}
		((struct bdesc **)data)[i] = c;
	}
	return data;
}

static bool copy_into(struct bdesc *dst, const struct bdesc *src)
{
	struct bdesc tmp = { src->type, src->finalized, 0, src->n, NULL };
	tmp.attrs = calloc((size_t)(src->n ? src->n : 1), sizeof(*tmp.attrs));
	if (!tmp.attrs)
		return false;
	for (int i = 0; i < src->n; i++) {
		const struct attr *a = &src->attrs[i];
		void *data = values_copy(a->type, a->count, a->data);
		if (!data) {
			attrs_free(&tmp);
			return false;
		}
		tmp.attrs[tmp.n++] = (struct attr){ a->name, a->type, a->count, data };
	}
	attrs_free(dst);
	*dst = tmp;
	return true;
}

static struct bdesc *desc_clone(const struct bdesc *d)
{
	struct bdesc *c = calloc(1, sizeof(*c));
	if (c && !copy_into(c, d)) {
		free(c);
		return NULL;
	}
	return c;
}

static struct attr *find(const struct bdesc *d, int name)
{
	for (int i = 0; i < d->n; i++)
		if (d->attrs[i].name == name)
			return &d->attrs[i];
	return NULL;
}

static const struct bdesc *find_desc(const struct bdesc *d, int name)
{
	struct attr *a = find(d, name);
	return a && a->type == T_BACKEND_DESCRIPTOR && a->count == 1 ?
		((struct bdesc **)a->data)[0] : NULL;
}

static bool find_i64(const struct bdesc *d, int name, int64_t *v)
{
	struct attr *a = find(d, name);
	if (!a || a->count < 1)
		return false;
	if (a->type == T_INT64)
		*v = *(int64_t *)a->data;
	else if (a->type == T_BOOLEAN)
		*v = *(bool *)a->data;
	else
		*v = *(int32_t *)a->data;
	return true;
}

/* Stores a value the library computed, as if set. */
static cudnnStatus_t put(struct bdesc *d, int name, int type, int64_t count, const void *values)
{
	void *data = values_copy(type, count, values);
	if (!data)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	struct attr *a = find(d, name);
	if (a) {
		attr_free(a);
	} else {
		if (d->n == d->cap) {
			int cap = d->cap ? 2 * d->cap : 8;
			struct attr *grown = realloc(d->attrs, (size_t)cap * sizeof(*grown));
			if (!grown) {
				free(data);
				return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
			}
			d->attrs = grown;
			d->cap = cap;
		}
		a = &d->attrs[d->n++];
	}
	*a = (struct attr){ name, type, count, data };
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(int type, cudnnBackendDescriptor_t *d)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	if (type < 0 || type > D_TYPE_LAST)
		return CUDNN_STATUS_NOT_SUPPORTED;
	*d = calloc(1, sizeof(**d));
	if (!*d)
		return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
	(*d)->type = type;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
	desc_free(d);
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t d)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	attrs_free(d);
	d->finalized = false;
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t backend_SetAttribute_(cudnnBackendDescriptor_t d, int name, int type,
		int64_t count, const void *values)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	if (d->finalized)
		return CUDNN_STATUS_NOT_INITIALIZED;
	if (type < 0 || type > T_TYPE_LAST || count < 0 || (count && !values))
		return CUDNN_STATUS_BAD_PARAM;
	if (type == T_BACKEND_DESCRIPTOR)
		for (int64_t i = 0; i < count; i++) {
			const struct bdesc *v = ((struct bdesc *const *)values)[i];
			if (!v)
				return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
			if (!v->finalized)
				return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
		}
	return put(d, name, type, count, values);
}

/* Every tensor the operations of a graph name (directly or inside another
 * descriptor they name), passed to fn. */
static void graph_tensors(const struct bdesc *d, int depth,
		void (*fn)(const struct bdesc *t, void *arg), void *arg)
{
	if (!d || depth > 8)
		return;
	if (d->type == D_TENSOR) {
		fn(d, arg);
		return;
	}
	for (int i = 0; i < d->n; i++) {
		const struct attr *a = &d->attrs[i];
		if (a->type == T_BACKEND_DESCRIPTOR)
			for (int64_t j = 0; j < a->count; j++)
				graph_tensors(((struct bdesc **)a->data)[j], depth + 1, fn, arg);
	}
}

static size_t tensor_bytes(const struct bdesc *t)
{
	struct attr *dims = find(t, A_TENSOR_DIMENSIONS), *strides = find(t, A_TENSOR_STRIDES);
	int64_t dtype = 0;
	if (!dims || !strides || dims->count != strides->count || !find_i64(t, A_TENSOR_DATA_TYPE, &dtype))
		return 0;
	size_t last = 0;
	for (int64_t i = 0; i < dims->count; i++) {
		int64_t n = ((int64_t *)dims->data)[i], s = ((int64_t *)strides->data)[i];
		if (n > 0 && s > 0)
			last += (size_t)(n - 1) * (size_t)s;
	}
	return (last + 1) * sim_cudnn_elem_size((cudnnDataType_t)dtype);
}

static void largest(const struct bdesc *t, void *arg)
{
	size_t b = tensor_bytes(t);
	if (b > *(size_t *)arg)
		*(size_t *)arg = b;
}

/* The rule, for the graph an engine, engine config or plan works on. */
static size_t graph_space(const struct bdesc *graph)
{
	size_t max = 0;
	graph_tensors(graph, 0, largest, &max);
	return sim_cudnn_space(max);
}

static const struct bdesc *graph_of(const struct bdesc *d)
{
	switch (d->type) {
	case D_OPERATIONGRAPH: return d;
	case D_ENGINEHEUR: return find_desc(d, A_ENGINEHEUR_OPERATION_GRAPH);
	case D_ENGINE: return find_desc(d, A_ENGINE_OPERATION_GRAPH);
	case D_ENGINECFG: {
		const struct bdesc *e = find_desc(d, A_ENGINECFG_ENGINE);
		return e ? graph_of(e) : NULL;
	}
	case D_EXECUTION_PLAN: {
		const struct bdesc *c = find_desc(d, A_EXECUTION_PLAN_ENGINE_CONFIG);
		return c ? graph_of(c) : NULL;
	}
	}
	return NULL;
}

static bool has(const struct bdesc *d, int name)
{
	return find(d, name) != NULL;
}

/* The engine a heuristic offers, and its configuration (no knobs). */
static struct bdesc *make_cfg(const struct bdesc *graph, int64_t index)
{
	struct bdesc engine = { D_ENGINE, false, 0, 0, NULL }, *cfg = calloc(1, sizeof(*cfg));
	const struct bdesc *g = graph;
	if (!cfg)
		return NULL;
	cfg->type = D_ENGINECFG;
	if (put(&engine, A_ENGINE_OPERATION_GRAPH, T_BACKEND_DESCRIPTOR, 1, &g) ||
			put(&engine, A_ENGINE_GLOBAL_INDEX, T_INT64, 1, &index)) {
		attrs_free(&engine);
		free(cfg);
		return NULL;
	}
	engine.finalized = true;
	const struct bdesc *e = &engine;
	cudnnStatus_t st = put(cfg, A_ENGINECFG_ENGINE, T_BACKEND_DESCRIPTOR, 1, &e);
	attrs_free(&engine);
	if (st) {
		desc_free(cfg);
		return NULL;
	}
	cfg->finalized = true;
	return cfg;
}

static cudnnStatus_t backend_Finalize_(cudnnBackendDescriptor_t d)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	if (d->finalized)
		return CUDNN_STATUS_BAD_PARAM;
	int64_t v;
	switch (d->type) {
	case D_TENSOR: {
		struct attr *dims = find(d, A_TENSOR_DIMENSIONS), *strides = find(d, A_TENSOR_STRIDES);
		if (!has(d, A_TENSOR_DATA_TYPE) || !dims || !strides ||
				!has(d, A_TENSOR_UNIQUE_ID) || !has(d, A_TENSOR_BYTE_ALIGNMENT) ||
				dims->count != strides->count)
			return CUDNN_STATUS_BAD_PARAM;
		break;
	}
	case D_OPERATIONGRAPH: {
		struct attr *ops = find(d, A_OPERATIONGRAPH_OPS);
		if (!ops || ops->count < 1) /* the handle is deprecated: not required */
			return CUDNN_STATUS_BAD_PARAM;
		break;
	}
	case D_ENGINEHEUR:
		if (!find_desc(d, A_ENGINEHEUR_OPERATION_GRAPH) || !has(d, A_ENGINEHEUR_MODE))
			return CUDNN_STATUS_BAD_PARAM;
		break;
	case D_ENGINE:
		if (!find_desc(d, A_ENGINE_OPERATION_GRAPH) || !find_i64(d, A_ENGINE_GLOBAL_INDEX, &v))
			return CUDNN_STATUS_BAD_PARAM;
		if (v < 0 || v >= SIM_ENGINE_COUNT)
			return CUDNN_STATUS_NOT_SUPPORTED;
		break;
	case D_ENGINECFG:
		if (!find_desc(d, A_ENGINECFG_ENGINE))
			return CUDNN_STATUS_BAD_PARAM;
		break;
	case D_EXECUTION_PLAN:
		/* the handle is deprecated in cuDNN 9: not required */
		if (!find_desc(d, A_EXECUTION_PLAN_ENGINE_CONFIG))
			return CUDNN_STATUS_BAD_PARAM;
		break;
	case D_VARIANT_PACK: {
		struct attr *ids = find(d, A_VARIANT_PACK_UNIQUE_IDS);
		struct attr *ptrs = find(d, A_VARIANT_PACK_DATA_POINTERS);
		if (!ids || !ptrs || ids->count != ptrs->count)
			return CUDNN_STATUS_BAD_PARAM;
		break;
	}
	case D_INTERMEDIATE_INFO:
		return CUDNN_STATUS_NOT_SUPPORTED;
	}
	d->finalized = true;
	return CUDNN_STATUS_SUCCESS;
}

/* Hands out count values (at most requested) of an attribute. */
static cudnnStatus_t give(int type, int want_type, int64_t n, const void *data,
		int64_t requested, int64_t *count, void *values)
{
	if (type != want_type && !(type == T_BOOLEAN && want_type == T_BOOLEAN))
		return CUDNN_STATUS_BAD_PARAM;
	if (!values || requested == 0) {
		if (!count)
			return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
		*count = n;
		return CUDNN_STATUS_SUCCESS;
	}
	int64_t k = n < requested ? n : requested;
	if (type == T_BACKEND_DESCRIPTOR) {
		/* into the caller's descriptors, of the same kind */
		for (int64_t i = 0; i < k; i++) {
			struct bdesc *dst = ((struct bdesc **)values)[i];
			const struct bdesc *src = ((struct bdesc *const *)data)[i];
			if (!dst)
				return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
			if (!src)
				continue;
			if (dst->type != src->type)
				return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
			if (!copy_into(dst, src))
				return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
		}
	} else {
		memcpy(values, data, type_size(type) * (size_t)k);
	}
	if (count)
		*count = k;
	return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t backend_GetAttribute_(cudnnBackendDescriptor_t const d, int name,
		int type, int64_t requested, int64_t *count, void *values)
{
	if (!d)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	if (requested < 0)
		return CUDNN_STATUS_BAD_PARAM;
	const struct attr *a = find(d, name);
	if (a && name != A_ENGINEHEUR_RESULTS)
		return give(a->type, type, a->count, a->data, requested, count, values);

	/* What cuDNN computes, once the descriptor is finalized. */
	const struct bdesc *graph = graph_of(d);
	int64_t i64 = 0;
	switch (d->type * 10000 + name) {
	case D_OPERATIONGRAPH * 10000 + A_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
		i64 = SIM_ENGINE_COUNT;
		return d->finalized ? give(T_INT64, type, 1, &i64, requested, count, values)
				    : CUDNN_STATUS_NOT_INITIALIZED;
	case D_ENGINEHEUR * 10000 + A_ENGINEHEUR_RESULTS: {
		if (!d->finalized)
			return CUDNN_STATUS_NOT_INITIALIZED;
		struct bdesc *cfg = make_cfg(graph, 0);
		if (!cfg)
			return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
		cudnnStatus_t st = give(T_BACKEND_DESCRIPTOR, type, SIM_ENGINE_COUNT, &cfg,
				requested, count, values);
		desc_free(cfg);
		return st;
	}
	case D_ENGINECFG * 10000 + A_ENGINECFG_WORKSPACE_SIZE:
	case D_EXECUTION_PLAN * 10000 + A_EXECUTION_PLAN_WORKSPACE_SIZE:
		if (!d->finalized || !graph)
			return CUDNN_STATUS_NOT_INITIALIZED;
		i64 = (int64_t)graph_space(graph);
		return give(T_INT64, type, 1, &i64, requested, count, values);
	case D_ENGINECFG * 10000 + A_ENGINECFG_SHARED_MEMORY_USED: {
		int32_t none = 0; /* no kernel, no shared memory */
		return give(T_INT32, type, 1, &none, requested, count, values);
	}
	case D_ENGINECFG * 10000 + A_ENGINECFG_KNOB_CHOICES:
	case D_ENGINE * 10000 + A_ENGINE_KNOB_INFO:
	case D_EXECUTION_PLAN * 10000 + A_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS:
	case D_EXECUTION_PLAN * 10000 + A_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS:
		return give(type, type, 0, NULL, requested, count, values);
	case D_ENGINE * 10000 + A_ENGINE_NUMERICAL_NOTE:
	case D_ENGINE * 10000 + A_ENGINE_BEHAVIOR_NOTE:
		return give(type, type, 0, NULL, requested, count, values);
	case D_EXECUTION_PLAN * 10000 + A_EXECUTION_PLAN_JSON: {
		static const char json[] = "{\"engine\":0,\"simulated\":true}";
		return give(T_CHAR, type, sizeof(json), json, requested, count, values);
	}
	}
	if (logging())
		fprintf(stderr, "sim-cudnn: get of attribute %d (type %d) of a descriptor of type %d: not set\n",
				name, type, d->type);
	return CUDNN_STATUS_BAD_PARAM;
}

struct uids {
	const struct attr *ids;
	const struct attr *ptrs;
	bool missing;
};

static void check_uid(const struct bdesc *t, void *arg)
{
	struct uids *u = arg;
	int64_t uid = 0, is_virtual = 0;
	find_i64(t, A_TENSOR_IS_VIRTUAL, &is_virtual);
	if (is_virtual || !find_i64(t, A_TENSOR_UNIQUE_ID, &uid))
		return;
	for (int64_t i = 0; i < u->ids->count; i++)
		if (((int64_t *)u->ids->data)[i] == uid) {
			if (!((void **)u->ptrs->data)[i])
				u->missing = true;
			return;
		}
	u->missing = true;
}

static cudnnStatus_t backend_Execute_(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
		cudnnBackendDescriptor_t pack)
{
	if (!h || !plan || !pack)
		return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
	if (plan->type != D_EXECUTION_PLAN || pack->type != D_VARIANT_PACK)
		return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
	if (!plan->finalized || !pack->finalized)
		return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
	const struct bdesc *graph = graph_of(plan);
	struct uids u = { find(pack, A_VARIANT_PACK_UNIQUE_IDS),
		find(pack, A_VARIANT_PACK_DATA_POINTERS), false };
	graph_tensors(graph, 0, check_uid, &u);
	if (u.missing)
		return CUDNN_STATUS_BAD_PARAM;
	const struct attr *ws = find(pack, A_VARIANT_PACK_WORKSPACE);
	if (graph_space(graph) && (!ws || !ws->count || !*(void **)ws->data))
		return CUDNN_STATUS_BAD_PARAM;
	return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
	cudnnStatus_t st = backend_Finalize_(d);
	if (st && logging()) {
		fprintf(stderr, "sim-cudnn: cudnnBackendFinalize(%d, ...) = %d; attributes:", d ? d->type : -1, st);
		for (int i = 0; d && i < d->n; i++)
			fprintf(stderr, " %d", d->attrs[i].name);
		fprintf(stderr, "\n");
	}
	return st;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, int name, int type,
		int64_t count, const void *values)
{
	cudnnStatus_t st = backend_SetAttribute_(d, name, type, count, values);
	if (st && logging())
		fprintf(stderr, "sim-cudnn: cudnnBackendSetAttribute(%d, ...) = %d\n", d ? d->type : -1, st);
	return st;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, int name,
		int type, int64_t requested, int64_t *count, void *values)
{
	cudnnStatus_t st = backend_GetAttribute_(d, name, type, requested, count, values);
	if (st && logging())
		fprintf(stderr, "sim-cudnn: cudnnBackendGetAttribute(%d, %d, %d, %ld) = %d\n", d ? d->type : -1, name, type, (long)requested, st);
	return st;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
		cudnnBackendDescriptor_t pack)
{
	cudnnStatus_t st = backend_Execute_(h, plan, pack);
	if (st && logging())
		fprintf(stderr, "sim-cudnn: cudnnBackendExecute(%d, ...) = %d\n", plan ? plan->type : -1, st);
	return st;
}
