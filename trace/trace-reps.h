/* Repetitions found from the program itself, no mark or range: a
 * framework's tensors (PyTorch's, the tensor view), each with the user's
 * Python frames of the stack that made it, in the order they were made.
 * A repetition is one pass of the program over one of its lines: a build
 * in `models.append(build_model())`, the lines of a training loop coming
 * round again. The level of the program where lines repeat is the
 * outermost frame at which the tensors' frames differ (a script's loop,
 * or a loop inside main()) and some line comes round at least
 * TRACE_GROWTH_MIN_ROUNDS times (a model built at the script's level,
 * then trained in a function's loop: that loop). A pass of a line is its tensors made one
 * after another, until a tensor of another line at that level: a module's
 * 24 layers built from one line are one pass. A line grew when at least
 * TRACE_GROWTH_MIN_ROUNDS of its passes left tensors live at the moment
 * judged (an OOM, the peak of the tensors' bytes), the last of them in
 * the second half of its passes (a warm-up that fills the cache once
 * leaves none, and an optimizer's state made at its first step is one).
 * Of the lines that grew, the one that kept the most, unless one that
 * kept at least a third as much came first (a model's build before the
 * gradients and optimizer state its training adds: Adam keeps two slots
 * per weight). A repetition is the program's loop
 * coming round: the cycle of the line at that level that comes round
 * least often, at least TRACE_GROWTH_MIN_ROUNDS times (an epoch, not
 * each batch of its evaluation loop), the growing line's own when as
 * few.
 * Shared by the reporter's diagnosis (report/render/diagnose.c); the
 * rule is docs/report.md's "The cause". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tensor, in the order made: chain, the ids of the user's Python
 * frames of its stack, outermost first (equal frames, equal ids; depth 0:
 * none, then it is no line's), its bytes (its block: what
 * memory_allocated() counts), whether it is live at the moment judged. */
struct trace_rep_tensor {
	const uint64_t *chain;
	uint32_t depth;
	uint64_t bytes;
	bool live;
};

/* The line that grew most. */
struct trace_rep_growth {
	uint64_t key;	     /* the frame id of the repeated line */
	uint32_t level;	     /* its depth in the chains */
	uint64_t passes;     /* its passes */
	uint64_t kept;	     /* of them, those that left tensors live */
	uint64_t kept_bytes; /* what those left, together */
	uint64_t rep_key;    /* the line whose cycle is a repetition */
	size_t rep_tensor;   /* the first tensor of that line */
	uint64_t per_pass;   /* what one repetition kept: the median over the cycles */
	uint64_t cycles;     /* the cycles counted: from a pass of rep_key to its next */
	uint64_t cycles_bytes; /* what they kept, together */
	size_t largest;	     /* the largest tensor left by its last pass that kept any */
};

/* The line of tensors[0..n) that kept the most, pass after pass, at
 * least floor together (trace_growth_floor). open: the last pass is in
 * progress (at an OOM) and does not count. False when none grew, or
 * when memory for the count ran out. */
bool trace_reps_growth(const struct trace_rep_tensor *tensors, size_t n, bool open,
		       uint64_t floor, struct trace_rep_growth *out);
