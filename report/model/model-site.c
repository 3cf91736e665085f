/* Sites (model-site.h): which frame of a stack is the user's (by
 * trace-user-frame.h's rule), what a mark or an op is. */
#include "model-site.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-mem.h"
#include "util-str.h"

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- marks and ops ---------------------------------------------------- */

int model_mark_kind(const char *label)
{
	if (!label || !starts_with(label, MT_MARK_PREFIX))
		return MARK_USER;
	if (strcmp(label, MT_CUPTI_ON_MARK) == 0)
		return MARK_CUPTI_ON;
	if (strcmp(label, MT_CUPTI_OFF_MARK) == 0)
		return MARK_CUPTI_OFF;
	return MARK_INTERNAL;
}

/* The name's last decimal number, which may be followed by "]" or ")":
 * its start, its length and its value. False when there is none. */
static bool build_number(const char *name, size_t *start, size_t *len, int64_t *value)
{
	size_t n = strlen(name), end = n, i;

	if (end > 0 && (name[end - 1] == ']' || name[end - 1] == ')'))
		end--;
	for (i = end; i > 0 && isdigit((unsigned char)name[i - 1]); i--)
		;
	if (i == end || end - i > 18)
		return false;
	*start = i;
	*len = end - i;
	*value = strtoll(name + i, NULL, 10);
	return true;
}

/* Two ops are of one series: same domain, same text around the number. */
static bool same_series(const struct trace_op *a, const struct trace_op *b)
{
	size_t sa, la, sb, lb;
	int64_t va, vb;

	if (!build_number(a->name, &sa, &la, &va) || !build_number(b->name, &sb, &lb, &vb))
		return false;
	if (sa != sb || strcmp(a->name + sa + la, b->name + sb + lb) != 0 ||
	    strncmp(a->name, b->name, sa) != 0)
		return false;
	return (a->domain == NULL) == (b->domain == NULL) &&
	       (!a->domain || strcmp(a->domain, b->domain) == 0);
}

static bool series_member(const struct trace_op *op)
{
	size_t s, l;
	int64_t v;

	return op->same == op->id && build_number(op->name, &s, &l, &v);
}

/* Ops tables are small (names are cut to one per operation): quadratic
 * is fine, and keeps this simple. */
static size_t series_size(const struct trace_op *ops, size_t n, size_t first)
{
	size_t count = 1;

	for (size_t j = 0; j < n; j++) {
		if (j == first || !series_member(&ops[j]) || !same_series(&ops[j], &ops[first]))
			continue;
		if (j < first)
			return 0; /* counted at its first member */
		count++;
	}
	return count;
}

void model_op_builds(struct trace_op *ops, size_t n)
{
	size_t best = n, best_count = 1;

	for (size_t i = 0; i < n; i++) {
		size_t count = series_member(&ops[i]) ? series_size(ops, n, i) : 0;

		if (count > best_count) {
			best = i;
			best_count = count;
		}
	}
	for (size_t i = 0; best < n && i < n; i++) {
		size_t s, l;

		if (series_member(&ops[i]) && same_series(&ops[i], &ops[best]) &&
		    build_number(ops[i].name, &s, &l, &ops[i].build))
			ops[i].has_build = true;
	}
}

/* ---- the user's frames of each stack ---------------------------------- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 1099511628211ull;
	return h;
}

/* A native frame without a function name is known by its address only. */
static uint64_t frame_hash(const struct trace *t, const struct trace_frame *f)
{
	const struct trace_module *mod = trace_frame_module(t, f);
	uint64_t h = hash_u64(1469598103934665603ull, (uint64_t)f->kind);

	h = hash_str(h, f->function);
	h = hash_str(h, f->file);
	h = hash_u64(h, (uint64_t)f->line);
	h = hash_str(h, mod ? mod->path : NULL);
	return f->function ? h : hash_u64(h, (uint64_t)f->offset);
}

static bool same_frame(const struct trace *t, const struct trace_frame *a,
		       const struct trace_frame *b)
{
	const struct trace_module *ma = trace_frame_module(t, a), *mb = trace_frame_module(t, b);

	return a->kind == b->kind && a->line == b->line &&
	       (a->function ? b->function && strcmp(a->function, b->function) == 0
			    : !b->function && a->offset == b->offset) &&
	       (a->file ? b->file && strcmp(a->file, b->file) == 0 : !b->file) &&
	       (ma ? mb && strcmp(ma->path, mb->path) == 0 : !mb);
}

/* The first frame index that reads like this one. */
static uint32_t canonical_frame(struct trace *t, const struct trace_frame *f)
{
	uint32_t idx = (uint32_t)(f - t->frames);
	bool inserted;
	uint32_t *first = xmap_put(&t->same_frame, frame_hash(t, f), &inserted);

	if (inserted)
		*first = idx;
	else if (same_frame(t, &t->frames[*first], f))
		return *first;
	return idx; /* new, or a hash collision: the frame stands alone */
}

struct stack_frames {
	const struct trace *t;
	const struct trace_stack *s;
};

static bool frame_view(void *ctx, uint32_t i, struct trace_frame_view *out)
{
	const struct stack_frames *sf = ctx;
	const struct trace_frame *f = trace_stack_frame(sf->t, sf->s, i);
	const struct trace_module *mod = f ? trace_frame_module(sf->t, f) : NULL;

	if (!f || (f->kind != MT_FRAME_PYTHON && f->kind != MT_FRAME_NATIVE))
		return false;
	/* a frame of the CUDA toolkit's headers (cudaMalloc<T> at -O0: a frame
	 * of its own in the user's module) is CUDA's; inlined ones are put at
	 * their call site by the symbolizer */
	*out = (struct trace_frame_view){
		.python = f->kind == MT_FRAME_PYTHON,
		.function = f->function,
		.file = f->file,
		.module_path = mod ? mod->path : NULL,
		.cuda_header = f->kind == MT_FRAME_NATIVE && path_is_cuda_header(f->file),
	};
	return true;
}

static uint32_t frame_at_depth(struct trace *t, const struct trace_stack *s, uint32_t depth)
{
	const struct trace_frame *f;

	if (depth == TRACE_USER_NONE || !(f = trace_stack_frame(t, s, depth)))
		return TRACE_NONE;
	return canonical_frame(t, f);
}

/* The user's frames by trace-user-frame.h's rule, and their callers. */
static void stack_site(struct trace *t, const struct trace_stack *s, struct trace_stack_site *out)
{
	struct stack_frames sf = { t, s };
	struct trace_user_frames u;

	trace_user_frames(s->depth, frame_view, &sf, &u);
	*out = (struct trace_stack_site){
		.python = frame_at_depth(t, s, u.python),
		.python_depth = u.python,
		.python_caller = frame_at_depth(t, s, u.python_caller),
		.native = frame_at_depth(t, s, u.native),
		.native_depth = u.native,
		.native_caller = frame_at_depth(t, s, u.native_caller),
	};
}

/* ---- a helper called from several places ------------------------------- */

/* What the stacks say of one user's frame: its callers, and the sizes of
 * its allocations from each. */
struct frame_callers {
	uint32_t caller; /* the first caller seen */
	bool several;	 /* and another */
	bool sized;	 /* min, max are the first sized caller's */
	bool split;	 /* the sizes of two callers differ */
	uint64_t min, max;
};

struct caller_sizes {
	uint64_t min, max;
};

struct split_ctx {
	struct trace *t;
	struct map frames; /* frame index -> struct frame_callers */
	struct map pairs;  /* frame | caller << 32 -> struct caller_sizes */
};

static uint64_t pair_key(uint32_t frame, uint32_t caller)
{
	return (uint64_t)frame | ((uint64_t)caller << 32);
}

static bool note_caller(struct map *frames, uint32_t frame, uint32_t caller)
{
	bool inserted;
	struct frame_callers *fc;

	if (frame == TRACE_NONE)
		return false;
	fc = xmap_put(frames, frame, &inserted);
	if (inserted)
		*fc = (struct frame_callers){ .caller = caller };
	else if (fc->caller != caller)
		fc->several = true;
	return fc->several;
}

static void note_sizes(struct split_ctx *c, uint32_t frame, uint32_t caller, uint64_t min,
		       uint64_t max)
{
	const struct frame_callers *fc = frame == TRACE_NONE ? NULL : map_get(&c->frames, frame);
	struct caller_sizes *cs;
	bool inserted;

	if (!fc || !fc->several)
		return;
	cs = xmap_put(&c->pairs, pair_key(frame, caller), &inserted);
	if (inserted) {
		*cs = (struct caller_sizes){ min, max };
		return;
	}
	cs->min = min < cs->min ? min : cs->min;
	cs->max = max > cs->max ? max : cs->max;
}

static void stack_sizes(void *ctx, int64_t stack, uint64_t min, uint64_t max)
{
	struct split_ctx *c = ctx;
	const struct trace_stack *s = trace_find_stack(c->t, stack);
	const struct trace_stack_site *ss;

	if (!s)
		return;
	ss = &c->t->stack_sites[s - c->t->stacks];
	note_sizes(c, ss->python, ss->python_caller, min, max);
	note_sizes(c, ss->native, ss->native_caller, min, max);
}

/* A frame reached from several callers is a site per caller where the
 * sizes its callers allocate differ (the smallest and largest of each):
 * two callers of one alloc() helper, one allocating weights and one
 * activations, are two sites, not one shown with the first caller. */
static void split_helpers(struct trace *t)
{
	struct split_ctx c = { .t = t };
	bool any = false;
	size_t pos = 0;
	uint64_t key;
	void *val;

	map_init(&c.frames, sizeof(struct frame_callers));
	map_init(&c.pairs, sizeof(struct caller_sizes));
	for (size_t i = 0; i < t->n_stacks; i++) {
		const struct trace_stack_site *ss = &t->stack_sites[i];

		any |= note_caller(&c.frames, ss->python, ss->python_caller);
		any |= note_caller(&c.frames, ss->native, ss->native_caller);
	}
	if (any && trace_stack_sizes(t, stack_sizes, &c) == 0) {
		while (map_next(&c.pairs, &pos, &key, &val)) {
			const struct caller_sizes *cs = val;
			struct frame_callers *fc = map_get(&c.frames, (uint32_t)key);

			if (!fc)	/* every pair's frame was noted; a guard */
				continue;
			if (!fc->sized)
				*fc = (struct frame_callers){ .caller = fc->caller, .several = true,
							      .sized = true, .min = cs->min,
							      .max = cs->max };
			else if (fc->min != cs->min || fc->max != cs->max)
				fc->split = true;
		}
		for (size_t i = 0; i < t->n_stacks; i++) {
			struct trace_stack_site *ss = &t->stack_sites[i];
			const struct frame_callers *py = ss->python == TRACE_NONE
							 ? NULL : map_get(&c.frames, ss->python);
			const struct frame_callers *nat = ss->native == TRACE_NONE
							  ? NULL : map_get(&c.frames, ss->native);

			ss->python_split = py && py->split;
			ss->native_split = nat && nat->split;
		}
	}
	map_fini(&c.frames);
	map_fini(&c.pairs);
}

void model_site_prepare(struct trace *t)
{
	free(t->stack_sites);
	t->stack_sites = xcalloc(t->n_stacks + 1, sizeof(*t->stack_sites));
	for (size_t i = 0; i < t->n_stacks; i++)
		stack_site(t, &t->stacks[i], &t->stack_sites[i]);
	split_helpers(t);
}

/* The caller a split site is told apart by: its frame index + 1, or 0. */
static int64_t split_caller(bool split, uint32_t caller)
{
	return split && caller != TRACE_NONE ? (int64_t)caller + 1 : 0;
}

struct site_ref model_site_resolve(const struct trace *t, const struct trace_event *ev)
{
	const struct trace_stack *s = trace_find_stack(t, ev->stack);
	const struct trace_stack_site *ss = s && t->stack_sites ? &t->stack_sites[s - t->stacks]
								 : NULL;
	enum report_group_by g = t->opts.group_by;
	bool has_op = ev->has_op && ev->kind != MT_EV_MARK;

	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_PYTHON) && ss && ss->python != TRACE_NONE)
		return (struct site_ref){ .kind = SITE_PYTHON, .id = ss->python, .depth = ss->python_depth,
					  .caller = split_caller(ss->python_split, ss->python_caller) };
	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_OP) && has_op)
		return (struct site_ref){ .kind = SITE_OP, .id = ev->op };
	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_NATIVE) && ss && ss->native != TRACE_NONE)
		return (struct site_ref){ .kind = SITE_NATIVE, .id = ss->native, .depth = ss->native_depth,
					  .caller = split_caller(ss->native_split, ss->native_caller) };
	return (struct site_ref){ .kind = SITE_STACK, .id = ev->stack };
}

const struct trace_site_rules model_site_rules = {
	.mark_kind = model_mark_kind,
	.op_builds = model_op_builds,
	.prepare = model_site_prepare,
	.resolve = model_site_resolve,
};
