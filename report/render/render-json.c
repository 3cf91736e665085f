/* The JSON report. Its keys are a contract with scripts and tests:
 * docs/report-json.md describes every one; keep them in step. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model-timeline.h"
#include "diagnose.h"
#include "render.h"
#include "trace-schema.h"
#include "util-math.h"
#include "util-mem.h"
#include "util-str.h"

#define MAX_DEPTH 16

/* A small streaming writer: pretty-printed, except objects opened "inline"
 * (frames, groups), which stay on one line so stacks read as lists. It
 * keeps its own buffer: a report writes millions of short pieces, and a
 * stdio call for each cost more than the rest of the writing. */
#define JW_BUF 65536

/* A frame's JSON, kept the first time it is written: a frame is written
 * for every stack it is in, and escaping its strings each time was most
 * of the writing of a report with many sites. */
struct frame_memo {
	char *json; /* from '{' to '}'; NULL: not kept yet */
	size_t len;
};

/* Frames longer than this are written anew each time (names of kilobytes
 * are rare): one kept is always whole in the buffer. */
#define FRAME_MEMO_MAX (JW_BUF / 4)

struct jw {
	FILE *f;
	int depth;
	bool first[MAX_DEPTH];
	bool inline_[MAX_DEPTH];
	size_t n;
	uint64_t flushes;
	struct frame_memo *frames; /* by index in the trace's frames */
	size_t n_frames;
	char buf[JW_BUF];
};

static void jw_flush(struct jw *w)
{
	if (w->n)
		fwrite(w->buf, 1, w->n, w->f);
	w->n = 0;
	w->flushes++;
}

/* Room for need bytes (at most JW_BUF) at the end of the buffer. */
static inline char *jw_room(struct jw *w, size_t need)
{
	if (JW_BUF - w->n < need)
		jw_flush(w);
	return w->buf + w->n;
}

static inline void jw_put(struct jw *w, const char *s, size_t n)
{
	if (n > JW_BUF) {
		jw_flush(w);
		fwrite(s, 1, n, w->f);
		return;
	}
	memcpy(jw_room(w, n), s, n);
	w->n += n;
}

static inline void jw_putc(struct jw *w, char c)
{
	if (w->n == JW_BUF)
		jw_flush(w);
	w->buf[w->n++] = c;
}

/* s as a JSON string literal (escape_json's), NULL as null. */
static void jw_escape(struct jw *w, const char *s)
{
	size_t len;

	if (!s) {
		jw_put(w, "null", 4);
		return;
	}
	len = strlen(s);
	if (len > (JW_BUF - 2) / 6) {
		jw_flush(w);
		escape_json(w->f, s);
		return;
	}
	w->n = (size_t)(escape_json_mem(jw_room(w, ESCAPE_JSON_MAX(len)), s, len) - w->buf);
}

/* A new line indented to depth (two spaces a level). */
static void jw_newline(struct jw *w, int depth)
{
	char *o = jw_room(w, (size_t)depth * 2 + 1);

	*o = '\n';
	memset(o + 1, ' ', (size_t)depth * 2);
	w->n += (size_t)depth * 2 + 1;
}

static void jw_sep(struct jw *w)
{
	bool in = w->depth > 0 && w->inline_[w->depth - 1];

	if (w->depth > 0 && !w->first[w->depth - 1])
		jw_putc(w, ',');
	if (w->depth > 0)
		w->first[w->depth - 1] = false;
	if (in) {
		jw_putc(w, ' ');
		return;
	}
	if (w->depth > 0)
		jw_newline(w, w->depth);
}

static void jw_key(struct jw *w, const char *key)
{
	jw_sep(w);
	if (key) {
		jw_escape(w, key);
		jw_put(w, ": ", 2);
	}
}

/* jw_open once the separator is out (jw_sep). */
static void jw_open_here(struct jw *w, char c, bool inline_)
{
	jw_putc(w, c);
	/* deeper than MAX_DEPTH never happens: the report's shape is fixed */
	if (w->depth < MAX_DEPTH) {
		w->first[w->depth] = true;
		w->inline_[w->depth] = inline_ || (w->depth > 0 && w->inline_[w->depth - 1]);
		w->depth++;
	}
}

static void jw_open(struct jw *w, const char *key, char c, bool inline_)
{
	jw_key(w, key);
	jw_open_here(w, c, inline_);
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first[w->depth]) {
		if (w->inline_[w->depth])
			jw_putc(w, ' ');
		else
			jw_newline(w, w->depth);
	}
	jw_putc(w, c);
}

static void jw_str(struct jw *w, const char *key, const char *v)
{
	jw_key(w, key);
	jw_escape(w, v);
}

/* v in decimal, as printf's PRIu64 writes it (after a '-' if negative). */
static void jw_put_u64(struct jw *w, uint64_t v, bool negative)
{
	char buf[24];
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (negative)
		*--p = '-';
	jw_put(w, p, (size_t)(buf + sizeof(buf) - p));
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_put_u64(w, v, false);
}

static void jw_i64(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	jw_put_u64(w, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
}

/* v as printf's "%.3f" writes it. */
static void jw_fixed3(struct jw *w, double v)
{
	char num[64];
	int len = snprintf(num, sizeof(num), "%.3f", v);

	if (len >= 0 && (size_t)len < sizeof(num)) {
		jw_put(w, num, (size_t)len);
		return;
	}
	jw_flush(w);
	fprintf(w->f, "%.3f", v);
}

static void jw_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_put(w, "null", 4);
}

static void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	if (v)
		jw_put(w, "true", 4);
	else
		jw_put(w, "false", 5);
}

/* ---- the report ------------------------------------------------------- */

static void meta_int_or_null(struct jw *w, const struct trace *t, const char *key,
			     const char *meta_key)
{
	int64_t v;

	if (render_meta_int(t, meta_key, &v))
		jw_i64(w, key, v);
	else
		jw_null(w, key);
}

static void write_trace(struct jw *w, const struct trace *t, const struct model *m)
{
	jw_open(w, "trace", '{', false);
	jw_str(w, "path", t->path);
	meta_int_or_null(w, t, "pid", "pid");
	jw_str(w, "cmdline", trace_meta_get(t, "cmdline"));
	jw_str(w, "exe", trace_meta_get(t, "exe"));
	jw_str(w, "host", trace_meta_get(t, "host"));
	meta_int_or_null(w, t, "rank", "rank");
	jw_i64(w, "schema_version", t->schema_version);
	jw_str(w, "memtrace_version", trace_meta_get(t, "memtrace_version"));
	jw_str(w, "end", trace_meta_get(t, "end"));
	meta_int_or_null(w, t, "exit_status", "exit_status");
	jw_i64(w, "duration_ns", render_duration_ns(t, m));
	meta_int_or_null(w, t, "start_realtime_ns", "start_realtime_ns");
	jw_bool(w, "read_immutable", t->immutable);
	jw_bool(w, "wal_ignored", t->wal_ignored);
	jw_u64(w, "missing_stacks", t->missing_stacks);
	jw_u64(w, "missing_frames", t->missing_frames);
	jw_u64(w, "missing_modules", t->missing_modules);
	if (t->flight.on) {
		jw_open(w, "flight", '{', false);
		jw_u64(w, "bound_bytes", t->flight.bound);
		jw_i64(w, "ring_first_seq", t->flight.ring_first_seq);
		jw_i64(w, "ring_first_time_ns", t->flight.ring_first_time_ns);
		jw_u64(w, "events_before_ring", t->flight.trimmed);
		jw_close(w, '}');
	} else {
		jw_null(w, "flight");
	}
	jw_close(w, '}');
}

/* What the model counted of the whole trace, in "totals". */
static void write_counters(struct jw *w, const struct model *m)
{
	jw_u64(w, "ooms", m->n_ooms);
	jw_u64(w, "oom_episodes", m->n_oom_episodes);
	jw_u64(w, "recovered_episodes", m->n_recovered_episodes);
	jw_u64(w, "unmatched_frees", m->unmatched_frees);
	jw_u64(w, "alloc_errors", m->alloc_errors);
	jw_u64(w, "free_errors", m->free_errors);
	jw_u64(w, "reused_addresses", m->reused_addresses);
	jw_u64(w, "untracked_allocations", m->untracked_allocs);
	jw_u64(w, "unknown_events", m->unknown_events);
	jw_u64(w, "unmatched_maps", m->unmatched_maps);
	jw_u64(w, "unmatched_unmaps", m->unmatched_unmaps);
	jw_u64(w, "unmap_errors", m->unmap_errors);
	jw_u64(w, "sites", m->n_sites);
}

/* The totals of a class of memory: "totals" (device-side memory, with
 * the model's counters of the whole trace: counters set) or "host"
 * (pinned host memory: counters NULL). */
static void write_mem(struct jw *w, const char *key, const struct model_mem *mm,
		      const struct model *counters)
{
	jw_open(w, key, '{', false);
	if (counters)
		jw_u64(w, "events", counters->events);
	jw_u64(w, "allocations", mm->allocations);
	jw_u64(w, "frees", mm->frees);
	jw_u64(w, "bytes_allocated", mm->bytes_allocated);
	jw_u64(w, "peak_bytes", mm->peak_bytes);
	if (mm->peak_bytes)
		jw_i64(w, "peak_time_ns", mm->peak_time_ns);
	else
		jw_null(w, "peak_time_ns");
	jw_u64(w, "live_bytes_at_end", mm->live_bytes);
	jw_u64(w, "live_allocations_at_end", mm->live_count);
	if (counters)
		write_counters(w, counters);
	jw_close(w, '}');
}

/* Every kind, seen or not, so scripts can index any of them. */
static void write_kinds(struct jw *w, const struct model *m)
{
	jw_open(w, "memory_kinds", '{', false);
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		const struct model_mem *k = &m->kinds[mem];

		jw_open(w, render_mem_name(mem), '{', true);
		jw_u64(w, "allocations", k->allocations);
		jw_u64(w, "frees", k->frees);
		jw_u64(w, "bytes_allocated", k->bytes_allocated);
		jw_u64(w, "peak_bytes", k->peak_bytes);
		jw_u64(w, "live_bytes_at_end", k->live_bytes);
		jw_u64(w, "live_allocations_at_end", k->live_count);
		jw_bool(w, "counted_as_device", model_mem_is_device(mem));
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void write_devices(struct jw *w, const struct model *m)
{
	jw_open(w, "devices", '[', false);
	for (size_t i = 0; i < m->n_devices; i++) {
		const struct model_device *d = &m->devices[i];

		if (!d->has_info)
			continue;
		jw_open(w, NULL, '{', true);
		jw_i64(w, "id", d->id);
		jw_u64(w, "total_bytes", d->total);
		if (d->has_free)
			jw_u64(w, "free_bytes_at_first_use", d->free_at_first_use);
		else
			jw_null(w, "free_bytes_at_first_use");
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_frame_fields(struct jw *w, const struct trace *t, const struct trace_frame *f)
{
	const struct trace_module *mod = trace_frame_module(t, f);
	static const char *const kinds[] = { "native", "python", "launch" };

	jw_open_here(w, '{', true);
	jw_str(w, "function", f ? f->function : NULL);
	jw_str(w, "symbol", f ? f->symbol : NULL);
	jw_str(w, "file", f ? f->file : NULL);
	if (f && f->line > 0)
		jw_i64(w, "line", f->line);
	else
		jw_null(w, "line");
	jw_str(w, "module", mod ? path_basename(mod->path) : NULL);
	if (f && f->kind == MT_FRAME_NATIVE && f->has_offset)
		jw_i64(w, "offset", f->offset);
	else
		jw_null(w, "offset");
	jw_str(w, "kind", f && f->kind >= 0 && f->kind <= 2 ? kinds[f->kind] : NULL);
	/* the frames after it are the launching thread's (trace-format.md) */
	if (f && f->kind == MT_FRAME_LAUNCH)
		jw_i64(w, "thread", f->ip);
	jw_close(w, '}');
}

/* A frame, inline: the same bytes wherever it is but for the separator
 * before it, so from the second time on they are copied from its memo. */
static void write_frame(struct jw *w, const struct trace *t, const struct trace_frame *f)
{
	size_t i = f ? (size_t)(f - t->frames) : 0;
	struct frame_memo *memo;
	uint64_t flushes;
	size_t from;

	jw_sep(w);
	if (!f || i >= w->n_frames) {
		write_frame_fields(w, t, f);
		return;
	}
	memo = &w->frames[i];
	if (memo->json) {
		jw_put(w, memo->json, memo->len);
		return;
	}
	if (JW_BUF - w->n < FRAME_MEMO_MAX)
		jw_flush(w);
	from = w->n;
	flushes = w->flushes;
	write_frame_fields(w, t, f);
	if (w->flushes == flushes) { /* all of it is in the buffer */
		memo->len = w->n - from;
		memo->json = xmalloc(memo->len);
		memcpy(memo->json, w->buf + from, memo->len);
	}
}

static void write_frames(struct jw *w, const struct trace *t, int64_t stack, const char *key)
{
	const struct trace_stack *s = trace_find_stack(t, stack);

	jw_open(w, key, '[', false);
	for (uint32_t i = 0; s && i < s->depth; i++)
		write_frame(w, t, trace_stack_frame(t, s, i));
	jw_close(w, ']');
}

static void write_pools(struct jw *w, const struct trace *t, const struct model *m)
{
	jw_open(w, "pools", '[', false);
	for (size_t i = 0; i < m->n_pools; i++) {
		const struct model_pool *p = &m->pools[i];

		jw_open(w, NULL, '{', false);
		jw_u64(w, "handle", p->handle);
		jw_bool(w, "created", p->created);
		jw_bool(w, "destroyed", p->destroyed);
		if (p->created) {
			write_frames(w, t, p->created_stack, "created_frames");
		} else {
			jw_open(w, "created_frames", '[', false);
			jw_close(w, ']');
		}
		jw_u64(w, "allocations", p->allocations);
		jw_u64(w, "bytes_allocated", p->bytes_allocated);
		jw_u64(w, "live_bytes_at_end", p->live_bytes);
		jw_u64(w, "trims", p->trims);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_notes(struct jw *w, const struct trace *t, const struct model *m)
{
	jw_open(w, "notes", '[', false);
	for (size_t i = 0; i < m->n_notes; i++) {
		const struct model_note *n = &m->notes[i];

		if (n->kind != MODEL_NOTE_PREALLOCATION)
			continue;
		jw_open(w, NULL, '{', false);
		jw_str(w, "kind", "preallocation");
		jw_i64(w, "time_ns", n->time_ns);
		jw_u64(w, "bytes", n->bytes);
		jw_i64(w, "device", n->device);
		jw_key(w, "fraction_of_device");
		jw_fixed3(w, render_note_fraction(n));
		jw_str(w, "api", trace_api_name(t, n->api));
		jw_i64(w, "stack", n->stack);
		write_frames(w, t, n->stack, "frames");
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_op(struct jw *w, const struct trace *t, const char *key, bool has, int64_t id)
{
	const struct trace_op *op = has ? trace_find_op(t, id) : NULL;

	if (!op) {
		jw_null(w, key);
		return;
	}
	jw_open(w, key, '{', true);
	jw_str(w, "name", op->name);
	jw_str(w, "domain", op->domain);
	jw_close(w, '}');
}

/* The caller a helper's site is told apart by (model-site.c), or null. */
static void write_site_caller(struct jw *w, const struct trace *t, const struct model_site *s)
{
	const struct trace_frame *f = s->caller > 0 && (uint64_t)s->caller <= t->n_frames
					      ? &t->frames[s->caller - 1] : NULL;
	const struct trace_module *mod = f ? trace_frame_module(t, f) : NULL;

	if (!f) {
		jw_null(w, "caller");
		return;
	}
	jw_open(w, "caller", '{', true);
	jw_str(w, "function", f->function);
	jw_str(w, "file", f->file);
	if (f->line > 0)
		jw_i64(w, "line", f->line);
	else
		jw_null(w, "line");
	jw_str(w, "module", mod ? path_basename(mod->path) : NULL);
	jw_close(w, '}');
}

/* What a site is: its frame's fields (none for an op), its op, the
 * caller it is told apart by. */
static void write_site_id(struct jw *w, const struct trace *t, const struct model_site *s)
{
	const struct trace_frame *f = render_model_site_frame(t, s);
	const struct trace_module *mod = trace_frame_module(t, f);
	const char *module = mod ? path_basename(mod->path) : NULL;

	if (s->kind == SITE_CUPTI && s->id >= 0 && (uint64_t)s->id < t->n_modules)
		module = path_basename(t->modules[s->id].path);
	jw_open(w, "site", '{', true);
	jw_str(w, "kind", render_site_kind_name(s->kind));
	jw_str(w, "function", f ? f->function : NULL);
	jw_str(w, "file", f ? f->file : NULL);
	if (f && f->line > 0)
		jw_i64(w, "line", f->line);
	else
		jw_null(w, "line");
	jw_str(w, "module", module);
	if (s->kind == SITE_OP)
		write_op(w, t, "op", true, s->id);
	else
		write_op(w, t, "op", s->has_op, s->op);
	write_site_caller(w, t, s);
	jw_close(w, '}');
}

static void write_sites(struct jw *w, const struct trace *t, const struct model *m,
			size_t n)
{
	jw_open(w, "sites", '[', false);
	for (size_t i = 0; i < n; i++) {
		const struct model_site *s = &m->sites[i];

		jw_open(w, NULL, '{', false);
		write_site_id(w, t, s);
		jw_i64(w, "stack", s->stack);
		write_frames(w, t, s->stack, "frames");
		jw_u64(w, "stacks", s->stacks);
		jw_u64(w, "peak_bytes", s->at_peak);
		jw_u64(w, "total_bytes", s->total_bytes);
		jw_u64(w, "count", s->count);
		jw_u64(w, "maps", s->maps);
		jw_u64(w, "mapped_bytes", s->mapped_bytes);
		jw_u64(w, "live_bytes_at_end", s->live);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_ops(struct jw *w, const struct trace *t, const struct model *m, size_t n)
{
	jw_open(w, "ops", '[', false);
	for (size_t i = 0; i < n; i++) {
		const struct model_op *op = &m->ops[i];
		const struct trace_op *o = trace_find_op(t, op->id);

		jw_open(w, NULL, '{', true);
		jw_str(w, "name", o ? o->name : NULL);
		jw_str(w, "domain", o ? o->domain : NULL);
		jw_u64(w, "peak_bytes", op->at_peak);
		jw_u64(w, "total_bytes", op->total_bytes);
		jw_u64(w, "count", op->count);
		jw_u64(w, "live_bytes_at_end", op->live);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* A site in a list of another section: what it is, its first stack. */
static void write_site_ref(struct jw *w, const struct trace *t, const struct model_site *s,
			   uint64_t bytes)
{
	jw_open(w, NULL, '{', true);
	write_site_id(w, t, s);
	jw_i64(w, "stack", s->stack);
	jw_u64(w, "bytes", bytes);
	jw_close(w, '}');
}

static const char *mark_kind_name(int kind)
{
	switch (kind) {
	case MARK_INTERNAL:
	case MARK_CUPTI_ON:
	case MARK_CUPTI_OFF: return "memtrace";
	}
	return "user";
}

static void write_marks(struct jw *w, const struct trace *t, const struct model *m,
			const struct render_opts *o)
{
	jw_open(w, "marks", '[', false);
	for (size_t i = 0; i < m->n_marks; i++) {
		const struct model_mark *mk = &m->marks[i];
		const struct model_point *p = &m->points[mk->point];
		const struct trace_op *op = p->has_op ? trace_find_op(t, p->op) : NULL;
		size_t n = render_limit(o, mk->n_sites);

		jw_open(w, NULL, '{', false);
		jw_i64(w, "seq", p->seq);
		jw_i64(w, "time_ns", p->time_ns);
		jw_str(w, "label", op ? op->name : NULL);
		jw_str(w, "domain", op ? op->domain : NULL);
		jw_str(w, "by", mark_kind_name(p->mark_kind));
		jw_str(w, "api", trace_api_name(t, p->api));
		jw_i64(w, "stack", p->stack);
		write_frames(w, t, p->stack, "frames");
		jw_u64(w, "live_bytes", p->live_bytes);
		jw_u64(w, "live_allocations", p->live_count);
		if (mk->has_sites) {
			jw_open(w, "live_by_site", '[', false);
			for (size_t k = 0; k < n; k++)
				write_site_ref(w, t, &m->sites[mk->sites[k].site], mk->sites[k].bytes);
			jw_close(w, ']');
		} else {
			jw_null(w, "live_by_site");
		}
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void write_point(struct jw *w, const struct trace *t, const struct model_point *p)
{
	_autofree_ char *label = render_point_label(t, p);

	jw_open(w, NULL, '{', true);
	jw_str(w, "label", label);
	jw_i64(w, "seq", p->seq);
	jw_i64(w, "time_ns", p->time_ns);
	jw_u64(w, "live_bytes", p->live_bytes);
	jw_close(w, '}');
}

static void write_growth(struct jw *w, const struct trace *t, const struct model *m,
			 const struct render_opts *o)
{
	const struct model_growth *g = &m->growth;
	size_t n = render_limit(o, g->n_sites);

	jw_open(w, "growth", '{', false);
	jw_str(w, "basis", render_growth_basis(g->basis));
	jw_u64(w, "candidates", g->thinned_from ? g->thinned_from : g->n_points);
	jw_open(w, "points", '[', false);
	for (size_t k = 0; k < g->n_points; k++)
		write_point(w, t, &m->points[g->points[k]]);
	jw_close(w, ']');
	jw_open(w, "sites", '[', false);
	for (size_t i = 0; i < n; i++) {
		const struct model_growth_site *gs = &g->sites[i];
		const struct model_site *s = &m->sites[gs->site];

		jw_open(w, NULL, '{', false);
		write_site_id(w, t, s);
		jw_i64(w, "stack", s->stack);
		write_frames(w, t, s->stack, "frames");
		jw_open(w, "live_bytes", '[', true);
		for (size_t k = 0; k < g->n_points; k++)
			jw_u64(w, NULL, gs->live[k]);
		jw_close(w, ']');
		jw_i64(w, "growth_per_point", gs->per_point);
		jw_bool(w, "growing", gs->growing);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void write_orphan(struct jw *w, const struct trace *t, const struct model_orphan *or)
{
	jw_open(w, NULL, '{', false);
	jw_str(w, "kind", or->kind == MODEL_ORPHAN_EXEC ? "exec" : "graph");
	jw_u64(w, "handle", or->handle);
	if (or->kind == MODEL_ORPHAN_EXEC)
		jw_u64(w, "graph", or->graph);
	else
		jw_null(w, "graph");
	jw_i64(w, "time_ns", or->time_ns);
	jw_i64(w, "stack", or->stack);
	write_frames(w, t, or->stack, "frames");
	jw_u64(w, "pinned_bytes", or->pinned_bytes);
	jw_u64(w, "segment_bytes", or->segment_bytes);
	jw_bool(w, "pinned_by_exec", or->pinned_by_exec);
	jw_u64(w, "launches", or->launches);
	jw_close(w, '}');
}

static void write_graphs(struct jw *w, const struct trace *t, const struct model *m,
			 const struct render_opts *o)
{
	const struct model_graphs *g = &m->graphs;
	size_t n = render_limit(o, g->n_orphans);

	jw_open(w, "graphs", '{', false);
	jw_u64(w, "created", g->created);
	jw_u64(w, "destroyed", g->destroyed);
	jw_u64(w, "execs_created", g->execs_created);
	jw_u64(w, "execs_destroyed", g->execs_destroyed);
	jw_u64(w, "launches", g->launches);
	jw_u64(w, "uploads", g->uploads);
	jw_u64(w, "failed_launches", g->failed_launches);
	jw_u64(w, "alloc_nodes", g->alloc_nodes);
	jw_u64(w, "captured_allocations", g->captured_allocs);
	jw_u64(w, "free_nodes", g->free_nodes);
	jw_u64(w, "captured_frees", g->captured_frees);
	jw_u64(w, "unattached_nodes", g->unattached);
	jw_u64(w, "capture_segments", g->capture_segments);
	jw_u64(w, "capture_segment_bytes", g->capture_segment_bytes);
	jw_u64(w, "mem_trims", g->trims);
	jw_u64(w, "pool_bytes_at_end", g->pool_bytes);
	jw_u64(w, "pool_peak_bytes", g->pool_peak);
	jw_u64(w, "pool_reserved_bytes_at_end", g->pool_reserved);
	jw_u64(w, "orphans_pinned_bytes", g->orphans_pinned);
	jw_u64(w, "orphan_execs_pinned_bytes", g->orphan_execs_pinned);
	jw_open(w, "orphans_at", '{', true);
	jw_str(w, "mark", t->opts.at_mark);
	jw_bool(w, "found", g->at_mark);
	if (g->at_mark)
		jw_i64(w, "time_ns", g->at_time_ns);
	else
		jw_null(w, "time_ns");
	jw_close(w, '}');
	jw_open(w, "orphaned", '[', false);
	for (size_t i = 0; i < n; i++)
		write_orphan(w, t, &g->orphans[i]);
	jw_close(w, ']');
	jw_open(w, "graph_memory_never_freed", '[', false);
	for (size_t i = 0; i < render_limit(o, g->n_never_freed); i++) {
		const struct model_graph_leak *l = &g->never_freed[i];

		jw_open(w, NULL, '{', false);
		jw_u64(w, "graph", l->graph);
		jw_i64(w, "stack", l->stack);
		write_frames(w, t, l->stack, "frames");
		jw_u64(w, "bytes", l->bytes);
		jw_u64(w, "count", l->count);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void write_cupti_alone(struct jw *w, const struct trace *t, const struct model_cupti *c,
			      const char *key)
{
	jw_open(w, key, '{', false);
	jw_u64(w, "count", c->alone_count);
	jw_u64(w, "bytes", c->alone_bytes);
	jw_u64(w, "live_bytes_at_end", c->alone_live_bytes);
	jw_open(w, "by_module", '[', false);
	for (size_t i = 0; i < c->n_by_module; i++) {
		const struct model_cupti_module *mod = &c->by_module[i];
		bool known = mod->module >= 0 && (uint64_t)mod->module < t->n_modules;

		jw_open(w, NULL, '{', true);
		jw_str(w, "module", known ? path_basename(t->modules[mod->module].path) : NULL);
		jw_u64(w, "count", mod->count);
		jw_u64(w, "bytes", mod->bytes);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void write_count_bytes(struct jw *w, const char *key, uint64_t count, uint64_t bytes)
{
	jw_open(w, key, '{', true);
	jw_u64(w, "count", count);
	jw_u64(w, "bytes", bytes);
	jw_close(w, '}');
}

/* docs/cupti.md proposed on, alone, not_confirmed and graphs_alone; the
 * first draft of the report, active, cupti_only and unconfirmed: both. */
static void write_cupti(struct jw *w, const struct trace *t, const struct model *m)
{
	const struct model_cupti *c = &m->cupti;

	jw_open(w, "cupti", '{', false);
	jw_bool(w, "on", c->on);
	jw_bool(w, "active", c->on || c->records);
	jw_u64(w, "records", c->records);
	jw_u64(w, "allocations", c->allocs);
	jw_u64(w, "matched", c->matched);
	jw_u64(w, "matched_bytes", c->matched_bytes);
	write_cupti_alone(w, t, c, "alone");
	write_cupti_alone(w, t, c, "cupti_only");
	write_count_bytes(w, "not_confirmed", c->unconfirmed, c->unconfirmed_bytes);
	write_count_bytes(w, "unconfirmed", c->unconfirmed, c->unconfirmed_bytes);
	jw_u64(w, "graphs_matched", c->graphs_matched);
	jw_open(w, "graphs_alone", '{', true);
	jw_u64(w, "graphs", c->graphs_alone);
	jw_u64(w, "never_destroyed", c->graphs_alone_never_destroyed);
	jw_u64(w, "execs", c->execs_alone);
	jw_u64(w, "execs_never_destroyed", c->execs_alone_never_destroyed);
	jw_close(w, '}');
	jw_close(w, '}');
}

static void write_group(struct jw *w, const struct trace *t, const struct model_group *g,
			bool with_mem)
{
	jw_open(w, NULL, '{', false);
	jw_i64(w, "stack", g->stack);
	write_frames(w, t, g->stack, "frames");
	jw_u64(w, "bytes", g->bytes);
	jw_u64(w, "count", g->count);
	if (with_mem)
		jw_str(w, "mem", render_mem_name(g->mem));
	jw_close(w, '}');
}

static void write_leaks(struct jw *w, const struct trace *t, const struct model *m, size_t n)
{
	jw_open(w, "leaks", '[', false);
	for (size_t i = 0; i < n; i++) {
		const struct model_group *g = &m->leaks[i];

		jw_open(w, NULL, '{', false);
		jw_i64(w, "stack", g->stack);
		write_frames(w, t, g->stack, "frames");
		jw_u64(w, "bytes", g->bytes);
		jw_u64(w, "count", g->count);
		jw_str(w, "mem", render_mem_name(g->mem));
		jw_bool(w, "framework_cache", g->cache);
		jw_str(w, "library_handle", g->cache ? NULL : render_library_handle(t, g->stack));
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* A cause's figures: bytes, and what its cause adds (docs/report-json.md). */
static void write_cause_figures(struct jw *w, const struct diagnosis *x)
{
	bool limit = x->kind == DIAG_ALLOCATOR_LIMIT;

	if (limit && !x->bytes) /* the cap is not in the trace */
		jw_null(w, "bytes");
	else
		jw_u64(w, "bytes", x->bytes);
	if (x->kind == DIAG_GROWTH)
		jw_u64(w, "repetitions", x->rounds);
	if (x->kind == DIAG_TOO_BIG || (limit && x->bytes))
		jw_u64(w, "room_bytes", x->room);
	else if (limit)
		jw_null(w, "room_bytes");
}

static void write_one_diagnosis(struct jw *w, const struct trace *t, const char *key,
				const struct diagnosis *x)
{
	jw_open(w, key, '{', false);
	jw_str(w, "cause", diagnose_cause_name(x->kind));
	jw_str(w, "title", x->title);
	jw_str(w, "evidence", x->evidence);
	jw_str(w, "try", x->remedy);
	if (x->stack)
		jw_i64(w, "stack", x->stack);
	else
		jw_null(w, "stack");
	write_frames(w, t, x->stack, "frames");
	write_cause_figures(w, x);
	jw_close(w, '}');
}

/* The cause of OOM o (NULL: of the run's leaks and growth), then what else
 * applies (report/render/diagnose.c); null when nothing does. */
static void write_diagnosis(struct jw *w, const struct trace *t, const struct model *m,
			    const struct model_oom *o)
{
	struct diagnoses d;

	diagnose_oom(t, m, o, &d);
	if (!d.n) {
		jw_null(w, "diagnosis");
		return;
	}
	jw_open(w, "diagnosis", '{', false);
	jw_str(w, "cause", diagnose_cause_name(d.items[0].kind));
	jw_str(w, "title", d.items[0].title);
	jw_str(w, "evidence", d.items[0].evidence);
	jw_str(w, "try", d.items[0].remedy);
	if (d.items[0].stack)
		jw_i64(w, "stack", d.items[0].stack);
	else
		jw_null(w, "stack");
	write_frames(w, t, d.items[0].stack, "frames");
	write_cause_figures(w, &d.items[0]);
	jw_open(w, "also", '[', false);
	for (size_t i = 1; i < d.n; i++)
		write_one_diagnosis(w, t, NULL, &d.items[i]);
	jw_close(w, ']');
	jw_close(w, '}');
	diagnoses_fini(&d);
}

/* Memory by role (render_roles): null without PyTorch's cache then. */
static void write_roles(struct jw *w, const struct trace *t, const struct model_framework *f,
			const struct model_oom *o)
{
	uint64_t roles[TRACE_ROLES];

	if (!render_roles(t, f, o, roles)) {
		jw_null(w, "roles");
		return;
	}
	jw_open(w, "roles", '{', false);
	for (int i = 0; i < TRACE_ROLES; i++)
		jw_u64(w, render_role_key[i], roles[i]);
	jw_close(w, '}');
}

/* What would fit (render_what_fits): null without PyTorch. */
static void write_what_fits(struct jw *w, const struct trace *t, const struct model *m,
			    const struct render_opts *o)
{
	struct render_fits x;

	if (!render_what_fits(t, m, o, &x) || !x.has_section) {
		jw_null(w, "what_fits");
		return;
	}
	jw_open(w, "what_fits", '{', false);
	jw_bool(w, "beyond_device", x.beyond);
	if (!x.has) {
		jw_null(w, "batch_fraction");
		jw_str(w, "why_not", x.why_not);
		jw_close(w, '}');
		return;
	}
	jw_key(w, "batch_fraction");
	jw_fixed3(w, floor(x.batch_fraction * 1000) / 1000); /* never rounded up */
	if (x.batch) {
		jw_u64(w, "batch", x.batch);
		jw_u64(w, "largest_batch", x.largest_batch);
		jw_u64(w, "bytes_per_sample", x.bytes_per_sample);
	} else {
		jw_null(w, "batch");
		jw_null(w, "largest_batch");
		jw_null(w, "bytes_per_sample");
	}
	jw_bool(w, "model_state_too_big", x.state_too_big);
	jw_u64(w, "device_total", x.device_total);
	jw_u64(w, "room", x.room);
	jw_u64(w, "peak", x.peak);
	jw_u64(w, "peak_fixed", x.peak_fixed);
	jw_u64(w, "peak_scaled", x.peak_scaled);
	jw_u64(w, "replayed_reserved", x.replayed_reserved);
	jw_open(w, "roles_at_peak", '{', false);
	for (int i = 0; i < TRACE_ROLES; i++)
		jw_u64(w, render_role_key[i], x.roles[i]);
	jw_close(w, '}');
	jw_open(w, "savings", '{', false);
	for (int i = 0; i < RENDER_REMEDIES; i++)
		jw_u64(w, render_remedy_key[i], x.saving[i]);
	jw_close(w, '}');
	if (x.what_if_batch) {
		jw_open(w, "what_if", '{', false);
		jw_u64(w, "batch", x.what_if_batch);
		jw_u64(w, "peak", x.what_if_peak);
		jw_u64(w, "reserved", x.what_if_reserved);
		jw_bool(w, "fits", x.what_if_fits);
		jw_close(w, '}');
	} else {
		jw_null(w, "what_if");
	}
	jw_close(w, '}');
}

/* A framework's cache at one moment (model-torch.c): null when the
 * trace has none of its allocator's actions. */
static void write_framework(struct jw *w, const struct trace *t, const char *key,
			    const struct model_framework *f, const struct model_oom *o)
{
	bool with_request = o != NULL;

	if (!f->has) {
		jw_null(w, key);
		return;
	}
	jw_open(w, key, '{', false);
	jw_str(w, "allocator", f->bfc ? "tensorflow_bfc" : "pytorch_caching");
	if (with_request) {
		uint64_t requested;

		if (render_cache_request(t, o, &requested))
			jw_u64(w, "requested_bytes", requested);
		else
			jw_null(w, "requested_bytes");
	}
	jw_u64(w, "allocated_bytes", f->allocated);
	jw_u64(w, "reserved_bytes", f->reserved);
	jw_u64(w, "peak_allocated_bytes", f->peak_allocated);
	jw_u64(w, "free_in_cache_bytes", sat_sub(f->reserved, f->allocated));
	jw_u64(w, "largest_free_block", f->largest_free);
	if (o)
		jw_bool(w, "fragmentation", render_cache_fragmentation(t, o));
	jw_u64(w, "tensors", f->tensors);
	write_roles(w, t, f, NULL);
	if (!strcmp(key, "at_end") && f->has_last) {
		jw_open(w, "after_last_tensor", '{', false);
		jw_i64(w, "seq", f->last_seq);
		jw_i64(w, "time_ns", f->last_time_ns);
		jw_i64(w, "stack", f->last_stack);
		write_frames(w, t, f->last_stack, "frames");
		jw_u64(w, "allocated_bytes", f->last_allocated);
		jw_u64(w, "reserved_bytes", f->last_reserved);
		jw_u64(w, "tensors", f->last_tensors);
		jw_close(w, '}');
	} else if (!strcmp(key, "at_end")) {
		jw_null(w, "after_last_tensor");
	}
	jw_open(w, "holders", '[', false);
	for (size_t i = 0; i < f->n_holders; i++)
		write_group(w, t, &f->holders[i], false);
	jw_close(w, ']');
	jw_close(w, '}');
}

static void write_oom(struct jw *w, const struct trace *t, const struct model *m,
		      const struct model_oom *o, const struct render_opts *opts)
{
	jw_open(w, NULL, '{', false);
	jw_i64(w, "seq", o->seq);
	jw_i64(w, "time_ns", o->time_ns);
	jw_str(w, "api", trace_api_name(t, o->api));
	jw_u64(w, "requested_bytes", o->requested);
	jw_str(w, "mem", o->mem ? render_mem_name(o->mem) : NULL);
	if (o->device >= 0)
		jw_i64(w, "device", o->device);
	else
		jw_null(w, "device");
	jw_i64(w, "stack", o->stack);
	write_frames(w, t, o->stack, "frames");
	if (o->failed_stack) {
		jw_i64(w, "failed_stack", o->failed_stack);
		write_frames(w, t, o->failed_stack, "failed_frames");
	} else {
		jw_null(w, "failed_stack");
		jw_null(w, "failed_frames");
	}
	jw_u64(w, "live_bytes", o->live_bytes);
	jw_u64(w, "live_allocations", o->live_count);
	jw_u64(w, "cupti_alone_bytes", o->cupti_alone_bytes);
	if (o->has_device_free)
		jw_i64(w, "device_free", o->device_free);
	else
		jw_null(w, "device_free");
	/* by how much it missed; negative when there was more free than asked */
	if (o->has_device_free)
		jw_i64(w, "shortfall_bytes", (int64_t)o->requested - o->device_free);
	else
		jw_null(w, "shortfall_bytes");
	if (o->has_device_total)
		jw_i64(w, "device_total", o->device_total);
	else
		jw_null(w, "device_total");
	if (o->has_unexplained)
		jw_u64(w, "unexplained_bytes", o->unexplained_bytes);
	else
		jw_null(w, "unexplained_bytes");
	if (o->retry_of)
		jw_i64(w, "retry_of", o->retry_of);
	else
		jw_null(w, "retry_of");
	jw_u64(w, "released_before_retry_bytes", o->released_bytes);
	jw_u64(w, "released_before_retry_count", o->released_count);
	jw_bool(w, "recovered", o->recovered);
	if (o->recovered_bytes || o->recovered_count) {
		jw_u64(w, "released_before_success_bytes", o->recovered_bytes);
		jw_u64(w, "released_before_success_count", o->recovered_count);
	} else {
		jw_null(w, "released_before_success_bytes");
		jw_null(w, "released_before_success_count");
	}
	if (o->has_holders) {
		size_t n = render_limit(opts, o->n_holders);

		jw_open(w, "holders", '[', false);
		for (size_t i = 0; i < n; i++)
			write_group(w, t, &o->holders[i], false);
		jw_close(w, ']');
	} else {
		jw_null(w, "holders");
	}
	write_framework(w, t, "framework", &o->framework, o);
	write_roles(w, t, &o->framework, o);
	write_diagnosis(w, t, m, o);
	jw_close(w, '}');
}

/* Device bytes live at the peak by the thread that allocated them
 * (model-timeline.c); the threads past the 32nd are one entry, thread null. */
static void write_peak_by_thread(struct jw *w, const struct trace *t, const struct model *m)
{
	const struct model_timeline *tl = m->timeline;
	struct timeline_thread rows[TIMELINE_THREADS];
	size_t n = render_peak_threads(m, rows);

	jw_open(w, "peak_by_thread", '[', false);
	for (size_t i = 0; i < n; i++) {
		_autofree_ char *name = NULL;

		if (!rows[i].bytes)
			continue;
		name = trace_thread_name(t, rows[i].thread);
		jw_open(w, NULL, '{', true);
		jw_i64(w, "thread", rows[i].thread);
		jw_str(w, "name", name);
		jw_u64(w, "bytes", rows[i].bytes);
		jw_u64(w, "allocations", rows[i].count);
		jw_close(w, '}');
	}
	if (tl && tl->thread_at_peak_other.bytes) {
		jw_open(w, NULL, '{', true);
		jw_null(w, "thread");
		jw_str(w, "name", "(other)");
		jw_u64(w, "bytes", tl->thread_at_peak_other.bytes);
		jw_u64(w, "allocations", tl->thread_at_peak_other.count);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

void render_json(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o)
{
	struct jw *w = xcalloc(1, sizeof(*w));
	/* JSON is for programs: everything, unless --top was asked for */
	struct render_opts all = { .top = o->top_given ? o->top : 0, .top_given = o->top_given };

	w->f = f;
	w->n_frames = t->n_frames;
	w->frames = xcalloc(w->n_frames ? w->n_frames : 1, sizeof(*w->frames));
	jw_open(w, NULL, '{', false);
	jw_i64(w, "memtrace_report", 1);
	write_trace(w, t, m);
	write_notes(w, t, m);
	write_mem(w, "totals", &m->device, m);
	write_peak_by_thread(w, t, m);
	write_mem(w, "host", &m->host, NULL);
	write_kinds(w, m);
	write_devices(w, m);
	write_pools(w, t, m);
	jw_str(w, "group_by", report_group_by_name(t->opts.group_by));
	write_sites(w, t, m, render_limit(&all, m->n_sites));
	write_ops(w, t, m, render_limit(&all, m->n_ops));
	write_leaks(w, t, m, render_limit(&all, m->n_leaks));
	jw_open(w, "ooms", '[', false);
	for (size_t i = 0; i < m->n_ooms; i++)
		write_oom(w, t, m, &m->ooms[i], &all);
	jw_close(w, ']');
	/* the headline OOM's, else the run's */
	write_diagnosis(w, t, m, render_headline_oom(m));
	jw_u64(w, "oom_snapshots_dropped", m->oom_snapshots_dropped);
	write_marks(w, t, m, &all);
	write_growth(w, t, m, &all);
	write_graphs(w, t, m, &all);
	write_cupti(w, t, m);
	jw_open(w, "framework", '{', false);
	write_framework(w, t, "at_peak", &m->framework_peak, NULL);
	write_framework(w, t, "at_end", &m->framework_end, NULL);
	jw_close(w, '}');
	write_what_fits(w, t, m, o);
	jw_close(w, '}');
	jw_putc(w, '\n');
	jw_flush(w);
	for (size_t i = 0; i < w->n_frames; i++)
		free(w->frames[i].json);
	free(w->frames);
	free(w);
}
