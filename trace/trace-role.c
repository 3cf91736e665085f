/* The rule of trace-role.h: a tensor's role from the names of its
 * stack's frames. */
#include "trace-role.h"

#include <stdlib.h>
#include <string.h>

static bool has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

const char *trace_library_handle(uint32_t depth, trace_frame_at_fn frame_at, void *ctx)
{
	static const struct {
		const char *creator, *library;
	} handles[] = {
		{ "cublasLtCreate", "cuBLASLt" }, { "cublasCreate", "cuBLAS" },
		{ "cudnnCreate", "cuDNN" },	  { "cusolverDnCreate", "cuSOLVER" },
		{ "cusparseCreate", "cuSPARSE" }, { "ncclCommInit", "NCCL" },
	};
	struct trace_frame_view v;

	for (uint32_t i = 0; i < depth; i++) {
		if (!frame_at(ctx, i, &v) || v.python || !v.function)
			continue;
		for (size_t k = 0; k < sizeof(handles) / sizeof(handles[0]); k++)
			if (!strncmp(v.function, handles[k].creator, strlen(handles[k].creator)))
				return handles[k].library;
	}
	return NULL;
}

/* A frame that makes a module's parameters: .cuda() and .to() run
 * Module._apply; torch.nn's modules make theirs in __init__ and
 * reset_parameters. */
static bool makes_parameters(const struct trace_frame_view *v)
{
	return has(v->function, "Module._apply") || has(v->file, "/torch/nn/init.py") ||
	       has(v->file, "/torch/nn/parameter.py") ||
	       (has(v->file, "/torch/nn/modules/") &&
		(has(v->function, ".__init__") || has(v->function, "reset_parameters")));
}

enum trace_role trace_role_of(uint32_t depth, trace_frame_at_fn frame_at, void *ctx)
{
	bool module = false, copy = false, user = false;
	struct trace_frame_view v;

	if (trace_library_handle(depth, frame_at, ctx))
		return TRACE_ROLE_WORKSPACES;
	for (uint32_t i = 0; i < depth; i++) {
		if (!frame_at(ctx, i, &v) || (!v.function && !v.file))
			continue;
		if (!v.python) { /* the names may be mangled: parts of them */
			if (has(v.function, "allocateCUDABlasWorkspace") ||
			    has(v.function, "CublasLtWorkspace") ||
			    has(v.function, "getCUDABlasLtWorkspace"))
				return TRACE_ROLE_WORKSPACES;
			if (has(v.function, "_to_copy"))
				copy = true;
			continue;
		}
		if (has(v.file, "/torch/optim/"))
			return TRACE_ROLE_OPTIMIZER_STATE;
		if ((has(v.file, "/torch/_tensor.py") || has(v.file, "/torch/autograd/")) &&
		    has(v.function, "backward"))
			return TRACE_ROLE_GRADIENTS;
		if (makes_parameters(&v))
			return TRACE_ROLE_PARAMETERS;
		if (has(v.function, "Module._call_impl"))
			module = true;
		if (trace_python_frame_is_user(v.file))
			user = true;
	}
	if (module)
		return TRACE_ROLE_ACTIVATIONS;
	if (copy)
		return TRACE_ROLE_DATA;
	return user ? TRACE_ROLE_TEMPORARIES : TRACE_ROLE_OTHER;
}

/* By role, then by the size asked for. */
static int cmp_block(const void *a, const void *b)
{
	const struct trace_role_block *x = a, *y = b;

	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	if (x->requested != y->requested)
		return x->requested < y->requested ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

void trace_roles_add(struct trace_role_block *b, size_t n, uint64_t out[TRACE_ROLES])
{
	size_t p = 0, g, end;

	qsort(b, n, sizeof(*b), cmp_block);
	while (p < n && b[p].role != TRACE_ROLE_PARAMETERS)
		p++;
	for (g = p; g < n && b[g].role != TRACE_ROLE_GRADIENTS; g++)
		;
	for (end = g; end < n && b[end].role == TRACE_ROLE_GRADIENTS; end++)
		;
	/* the parameters and the gradients, each by the size asked for: a merge */
	for (size_t i = g, k = p; i < end; i++) {
		while (k < n && b[k].role == TRACE_ROLE_PARAMETERS && b[k].requested < b[i].requested)
			k++;
		if (k < n && b[k].role == TRACE_ROLE_PARAMETERS && b[k].requested == b[i].requested)
			k++;
		else
			b[i].role = TRACE_ROLE_TEMPORARIES;
	}
	for (size_t i = 0; i < n; i++)
		out[b[i].role] += b[i].size;
}

enum trace_tf_variable trace_tf_variable_of(uint32_t depth, trace_frame_at_fn frame_at,
					    void *ctx)
{
	bool variable = false, data = false, initialized = false;
	struct trace_frame_view v;

	for (uint32_t i = 0; i < depth; i++) {
		if (!frame_at(ctx, i, &v) || !v.python)
			continue;
		if (variable && (has(v.file, "/keras/src/optimizers/") ||
				 has(v.file, "/tf_keras/src/optimizers/") ||
				 has(v.file, "/keras/optimizers/")))
			return TRACE_TF_OPTIMIZER_SLOT;
		if (has(v.function, "Function._initialize_uninitialized_variables"))
			initialized = true;
		if (initialized && has(v.file, "/keras/src/backend/tensorflow/trainer.py"))
			return TRACE_TF_OPTIMIZER_SLOT;
		if (has(v.function, "ResourceVariable.__init__") ||
		    has(v.function, "Layer.add_weight") ||
		    (has(v.function, "Variable.__init__") && has(v.file, "/keras/")))
			variable = true;
		if (has(v.file, "/tensorflow/python/framework/constant_op.py"))
			data = true;
	}
	return variable || initialized ? TRACE_TF_WEIGHT : data ? TRACE_TF_DATA
								: TRACE_TF_NOT_VARIABLE;
}

const char *trace_tf_title(enum trace_tf_variable v)
{
	switch (v) {
	case TRACE_TF_WEIGHT: return "The model does not fit the arena";
	case TRACE_TF_OPTIMIZER_SLOT:
		return "The model and its optimizer's state do not fit the arena";
	case TRACE_TF_DATA: return "The data copied to the GPU does not fit the arena";
	case TRACE_TF_NOT_VARIABLE: break;
	}
	return "The working set does not fit the arena";
}

#define TF_GROWTH_NO_HELP                                                                      \
	"TF_FORCE_GPU_ALLOW_GROWTH=true does not help: the arena's limit stays the same"

const char *trace_tf_remedy(enum trace_tf_variable v)
{
	switch (v) {
	case TRACE_TF_WEIGHT:
		return "a smaller model (fewer or narrower layers, a smaller Embedding or "
		       "vocabulary): its weights do not change with batch_size, and mixed "
		       "precision keeps them float32; " TF_GROWTH_NO_HELP;
	case TRACE_TF_OPTIMIZER_SLOT:
		return "an optimizer that keeps less per weight (keras.optimizers.SGD without "
		       "momentum keeps none, Adafactor factored ones, Adam two full copies) or a "
		       "smaller model; batch_size does not change them; " TF_GROWTH_NO_HELP;
	case TRACE_TF_DATA:
		return "keep the data on the host and let batches go to the GPU: pass the NumPy "
		       "arrays to model.fit, or tf.data.Dataset.from_tensor_slices(...).batch(...) "
		       "made under tf.device(\"/CPU:0\"); TF_FORCE_GPU_ALLOW_GROWTH=true does not "
		       "help";
	case TRACE_TF_NOT_VARIABLE: break;
	}
	return "a smaller batch_size (model.fit's, or the dataset's batch), smaller inputs (the "
	       "image size, the sequence length) or a smaller model; mixed precision "
	       "(keras.mixed_precision.set_global_policy(\"mixed_float16\")) halves the "
	       "activations; " TF_GROWTH_NO_HELP;
}
