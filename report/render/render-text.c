/* The text report: as wide as the terminal (--width, COLUMNS; else 100
 * columns, as in a CI log), a site's file:line never cut. It
 * leads with the story (a preallocation note, the OOM; executable graphs
 * left behind and sites that grow build after build, when they are the
 * story; who held the memory), then the peak, the memory kinds and pools
 * when there is more than plain device memory, the sites, operations,
 * marks, graphs, growth, leaks, pinned host memory and CUPTI's account.
 * Every line goes through escape_text: a trace must not be able to put
 * escape sequences on a terminal. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "diagnose.h"
#include "render.h"
#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-mem.h"
#include "util-str.h"

#define CALLERS 3

struct text {
	FILE *f;
	const struct trace *t;
	const struct model *m;
	const struct render_opts *o;
	size_t width; /* columns */
};

/* One output line, cut to width (0: never cut). */
static void __attribute__((format(printf, 3, 4)))
line(const struct text *tx, size_t width, const char *fmt, ...)
{
	_autofree_ char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		escape_text(tx->f, s, width);
	fputc('\n', tx->f);
}

/* The space at p may break a line: not the one between a number and its
 * unit ("96.0 MiB", "1.234 s"). */
static bool breakable(const char *p)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "s" };

	if (*p != ' ')
		return false;
	for (size_t i = 0; i < ARRAY_LENGTH(units); i++) {
		size_t n = strlen(units[i]);

		if (strncmp(p + 1, units[i], n) == 0 && !isalpha((unsigned char)p[1 + n]))
			return false;
	}
	return true;
}

/* text as lines of at most width columns, broken at spaces; lines after
 * the first are indented by indent. A word longer than a line stays whole. */
static void paragraph(const struct text *tx, int indent, const char *text)
{
	const char *p = text;
	int first = 1;

	while (*p) {
		int room = (int)tx->width - (first ? 0 : indent);
		size_t n = strlen(p), cut = n;

		if (n > (size_t)room) {
			for (cut = (size_t)room; cut > 0 && !breakable(p + cut); cut--)
				;
			if (cut == 0)
				cut = strcspn(p, " ");
		}
		line(tx, 0, "%*s%.*s", first ? 0 : indent, "", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		first = 0;
	}
}

/* A formatted paragraph (prose that may pass the width). */
static void __attribute__((format(printf, 3, 4)))
say(const struct text *tx, int indent, const char *fmt, ...)
{
	_autofree_ char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		paragraph(tx, indent, s);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A frame of the user's, by trace-user-frame.h's rule, of the same kind
 * (Python or native) as the frame at depth. */
static bool users_frame(const struct trace *t, const struct trace_frame *f, bool python)
{
	const char *mod;

	if (!f || (f->kind == MT_FRAME_PYTHON) != python)
		return false;
	if (python)
		return (f->function || f->file) && trace_python_frame_is_user(f->file);
	mod = f->module != TRACE_NONE && f->module < t->n_modules ? t->modules[f->module].path
								  : NULL;
	return f->kind == MT_FRAME_NATIVE && mod && f->function && !path_is_cuda_header(f->file) &&
	       trace_native_frame_is_user(mod, f->function);
}

/* The frames the caller line shows, above depth: with --full-stacks all
 * of them; else, when the frame at depth is the user's, the user's next
 * frames of its kind, never the interpreter's or the C runtime's between
 * (up to cap); else the next ones. */
static uint32_t callers_of(const struct text *tx, const struct trace_stack *s, uint32_t depth,
			   uint32_t *out, uint32_t cap)
{
	const struct trace *t = tx->t;
	const struct trace_frame *at = s ? trace_stack_frame(t, s, depth) : NULL;
	bool python = at && at->kind == MT_FRAME_PYTHON;
	bool only_users = !tx->o->full_stacks && users_frame(t, at, python);
	uint32_t n = 0;

	for (uint32_t i = depth + 1; s && i < s->depth && n < cap; i++) {
		if (only_users && !users_frame(t, trace_stack_frame(t, s, i), python))
			continue;
		out[n++] = i;
	}
	return n;
}

/* "<- caller (file:line) <- ..." for up to CALLERS callers of the frame
 * at depth (callers_of), in room columns: each caller's name shortened
 * to what is left (render_frame_label_fit), and the callers that do not
 * fit then left out for a last "<- ...". The first caller is always
 * shown: its file:line, like the site's, is never cut. */
static char *caller_chain(const struct text *tx, const struct trace_stack *s, uint32_t depth,
			  size_t room)
{
	static const char more[] = " <- ...";
	const struct trace *t = tx->t;
	bool full = tx->o->full_stacks;
	uint32_t cap = full && s ? s->depth : CALLERS;
	_autofree_ uint32_t *at = xcalloc(cap ? cap : 1, sizeof(*at));
	uint32_t end = callers_of(tx, s, depth, at, cap);
	char *buf = NULL;
	size_t len = 0, used = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return xstrdup("");
	for (uint32_t k = 0; k < end; k++) {
		size_t need = (k > 0) + strlen("<- ") + (k + 1 < end ? strlen(more) : 0);
		size_t left = room > used + need ? room - used - need : 0;
		_autofree_ char *label =
			full ? render_frame_label(t, trace_stack_frame(t, s, at[k]), true)
			     : render_frame_label_fit(t, trace_stack_frame(t, s, at[k]), true, left);

		if (!full && k > 0 && text_width(label) > left) {
			fputs(more, f);
			break;
		}
		fprintf(f, "%s<- %s", k > 0 ? " " : "", label);
		used += (k > 0) + strlen("<- ") + text_width(label);
	}
	fclose(f);
	return buf ? buf : xstrdup("");
}

/* The columns a row's label has after its cells (indent more for its
 * callers), 0 when they take them all. */
static size_t room_after(const struct text *tx, const char *cells, size_t indent)
{
	size_t used = text_width(cells) + indent;

	return tx->width > used ? tx->width - used : 0;
}

/* A table row ending in the frame stack is known by (the user's, as for
 * sites: render_user_frame), then its callers on a line
 * indented to where the site column starts. */
static void stack_row(const struct text *tx, const char *cells, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(tx->t, stack);
	uint32_t depth;
	const struct trace_frame *f = render_user_frame(tx->t, s, &depth);
	int64_t launcher = s && f ? render_launch_thread(tx->t, s, depth) : -1;
	/* the user's frame is another thread's, which launched this work */
	_autofree_ char *launched =
		launcher >= 0 ? xasprintf(" (launched from thread %" PRId64 ")", launcher)
			      : xstrdup("");
	size_t room = room_after(tx, cells, 0);
	_autofree_ char *label =
		s && f ? render_frame_label_fit(tx->t, f, true,
						room > strlen(launched) ? room - strlen(launched) : 0)
		       : render_stack_label(tx->t, stack, true);
	_autofree_ char *callers = caller_chain(tx, s, depth, room_after(tx, cells, 2));

	line(tx, s && f ? 0 : tx->width, "%s%s%s", cells, label, launched);
	if (*callers)
		line(tx, 0, "%*s%s", (int)strlen(cells) + 2, "", callers);
}

/* A table row ending in a site's label, then the callers of its frame
 * (its stack's, for a site with no frame of its own). */
static void site_row(const struct text *tx, const char *cells, const struct model_site *s)
{
	const struct trace_stack *st = trace_find_stack(tx->t, s->stack);
	_autofree_ char *label = render_model_site_label_fit(tx->t, s, true, room_after(tx, cells, 0));
	_autofree_ char *callers = NULL;
	uint32_t depth = s->depth;

	/* an op's or CUPTI's label has no location to keep */
	if (s->kind == SITE_CUPTI || s->kind == SITE_OP) {
		line(tx, tx->width, "%s%s", cells, label);
		return;
	}
	if (s->kind != SITE_PYTHON && s->kind != SITE_NATIVE)
		render_user_frame(tx->t, st, &depth);
	callers = caller_chain(tx, st, depth, room_after(tx, cells, 2));
	line(tx, 0, "%s%s", cells, label);
	if (*callers)
		line(tx, 0, "%*s%s", (int)strlen(cells) + 2, "", callers);
}

static void section_title(const struct text *tx, const char *what, size_t shown,
			  size_t n, const char *unit)
{
	if (shown < n)
		say(tx, 2, "%s (%zu %s; top %zu):", what, n, unit, shown);
	else
		say(tx, 2, "%s (%zu %s):", what, n, unit);
}

static void print_header(const struct text *tx)
{
	const struct trace *t = tx->t;
	const char *cmd = trace_meta_get(t, "cmdline");
	const char *host = trace_meta_get(t, "host");
	const char *rank = trace_meta_get(t, "rank");
	const char *version = trace_meta_get(t, "memtrace_version");
	const char *pid = trace_meta_get(t, "pid");
	char story[64];
	const char *end = render_end_story(t, story, sizeof(story));

	if (!cmd || !*cmd)
		cmd = trace_meta_get(t, "exe");
	line(tx, tx->width, "memtrace report: %s", cmd && *cmd ? cmd : "(command line not recorded)");
	say(tx, 4, "  pid %s on %s%s%s; ran %s; %s%s", pid ? pid : "?", host ? host : "?",
	     rank && *rank ? ", rank " : "", rank && *rank ? rank : "",
	     fmt_seconds(render_duration_ns(t, tx->m)).s,
	     strncmp(end, "exited", 6) == 0 ? "the program " : "", end);
	say(tx, 4, "  trace %s: schema %" PRId64 ", written by memtrace %s, %" PRIu64 " %s",
	     t->path, t->schema_version, version ? version : "?", tx->m->events,
	     plural(tx->m->events, "event", "events"));
	if (t->flight.on && t->flight.trimmed)
		say(tx, 4,
		    "  flight trace (MEMTRACE_FLIGHT=%s): the %" PRIu64 " events before %s left "
		    "its ring; the totals, the peak, OOMs, marks and leaks still count them; the "
		    "peak by thread and stream, pools, graph memory and CUPTI's records are the "
		    "ring's alone",
		    fmt_size(t->flight.bound).s, t->flight.trimmed,
		    fmt_seconds(t->flight.ring_first_time_ns).s);
	else if (t->flight.on)
		say(tx, 4, "  flight trace (MEMTRACE_FLIGHT=%s): every event is still in its ring",
		     fmt_size(t->flight.bound).s);
	fputc('\n', tx->f);
}

/* The request and the free memory as the headline prints them: when the
 * two round alike, exact, and the shortfall, which is then the answer. */
static void oom_request_and_free(const struct model_oom *o, char **req, char **dev)
{
	uint64_t free_bytes = (uint64_t)(o->device_free < 0 ? 0 : o->device_free);
	uint64_t total = (uint64_t)(o->device_total < 0 ? 0 : o->device_total);
	bool alike = o->has_device_free && o->has_device_total &&
		     strcmp(fmt_size(o->requested).s, fmt_size(free_bytes).s) == 0;

	if (!alike) {
		*req = xstrdup(fmt_size(o->requested).s);
		*dev = o->has_device_free && o->has_device_total
			       ? xasprintf("; device had %s free of %s", fmt_size(free_bytes).s,
					   fmt_size(total).s)
			       : xstrdup("");
		return;
	}
	*req = xasprintf("%s (%s)", fmt_size(o->requested).s, fmt_bytes(o->requested).s);
	if (o->requested > free_bytes)
		*dev = xasprintf("; device had %s (%s) free of %s, short by %s",
				 fmt_size(free_bytes).s, fmt_bytes(free_bytes).s, fmt_size(total).s,
				 fmt_size_fine(o->requested - free_bytes).s);
	else
		*dev = xasprintf("; device had %s (%s) free of %s", fmt_size(free_bytes).s,
				 fmt_bytes(free_bytes).s, fmt_size(total).s);
}

static void print_oom_headline(const struct text *tx, const struct model_oom *o)
{
	const char *api = trace_api_name(tx->t, o->api);
	_autofree_ char *where = render_stack_label(tx->t, o->stack, true);
	_autofree_ char *req = NULL;
	_autofree_ char *dev = NULL;

	oom_request_and_free(o, &req, &dev);
	say(tx, 2, "OUT OF MEMORY: %s of %s failed at %s in %s%s; %s live in %" PRIu64 " %s",
	     api ? api : "allocation", req, fmt_seconds(o->time_ns).s, where,
	     dev, fmt_size(o->live_bytes).s, o->live_count,
	     plural(o->live_count, "allocation", "allocations"));
	/* Below 1 MiB (or 1% of the device) it is only the driver's rounding
	 * of the process's own allocations: not worth a line. */
	uint64_t floor = o->has_device_total && o->device_total > 0
				 ? (uint64_t)o->device_total / 100
				 : 0;
	if (floor < (1u << 20))
		floor = 1u << 20;
	if (o->has_unexplained && o->unexplained_bytes >= floor)
		say(tx, 4, "  The device had %s in use, of which %s is not this process's "
			    "allocations: contexts, other processes or libraries' workspaces",
		     fmt_size(render_oom_device_used(o)).s, fmt_size(o->unexplained_bytes).s);
	if (o->retry_of) {
		int64_t first = o->time_ns;

		for (size_t i = 0; i < tx->m->n_ooms; i++)
			if (tx->m->ooms[i].seq == o->retry_of)
				first = tx->m->ooms[i].time_ns;
		if (o->released_count)
			say(tx, 4, "  One episode: this request failed first at %s; %s in %" PRIu64
				   " %s was freed, and the retry failed too",
			     fmt_seconds(first).s, fmt_size(o->released_bytes).s, o->released_count,
			     plural(o->released_count, "allocation", "allocations"));
		else
			say(tx, 4, "  One episode: this request failed first at %s, and was tried "
				   "again with nothing freed between",
			     fmt_seconds(first).s);
	}
	if (tx->m->n_oom_episodes > 1)
		say(tx, 4, "  (the last of %zu out-of-memory episodes, %zu failures; the first was at %s)",
		     tx->m->n_oom_episodes, tx->m->n_ooms, fmt_seconds(tx->m->ooms[0].time_ns).s);
	else if (tx->m->n_ooms > 1 && !o->retry_of)
		say(tx, 4, "  (the last of %zu out-of-memory failures; the first was at %s)",
		     tx->m->n_ooms, fmt_seconds(tx->m->ooms[0].time_ns).s);
	if (tx->m->n_recovered_episodes)
		say(tx, 4, "  (besides, %zu %s recovered from: cache flushed and retried; no OOM)",
		     tx->m->n_recovered_episodes,
		     plural(tx->m->n_recovered_episodes, "episode was", "episodes were"));
	fputc('\n', tx->f);
}

/* No OOM reached the program, but an allocation failed and its retry,
 * after the allocator freed its cache, succeeded: told as such, never
 * as an OOM. */
static void print_recovered(const struct text *tx)
{
	const struct model_oom *o = render_first_recovered(tx->m);
	size_t failures = render_recovered_failures(tx->m);

	if (!o)
		return;
	const char *api = trace_api_name(tx->t, o->api);
	_autofree_ char *where = render_stack_label(tx->t, o->stack, true);

	say(tx, 2, "No OOM: %zu %s failed for lack of memory and %s recovered from: cache flushed "
		   "and retried; no OOM reached the program. The first: %s of %s failed at %s in "
		   "%s; %s in %" PRIu64 " %s was freed, and the retry succeeded.",
	     failures, plural(failures, "allocation", "allocations"),
	     failures == 1 ? "was" : "were", api ? api : "allocation",
	     fmt_size(o->requested).s, fmt_seconds(o->time_ns).s, where,
	     fmt_size(o->recovered_bytes).s, o->recovered_count,
	     plural(o->recovered_count, "allocation", "allocations"));
	fputc('\n', tx->f);
}

/* The notes that change how to read the whole report come first. */
static void print_preallocation(const struct text *tx)
{
	const struct model *m = tx->m;

	for (size_t i = 0; i < m->n_notes; i++) {
		const struct model_note *n = &m->notes[i];
		_autofree_ char *where = render_stack_label(tx->t, n->stack, true);
		_autofree_ char *dev = m->n_devices > 1 ? xasprintf("device %d", n->device)
							: xstrdup("the device");

		_autofree_ char *text = NULL;

		if (n->kind != MODEL_NOTE_PREALLOCATION)
			continue;
		if (m->framework_end.has && m->framework_end.bfc)
			text = xasprintf("Note: one allocation of %s (%.0f%% of %s) at %s by %s is "
					 "TensorFlow's BFC arena, taken at start to its memory "
					 "limit: the tensors inside it are shown as TensorFlow "
					 "counts them.",
					 fmt_size(n->bytes).s, render_note_fraction(n) * 100, dev,
					 fmt_seconds(n->time_ns).s, where);
		else
			text = xasprintf("Note: one allocation of %s (%.0f%% of %s) at %s by %s looks "
					 "like a framework preallocating its memory pool: memtrace "
					 "sees the pool, not the tensors in it. Rerun with `memtrace "
					 "run --per-tensor` (see docs/usage.md).",
					 fmt_size(n->bytes).s, render_note_fraction(n) * 100, dev,
					 fmt_seconds(n->time_ns).s, where);
		paragraph(tx, 6, text);
	}
	if (m->n_notes)
		fputc('\n', tx->f);
}

static void print_holders(const struct text *tx, const struct model_oom *o)
{
	size_t shown = render_limit(tx->o, o->n_holders);

	if (o->n_holders == 0) {
		line(tx, 0, "No device memory was live at the failure.");
		fputc('\n', tx->f);
		return;
	}
	section_title(tx, "Live device memory at the failure, by allocating stack", shown,
		      o->n_holders, plural(o->n_holders, "stack", "stacks"));
	line(tx, 0, "       bytes   allocs  allocated at");
	for (size_t i = 0; i < shown; i++) {
		const struct model_group *g = &o->holders[i];
		_autofree_ char *cells =
			xasprintf("  %10s  %7" PRIu64 "  ", fmt_size(g->bytes).s, g->count);

		stack_row(tx, cells, g->stack);
	}
	fputc('\n', tx->f);
}

/* A framework's cache at one moment (model-torch.c): its reserved and
 * allocated bytes, the tensors that hold blocks by the stack that made
 * them and, at an OOM where it is the cause, fragmentation and what to
 * try. */
static void print_framework(const struct text *tx, const char *when,
			    const struct model_framework *f, const struct model_oom *o)
{
	uint64_t free_b = f->reserved > f->allocated ? f->reserved - f->allocated : 0;
	size_t shown = render_limit(tx->o, f->n_holders);

	if (!f->has)
		return;
	uint64_t requested = 0;
	bool asked = o && render_cache_request(tx->t, o, &requested);

	if (f->bfc)
		say(tx, 2, "Inside TensorFlow's BFC arena %s: %s in its regions, %s of it allocated "
			   "to %" PRIu64 " %s, %s free in the arena (largest free chunk %s)%s%s.",
		    when, fmt_size(f->reserved).s, fmt_size(f->allocated).s, f->tensors,
		    plural(f->tensors, "tensor", "tensors"), fmt_size(free_b).s,
		    fmt_size(f->largest_free).s, asked ? "; the tensor asked for was " : "",
		    asked ? fmt_size(requested).s : "");
	else
		say(tx, 2, "Inside PyTorch's cache %s: %s reserved, %s of it allocated to %" PRIu64
			   " %s, %s free in the cache (largest free block %s)%s%s.",
		    when, fmt_size(f->reserved).s, fmt_size(f->allocated).s, f->tensors,
		    plural(f->tensors, "tensor", "tensors"), fmt_size(free_b).s,
		    fmt_size(f->largest_free).s, asked ? "; the tensor asked for was " : "",
		    asked ? fmt_size(requested).s : "");
	if (o && render_cache_fragmentation(tx->t, o))
		say(tx, 4, "  Fragmentation: %s of the %s is free, in pieces: its largest free "
			   "%s is smaller than the tensor. Try %s",
		    fmt_size(free_b).s, f->bfc ? "arena" : "cache", f->bfc ? "chunk" : "block",
		    f->bfc ? "fewer distinct tensor sizes (a fixed batch and input shape: "
			     "drop_remainder=True in tf.data), or the same work in smaller pieces."
			   : "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
			     "torch.cuda.empty_cache() between phases, or fewer distinct tensor "
			     "sizes.");
	if (f->has_last) {
		_autofree_ char *where = render_stack_label(tx->t, f->last_stack, true);
		uint64_t gone = sat_sub(f->last_allocated, f->allocated);

		uint64_t n = f->last_tensors - f->tensors;

		say(tx, 4, "  At the last tensor made (%s, at %s): %s allocated to %" PRIu64 " %s, %s "
			   "reserved. Released after it, none made since: %" PRIu64 " %s (%s), by the "
			   "program's last lines, its functions' returns or Python's exit.",
		    where, fmt_seconds(f->last_time_ns).s, fmt_size(f->last_allocated).s,
		    f->last_tensors, plural(f->last_tensors, "tensor", "tensors"),
		    fmt_size(f->last_reserved).s, n, plural(n, "tensor", "tensors"), fmt_size(gone).s);
	}
	fputc('\n', tx->f);
	if (!f->n_holders)
		return;
	_autofree_ char *title = xasprintf("Tensors in the %s %s, by allocating stack",
					   f->bfc ? "arena" : "cache", when);
	section_title(tx, title, shown, f->n_holders, plural(f->n_holders, "stack", "stacks"));
	line(tx, 0, "       bytes  tensors  allocated at");
	for (size_t i = 0; i < shown; i++) {
		const struct model_group *g = &f->holders[i];
		_autofree_ char *cells =
			xasprintf("  %10s  %7" PRIu64 "  ", fmt_size(g->bytes).s, g->count);

		stack_row(tx, cells, g->stack);
	}
	fputc('\n', tx->f);
}

/* Memory by role as one bar of total's width, each role its letter, then
 * others' memory (#) and the free (.), then the figures; indented by
 * indent, under title. */
static void role_bar(const struct text *tx, int indent, const char *title,
		     const uint64_t roles[TRACE_ROLES], uint64_t total, uint64_t others,
		     uint64_t free_b, const char *free_words)
{
	static const char letter[TRACE_ROLES] = { 'P', 'G', 'O', 'A', 'T', 'W', 'c', 'D', 'x' };
	enum { WIDTH = 64 };
	uint64_t sum = 0, upto = 0;
	char bar[WIDTH + 1];
	size_t at = 0;

	for (int i = 0; i < TRACE_ROLES; i++)
		sum += roles[i];
	for (int i = 0; i < TRACE_ROLES; i++) {
		upto += roles[i];
		size_t to = (size_t)((double)upto / (double)total * WIDTH + 0.5);

		if (roles[i] && to <= at && at < WIDTH) /* seen, however small */
			to = at + 1;
		while (at < to && at < WIDTH)
			bar[at++] = letter[i];
	}
	size_t to = (size_t)((double)(sum + others) / (double)total * WIDTH + 0.5);

	while (at < to && at < WIDTH)
		bar[at++] = '#';
	while (at < WIDTH)
		bar[at++] = '.';
	bar[WIDTH] = '\0';
	say(tx, indent, "%*s%s", indent - 2, "", title);
	line(tx, 0, "%*s|%s|", indent, "", bar);
	_autofree_ char *legend = xstrdup("");

	for (int i = 0; i < TRACE_ROLES; i++) {
		if (!roles[i])
			continue;
		char *more = xasprintf("%s%s%s %s (%c)", legend, *legend ? ", " : "",
				       render_role_words[i], fmt_size(roles[i]).s, letter[i]);

		free(legend);
		legend = more;
	}
	if (others) {
		char *more = xasprintf("%s, not this process's allocations %s (#)", legend,
				       fmt_size(others).s);

		free(legend);
		legend = more;
	}
	if (free_b) {
		char *more = xasprintf("%s, %s %s (.)", legend, free_words, fmt_size(free_b).s);

		free(legend);
		legend = more;
	}
	say(tx, indent + 2, "%*s%s.", indent, "", legend);
}

/* Memory by role at the failure as one bar the device's width
 * (render_roles). */
static void print_roles(const struct text *tx, const struct model_oom *o)
{
	uint64_t roles[TRACE_ROLES], sum = 0;

	if (!render_roles(tx->t, &o->framework, o, roles))
		return;
	for (int i = 0; i < TRACE_ROLES; i++)
		sum += roles[i];
	uint64_t total = o->has_device_total && (uint64_t)o->device_total > sum
				 ? (uint64_t)o->device_total : sum;
	if (!total)
		return;
	/* what the device had free is the rest; beyond it, others' memory */
	uint64_t free_b = total - sum, others = 0;

	if (o->has_device_free && o->device_free >= 0 && (uint64_t)o->device_free < free_b) {
		others = free_b - (uint64_t)o->device_free;
		free_b = (uint64_t)o->device_free;
	}
	_autofree_ char *title = xasprintf("Memory by role at the failure, of the device's %s:",
					   fmt_size(total).s);

	role_bar(tx, 2, title, roles, total, others, free_b, "free");
	fputc('\n', tx->f);
}

static void print_device(const struct text *tx)
{
	const struct model *m = tx->m;
	const struct model_mem *d = &m->device;

	if (d->allocations == 0) {
		line(tx, 0, "No device memory was allocated.");
	} else {
		_autofree_ char *kinds = render_device_kinds(m);

		say(tx, 2, "Peak device memory (%s): %s at %s", kinds, fmt_size(d->peak_bytes).s,
		     fmt_seconds(d->peak_time_ns).s);
		say(tx, 2, "Device memory: %" PRIu64 " %s (%s), %" PRIu64 " %s; %s live at the end in %"
				PRIu64 " %s",
		     d->allocations, plural(d->allocations, "allocation", "allocations"),
		     fmt_size(d->bytes_allocated).s, d->frees, plural(d->frees, "free", "frees"),
		     fmt_size(d->live_bytes).s, d->live_count,
		     plural(d->live_count, "allocation", "allocations"));
	}
	for (size_t i = 0; i < m->n_devices; i++) {
		const struct model_device *dev = &m->devices[i];
		_autofree_ char *free_at = dev->has_free
			? xasprintf("; %s free right after the first allocation",
				    fmt_size(dev->free_at_first_use).s)
			: NULL;

		if (dev->has_info)
			say(tx, 2, "Device %d: %s%s", dev->id, fmt_size(dev->total).s,
			     free_at ? free_at : "");
	}
	if (m->n_ooms == 0 && m->alloc_errors == 0 && m->unmatched_frees == 0 && m->free_errors == 0)
		return;
	size_t recovered = render_recovered_failures(m);
	_autofree_ char *ooms = recovered ? xasprintf("%zu out of memory (%zu recovered from: "
						      "cache flushed and retried; no OOM)",
						      m->n_ooms, recovered)
					  : xasprintf("%zu out of memory", m->n_ooms);

	say(tx, 2, "Failures: %s, %" PRIu64 " other failed %s, %" PRIu64
			" failed %s; %" PRIu64 " %s",
	     ooms, m->alloc_errors, plural(m->alloc_errors, "allocation", "allocations"),
	     m->free_errors, plural(m->free_errors, "free", "frees"), m->unmatched_frees,
	     plural(m->unmatched_frees, "free of an unknown address", "frees of unknown addresses"));
}

static const char *counted_as(int mem)
{
	if (model_mem_is_device(mem))
		return "device";
	return mem == MT_MEM_HOST_PINNED ? "host" : "no";
}

/* Shown when a kind beyond device, managed and pinned host occurs: what
 * each is, and which are memory this process allocated. */
static void print_kinds(const struct text *tx)
{
	const struct model *m = tx->m;

	if (!render_unusual_kinds(m))
		return;
	fputc('\n', tx->f);
	line(tx, 0, "Memory kinds:");
	line(tx, 0, "  kind               allocs       total        peak      at end  counted as");
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		const struct model_mem *k = &m->kinds[mem];

		if (render_mem_seen(m, mem))
			line(tx, 0, "  %-15s  %8" PRIu64 "  %10s  %10s  %10s  %s",
			     render_mem_name(mem), k->allocations, fmt_size(k->bytes_allocated).s,
			     fmt_size(k->peak_bytes).s, fmt_size(k->live_bytes).s, counted_as(mem));
	}
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		_autofree_ char *text = NULL;

		if (!render_mem_seen(m, mem) || !render_mem_meaning(mem))
			continue;
		text = xasprintf("  %s: %s.", render_mem_name(mem), render_mem_meaning(mem));
		paragraph(tx, 4, text);
	}
}

static void print_pools(const struct text *tx)
{
	const struct model *m = tx->m;

	if (m->n_pools == 0)
		return;
	fputc('\n', tx->f);
	line(tx, 0, "Memory pools (%zu):", m->n_pools);
	for (size_t i = 0; i < m->n_pools; i++) {
		const struct model_pool *p = &m->pools[i];
		_autofree_ char *where = p->created ? render_stack_label(tx->t, p->created_stack, true)
						    : NULL;

		say(tx, 4, "  pool 0x%" PRIx64 ": %s%s%s", p->handle,
		     where ? "created at " : "its creation was not seen", where ? where : "",
		     p->destroyed ? "; destroyed" : "");
		say(tx, 6, "    %" PRIu64 " %s (%s), %s live at the end, %" PRIu64 " %s",
		     p->allocations, plural(p->allocations, "allocation", "allocations"),
		     fmt_size(p->bytes_allocated).s, fmt_size(p->live_bytes).s, p->trims,
		     plural(p->trims, "trim", "trims"));
	}
}

static void print_sites(const struct text *tx)
{
	const struct model *m = tx->m;
	size_t shown = render_limit(tx->o, m->n_sites);

	if (m->n_sites == 0)
		return;
	fputc('\n', tx->f);
	section_title(tx, m->n_sites && tx->t->opts.group_by == REPORT_GROUP_STACK
				  ? "Top allocation stacks by device memory live at the peak"
				  : "Top allocation sites by device memory live at the peak",
		      shown, m->n_sites, plural(m->n_sites, "site", "sites"));
	line(tx, 0, "     at peak       total   allocs      at end  site");
	for (size_t i = 0; i < shown; i++) {
		const struct model_site *s = &m->sites[i];
		_autofree_ char *cells =
			xasprintf("  %10s  %10s  %7" PRIu64 "  %10s  ", fmt_size(s->at_peak).s,
				  fmt_size(s->total_bytes).s, s->count, fmt_size(s->live).s);

		site_row(tx, cells, s);
	}
}

/* The segments a framework's allocator still held at the end, apart from
 * the program's leaks (model_group.cache): the tensors in them still
 * allocated, which are, and the rest, its cache. */
static void print_cache_held(const struct text *tx, uint64_t bytes, uint64_t count)
{
	const struct model_framework *f = &tx->m->framework_end;
	bool bfc = f->bfc;

	say(tx, 2, "%s at the end: %s in %" PRIu64 " %s (%s), of which %s allocated to tensors "
		   "still alive (by the line that made them: \"Inside %s at the end\") and %s "
		   "free in it, no leak.",
	    bfc ? "Held by TensorFlow's BFC arena" : "Held by PyTorch's caching allocator",
	    fmt_size(bytes).s, count,
	    bfc ? plural(count, "region", "regions") : plural(count, "segment", "segments"),
	    bfc ? "kept until the process ends"
		: "its cache, kept until the process ends or torch.cuda.empty_cache()",
	    fmt_size(f->allocated).s, bfc ? "TensorFlow's BFC arena" : "PyTorch's cache",
	    fmt_size(bytes > f->allocated ? bytes - f->allocated : 0).s);
}

static void print_leaks(const struct text *tx)
{
	const struct model *m = tx->m;
	const char *end = trace_meta_get(tx->t, "end");
	bool exited = end && strcmp(end, "exit") == 0;
	size_t n = 0, printed = 0;
	uint64_t cache_bytes = 0, cache_count = 0;

	uint64_t handle_bytes = 0, handle_count = 0;
	const char *libraries[8];
	size_t n_libraries = 0;

	for (size_t i = 0; i < m->n_leaks; i++) {
		const char *library = m->leaks[i].cache ? NULL
							: render_library_handle(tx->t, m->leaks[i].stack);

		if (m->leaks[i].cache) {
			cache_bytes += m->leaks[i].bytes;
			cache_count += m->leaks[i].count;
		} else if (library) {
			handle_bytes += m->leaks[i].bytes;
			handle_count += m->leaks[i].count;
			size_t k = 0;

			while (k < n_libraries && strcmp(libraries[k], library))
				k++;
			if (k == n_libraries && n_libraries < sizeof(libraries) / sizeof(*libraries))
				libraries[n_libraries++] = library;
		} else {
			n++;
		}
	}
	size_t shown = render_limit(tx->o, n);

	fputc('\n', tx->f);
	if (n == 0) {
		const char *cache = NULL;

		if (cache_count)
			cache = m->framework_end.bfc ? "TensorFlow's BFC arena" : "PyTorch's cache";

		if (!cache && !handle_count)
			line(tx, 0, "Leaks: none: everything memtrace saw allocated was freed.");
		else
			say(tx, 2, "Leaks: none outside %s%s%s: everything else memtrace saw "
				   "allocated was freed.",
			    cache ? cache : "", cache && handle_count ? " and " : "",
			    handle_count ? "libraries' handles" : "");
	} else {
		section_title(tx, exited ? "Leaks: memory still live at exit, by stack"
					 : "Live at the end of the trace (the program did not exit), "
					   "by stack",
			      shown, n, plural(n, "stack", "stacks"));
		line(tx, 0, "       bytes   allocs  memory           allocated at");
	}
	for (size_t i = 0; i < m->n_leaks && printed < shown; i++) {
		const struct model_group *g = &m->leaks[i];

		if (g->cache || render_library_handle(tx->t, g->stack))
			continue;
		_autofree_ char *cells =
			xasprintf("  %10s  %7" PRIu64 "  %-15s  ", fmt_size(g->bytes).s, g->count,
				  render_mem_name(g->mem));

		stack_row(tx, cells, g->stack);
		printed++;
	}
	if (cache_count) {
		if (n)
			fputc('\n', tx->f);
		print_cache_held(tx, cache_bytes, cache_count);
	}
	if (handle_count) {
		_autofree_ char *names = xstrdup(libraries[0]);

		for (size_t k = 1; k < n_libraries; k++) {
			char *more = xasprintf("%s%s%s", names, k + 1 < n_libraries ? ", " : " and ",
					       libraries[k]);

			free(names);
			names = more;
		}
		if (n || cache_count)
			fputc('\n', tx->f);
		say(tx, 2, "Held by the handles of %s at the end: %s in %" PRIu64 " %s, the "
			   "workspaces made as the handles were created, kept while they live "
			   "(frameworks keep theirs until the process ends), no leak.",
		    names, fmt_size(handle_bytes).s, handle_count,
		    plural(handle_count, "allocation", "allocations"));
	}
}

static void print_host(const struct text *tx)
{
	const struct model_mem *h = &tx->m->host;

	fputc('\n', tx->f);
	if (h->allocations == 0) {
		line(tx, 0, "Pinned host memory: none allocated.");
		return;
	}
	say(tx, 2, "Pinned host memory: %" PRIu64 " %s (%s), %" PRIu64
			" %s; peak %s at %s; %s live at the end",
	     h->allocations, plural(h->allocations, "allocation", "allocations"),
	     fmt_size(h->bytes_allocated).s, h->frees, plural(h->frees, "free", "frees"),
	     fmt_size(h->peak_bytes).s, fmt_seconds(h->peak_time_ns).s, fmt_size(h->live_bytes).s);
}

static void note(const struct text *tx, uint64_t n, const char *one, const char *many)
{
	if (n)
		say(tx, 2, "Note: %" PRIu64 " %s.", n, plural(n, one, many));
}

static void print_notes(const struct text *tx)
{
	const struct trace *t = tx->t;
	const struct model *m = tx->m;

	if (m->oom_snapshots_dropped)
		say(tx, 2, "Note: live memory was kept for %d of %zu out-of-memory failures "
			    "(the first %d and the last).",
		     MODEL_OOM_SNAPSHOTS, m->n_ooms, MODEL_OOM_SNAPSHOTS - 1);
	note(tx, t->missing_stacks, "event names a stack the trace does not contain (shown as such)",
	     "events name stacks the trace does not contain (shown as such)");
	note(tx, t->missing_frames, "stack row names a frame the trace does not contain (shown as \"?\?\")",
	     "stack rows name frames the trace does not contain (shown as \"?\?\")");
	note(tx, t->missing_modules, "frame names a module the trace does not contain",
	     "frames name modules the trace does not contain");
	note(tx, m->reused_addresses, "allocation at an address still live (a free memtrace did not see)",
	     "allocations at addresses still live (frees memtrace did not see)");
	note(tx, m->untracked_allocs, "allocation without an address or memory kind (not counted)",
	     "allocations without an address or memory kind (not counted)");
	note(tx, m->unknown_events, "event of a kind this version does not know (ignored)",
	     "events of kinds this version does not know (ignored)");
	note(tx, m->unmatched_maps, "mapping of a handle memtrace did not see created (not counted)",
	     "mappings of handles memtrace did not see created (not counted)");
	note(tx, m->unmatched_unmaps, "unmap of a range that was not mapped",
	     "unmaps of ranges that were not mapped");
	note(tx, m->unmap_errors, "unmap failed (its mapping stays)",
	     "unmaps failed (their mappings stay)");
}

/* ---- operations, marks, graphs, growth, CUPTI ------------------------- */

static void print_ops(const struct text *tx)
{
	const struct model *m = tx->m;
	size_t shown = render_limit(tx->o, m->n_ops);

	if (m->n_ops == 0)
		return;
	fputc('\n', tx->f);
	section_title(tx, "Device memory by NVTX operation (the innermost range)", shown, m->n_ops,
		      plural(m->n_ops, "operation", "operations"));
	line(tx, 0, "     at peak       total   allocs      at end  operation");
	for (size_t i = 0; i < shown; i++) {
		const struct model_op *op = &m->ops[i];
		_autofree_ char *name = render_op_label(tx->t, op->id);

		line(tx, tx->width, "  %10s  %10s  %7" PRIu64 "  %10s  %s", fmt_size(op->at_peak).s,
		     fmt_size(op->total_bytes).s, op->count, fmt_size(op->live).s, name);
	}
}

/* A mark's row with its largest site, whose location is not cut. */
static void mark_top(const struct text *tx, const char *cells, const struct model_mark *mk)
{
	const struct model_site *s = &tx->m->sites[mk->sites[0].site];
	const char *more = mk->n_sites > 1 ? ", ..." : "";
	_autofree_ char *head = xasprintf("%s: %s ", cells, fmt_size(mk->sites[0].bytes).s);
	size_t room = room_after(tx, head, strlen(more));
	_autofree_ char *site = render_model_site_label_fit(tx->t, s, true, room);

	/* an op's label has no location: cut as any line */
	line(tx, s->kind == SITE_OP || s->kind == SITE_CUPTI ? tx->width : 0, "%s%s%s", head, site,
	     more);
}

/* Each mark: live device memory then, and the largest sites. */
static void print_marks(const struct text *tx)
{
	const struct model *m = tx->m;
	size_t shown = render_limit(tx->o, m->n_marks);

	if (m->n_marks == 0)
		return;
	fputc('\n', tx->f);
	section_title(tx, "Marks, with device memory live at each", shown, m->n_marks,
		      plural(m->n_marks, "mark", "marks"));
	line(tx, 0, "        time        live  mark: largest sites");
	for (size_t i = 0; i < shown; i++) {
		const struct model_mark *mk = &m->marks[i];
		const struct model_point *p = &m->points[mk->point];
		_autofree_ char *label = render_point_label(tx->t, p);
		_autofree_ char *cells = xasprintf("  %10s  %10s  %s", fmt_seconds(p->time_ns).s,
						   fmt_size(p->live_bytes).s, label);

		if (mk->n_sites)
			mark_top(tx, cells, mk);
		else
			line(tx, tx->width, "%s", cells);
	}
}

static bool graphs_seen(const struct model *m)
{
	const struct model_graphs *g = &m->graphs;

	return g->created || g->execs_created || g->alloc_nodes || g->captured_allocs ||
	       g->launches || g->n_orphans;
}

static void print_orphans(const struct text *tx)
{
	const struct model_graphs *g = &tx->m->graphs;
	size_t shown = render_limit(tx->o, g->n_orphans);
	_autofree_ char *at = NULL, *together = NULL;

	if (g->n_orphans == 0)
		return;
	if (g->at_mark)
		at = xasprintf("at mark \"%s\" (%s)", tx->t->opts.at_mark,
			       fmt_seconds(g->at_time_ns).s);
	section_title(tx, at ? "  Never destroyed" : "  Never destroyed by the end of the trace",
		      shown, g->n_orphans, g->n_orphans == 1 ? "graph or exec" : "graphs and execs");
	if (at)
		line(tx, tx->width, "  (%s)", at);
	together = xasprintf("  Together they pin %s (each graph once; graphs that do not run at "
			     "once share their memory in the pool).",
			     fmt_size(g->orphans_pinned).s);
	paragraph(tx, 4, together);
	line(tx, 0, "        pins  launches  what, created at");
	for (size_t i = 0; i < shown; i++) {
		const struct model_orphan *o = &g->orphans[i];
		_autofree_ char *what = xasprintf("%s 0x%" PRIx64 " ",
						  o->kind == MODEL_ORPHAN_EXEC ? "exec" : "graph",
						  o->handle);
		_autofree_ char *cells = xasprintf("  %10s  %8" PRIu64 "  %s",
						   o->pinned_by_exec ? "its exec"
								     : fmt_size(o->pinned_bytes).s,
						   o->launches, what);

		stack_row(tx, cells, o->stack);
	}
}

static void print_never_freed(const struct text *tx)
{
	const struct model_graphs *g = &tx->m->graphs;
	size_t shown = render_limit(tx->o, g->n_never_freed);

	if (g->n_never_freed == 0)
		return;
	section_title(tx, "  Graph memory never freed", shown, g->n_never_freed,
		      plural(g->n_never_freed, "group", "groups"));
	line(tx, 0, "      bytes   allocs  graph, allocated at");
	for (size_t i = 0; i < shown; i++) {
		const struct model_graph_leak *l = &g->never_freed[i];
		_autofree_ char *cells = xasprintf("  %9s  %7" PRIu64 "  graph 0x%" PRIx64 ", ",
						   fmt_size(l->bytes).s, l->count, l->graph);

		stack_row(tx, cells, l->stack);
	}
}

static void print_graphs(const struct text *tx, bool story)
{
	const struct model_graphs *g = &tx->m->graphs;
	uint64_t pinned, execs = diagnose_orphaned_execs(g, &pinned);
	_autofree_ char *head = NULL, *counts = NULL, *memory = NULL;

	if (!graphs_seen(tx->m))
		return;
	if (!story)
		fputc('\n', tx->f);
	if (story) {
		uint64_t never = render_graph_never_freed_bytes(g);
		_autofree_ char *left =
			execs ? xasprintf("%" PRIu64 " executable %s never destroyed "
					  "%s %s",
					  execs, plural(execs, "graph", "graphs"),
					  plural(execs, "pins", "pin"), fmt_size(pinned).s)
			      : NULL;
		_autofree_ char *unfreed = never ? xasprintf("%s of graph memory never freed",
							     fmt_size(never).s)
						 : NULL;

		head = xasprintf("CUDA GRAPHS LEFT BEHIND: %s%s%s.", left ? left : "",
				 left && unfreed ? "; " : "", unfreed ? unfreed : "");
		paragraph(tx, 2, head);
	}
	counts = xasprintf("CUDA graphs: %" PRIu64 " created (%" PRIu64 " destroyed), %" PRIu64
			   " execs (%" PRIu64 " destroyed), %" PRIu64 " %s (%" PRIu64
			   " failed), %" PRIu64 " %s.",
			   g->created, g->destroyed, g->execs_created, g->execs_destroyed,
			   g->launches, plural(g->launches, "launch", "launches"),
			   g->failed_launches, g->uploads, plural(g->uploads, "upload", "uploads"));
	paragraph(tx, 2, counts);
	memory = xasprintf(
		"  Graph memory: %" PRIu64 " allocation %s, %" PRIu64 " captured %s. "
		"The graph pools hold %s (at most %s), %s of it in no live allocation.",
		g->alloc_nodes, plural(g->alloc_nodes, "node", "nodes"), g->captured_allocs,
		plural(g->captured_allocs, "allocation", "allocations"), fmt_size(g->pool_bytes).s,
		fmt_size(g->pool_peak).s, fmt_size(g->pool_reserved).s);
	paragraph(tx, 4, memory);
	if (g->capture_segments) {
		_autofree_ char *segs = xasprintf(
			"  Capture segments: %" PRIu64 " device %s (%s) made by the capturing "
			"thread while a capture ran (a framework's memory pool for the graph, as "
			"PyTorch's private pools); a graph or exec left alive pins those still live.",
			g->capture_segments,
			plural(g->capture_segments, "allocation", "allocations"),
			fmt_size(g->capture_segment_bytes).s);

		paragraph(tx, 4, segs);
	}
	print_orphans(tx);
	print_never_freed(tx);
	if (story)
		fputc('\n', tx->f);
}

static void growth_row(const struct text *tx, const struct model_growth_site *gs)
{
	const struct model_growth *g = &tx->m->growth;
	const struct model_site *s = &tx->m->sites[gs->site];
	uint64_t step = gs->per_point < 0 ? (uint64_t)-(gs->per_point + 1) + 1
					  : (uint64_t)gs->per_point;
	_autofree_ char *per = xasprintf("%s%s", gs->per_point < 0 ? "-" : "+", fmt_size(step).s);
	_autofree_ char *cells = xasprintf("  %11s  %10s  %10s  %s", per, fmt_size(gs->live[0]).s,
					   fmt_size(gs->live[g->n_points - 1]).s,
					   gs->growing ? "GROWS  " : "       ");

	site_row(tx, cells, s);
}

/* Marks and ranges by their names; instantiations by their times. */
static char *growth_point(const struct text *tx, const struct model_point *p)
{
	if (p->kind == MODEL_POINT_INSTANTIATION || p->kind == MODEL_POINT_SPAN)
		return xstrdup(fmt_seconds(p->time_ns).s);
	return render_point_label(tx->t, p);
}

static void print_growth(const struct text *tx, bool story)
{
	const struct model *m = tx->m;
	const struct model_growth *g = &m->growth;
	size_t n_growing = 0, shown;
	_autofree_ char *first = NULL, *last = NULL, *points = NULL;

	/* nothing moves from build to build: nothing to show */
	if (!g->basis || g->n_sites == 0 || g->n_moving == 0)
		return;
	for (size_t i = 0; i < g->n_sites; i++)
		n_growing += g->sites[i].growing;
	shown = render_limit(tx->o, story ? n_growing : g->n_sites);
	first = growth_point(tx, &m->points[g->points[0]]);
	last = growth_point(tx, &m->points[g->points[g->n_points - 1]]);
	if (!story)
		fputc('\n', tx->f);
	points = g->thinned_from ? xasprintf("%zu of %zu %s", g->n_points, g->thinned_from,
					     render_growth_basis(g->basis))
				 : xasprintf("%zu %s", g->n_points, render_growth_basis(g->basis));
	say(tx, 4, "%s (%s: %s ... %s): %zu %s",
	     story ? "GROWING BUILD AFTER BUILD" : "Live device memory across builds", points, first,
	     last, n_growing, n_growing == 1 ? "site grows" : "sites grow");
	line(tx, 0, "    per point     at first     at last         site");
	for (size_t i = 0; i < shown; i++)
		growth_row(tx, &g->sites[i]);
	if (story)
		fputc('\n', tx->f);
}

static void print_cupti(const struct text *tx)
{
	const struct model_cupti *c = &tx->m->cupti;
	_autofree_ char *by = NULL;

	if (!c->on && !c->records)
		return;
	fputc('\n', tx->f);
	if (c->n_by_module)
		by = xasprintf(", most made by %s",
			       render_module_name(tx->t, c->by_module[0].module));
	say(tx, 2, "CUPTI: %" PRIu64 " of its %" PRIu64 " allocations matched the hooks'; %" PRIu64
		    " (%s) seen by CUPTI alone%s, %s of them live at the end",
	     c->matched, c->allocs, c->alone_count, fmt_size(c->alone_bytes).s, by ? by : "",
	     fmt_size(c->alone_live_bytes).s);
	say(tx, 4, "  %" PRIu64 " hooked %s (%s) not confirmed by CUPTI%s", c->unconfirmed,
	     plural(c->unconfirmed, "allocation", "allocations"), fmt_size(c->unconfirmed_bytes).s,
	     c->on ? "" : " (CUPTI's start was not recorded: none flagged)");
}

/* What to try, after the OOM headline (report/render/diagnose.c). */
static void print_diagnosis(const struct text *tx)
{
	struct diagnoses d;

	diagnose(tx->t, tx->m, &d);
	for (size_t i = 0; i < d.n; i++) {
		_autofree_ char *s = xasprintf("  %s (%s): %s. Evidence: %s. Try: %s.",
					       i == 0 ? "Cause" : "Also",
					       diagnose_cause_name(d.items[i].kind), d.items[i].title,
					       d.items[i].evidence, d.items[i].remedy);
		paragraph(tx, 4, s);
	}
	if (d.n)
		fputc('\n', tx->f);
	diagnoses_fini(&d);
}

/* What would fit (render_what_fits): the largest batch and each remedy's
 * saving, for a run whose steps ran to their end; after an OOM, how to
 * find out. */
static void print_what_fits(const struct text *tx, bool oom)
{
	static const char *const words[RENDER_REMEDIES] = {
		[RENDER_REMEDY_HALF_BATCH] = "the batch halved frees",
		[RENDER_REMEDY_BF16] = "bf16 autocast (torch.autocast) about",
		[RENDER_REMEDY_CHECKPOINT] = "activation checkpointing (torch.utils.checkpoint) at most",
	};
	struct render_fits x;

	if (!render_what_fits(tx->t, tx->m, tx->o, &x) || !x.has_section)
		return;
	if (!x.beyond && !oom && !x.batch)
		return; /* it fitted; asked with --batch */
	if (!x.has) {
		say(tx, 2, "What would fit: not known from this run: %s.", x.why_not);
		fputc('\n', tx->f);
		return;
	}
	if (x.beyond)
		say(tx, 0, "This run went on past the device's %s on managed memory (memtrace run "
			   "--what-fits): what it needed is below, not an out-of-memory failure.",
		    fmt_size(x.device_total).s);
	say(tx, 0, "What would fit on the device's %s (%s for PyTorch's cache: less the "
		   "context, others' and libraries' memory), each batch replayed through the "
		   "cache's rules:",
	    fmt_size(x.device_total).s, fmt_size(x.room).s);
	say(tx, 4, "  The tensors peaked at %s: %s fixed (parameters, gradients, optimizer "
		   "state, workspaces), %s that scales with the batch (activations, temporaries, "
		   "data).",
	    fmt_size(x.peak).s, fmt_size(x.peak_fixed).s, fmt_size(x.peak_scaled).s);
	if (x.device_total >= x.peak) {
		_autofree_ char *title = xasprintf("By role at that peak, of the device's %s:",
						   fmt_size(x.device_total).s);

		role_bar(tx, 4, title, x.roles, x.device_total, 0, x.device_total - x.peak,
			 "the rest of the device");
	} else {
		_autofree_ char *title = xasprintf("By role at that peak, %s past the device's "
						   "%s:",
						   fmt_size(x.peak - x.device_total).s,
						   fmt_size(x.device_total).s);

		role_bar(tx, 4, title, x.roles, x.peak, 0, 0, "");
	}
	if (x.state_too_big)
		say(tx, 4, "  No batch fits: the fixed part alone is more than the room. A smaller "
			   "model, parameters in bf16, or sharding (FSDP, ZeRO).");
	else if (x.batch ? !x.largest_batch : x.batch_fraction < 0.001)
		say(tx, 4, "  No batch fits: beside the fixed part, the cache's segments leave no "
			   "room for %s. A smaller model, an optimizer with less state (SGD "
			   "without momentum keeps none), or sharding (FSDP, ZeRO).",
		    x.batch ? "one sample" : "a thousandth of the batch");
	else if (x.batch)
		say(tx, 4, "  The largest batch that fits: %llu (%.3f of the %llu that ran; %s a "
			   "sample).",
		    (unsigned long long)x.largest_batch, floor(x.batch_fraction * 1000) / 1000,
		    (unsigned long long)x.batch, fmt_size(x.bytes_per_sample).s);
	else
		say(tx, 4, "  The largest batch that fits: %.3f of the batch that ran (give "
			   "--batch N for it in samples).",
		    floor(x.batch_fraction * 1000) / 1000);
	/* the remedies, largest saving first */
	int order[RENDER_REMEDIES];
	_autofree_ char *all = xstrdup("");

	for (int i = 0; i < RENDER_REMEDIES; i++)
		order[i] = i;
	for (int i = 1; i < RENDER_REMEDIES; i++)
		for (int j = i; j > 0 && x.saving[order[j]] > x.saving[order[j - 1]]; j--) {
			int swap = order[j];

			order[j] = order[j - 1];
			order[j - 1] = swap;
		}
	for (int i = 0; i < RENDER_REMEDIES; i++) {
		char *more = xasprintf("%s%s%s %s", all, i ? "; " : "", words[order[i]],
				       fmt_size(x.saving[order[i]]).s);

		free(all);
		all = more;
	}
	say(tx, 4, "  Off the peak: %s.", all);
	if (x.what_if_batch)
		say(tx, 4, "  A batch of %llu: its tensors would peak at %s, PyTorch's cache %s: "
			   "it %s.",
		    (unsigned long long)x.what_if_batch, fmt_size(x.what_if_peak).s,
		    x.what_if_fits ? fmt_size(x.what_if_reserved).s : "past the room",
		    x.what_if_fits ? "fits" : "does not fit");
	fputc('\n', tx->f);
}

void render_text(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o)
{
	const struct text tx = {
		.f = f, .t = t, .m = m, .o = o, .width = o->width ? o->width : RENDER_TEXT_WIDTH,
	};
	const struct model_oom *oom = render_headline_oom(m);

	/* the same rules as the HTML page's (report/render/diagnose.c) */
	bool graphs_first = diagnose_graphs_story(m), growth_first = diagnose_growth_story(m);

	print_header(&tx);
	print_preallocation(&tx);
	if (oom) {
		print_oom_headline(&tx, oom);
		print_diagnosis(&tx);
		print_roles(&tx, oom);
	} else {
		print_recovered(&tx);
	}
	print_what_fits(&tx, oom != NULL);
	if (graphs_first)
		print_graphs(&tx, true);
	if (growth_first)
		print_growth(&tx, true);
	if (!oom) /* the cause of the leaks, under their story */
		print_diagnosis(&tx);
	if (oom) {
		print_holders(&tx, oom);
		print_framework(&tx, "at the failure", &oom->framework, oom);
	}
	print_device(&tx);
	if (!oom)
		print_framework(&tx, "at the end", &m->framework_end, NULL);
	print_kinds(&tx);
	print_pools(&tx);
	print_sites(&tx);
	print_ops(&tx);
	print_marks(&tx);
	if (!graphs_first)
		print_graphs(&tx, false);
	if (!growth_first)
		print_growth(&tx, false);
	print_leaks(&tx);
	print_host(&tx);
	print_cupti(&tx);
	if (t->missing_stacks || t->missing_frames || t->missing_modules ||
	    m->oom_snapshots_dropped || m->reused_addresses || m->untracked_allocs ||
	    m->unknown_events || m->unmatched_maps || m->unmatched_unmaps || m->unmap_errors) {
		fputc('\n', f);
		print_notes(&tx);
	}
}
