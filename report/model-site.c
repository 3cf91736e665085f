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
	uint32_t *first = map_put(&t->same_frame, frame_hash(t, f), &inserted);

	if (inserted)
		*first = idx;
	else if (same_frame(t, &t->frames[*first], f))
		return *first;
	return idx; /* new, or a hash collision: the frame stands alone */
}

static bool python_user(const struct trace_frame *f)
{
	return f->kind == MT_FRAME_PYTHON && (f->function || f->file) &&
	       trace_python_frame_is_user(f->file);
}

/* A frame of the CUDA toolkit's headers (cudaMalloc<T> at -O0: a frame
 * of its own in the user's module) is CUDA's. Inlined ones are put at
 * their call site by the symbolizer. */
static bool native_user(const struct trace *t, const struct trace_frame *f)
{
	const struct trace_module *mod = trace_frame_module(t, f);

	return f->kind == MT_FRAME_NATIVE && mod && !path_is_cuda_header(f->file) &&
	       trace_native_frame_is_user(mod->path, f->function);
}

/* The innermost user frames; a native frame with a name before one
 * without (an address in the user's module says less than its caller's
 * name, as render_site_frame does for stacks). */
static void stack_site(struct trace *t, const struct trace_stack *s, struct trace_stack_site *out)
{
	const struct trace_frame *unnamed = NULL;
	uint32_t unnamed_depth = 0;

	*out = (struct trace_stack_site){ .python = TRACE_NONE, .native = TRACE_NONE };
	for (uint32_t i = 0; i < s->depth; i++) {
		const struct trace_frame *f = trace_stack_frame(t, s, i);

		if (!f)
			continue;
		if (out->python == TRACE_NONE && python_user(f)) {
			out->python = canonical_frame(t, f);
			out->python_depth = i;
		}
		if (out->native != TRACE_NONE || !native_user(t, f))
			continue;
		if (f->function) {
			out->native = canonical_frame(t, f);
			out->native_depth = i;
		} else if (!unnamed) {
			unnamed = f;
			unnamed_depth = i;
		}
	}
	if (out->native == TRACE_NONE && unnamed) {
		out->native = canonical_frame(t, unnamed);
		out->native_depth = unnamed_depth;
	}
}

void model_site_prepare(struct trace *t)
{
	free(t->stack_sites);
	t->stack_sites = xcalloc(t->n_stacks + 1, sizeof(*t->stack_sites));
	for (size_t i = 0; i < t->n_stacks; i++)
		stack_site(t, &t->stacks[i], &t->stack_sites[i]);
}

struct site_ref model_site_resolve(const struct trace *t, const struct trace_event *ev)
{
	const struct trace_stack *s = trace_find_stack(t, ev->stack);
	const struct trace_stack_site *ss = s && t->stack_sites ? &t->stack_sites[s - t->stacks]
								 : NULL;
	enum report_group_by g = t->opts.group_by;
	bool has_op = ev->has_op && ev->kind != MT_EV_MARK;

	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_PYTHON) && ss && ss->python != TRACE_NONE)
		return (struct site_ref){ .kind = SITE_PYTHON, .id = ss->python, .depth = ss->python_depth };
	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_OP) && has_op)
		return (struct site_ref){ .kind = SITE_OP, .id = ev->op };
	if ((g == REPORT_GROUP_SITE || g == REPORT_GROUP_NATIVE) && ss && ss->native != TRACE_NONE)
		return (struct site_ref){ .kind = SITE_NATIVE, .id = ss->native, .depth = ss->native_depth };
	return (struct site_ref){ .kind = SITE_STACK, .id = ev->stack };
}

const struct trace_site_rules model_site_rules = {
	.mark_kind = model_mark_kind,
	.op_builds = model_op_builds,
	.prepare = model_site_prepare,
	.resolve = model_site_resolve,
};
