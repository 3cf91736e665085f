/* Helpers the renderers share: labels for frames and stacks, limits. */
#include "render.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model-timeline.h"
#include "trace-cause.h"
#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-math.h"
#include "util-mem.h"
#include "util-str.h"

size_t render_limit(const struct render_opts *o, size_t n)
{
	return o->top && o->top < n ? o->top : n;
}

const char *render_mem_name(int mem)
{
	switch (mem) {
	case MT_MEM_DEVICE: return "device";
	case MT_MEM_MANAGED: return "managed";
	case MT_MEM_HOST_PINNED: return "host_pinned";
	case MT_MEM_POOL: return "pool";
	case MT_MEM_VMM_PHYSICAL: return "vmm_physical";
	case MT_MEM_VMM_RESERVED: return "vmm_reserved";
	case MT_MEM_IMPORTED: return "imported";
	case MT_MEM_ARRAY: return "array";
	case MT_MEM_HOST_REGISTERED: return "host_registered";
	case MT_MEM_GRAPH: return "graph";
	}
	return "unknown";
}

const char *render_mem_meaning(int mem)
{
	switch (mem) {
	case MT_MEM_POOL:
		return "device memory from an explicit pool (cuMemAllocFromPoolAsync, "
		       "cudaMallocFromPoolAsync)";
	case MT_MEM_VMM_PHYSICAL:
		return "physical memory from cuMemCreate: live until it is released and unmapped "
		       "everywhere; while mapped, it is charged to the stack that mapped it";
	case MT_MEM_ARRAY:
		return "CUDA arrays (textures and surfaces)";
	case MT_MEM_VMM_RESERVED:
		return "virtual address space reserved with cuMemAddressReserve: not memory (what "
		       "is mapped into it is counted under vmm_physical)";
	case MT_MEM_IMPORTED:
		return "another process's device memory opened with cuIpcOpenMemHandle: shown, not "
		       "counted as this process's allocation";
	case MT_MEM_HOST_REGISTERED:
		return "host memory the program already had, pinned with cuMemHostRegister: "
		       "pinned, not allocated, so not counted";
	case MT_MEM_GRAPH:
		return "CUDA graph memory (allocation nodes, allocations captured on a stream): "
		       "counted from the launch or upload that makes it physical until it is freed; "
		       "an allocation counts once per launch";
	}
	return NULL;
}

bool render_mem_seen(const struct model *m, int mem)
{
	const struct model_mem *k = &m->kinds[mem];

	return k->allocations || k->frees || k->live_count;
}

bool render_unusual_kinds(const struct model *m)
{
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		if (render_mem_seen(m, mem) && render_mem_meaning(mem))
			return true;
	}
	return false;
}

char *render_device_kinds(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool first = true;

	if (!f)
		return xstrdup("device");
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		if (!model_mem_is_device(mem) || !render_mem_seen(m, mem))
			continue;
		fprintf(f, "%s%s", first ? "" : " + ", render_mem_name(mem));
		first = false;
	}
	fclose(f);
	return buf ? buf : xstrdup("device");
}

double render_note_fraction(const struct model_note *n)
{
	return n->device_total ? (double)n->bytes / (double)n->device_total : 0;
}

static int by_thread_bytes(const void *a, const void *b)
{
	const struct timeline_thread *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

size_t render_peak_threads(const struct model *m, struct timeline_thread *rows)
{
	const struct model_timeline *tl = m->timeline;
	size_t n = tl ? tl->n_thread_at_peak : 0;

	if (n)
		memcpy(rows, tl->thread_at_peak, n * sizeof(*rows));
	qsort(rows, n, sizeof(*rows), by_thread_bytes);
	return n;
}

const char *render_end_story(const struct trace *t, char *buf, size_t size)
{
	const char *end = trace_meta_get(t, "end");
	int64_t status;

	if (end && strcmp(end, "running") == 0)
		return "trace not closed: killed, crashed or still running";
	if (!end || strcmp(end, "exit") != 0)
		return "end unknown";
	if (!render_meta_int(t, "exit_status", &status) || status == 0)
		return "exited normally";
	snprintf(buf, size, "exited with status %" PRId64, status);
	return buf;
}

bool render_meta_int(const struct trace *t, const char *key, int64_t *out)
{
	const char *v = trace_meta_get(t, key);
	char *end;
	long long x;

	if (!v || !*v)
		return false;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || *end)
		return false;
	*out = x;
	return true;
}

int64_t render_duration_ns(const struct trace *t, const struct model *m)
{
	int64_t end;

	if (render_meta_int(t, "end_monotonic_ns", &end) && end > m->last_time_ns)
		return end;
	return m->last_time_ns;
}

/* The last OOM that reached the program: a failure the allocator
 * recovered from (model_oom.recovered) is none. */
const struct model_oom *render_headline_oom(const struct model *m)
{
	for (size_t i = m->n_ooms; i-- > 0;)
		if (!m->ooms[i].recovered)
			return &m->ooms[i];
	return NULL;
}

const struct model_oom *render_first_recovered(const struct model *m)
{
	for (size_t i = 0; i < m->n_ooms; i++)
		if (m->ooms[i].recovered && (i + 1 == m->n_ooms || !m->ooms[i + 1].retry_of))
			return &m->ooms[i];
	return NULL;
}

/* The failures that reached the program: all but those recovered from. */
size_t render_ooms_reached(const struct model *m)
{
	return m->n_ooms - render_recovered_failures(m);
}

size_t render_recovered_failures(const struct model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_ooms; i++)
		n += m->ooms[i].recovered;
	return n;
}

/* The innermost frame with a function name, else the innermost: what a
 * stack with no frame of the user's is known by. */
static const struct trace_frame *named_frame(const struct trace *t, const struct trace_stack *s,
					     uint32_t *depth)
{
	*depth = 0;
	for (uint32_t i = 0; s && i < s->depth; i++) {
		const struct trace_frame *f = trace_stack_frame(t, s, i);

		if (f && f->function) {
			*depth = i;
			return f;
		}
	}
	return trace_stack_frame(t, s, 0);
}

char *render_frame_name(const struct trace *t, const struct trace_frame *f)
{
	const struct trace_module *mod = trace_frame_module(t, f);

	if (f && f->function)
		return xasprintf("%s", f->function);
	if (f && f->kind == MT_FRAME_LAUNCH)
		return xasprintf("launched from thread %" PRId64, f->ip);
	if (f && mod && f->has_offset)
		return xasprintf("%s+0x%" PRIx64, path_basename(mod->path), (uint64_t)f->offset);
	return xasprintf("??");
}

char *render_frame_label(const struct trace *t, const struct trace_frame *f, bool short_file)
{
	const char *file;

	if (!f)
		return xasprintf("??");
	file = short_file ? path_basename(f->file) : f->file;
	if (f->function && file && f->line > 0)
		return xasprintf("%s (%s:%" PRId64 ")", f->function, file, f->line);
	if (f->function && file)
		return xasprintf("%s (%s)", f->function, file);
	return render_frame_name(t, f);
}

/* The caller a helper's frame is told apart by (model-site.c), or NULL. */
static const struct trace_frame *split_caller(const struct trace *t, const struct trace_stack *s)
{
	const struct trace_stack_site *ss = s && t->stack_sites ? &t->stack_sites[s - t->stacks]
								 : NULL;

	if (!ss)
		return NULL;
	if (ss->python != TRACE_NONE)
		return ss->python_split && ss->python_caller != TRACE_NONE
			       ? &t->frames[ss->python_caller] : NULL;
	return ss->native != TRACE_NONE && ss->native_split && ss->native_caller != TRACE_NONE
		       ? &t->frames[ss->native_caller] : NULL;
}

char *render_stack_label(const struct trace *t, int64_t stack, bool short_file)
{
	const struct trace_stack *s = trace_find_stack(t, stack);
	const struct trace_frame *caller;
	_autofree_ char *label = NULL, *by = NULL;
	uint32_t depth;

	if (stack == 0)
		return xasprintf("(no stack recorded)");
	if (!s)
		return xasprintf("(stack %" PRId64 " is not in the trace)", stack);
	label = render_frame_label(t, render_user_frame(t, s, &depth), short_file);
	caller = split_caller(t, s);
	if (!caller)
		return xstrdup(label);
	by = render_frame_label(t, caller, short_file);
	return xasprintf("%s <- %s", label, by);
}

struct stack_frames {
	const struct trace *t;
	const struct trace_stack *s;
};

/* trace-user-frame.h's view of a frame of the trace's stack. */
static bool frame_view(void *ctx, uint32_t i, struct trace_frame_view *out)
{
	const struct stack_frames *sf = ctx;
	const struct trace_frame *f = trace_stack_frame(sf->t, sf->s, i);
	const struct trace_module *mod = f ? trace_frame_module(sf->t, f) : NULL;

	if (!f || (f->kind != MT_FRAME_PYTHON && f->kind != MT_FRAME_NATIVE))
		return false;
	*out = (struct trace_frame_view){ .python = f->kind == MT_FRAME_PYTHON,
					  .function = f->function,
					  .file = f->file,
					  .module_path = mod ? mod->path : NULL };
	return true;
}

const char *render_library_handle(const struct trace *t, int64_t stack)
{
	struct stack_frames sf = { .t = t, .s = trace_find_stack(t, stack) };

	return sf.s ? trace_library_handle(sf.s->depth, frame_view, &sf) : NULL;
}

const char *const render_role_key[TRACE_ROLES] = {
	"parameters", "gradients", "optimizer_state", "activations", "temporaries",
	"workspaces", "cache",	    "data",	       "other",
};

const char *const render_role_words[TRACE_ROLES] = {
	"parameters", "gradients", "optimizer state", "activations", "temporaries",
	"workspaces", "cache",	    "data",	       "other",
};

enum trace_role render_role_of(const struct trace *t, int64_t stack)
{
	struct stack_frames sf = { .t = t, .s = trace_find_stack(t, stack) };

	return sf.s ? trace_role_of(sf.s->depth, frame_view, &sf) : TRACE_ROLE_OTHER;
}

struct stack_role {
	int64_t stack;
	enum trace_role role;
};

static int cmp_stack_role(const void *a, const void *b)
{
	const struct stack_role *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static enum trace_role role_by_stack(const struct stack_role *r, size_t n, int64_t stack)
{
	struct stack_role key = { .stack = stack };
	const struct stack_role *hit = bsearch(&key, r, n, sizeof(*r), cmp_stack_role);

	return hit ? hit->role : TRACE_ROLE_OTHER;
}

bool render_roles(const struct trace *t, const struct model_framework *f,
		  const struct model_oom *o, uint64_t out[TRACE_ROLES])
{
	if (!f->has || f->bfc)
		return false;
	memset(out, 0, TRACE_ROLES * sizeof(*out));
	struct stack_role *r = xcalloc(f->n_groups + 1, sizeof(*r));

	for (size_t i = 0; i < f->n_groups; i++)
		r[i] = (struct stack_role){ .stack = f->holders[i].stack,
					    .role = render_role_of(t, f->holders[i].stack) };
	if (f->blocks_cut) { /* by stack: the gradients not told from backward's own */
		for (size_t i = 0; i < f->n_groups; i++)
			out[r[i].role] += f->holders[i].bytes;
	} else {
		struct trace_role_block *b = xcalloc(f->n_blocks + 1, sizeof(*b));
		size_t n = 0;

		qsort(r, f->n_groups, sizeof(*r), cmp_stack_role);
		for (size_t i = 0; i < f->n_blocks; i++)
			if (f->blocks[i].state == MODEL_FW_ALLOCATED)
				b[n++] = (struct trace_role_block){
					.size = f->blocks[i].size, .requested = f->blocks[i].requested,
					.role = role_by_stack(r, f->n_groups, f->blocks[i].stack) };
		trace_roles_add(b, n, out);
		free(b);
	}
	free(r);
	out[TRACE_ROLE_CACHE] += sat_sub(f->reserved, f->allocated);
	if (!o)
		return true;
	uint64_t handles = 0;

	for (size_t i = 0; o->has_holders && i < o->n_holders; i++)
		if (render_library_handle(t, o->holders[i].stack))
			handles += o->holders[i].bytes;
	uint64_t outside = sat_sub(o->live_bytes, f->reserved);

	handles = handles < outside ? handles : outside;
	out[TRACE_ROLE_WORKSPACES] += handles;
	out[TRACE_ROLE_OTHER] += outside - handles;
	return true;
}

enum render_variable render_variable_of(const struct trace *t, int64_t stack)
{
	struct stack_frames sf = { .t = t, .s = trace_find_stack(t, stack) };

	return sf.s ? (enum render_variable)trace_tf_variable_of(sf.s->depth, frame_view, &sf)
		    : RENDER_NOT_VARIABLE;
}

uint64_t render_oom_device_used(const struct model_oom *o)
{
	if (!o->has_device_free || !o->has_device_total || o->device_total <= 0)
		return 0;
	if (o->device_free <= 0)
		return (uint64_t)o->device_total;
	return o->device_free < o->device_total ? (uint64_t)(o->device_total - o->device_free) : 0;
}

bool render_arena_oom(const struct trace *t, const struct model_oom *o)
{
	const char *api = t ? trace_api_name(t, o->api) : NULL;

	return o->framework.has && o->framework.bfc && api && strcmp(api, "BFCAllocator") == 0;
}

bool render_bfc_beyond_limit(const struct trace *t, const struct model_oom *o)
{
	const char *api = t ? trace_api_name(t, o->api) : NULL;

	return api && strcmp(api, "BFCAllocator") == 0 &&
	       (!o->framework.has || !o->framework.reserved) && o->has_device_free &&
	       o->device_free > 0 && (uint64_t)o->device_free >= o->requested;
}

uint64_t render_arena_limit(const struct model_oom *o)
{
	const struct model_framework *f = &o->framework;
	uint64_t total = o->has_device_total && o->device_total > 0 ? (uint64_t)o->device_total : 0;

	return trace_cause_arena_limit(f->reserved, f->n_segments, total);
}

bool render_cache_request(const struct trace *t, const struct model_oom *o, uint64_t *bytes)
{
	if (o->framework.has_request) {
		*bytes = o->framework.requested;
		return true;
	}
	if (render_arena_oom(t, o)) {
		*bytes = o->requested;
		return true;
	}
	return false;
}

uint64_t render_cache_device_free(const struct trace *t, const struct model_oom *o)
{
	if (render_arena_oom(t, o))
		return 0;
	return o->has_device_free && o->device_free > 0 ? (uint64_t)o->device_free : 0;
}

bool render_cache_fragmentation(const struct trace *t, const struct model_oom *o)
{
	const struct model_framework *f = &o->framework;
	uint64_t requested;

	if (!f->has || o->allocator_own || !render_cache_request(t, o, &requested))
		return false;
	if (render_arena_oom(t, o))
		return trace_cause_arena_fragmentation(requested, sat_sub(f->reserved, f->allocated),
						       f->largest_free, f->reserved);
	return trace_cause_cache_fragmentation(requested, sat_sub(f->reserved, f->allocated),
					       f->largest_free, render_cache_device_free(t, o));
}

const struct trace_frame *render_model_site_frame(const struct trace *t,
						  const struct model_site *s)
{
	uint32_t depth;

	switch (s->kind) {
	case SITE_PYTHON:
	case SITE_NATIVE:
		return s->id >= 0 && (uint64_t)s->id < t->n_frames ? &t->frames[s->id] : NULL;
	case SITE_OP:
	case SITE_CUPTI:
		return NULL;
	}
	return render_user_frame(t, trace_find_stack(t, s->stack), &depth);
}

const char *render_site_kind_name(int kind)
{
	switch (kind) {
	case SITE_PYTHON: return "python";
	case SITE_OP: return "op";
	case SITE_NATIVE: return "native";
	case SITE_CUPTI: return "cupti";
	}
	return "stack";
}

char *render_op_label(const struct trace *t, int64_t op)
{
	const struct trace_op *o = trace_find_op(t, op);

	if (!o)
		return xasprintf("?");
	if (o->domain)
		return xasprintf("%s (%s)", o->name, o->domain);
	return xstrdup(o->name);
}

const char *render_module_name(const struct trace *t, int64_t module)
{
	if (module < 0 || (uint64_t)module >= t->n_modules)
		return "an unknown module";
	return path_basename(t->modules[module].path);
}

char *render_model_site_label(const struct trace *t, const struct model_site *s, bool short_file)
{
	_autofree_ char *op = NULL;

	switch (s->kind) {
	case SITE_PYTHON:
	case SITE_NATIVE:
		return render_frame_label(t, render_model_site_frame(t, s), short_file);
	case SITE_OP:
		op = render_op_label(t, s->id);
		return xasprintf("[op] %s", op);
	case SITE_CUPTI:
		return xasprintf("(seen by CUPTI only: %s)", render_module_name(t, s->id));
	}
	if (!trace_find_stack(t, s->stack))
		return render_stack_label(t, s->stack, short_file);
	return render_frame_label(t, render_model_site_frame(t, s), short_file);
}

char *render_model_site_label_fit(const struct trace *t, const struct model_site *s,
				  bool short_file, size_t room)
{
	bool framed = s->kind == SITE_PYTHON || s->kind == SITE_NATIVE ||
		      (s->kind != SITE_OP && s->kind != SITE_CUPTI && trace_find_stack(t, s->stack));

	if (!framed)
		return render_model_site_label(t, s, short_file);
	return render_frame_label_fit(t, render_model_site_frame(t, s), short_file, room);
}

const char *render_growth_basis(int basis)
{
	switch (basis) {
	case MODEL_POINT_MARK: return "marks";
	case MODEL_POINT_RANGE: return "ranges";
	case MODEL_POINT_INSTANTIATION: return "instantiations";
	case MODEL_POINT_SPAN: return "spans";
	}
	return NULL;
}

char *render_point_label(const struct trace *t, const struct model_point *p)
{
	if (p->kind == MODEL_POINT_INSTANTIATION)
		return xasprintf("exec 0x%" PRIx64 " of graph 0x%" PRIx64, p->exec, p->graph);
	if (p->kind == MODEL_POINT_SPAN)
		return xstrdup(fmt_seconds(p->time_ns).s);
	return p->has_op ? render_op_label(t, p->op) : xstrdup("?");
}

uint64_t render_graph_never_freed_bytes(const struct model_graphs *g)
{
	uint64_t n = 0;

	for (size_t i = 0; i < g->n_never_freed; i++)
		n = sat_add(n, g->never_freed[i].bytes);
	return n;
}

const struct trace_frame *render_user_frame(const struct trace *t, const struct trace_stack *s,
					    uint32_t *depth)
{
	const struct trace_stack_site *ss = s && t->stack_sites ? &t->stack_sites[s - t->stacks]
								 : NULL;

	if (ss && ss->python != TRACE_NONE) {
		*depth = ss->python_depth;
		return &t->frames[ss->python];
	}
	if (ss && ss->native != TRACE_NONE) {
		*depth = ss->native_depth;
		return &t->frames[ss->native];
	}
	return named_frame(t, s, depth);
}

int64_t render_launch_thread(const struct trace *t, const struct trace_stack *s, uint32_t depth)
{
	for (uint32_t i = 0; s && i < depth && i < s->depth; i++) {
		const struct trace_frame *f = trace_stack_frame(t, s, i);

		if (f && f->kind == MT_FRAME_LAUNCH)
			return f->ip;
	}
	return -1;
}

/* ---- a frame's label in a width (the text report) --------------------- */

/* A name is never cut to fewer columns than this, even when its file:line
 * leaves less: a line may pass the width, a name must still say something. */
#define NAME_FLOOR 16

/* ...and a C++ function's last name is kept whole, past the room, up to
 * this many (a name longer than that is no name a person reads whole). */
#define NAME_WHOLE 48

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The length of the operator at s ("operator()", "operator<<",
 * "operator->"...), whose brackets are no brackets; 0 when s is none. */
static size_t operator_len(const char *name, const char *s)
{
	size_t n = strlen("operator");

	if (strncmp(s, "operator", n) != 0 || (s > name && ident_char(s[-1])) || ident_char(s[n]))
		return 0;
	if (strncmp(s + n, "()", 2) == 0 || strncmp(s + n, "[]", 2) == 0)
		return n + 2;
	return n + strspn(s + n, "+-*/%^&|~!=<>,");
}

/* The close that matches the open at s, or NULL. */
static const char *matching(const char *name, const char *s, char open, char close)
{
	int depth = 0;

	for (const char *p = s; *p; p++) {
		size_t op = operator_len(name, p);

		if (op) {
			p += op - 1;
			continue;
		}
		depth += *p == open;
		depth -= *p == close;
		if (depth == 0)
			return p;
	}
	return NULL;
}

/* name with what is between each outermost open and close that follows a
 * name ("f(int)", "Pool<float>", not "(anonymous namespace)") as "...".
 * Caller frees. */
static char *collapse(const char *name, char open, char close)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *p = name, *op_end = NULL;

	if (!f)
		return xstrdup(name);
	while (*p) {
		size_t op = operator_len(name, p);
		bool named = p > name && (ident_char(p[-1]) || strchr(">)]", p[-1]) || p == op_end);
		const char *end = *p == open && named ? matching(name, p, open, close) : NULL;

		if (*p == open && named && !end) {
			fputs(p, f); /* unbalanced: the rest as it is, in one pass */
			break;
		}
		if (op) {
			fwrite(p, 1, op, f);
			p += op;
			op_end = p;
		} else if (end && end > p + 1) {
			fprintf(f, "%c...%c", open, close);
			p = end + 1;
		} else {
			fputc(*p++, f);
		}
	}
	fclose(f);
	return buf ? buf : xstrdup(name);
}

/* The name after its fewest leading qualifiers ("a::b::" of
 * "a::b::c(...)", outside brackets) whose dropping leaves it at most room
 * code points with "..." before it; else after all of them; NULL when it
 * has none. One pass: names can be long. */
static const char *drop_qualifiers(const char *name, size_t room)
{
	const char *last = NULL;
	size_t w = text_width(name);
	int depth = 0;

	for (const char *p = name; *p; p++) {
		size_t op = operator_len(name, p);

		if (op) {
			w -= op;
			p += op - 1;
			continue;
		}
		depth += strchr("(<{[", *p) != NULL;
		depth -= strchr(")>}]", *p) != NULL;
		if (depth == 0 && p[0] == ':' && p[1] == ':') {
			last = p + 2;
			if (w - 2 + 3 <= room)
				return last;
		}
		w -= ((unsigned char)*p & 0xC0) != 0x80;
	}
	return last;
}

/* s, else "..." and its last room - 3 code points (room at least
 * NAME_FLOOR). Caller frees. */
static char *cut_left(const char *s, size_t room)
{
	size_t w = text_width(s), keep;

	if (room < NAME_FLOOR)
		room = NAME_FLOOR;
	if (w <= room)
		return xstrdup(s);
	keep = room - 3;
	while (w > keep && *s) {
		s++;
		if (((unsigned char)*s & 0xC0) != 0x80)
			w--;
	}
	return xasprintf("...%s", s);
}

/* A function's name in at most room code points: C++'s parameter lists,
 * then template arguments, as "(...)" and "<...>", then its leading
 * qualifiers as "..."; a C++ name keeps its last one whole, past room if
 * it must (up to NAME_WHOLE); else the name's start is cut. Caller
 * frees. */
static char *name_fit(const char *name, bool cxx, size_t room)
{
	_autofree_ char *no_params = NULL, *no_templates = NULL;
	const char *s, *tail;

	if (text_width(name) <= room)
		return xstrdup(name);
	if (!cxx)
		return cut_left(name, room);
	no_params = collapse(name, '(', ')');
	if (text_width(no_params) <= room)
		return xstrdup(no_params);
	no_templates = collapse(no_params, '<', '>');
	s = no_templates;
	if (text_width(s) <= room)
		return xstrdup(s);
	tail = drop_qualifiers(s, room);
	if (tail && text_width(tail) + 3 <= (room > NAME_WHOLE ? room : NAME_WHOLE))
		return xasprintf("...%s", tail);
	return cut_left(s, room);
}

char *render_frame_label_fit(const struct trace *t, const struct trace_frame *f, bool short_file,
			     size_t room)
{
	const char *file = f ? (short_file ? path_basename(f->file) : f->file) : NULL;
	_autofree_ char *where = NULL, *name = NULL;
	size_t w;

	/* no name: "module+0x1a2b" says where, and stays whole */
	if (!f || !f->function)
		return render_frame_label(t, f, short_file);
	if (file && f->line > 0)
		where = xasprintf(" (%s:%" PRId64 ")", file, f->line);
	else
		where = file ? xasprintf(" (%s)", file) : xstrdup("");
	w = text_width(where);
	name = name_fit(f->function, f->kind != MT_FRAME_PYTHON, room > w ? room - w : 0);
	return xasprintf("%s%s", name, where);
}
