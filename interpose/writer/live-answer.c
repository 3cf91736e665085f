/* The out-of-memory answer on stderr (live-answer.h): stacks named as the
 * report's default grouping names them (trace/trace-user-frame.h), sizes
 * as the report writes them (trace/util-size.h). */
#include "live-answer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace-role.h"
#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-demangle.h"
#include "util-math.h"
#include "util-size.h"

#define SUMMARY_HOLDERS 5

/* C++ names as the report writes them (trace/util-demangle.c). */
static const char *demangled(const char *name, char *out, size_t n)
{
	char *d = trace_demangle(name);
	if (!d)
		return name;
	snprintf(out, n, "%s", d);
	free(d);
	return out;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* One frame of a stack, read for trace-user-frame.h's rule and named. */
struct frame_read {
	const struct mt_answer *a;
	const uintptr_t *ips;
	char name[384];
};

static bool live_frame_at(void *ctx, uint32_t i, struct trace_frame_view *out)
{
	struct frame_read *r = ctx;
	struct mt_symbol sym;
	unsigned line = 0;

	*out = (struct trace_frame_view){ 0 };
	if (MT_IS_PYFRAME(r->ips[i])) {
		out->python = true;
		return r->a->pyframe &&
		       r->a->pyframe(r->ips[i], &out->function, &out->file, &line);
	}
	if (!mt_symbol_lookup(r->ips[i], &sym) || !sym.module_path[0])
		return false;
	/* ip is a return address: ip - 1 lies in the call */
	out->function = sym.function ? sym.function
			: mt_symbol_static(sym.module_path, r->ips[i] - 1 - sym.module_base,
					   r->name, sizeof(r->name))
				? r->name
				: NULL;
	out->module_path = sym.module_path;
	return true;
}

/* "function (file:line)" of a Python frame, "function (module)" of a
 * native one; file and line of native frames are the report's. */
static void frame_label(struct frame_read *r, uint32_t i, char *out, size_t n)
{
	struct trace_frame_view v;
	char dm[384];
	unsigned line = 0;

	if (MT_IS_PYFRAME(r->ips[i])) {
		const char *fn = NULL, *file = NULL;
		r->a->pyframe(r->ips[i], &fn, &file, &line);
		snprintf(out, n, "%s (%s:%u)", fn ? fn : "?", file ? base_name(file) : "?", line);
		return;
	}
	live_frame_at(r, i, &v);
	snprintf(out, n, "%s (%s)", v.function ? demangled(v.function, dm, sizeof(dm)) : "?",
		 base_name(v.module_path));
}

/* The holder's name as the report's default grouping has it: the user's
 * frame (trace-user-frame.h's rule: the innermost Python frame of the
 * user's, else the user's innermost native frame), with the operation
 * before a native frame; with_caller adds " <- " and its caller's.
 * Static functions are looked up in the module's .symtab. */
static void stack_name(const struct mt_answer *a, uint32_t stack, uint32_t op, bool with_caller,
		       char *out, size_t n)
{
	unsigned depth = 0;
	struct frame_read r = { .a = a };
	struct trace_user_frames u;
	uint32_t at, caller;
	char domain[64];

	r.ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;
	trace_user_frames(r.ips ? depth : 0, live_frame_at, &r, &u);
	at = trace_user_frame(&u, &caller);
	if (u.python == TRACE_USER_NONE && op && a->op_name &&
	    a->op_name(op, out, n, domain, sizeof(domain)) && out[0])
		return;
	if (at == TRACE_USER_NONE) {
		snprintf(out, n, "(no frame of the program's own)");
		return;
	}
	frame_label(&r, at, out, n);
	if (with_caller && caller != TRACE_USER_NONE) {
		size_t len = strlen(out);
		if (len + 4 < n) {
			snprintf(out + len, n - len, " <- ");
			frame_label(&r, caller, out + len + 4, n - len - 4);
		}
	}
}

/* An answer's text, built a piece at a time and written at once (one
 * write: the program's own lines on stderr do not cut it); a text too
 * long ends cut, with its newline. */
struct answer_text {
	char text[6144];
	size_t len;
};

static void __attribute__((format(printf, 2, 3))) add(struct answer_text *t, const char *fmt, ...)
{
	va_list ap;

	if (t->len >= sizeof(t->text))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(t->text + t->len, sizeof(t->text) - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

static void answer_log(struct answer_text *t)
{
	size_t len = t->len;

	if (len >= sizeof(t->text)) {
		len = sizeof(t->text) - 1;
		t->text[len - 1] = '\n';
	}
	mt_log_text(t->text, len);
}

static int cmp_holder(const void *a, const void *b)
{
	const struct mt_answer_holder *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The request (req) and "; device D had F free of T" (dev): when request
 * and free round alike, each exact, and by how much it missed, to two
 * decimals (3.75 KiB), as the report's headline has them. */
static void oom_sizes(const struct mt_event *ev, char *req, size_t rn, char *dev, size_t n)
{
	struct fmt_str fs = fmt_size(ev->device_free), ts = fmt_size(ev->device_total);
	const char *f = fs.s, *t = ts.s;
	snprintf(req, rn, "%s", fmt_size(ev->bytes).s);
	dev[0] = '\0';
	if (!ev->device_total)
		return;
	if (strcmp(req, f) || ev->bytes <= ev->device_free) {
		snprintf(dev, n, "; device %d had %s free of %s", ev->device, f, t);
		return;
	}
	snprintf(req + strlen(req), rn - strlen(req), " (%s)", fmt_bytes(ev->bytes).s);
	snprintf(dev, n, "; device %d had %s (%s) free of %s, short by %s", ev->device, f,
		 fmt_bytes(ev->device_free).s, t, fmt_size_fine(ev->bytes - ev->device_free).s);
}

/* The names of the first holders shown and (last) of the failed request's
 * stack: where two stacks read alike (one helper, two callers), each
 * with its caller. */
static void holder_names(const struct mt_answer *a, const struct mt_event *ev, const struct mt_answer_holder *h,
			 size_t n, char names[][512])
{
	size_t shown = n < SUMMARY_HOLDERS ? n : SUMMARY_HOLDERS;
	uint32_t stacks[SUMMARY_HOLDERS + 1], ops[SUMMARY_HOLDERS + 1];

	for (size_t i = 0; i < shown; i++) {
		stacks[i] = h[i].stack;
		ops[i] = h[i].op;
	}
	stacks[SUMMARY_HOLDERS] = ev->stack;
	ops[SUMMARY_HOLDERS] = ev->op;
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (i < shown || i == SUMMARY_HOLDERS)
			stack_name(a, stacks[i], ops[i], false, names[i], 512);
	}
	bool alike[SUMMARY_HOLDERS + 1] = { false };
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (i >= shown && i != SUMMARY_HOLDERS)
			continue;
		for (size_t j = 0; j < shown && !alike[i]; j++)
			alike[i] = stacks[j] != stacks[i] && strcmp(names[j], names[i]) == 0;
	}
	for (size_t i = 0; i <= SUMMARY_HOLDERS; i++) {
		if (alike[i])
			stack_name(a, stacks[i], ops[i], true, names[i], 512);
	}
}

static void cause_name(void *ctx, uint32_t stack, char *out, size_t n)
{
	stack_name(ctx, stack, 0, true, out, n);
}

/* The cache is a BFC arena's (frameworks/tensorflow-bfc.c): its regions'
 * blocks are exact. */
static bool arena_cache(const struct trace_cache *c)
{
	return c->n_segs && c->segs[0].stream == MT_CACHE_EXACT_BLOCKS;
}

/* The cause's lines (live-cause.h) of the OOM ev, whose holders are h. */
static void cause_lines(const struct mt_answer *a, const struct mt_event *ev,
			const struct mt_answer_live *live, const struct mt_answer_holder *h, size_t n,
			char *out, size_t outsz)
{
	uint32_t *stacks = calloc(n + 1, sizeof(*stacks));
	bool launch = ev->kind == MT_EV_GRAPH_LAUNCH;

	out[0] = '\0';
	if (!stacks)
		return;
	for (size_t i = 0; i < n; i++)
		stacks[i] = h[i].stack;
	struct mt_cause_oom o = {
		.stack = ev->stack, .requested = launch ? 0 : ev->bytes,
		.has_device = !launch && ev->device_total, .device_free = ev->device_free,
		.device_total = ev->device_total, .device = ev->device, .live = live->live,
		.peak = live->peak, .graph_live = live->graph_live, .holders = stacks,
		.n_holders = n,
		.bfc_beyond_limit = ev->kind == MT_EV_OOM && ev->api == MT_API_BFCAllocator &&
				    !(a->has_cache && arena_cache(&a->cache)) && ev->device_total &&
				    ev->device_free >= ev->bytes,
	};
	mt_cause_answer(a->cause, &o, cause_name, (void *)a, out, outsz);
	free(stacks);
}

void mt_answer_oom(const struct mt_answer *a, const struct mt_event *ev,
		   struct mt_answer_holder *h, size_t n, const struct mt_answer_live *live)
{
	qsort(h, n, sizeof(*h), cmp_holder);

	char req[80], dev[256], where[512], names[SUMMARY_HOLDERS + 1][512], cause[2048];
	struct answer_text out = { .len = 0 };
	holder_names(a, ev, h, n, names);
	snprintf(where, sizeof(where), "%s", names[SUMMARY_HOLDERS]);
	oom_sizes(ev, req, sizeof(req), dev, sizeof(dev));
	if (ev->kind == MT_EV_GRAPH_LAUNCH) /* its stack may not be recorded */
		add(&out, "memtrace: out of memory: %s failed%s%s", mt_api_name(ev->api),
		    ev->stack ? " in " : "", ev->stack ? where : "");
	else
		add(&out, "memtrace: out of memory: %s of %s failed in %s%s", mt_api_name(ev->api), req,
		    where, dev);
	add(&out, "\nmemtrace:   this process holds %s in %llu allocations", fmt_size(live->live).s,
	    (unsigned long long)live->count);
	add(&out, n ? "; the largest holders:\n" : "\n");
	for (size_t i = 0; i < n && i < SUMMARY_HOLDERS; i++) {
		add(&out, "memtrace:   %10s in %llu: %s\n", fmt_size(h[i].bytes).s,
		    (unsigned long long)h[i].count, names[i]);
	}
	if (n > SUMMARY_HOLDERS)
		add(&out, "memtrace:   (and %zu more)\n", n - SUMMARY_HOLDERS);
	cause_lines(a, ev, live, h, n, cause, sizeof(cause));
	add(&out, "%s", cause);
	add(&out, "memtrace:   the full report: memtrace report %s\n", a->path);
	answer_log(&out);
}

/* ---- growth from the latest tensors (live-reps.h) ---- */

/* A Python frame's id for the repetitions: its function, file and line,
 * as the reporter's frame_key hashes them (diagnose.c). */
static uint64_t frame_key(const char *function, const char *file, unsigned line)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = function ? function : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = file ? file : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (h ^ (uint64_t)line) * 1099511628211ull;
}

static uint32_t user_chain(void *ctx, uint32_t stack, uint64_t *chain, uint32_t cap)
{
	const struct mt_answer *a = ctx;
	unsigned depth = 0;
	const uintptr_t *ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;
	uint32_t n = 0;

	for (unsigned i = ips ? depth : 0; i-- > 0 && n < cap;) {
		const char *fn = NULL, *file = NULL;
		unsigned line = 0;

		if (MT_IS_PYFRAME(ips[i]) && a->pyframe && a->pyframe(ips[i], &fn, &file, &line) &&
		    trace_python_frame_is_user(file))
			chain[n++] = frame_key(fn, file, line);
	}
	return n;
}

static bool in_forward(void *ctx, uint32_t stack)
{
	const struct mt_answer *a = ctx;
	unsigned depth = 0;
	const uintptr_t *ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;

	for (unsigned i = 0; ips && i < depth; i++) {
		const char *fn = NULL, *file = NULL;
		unsigned line = 0;
		size_t len;

		if (MT_IS_PYFRAME(ips[i]) && a->pyframe && a->pyframe(ips[i], &fn, &file, &line) &&
		    fn && (len = strlen(fn)) >= 7 && strcmp(fn + len - 7, "forward") == 0)
			return true;
	}
	return false;
}

/* The label of the Python frame of stack whose id is key. */
static void key_label(const struct mt_answer *a, uint32_t stack, uint64_t key, char *out,
		      size_t n)
{
	unsigned depth = 0;
	struct frame_read r = { .a = a };

	snprintf(out, n, "?");
	r.ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;
	for (unsigned i = 0; r.ips && i < depth; i++) {
		const char *fn = NULL, *file = NULL;
		unsigned line = 0;

		if (MT_IS_PYFRAME(r.ips[i]) && a->pyframe &&
		    a->pyframe(r.ips[i], &fn, &file, &line) && frame_key(fn, file, line) == key) {
			frame_label(&r, i, out, n);
			return;
		}
	}
}

/* The cause's two lines when a line of the program kept tensors pass
 * after pass (the reporter's rule_growth_tensors, its words); false when
 * none did. bfc: TensorFlow's tensors, advice in Keras's words. */
static bool growth_lines(const struct mt_answer *a, bool bfc, struct answer_text *out)
{
	struct mt_reps_growth r;
	char line[512], made[512];

	if (!mt_reps_growth(&a->reps, user_chain, in_forward, (void *)a,
			    trace_growth_floor(a->peak), &r))
		return false;
	key_label(a, r.largest_stack, r.g.key, line, sizeof(line));
	stack_name(a, r.largest_stack, 0, false, made, sizeof(made));
	add(out, "memtrace:   cause (growth): %s came round %llu times and %llu of them left "
		 "tensors live: each repetition kept %s (the median of %llu), the largest made at "
		 "%s\n",
	    line, (unsigned long long)r.g.passes, (unsigned long long)r.g.kept,
	    fmt_size(r.g.per_pass).s, (unsigned long long)r.g.cycles, made);
	if (bfc)
		add(out, "memtrace:   try: free what %s keeps from one repetition to the next: "
			 "between model builds, del model; tf.keras.backend.clear_session(); "
			 "gc.collect()\n",
		    line);
	else if (r.graph)
		add(out, "memtrace:   try: what %s keeps holds its autograd graph: keep loss.item() "
			 "(or detach()) of what is logged or appended, and evaluate under "
			 "torch.no_grad()\n",
		    line);
	else
		add(out, "memtrace:   try: free what %s keeps from one repetition to the next: "
			 "del model; gc.collect(); torch.cuda.empty_cache() between builds\n",
		    line);
	return true;
}

/* ---- the answer at PyTorch's OOM: the tensor view ---- */

static int cmp_i64(const void *a, const void *b)
{
	const struct mt_answer_holder *x = a, *y = b;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The tensors' blocks by the stack that made them, largest first; *n of
 * them. NULL when out of memory. */
static struct mt_answer_holder *tensor_holders(const struct trace_cache *c, size_t *n)
{
	struct mt_answer_holder *h = calloc(c->tensors + 1, sizeof(*h));
	size_t k = 0, out = 0;
	if (!h)
		return NULL;
	for (size_t i = 0; i < c->n_segs; i++)
		for (size_t j = 0; j < c->segs[i].n_blocks; j++) {
			const struct trace_cache_block *b = &c->segs[i].blocks[j];
			if (b->allocated && k < c->tensors)
				h[k++] = (struct mt_answer_holder){ .stack = (uint32_t)b->stack,
							  .bytes = b->size, .count = 1 };
		}
	qsort(h, k, sizeof(*h), cmp_i64);
	for (size_t i = 0; i < k; i++) {
		if (out && h[out - 1].stack == h[i].stack) {
			h[out - 1].bytes += h[i].bytes;
			h[out - 1].count++;
		} else {
			h[out++] = h[i];
		}
	}
	qsort(h, out, sizeof(*h), cmp_holder);
	*n = out;
	return h;
}

/* PyTorch's allocator gave up on the tensor of ev: the CUDA call that
 * failed for it (cuda, when one did), the tensor asked for, what torch's
 * cache held (memory_allocated(), memory_reserved()), the lines whose
 * tensors hold it, and the cause when live-cause.c can tell it (the
 * allocator's own cap; fragmentation, trace_cause_cache_fragmentation). */
/* No tensors kept, no pieces, no cap (the report's too_big from the
 * tensors, diagnose.c): the tensors made at the line that failed and the
 * request, against what the device had free. */
static void step_too_big(const struct mt_answer *a, const struct mt_event *ev,
			 const struct mt_event *cuda, const struct mt_answer_holder *h, size_t n,
			 struct answer_text *out)
{
	char line[512], name[512];
	uint64_t step = 0, count = 0;

	stack_name(a, ev->stack, 0, false, line, sizeof(line));
	for (size_t i = 0; i < n; i++) {
		stack_name(a, h[i].stack, 0, false, name, sizeof(name));
		if (strcmp(name, line) == 0) {
			step += h[i].bytes;
			count += h[i].count;
		}
	}
	if (!step)
		return; /* a forward whose last line failed: the report's (diagnose.c) */
	add(out, "memtrace:   cause (too_big): %s in %llu tensors made at %s, the line that failed "
	    "(in a training step, its activations and temporaries, which scale with the batch), "
	    "and the %s asked for: %s for that line, where the device had %s free\n",
	    fmt_size(step).s, (unsigned long long)count, line, fmt_size(ev->bytes).s,
	    fmt_size(step + ev->bytes).s, fmt_size(cuda->device_free).s);
	add(out, "memtrace:   try: a smaller batch or input, activation checkpointing "
	    "(torch.utils.checkpoint), mixed precision (torch.autocast with bf16)\n");
}

struct stack_role {
	uint32_t stack;
	enum trace_role role;
};

static int cmp_stack_role(const void *x, const void *y)
{
	const struct stack_role *p = x, *q = y;

	return p->stack < q->stack ? -1 : p->stack > q->stack;
}

/* trace-role.h's rule on a stack of the library's. */
static enum trace_role stack_role(const struct mt_answer *a, uint32_t stack)
{
	unsigned depth = 0;
	struct frame_read r = { .a = a };

	r.ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;
	return r.ips ? trace_role_of(depth, live_frame_at, &r) : TRACE_ROLE_OTHER;
}

/* trace-role.h's TensorFlow rule on a stack of the library's. */
static enum trace_tf_variable stack_variable(const struct mt_answer *a, uint32_t stack)
{
	unsigned depth = 0;
	struct frame_read r = { .a = a };

	r.ips = stack ? mt_stack_get(a->stacks, stack, &depth) : NULL;
	return r.ips ? trace_tf_variable_of(depth, live_frame_at, &r) : TRACE_TF_NOT_VARIABLE;
}

/* The report's model state (diagnose.c, rule_cache_model_state): the
 * cache's tensors by role; when the parameters, their gradients and the
 * optimizer's state hold half the device, that is the cause. False when
 * they do not (or out of memory). */
static bool model_state(const struct mt_answer *a, const struct mt_event *cuda,
			const struct trace_cache *c, const struct mt_answer_holder *h, size_t n,
			struct answer_text *out)
{
	struct stack_role *r = calloc(n + 1, sizeof(*r));
	struct trace_role_block *b = calloc(c->tensors + 1, sizeof(*b));
	uint64_t roles[TRACE_ROLES] = { 0 };
	size_t k = 0;
	bool said = false;

	if (!r || !b || !cuda->device_total)
		goto out;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct stack_role){ .stack = h[i].stack, .role = stack_role(a, h[i].stack) };
	qsort(r, n, sizeof(*r), cmp_stack_role);
	for (size_t i = 0; i < c->n_segs; i++)
		for (size_t j = 0; j < c->segs[i].n_blocks; j++) {
			const struct trace_cache_block *bl = &c->segs[i].blocks[j];
			struct stack_role key = { .stack = (uint32_t)bl->stack }, *hit;

			if (!bl->allocated || k >= c->tensors)
				continue;
			hit = bsearch(&key, r, n, sizeof(*r), cmp_stack_role);
			b[k++] = (struct trace_role_block){ .size = bl->size, .requested = bl->requested,
							    .role = hit ? hit->role
									: TRACE_ROLE_OTHER };
		}
	trace_roles_add(b, k, roles);
	if (!trace_role_model_state(roles, cuda->device_total))
		goto out;
	uint64_t params = roles[TRACE_ROLE_PARAMETERS], grads = roles[TRACE_ROLE_GRADIENTS];
	uint64_t state = roles[TRACE_ROLE_OPTIMIZER_STATE];
	uint64_t step = roles[TRACE_ROLE_ACTIVATIONS] + roles[TRACE_ROLE_TEMPORARIES] +
			roles[TRACE_ROLE_DATA];

	add(out, "memtrace:   cause (too_big): the model%s: its parameters (%s), their gradients "
	    "(%s) and the optimizer's state (%s) hold %s of the device's %s, before any of the "
	    "step's own tensors (%s)\n",
	    state ? " and its optimizer's state" : "", fmt_size(params).s, fmt_size(grads).s,
	    fmt_size(state).s, fmt_size(params + grads + state).s,
	    fmt_size(cuda->device_total).s, fmt_size(step).s);
	add(out, "memtrace:   try: a smaller model; %sbf16 parameters; sharding over more devices "
	    "(FSDP, DeepSpeed ZeRO); a smaller batch frees only the step's %s\n",
	    state ? "an optimizer that keeps less per parameter (SGD, Adafactor, 8-bit Adam); " : "",
	    fmt_size(step).s);
	said = true;
out:
	free(r);
	free(b);
	return said;
}

void mt_answer_tensor(const struct mt_answer *a, const struct mt_event *ev,
		      const struct mt_event *cuda, const struct trace_cache *c)
{
	uint64_t free_in_cache = sat_sub(c->reserved, c->allocated);
	uint64_t largest = trace_cache_largest_free(c);
	size_t n = 0;
	struct mt_answer_holder *h = tensor_holders(c, &n);
	char where[512], req[80], dev[256], name[512];
	struct answer_text out = { .len = 0 };
	if (!h)
		return;
	stack_name(a, ev->stack, ev->op, false, where, sizeof(where));
	if (cuda) {
		oom_sizes(cuda, req, sizeof(req), dev, sizeof(dev));
		add(&out, "memtrace: out of memory: %s of %s failed in %s%s\n", mt_api_name(cuda->api),
		    req, where, dev);
	} else {
		add(&out, "memtrace: out of memory: PyTorch's caching allocator refused the tensor in %s "
		    "with no CUDA call failing (a limit of its own, such as "
		    "set_per_process_memory_fraction)\n",
		    where);
	}
	add(&out, "memtrace:   the tensor asked for: %s (%s); PyTorch's cache: %s reserved (%s), %s "
	    "allocated (%s) to %llu tensors, %s free in the cache (largest free block %s)\n",
	    fmt_size(ev->bytes).s, fmt_bytes(ev->bytes).s, fmt_size(c->reserved).s,
	    fmt_bytes(c->reserved).s, fmt_size(c->allocated).s, fmt_bytes(c->allocated).s,
	    (unsigned long long)c->tensors, fmt_size(free_in_cache).s, fmt_size(largest).s);
	if (n)
		add(&out, "memtrace:   the tensors, by the line that made them:\n");
	for (size_t i = 0; i < n && i < SUMMARY_HOLDERS; i++) {
		stack_name(a, h[i].stack, 0, false, name, sizeof(name));
		add(&out, "memtrace:   %10s in %llu: %s\n", fmt_size(h[i].bytes).s,
		    (unsigned long long)h[i].count, name);
	}
	if (n > SUMMARY_HOLDERS)
		add(&out, "memtrace:   (and %zu more)\n", n - SUMMARY_HOLDERS);
	char cause[1024];
	/* the allocator's own cap leads; then tensors kept pass after pass,
	 * before the pieces they leave (trace_cause_rank) */
	if (!trace_cause_allocator_limit(cuda != NULL, true) && growth_lines(a, false, &out))
		goto told;
	mt_cause_own_answer(&(struct mt_cause_own_oom){ .cuda_failed = cuda != NULL,
							.requested = ev->bytes,
							.limit = ev->limit,
							.reserved = c->reserved,
							.has_device_free = ev->device_total != 0,
							.device_free = ev->address,
							.cache_free = free_in_cache,
							.largest_free = largest },
			    cause, sizeof(cause));
	if (cause[0])
		add(&out, "%s", cause);
	else if (cuda && !model_state(a, cuda, c, h, n, &out))
		step_too_big(a, ev, cuda, h, n, &out);
told:
	add(&out, "memtrace:   the full report: memtrace report %s\n", a->path);
	answer_log(&out);
	free(h);
}

/* The arena's tensors by the user's line that made them (a tensor made
 * on an executor thread and one made on the launching thread at one line
 * are one line), largest first: the ARENA_LINES largest stacks' merged,
 * into names and h (its count updated); the bytes of the line of stack
 * (where the request failed) into *step, its tensors into *step_count. */
#define ARENA_LINES 256
static size_t arena_lines(const struct mt_answer *a, struct mt_answer_holder *h, size_t n,
			  char (*names)[512], uint32_t stack, uint64_t *step, uint64_t *step_count)
{
	char line[512];
	size_t k = 0;

	stack_name(a, stack, 0, false, line, sizeof(line));
	*step = *step_count = 0;
	for (size_t i = 0; i < n && i < ARENA_LINES; i++) {
		size_t j = 0;

		stack_name(a, h[i].stack, 0, false, names[k], 512);
		while (j < k && strcmp(names[j], names[k]) != 0)
			j++;
		if (strcmp(names[k], line) == 0) {
			*step += h[i].bytes;
			*step_count += h[i].count;
		}
		if (j < k) {
			h[j].bytes += h[i].bytes;
			h[j].count += h[i].count;
		} else {
			h[k++] = h[i];
		}
	}
	qsort(h, k, sizeof(*h), cmp_holder); /* the names of those told, in that order */
	for (size_t i = 0; i < k && i < SUMMARY_HOLDERS; i++)
		stack_name(a, h[i].stack, 0, false, names[i], 512);
	return k;
}

void mt_answer_arena(const struct mt_answer *a, const struct mt_event *ev,
		     const struct trace_cache *c)
{
	uint64_t arena_free = sat_sub(c->reserved, c->allocated), step, step_count;
	uint64_t limit = trace_cause_arena_limit(c->reserved, c->n_segs, ev->device_total);
	size_t n = 0;
	struct mt_answer_holder *h = tensor_holders(c, &n);
	char(*names)[512] = calloc(ARENA_LINES, 512);
	char where[512], cause[1024];
	struct answer_text out = { .len = 0 };
	if (!h || !names) {
		free(h);
		free(names);
		return;
	}
	stack_name(a, ev->stack, ev->op, false, where, sizeof(where));
	/* the model's weights and its optimizer's slots, by the stacks that
	 * made them (before arena_lines merges the stacks into lines) */
	uint64_t weights = 0, slots = 0;

	for (size_t i = 0; i < n; i++) {
		enum trace_tf_variable v = stack_variable(a, h[i].stack);

		weights += v == TRACE_TF_WEIGHT ? h[i].bytes : 0;
		slots += v == TRACE_TF_OPTIMIZER_SLOT ? h[i].bytes : 0;
	}
	size_t lines = arena_lines(a, h, n, names, ev->stack, &step, &step_count);
	add(&out, "memtrace: out of memory: %s of %s (%s) failed in %s: TensorFlow's BFC allocator "
	    "refused the tensor\n",
	    mt_api_name(ev->api), fmt_size(ev->bytes).s, fmt_bytes(ev->bytes).s, where);
	add(&out, "memtrace:   its arena: %s%s, %s allocated (%s) to %llu tensors, %s free in it "
	    "(largest free chunk %s)\n",
	    fmt_size(c->reserved).s, limit ? " (its memory limit)" : " in its regions so far",
	    fmt_size(c->allocated).s, fmt_bytes(c->allocated).s, (unsigned long long)c->tensors,
	    fmt_size(arena_free).s, fmt_size(trace_cache_largest_free(c)).s);
	if (step)
		add(&out, "memtrace:   %s of it in %llu tensors made at the line that failed; %s held by "
		    "other lines\n",
		    fmt_size(step).s, (unsigned long long)step_count,
		    fmt_size(sat_sub(c->allocated, step)).s);
	if (lines)
		add(&out, "memtrace:   the tensors, by the line that made them:\n");
	for (size_t i = 0; i < lines && i < SUMMARY_HOLDERS; i++)
		add(&out, "memtrace:   %10s in %llu: %s\n", fmt_size(h[i].bytes).s,
		    (unsigned long long)h[i].count, names[i]);
	if (n > SUMMARY_HOLDERS && lines > SUMMARY_HOLDERS)
		add(&out, "memtrace:   (and more)\n");
	/* a step beyond the arena leads; then tensors kept pass after pass */
	cause[0] = '\0';
	if (trace_cause_beyond_arena(ev->bytes, step, limit) || !growth_lines(a, true, &out))
		mt_cause_arena_answer(&(struct mt_cause_arena_oom){ .requested = ev->bytes,
								    .step = step,
								    .limit = limit,
								    .reserved = c->reserved,
								    .arena_free = arena_free,
								    .largest_free =
									    trace_cache_largest_free(c),
								    .allocated = c->allocated,
								    .tensors = c->tensors,
								    .variable = stack_variable(a, ev->stack),
								    .weights = weights,
								    .slots = slots },
				      cause, sizeof(cause));
	add(&out, "%s", cause);
	add(&out, "memtrace:   the full report: memtrace report %s\n", a->path);
	answer_log(&out);
	free(names);
	free(h);
}

/* One line, at the first such failure: not an OOM, but worth knowing (a
 * program that flushes its cache at every step runs slower). */
void mt_answer_retried(const struct mt_answer *a, const struct mt_event *ev)
{
	char where[512], req[80], dev[256], text[1200];

	stack_name(a, ev->stack, ev->op, false, where, sizeof(where));
	oom_sizes(ev, req, sizeof(req), dev, sizeof(dev));
	int n = snprintf(text, sizeof(text),
			 "memtrace: %s of %s failed in %s%s; PyTorch's cache flushed and "
			 "retried; no OOM (the retry succeeded; later ones: memtrace report %s)\n",
			 mt_api_name(ev->api), req, where, dev, a->path);
	if (n > 0)
		mt_log_text(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* The OOM told on stderr failed on a thread with no line of the
 * program's (TensorFlow's executor): where it reached the program. */
void mt_answer_raised(const struct mt_answer *a, const struct mt_event *ev)
{
	char where[512], text[600];
	stack_name(a, (uint32_t)ev->stack, ev->op, true, where, sizeof(where));
	int n = snprintf(text, sizeof(text), "memtrace:   raised in %s\n", where);
	if (n > 0)
		mt_log_text(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* ---- when an answer is due ---- */

/* An OOM less than this long after the previous one is the same episode:
 * the program is retrying or giving up, and has had its summary. */
#define EPISODE_NS (10ull * 1000000000ull)
/* cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY alike */
#define GRAPH_LAUNCH_OOM 2

/* An OOM at time_ns: whether it is the first of an episode. */
static bool due(struct mt_answer *a, uint64_t time_ns)
{
	bool first = !a->had_oom || time_ns >= a->last_oom_ns + EPISODE_NS;
	a->had_oom = true;
	a->last_oom_ns = time_ns;
	return first;
}

/* The CUDA call that failed inside torch's allocator (p) succeeded when
 * tried again (ev): torch flushed its cache and retried, and the program
 * saw no OOM. */
static bool retry_worked(const struct mt_event *p, const struct mt_event *ev)
{
	return ev->kind == MT_EV_ALLOC && ev->source == MT_SOURCE_HOOK && ev->tid == p->tid &&
	       ev->api == p->api && ev->bytes == p->bytes && ev->device == p->device &&
	       ev->mem == p->mem;
}

/* What torch's allocator does between a CUDA OOM and its own: it gives
 * its cached segments back and tries again. Anything else means it did
 * not give up (the retry worked) or the OOM was not its: the CUDA OOM's
 * answer is due. */
static bool oom_path(unsigned kind)
{
	return kind == MT_EV_FREE || kind == MT_EV_OOM || kind == MT_EV_UNMAP ||
	       kind == MT_EV_CACHE_SEGMENT_FREE || kind == MT_EV_CACHE_SEGMENT_UNMAP ||
	       kind == MT_EV_TENSOR_OOM;
}

const struct mt_event *mt_answer_settle(struct mt_answer *a, const struct mt_event *ev)
{
	if (oom_path(ev->kind))
		return NULL;
	a->has_pending = false;
	if (retry_worked(&a->pending, ev)) {
		if (!a->retries++) /* one line, at the first such failure */
			mt_answer_retried(a, &a->pending);
		return NULL;
	}
	return due(a, a->pending_ns) ? &a->pending : NULL;
}

/* An action of PyTorch's allocator into its cache's model. */
static void cache_event(struct mt_answer *a, const struct mt_event *ev)
{
	a->has_cache = true;
	if (!trace_cache_event(&a->cache, ev->kind, ev->address, ev->bytes, ev->stream, ev->stack,
			       ev->device) &&
	    !a->cache_failed) {
		mt_log(MT_ENV, "out of memory for PyTorch's cache's model: the answer at its OOM "
			       "may miss tensors");
		a->cache_failed = true;
	}
	/* torch asks for a free, then completes it; a BFC arena's is one event */
	if (ev->kind == MT_EV_TENSOR_ALLOC)
		mt_reps_made(&a->reps, ev->address, (uint32_t)ev->stack,
			     trace_cache_block_size(&a->cache, ev->address));
	else if (ev->kind == MT_EV_TENSOR_FREE_REQUESTED || ev->kind == MT_EV_TENSOR_FREE)
		mt_reps_gone(&a->reps, ev->address);
}

const struct mt_event *mt_answer_event(struct mt_answer *a, const struct mt_event *ev,
				       uint64_t time_ns)
{
	bool hooked = ev->source == MT_SOURCE_HOOK;

	switch (ev->kind) {
	case MT_EV_OOM:
		if (!hooked)
			return NULL;
		if (!a->has_cache)
			return due(a, time_ns) ? ev : NULL;
		if (ev->api == MT_API_BFCAllocator && arena_cache(&a->cache)) {
			if (due(a, time_ns)) /* TensorFlow's own OOM, inside its arena */
				mt_answer_arena(a, ev, &a->cache);
			return NULL;
		}
		if (!a->has_pending) {
			/* inside torch's allocator: its OOM (or its retry) comes next */
			a->pending = *ev;
			a->pending_ns = time_ns;
			a->has_pending = true;
		}
		return NULL;
	case MT_EV_OOM_RAISED:
		if (hooked && ev->stack && a->had_oom)
			mt_answer_raised(a, ev);
		return NULL;
	case MT_EV_GRAPH_LAUNCH:
		return hooked && ev->status == GRAPH_LAUNCH_OOM && due(a, time_ns) ? ev : NULL;
	case MT_EV_TENSOR_OOM:
		if (a->has_pending || !a->had_oom || time_ns >= a->last_oom_ns + EPISODE_NS)
			mt_answer_tensor(a, ev, a->has_pending ? &a->pending : NULL, &a->cache);
		a->has_pending = false;
		a->had_oom = true;
		a->last_oom_ns = time_ns;
		return NULL;
	default:
		/* JAX's arrays (frameworks/xla-pjrt.c): not a cache's blocks, not
		 * modelled here yet */
		if (ev->api != MT_API_XlaPjrt)
			cache_event(a, ev);
		return NULL;
	}
}

void mt_answer_fini(struct mt_answer *a)
{
	trace_cache_fini(&a->cache);
	mt_reps_fini(&a->reps);
}
