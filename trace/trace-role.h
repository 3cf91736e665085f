/* What a tensor is for, from the stack that made it (docs/report.md,
 * "Memory by role"), and what the roles say of an OOM: shared by the
 * reporter's roles and cause (report/render/render-common.c, diagnose.c)
 * and the capture library's answer on stderr
 * (interpose/writer/live-answer.c), so both split memory alike. Pure
 * functions of the frames' names (trace-user-frame.h's view); no
 * allocation but the caller's arrays. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-user-frame.h"

/* The roles, in the JSON's and the text's order. TRACE_ROLE_CACHE is no
 * tensor's: a framework cache's free bytes. */
enum trace_role {
	TRACE_ROLE_PARAMETERS,
	TRACE_ROLE_GRADIENTS,
	TRACE_ROLE_OPTIMIZER_STATE,
	TRACE_ROLE_ACTIVATIONS,
	TRACE_ROLE_TEMPORARIES,
	TRACE_ROLE_WORKSPACES,
	TRACE_ROLE_CACHE,
	TRACE_ROLE_DATA,
	TRACE_ROLE_OTHER,
	TRACE_ROLES
};

/* The library whose handle's creation is on the stack (cublasCreate,
 * cublasLtCreate, cudnnCreate, cusolverDnCreate, cusparseCreate,
 * ncclCommInit*): "cuBLAS", ...; NULL when none. */
const char *trace_library_handle(uint32_t depth, trace_frame_at_fn frame_at, void *ctx);

/* A tensor's role by the stack that made it, innermost frame first: a
 * workspace (torch's cuBLAS workspaces, a library handle's); under
 * torch.optim, optimizer state; under backward(), a gradient (see
 * trace_roles_add); under Module._apply or a torch.nn module's __init__,
 * torch.nn.init or Parameter, parameters; under a module's call,
 * activations; a copy to the device outside those, data; made at the
 * user's lines, temporaries; else other. */
enum trace_role trace_role_of(uint32_t depth, trace_frame_at_fn frame_at, void *ctx);

/* One tensor's block, for trace_roles_add. */
struct trace_role_block {
	uint64_t size;	    /* the block's */
	uint64_t requested; /* what the tensor asked for */
	enum trace_role role;
};

/* Adds the blocks' bytes to out by role. Of the tensors made under
 * backward(), those of a parameter's size are its gradients, as many as
 * there are parameters of that size; the rest are backward's own (the
 * gradients of activations, freed as it goes), temporaries: an OOM in
 * backward has both. Matched by the size asked for (a block can be
 * larger than its tensor); which of two tensors of one size is the
 * gradient does not change the bytes. Sorts b. */
void trace_roles_add(struct trace_role_block *b, size_t n, uint64_t out[TRACE_ROLES]);

/* What a TensorFlow tensor is for, from the Python frames of its stack
 * (innermost first: an optimizer's frames are outside its variable's): a
 * variable made under Keras's optimizers, or filled on the first step of
 * Keras's fit (a tf.function's variables are filled when it first runs),
 * is an optimizer slot; another variable (ResourceVariable.__init__,
 * Layer.add_weight) a weight; tf.constant's and convert_to_tensor's
 * copies host data. */
enum trace_tf_variable {
	TRACE_TF_NOT_VARIABLE,
	TRACE_TF_WEIGHT,
	TRACE_TF_OPTIMIZER_SLOT,
	TRACE_TF_DATA
};

enum trace_tf_variable trace_tf_variable_of(uint32_t depth, trace_frame_at_fn frame_at,
					    void *ctx);

/* A working set that does not fit TensorFlow's arena, by what the tensor
 * refused is for: the title the report heads the cause with, and what to
 * try (the report's and stderr's, the same words). */
const char *trace_tf_title(enum trace_tf_variable v);
const char *trace_tf_remedy(enum trace_tf_variable v);

/* The model's weights and its optimizer's slots are the arena's problem
 * when they hold at least half of it: a step's tensor refused there is
 * the model's state, not the batch's. */
static inline bool trace_tf_model_state(uint64_t weights, uint64_t slots, uint64_t arena)
{
	return arena && weights + slots >= arena / 2;
}

/* The model's state (its parameters, their gradients and the
 * optimizer's state) holds at least half of what the framework could
 * use (the device, or its arena): what is refused there is the model's
 * problem, not the batch's. */
static inline bool trace_role_model_state(const uint64_t roles[TRACE_ROLES], uint64_t total)
{
	uint64_t state = roles[TRACE_ROLE_PARAMETERS] + roles[TRACE_ROLE_GRADIENTS] +
			 roles[TRACE_ROLE_OPTIMIZER_STATE];

	return total && state >= total - total / 2;
}
