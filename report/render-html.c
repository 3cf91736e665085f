/* A single self-contained HTML page (no external resources, no script):
 * the OOM headline (or the peak), totals, sites, leaks and the holders at
 * the OOM. Every string that comes from the trace goes through escape_html;
 * fprintf formats here only ever get numbers and literal markup. */
#include <inttypes.h>

#include "render.h"
#include "util-mem.h"
#include "util-str.h"

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
	".meta{color:#555}"
	".headline{padding:.8em 1em;border-radius:4px;background:#eef3fb;"
	"border-left:5px solid #3568b0}"
	".headline.oom{background:#fbeeee;border-left-color:#b03535}"
	".note{padding:.5em 1em;background:#fdf6e3;border-left:5px solid #b08a35}"
	"table{border-collapse:collapse}"
	"th,td{padding:.2em .7em;border-bottom:1px solid #ddd;text-align:left;"
	"vertical-align:top}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"code,summary{font-family:ui-monospace,monospace;font-size:13px}"
	"ol{margin:.3em 0;padding-left:2em}";

struct html {
	FILE *f;
	const struct trace *t;
	const struct model *m;
	const struct render_opts *o;
};

static void esc(const struct html *h, const char *s)
{
	escape_html(h->f, s);
}

static void size_cell(const struct html *h, uint64_t bytes)
{
	char buf[32];

	fmt_size(buf, sizeof(buf), bytes);
	fprintf(h->f, "<td class=\"n\" title=\"%" PRIu64 " bytes\">%s</td>", bytes, buf);
}

static void count_cell(const struct html *h, uint64_t n)
{
	fprintf(h->f, "<td class=\"n\">%" PRIu64 "</td>", n);
}

static void secs(const struct html *h, int64_t ns)
{
	char buf[32];

	fmt_seconds(buf, sizeof(buf), ns);
	fputs(buf, h->f);
}

static void size_text(const struct html *h, uint64_t bytes)
{
	char buf[32];

	fmt_size(buf, sizeof(buf), bytes);
	fputs(buf, h->f);
}

/* The site frame as the summary, the whole stack inside. */
static void stack_cell(const struct html *h, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(h->t, stack);
	_autofree_ char *label = render_stack_label(h->t, stack, true);

	fputs("<td><details><summary>", h->f);
	esc(h, label);
	fputs("</summary><ol start=\"0\">", h->f);
	for (uint32_t i = 0; s && i < s->depth; i++) {
		_autofree_ char *frame = render_frame_label(h->t, trace_stack_frame(h->t, s, i), false);

		fputs("<li><code>", h->f);
		esc(h, frame);
		fputs("</code></li>", h->f);
	}
	fputs("</ol></details></td>", h->f);
}

static void print_head(const struct html *h)
{
	const char *cmd = trace_meta_get(h->t, "cmdline");
	const char *host = trace_meta_get(h->t, "host");
	const char *pid = trace_meta_get(h->t, "pid");

	/* the policy forbids scripts and fetches: even a string that escaped
	 * escaping could not run or phone home */
	fprintf(h->f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">"
		      "<title>memtrace report: ");
	esc(h, cmd ? cmd : h->t->path);
	fprintf(h->f, "</title><style>%s</style></head><body>\n<h1>memtrace report</h1>\n", style);
	fputs("<p class=\"meta\"><code>", h->f);
	esc(h, cmd ? cmd : "(command line not recorded)");
	fputs("</code><br>pid ", h->f);
	esc(h, pid ? pid : "?");
	fputs(" on ", h->f);
	esc(h, host ? host : "?");
	fputs(", trace ", h->f);
	esc(h, h->t->path);
	fputs(", ran ", h->f);
	secs(h, render_duration_ns(h->t, h->m));
	fputs(", end: ", h->f);
	esc(h, trace_meta_get(h->t, "end") ? trace_meta_get(h->t, "end") : "unknown");
	fputs("</p>\n", h->f);
}

static void print_headline(const struct html *h)
{
	const struct model_oom *o = render_headline_oom(h->m);
	const struct model_mem *d = &h->m->device;

	if (!o) {
		fputs("<p class=\"headline\">No out-of-memory failure. Peak device memory ", h->f);
		size_text(h, d->peak_bytes);
		fputs(" at ", h->f);
		secs(h, d->peak_time_ns);
		fputs(".</p>\n", h->f);
		return;
	}
	_autofree_ char *where = render_stack_label(h->t, o->stack, true);
	const char *api = trace_api_name(h->t, o->api);

	fputs("<p class=\"headline oom\"><strong>OUT OF MEMORY:</strong> ", h->f);
	esc(h, api ? api : "allocation");
	fputs(" of ", h->f);
	size_text(h, o->requested);
	fputs(" failed at ", h->f);
	secs(h, o->time_ns);
	fputs(" in <code>", h->f);
	esc(h, where);
	fputs("</code>", h->f);
	if (o->has_device_free && o->has_device_total) {
		fputs("; device had ", h->f);
		size_text(h, o->device_free < 0 ? 0 : (uint64_t)o->device_free);
		fputs(" free of ", h->f);
		size_text(h, o->device_total < 0 ? 0 : (uint64_t)o->device_total);
	}
	fputs("; ", h->f);
	size_text(h, o->live_bytes);
	fprintf(h->f, " live in %" PRIu64 " allocations", o->live_count);
	if (h->m->n_ooms > 1)
		fprintf(h->f, " (the last of %zu out-of-memory failures)", h->m->n_ooms);
	fputs(".", h->f);
	if (o->has_unexplained && o->unexplained_bytes) {
		fputs(" The device had ", h->f);
		size_text(h, render_oom_device_used(o));
		fputs(" in use, of which ", h->f);
		size_text(h, o->unexplained_bytes);
		fputs(" is not this process's allocations: contexts, other processes or "
		      "libraries' workspaces.",
		      h->f);
	}
	fputs("</p>\n", h->f);
}

static void print_notes(const struct html *h)
{
	for (size_t i = 0; i < h->m->n_notes; i++) {
		const struct model_note *n = &h->m->notes[i];
		_autofree_ char *where = render_stack_label(h->t, n->stack, true);

		if (n->kind != MODEL_NOTE_PREALLOCATION)
			continue;
		fputs("<p class=\"note\">Note: one allocation of ", h->f);
		size_text(h, n->bytes);
		fprintf(h->f, " (%.0f%% of device %d) at ", render_note_fraction(n) * 100, n->device);
		secs(h, n->time_ns);
		fputs(" by <code>", h->f);
		esc(h, where);
		fputs("</code> looks like a framework preallocating its memory pool: memtrace sees "
		      "the pool, not the tensors in it. Rerun with <code>memtrace run "
		      "--per-tensor</code> (see docs/usage.md).</p>\n",
		      h->f);
	}
}

static void total_row(const struct html *h, const char *what, uint64_t device, uint64_t host,
		      bool bytes)
{
	fprintf(h->f, "<tr><th>%s</th>", what);
	if (bytes) {
		size_cell(h, device);
		size_cell(h, host);
	} else {
		count_cell(h, device);
		count_cell(h, host);
	}
	fputs("</tr>\n", h->f);
}

static void print_totals(const struct html *h)
{
	const struct model *m = h->m;

	fputs("<h2>Totals</h2>\n<table><tr><th></th><th>device memory</th>"
	      "<th>pinned host</th></tr>\n",
	      h->f);
	total_row(h, "allocations", m->device.allocations, m->host.allocations, false);
	total_row(h, "frees", m->device.frees, m->host.frees, false);
	total_row(h, "bytes allocated", m->device.bytes_allocated, m->host.bytes_allocated, true);
	total_row(h, "peak", m->device.peak_bytes, m->host.peak_bytes, true);
	total_row(h, "live at end", m->device.live_bytes, m->host.live_bytes, true);
	fprintf(h->f, "</table>\n<p>%" PRIu64 " events; %zu out-of-memory failures; %" PRIu64
		      " other failed allocations; %" PRIu64 " frees of unknown addresses.</p>\n",
		m->events, m->n_ooms, m->alloc_errors, m->unmatched_frees);
}

static void print_kinds(const struct html *h)
{
	const struct model *m = h->m;

	if (!render_unusual_kinds(m))
		return;
	fputs("<h2>Memory kinds</h2>\n<table><tr><th>kind</th><th>allocations</th><th>total</th>"
	      "<th>peak</th><th>live at end</th><th>counted as device memory</th>"
	      "<th>what it is</th></tr>\n",
	      h->f);
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		const struct model_mem *k = &m->kinds[mem];
		const char *meaning = render_mem_meaning(mem);

		if (!render_mem_seen(m, mem))
			continue;
		fprintf(h->f, "<tr><td>%s</td>", render_mem_name(mem));
		count_cell(h, k->allocations);
		size_cell(h, k->bytes_allocated);
		size_cell(h, k->peak_bytes);
		size_cell(h, k->live_bytes);
		fprintf(h->f, "<td>%s</td><td>", model_mem_is_device(mem) ? "yes" : "no");
		esc(h, meaning ? meaning : "");
		fputs("</td></tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_pools(const struct html *h)
{
	const struct model *m = h->m;

	if (m->n_pools == 0)
		return;
	fputs("<h2>Memory pools</h2>\n<table><tr><th>pool</th><th>allocations</th><th>total</th>"
	      "<th>live at end</th><th>trims</th><th>destroyed</th><th>created at</th></tr>\n",
	      h->f);
	for (size_t i = 0; i < m->n_pools; i++) {
		const struct model_pool *p = &m->pools[i];

		fprintf(h->f, "<tr><td><code>0x%" PRIx64 "</code></td>", p->handle);
		count_cell(h, p->allocations);
		size_cell(h, p->bytes_allocated);
		size_cell(h, p->live_bytes);
		count_cell(h, p->trims);
		fprintf(h->f, "<td>%s</td>", p->destroyed ? "yes" : "no");
		if (p->created)
			stack_cell(h, p->created_stack);
		else
			fputs("<td>(not seen)</td>", h->f);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_holders(const struct html *h)
{
	const struct model_oom *o = render_headline_oom(h->m);
	size_t n;

	if (!o)
		return;
	n = render_limit(h->o, o->n_holders);
	fprintf(h->f, "<h2>Live at the out-of-memory failure (%zu of %zu stacks)</h2>\n",
		n, o->n_holders);
	fputs("<table><tr><th>bytes</th><th>allocations</th><th>allocated at</th></tr>\n", h->f);
	for (size_t i = 0; i < n; i++) {
		fputs("<tr>", h->f);
		size_cell(h, o->holders[i].bytes);
		count_cell(h, o->holders[i].count);
		stack_cell(h, o->holders[i].stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_sites(const struct html *h)
{
	size_t n = render_limit(h->o, h->m->n_sites);

	fprintf(h->f, "<h2>Sites by device memory live at the peak (%zu of %zu)</h2>\n", n,
		h->m->n_sites);
	fputs("<table><tr><th>at peak</th><th>total</th><th>allocations</th><th>live at end</th>"
	      "<th>site</th></tr>\n",
	      h->f);
	for (size_t i = 0; i < n; i++) {
		const struct model_site *s = &h->m->sites[i];

		fputs("<tr>", h->f);
		size_cell(h, s->at_peak);
		size_cell(h, s->total_bytes);
		count_cell(h, s->count);
		size_cell(h, s->live);
		stack_cell(h, s->stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_leaks(const struct html *h)
{
	size_t n = render_limit(h->o, h->m->n_leaks);

	fprintf(h->f, "<h2>Leaks: live at the end (%zu of %zu stacks)</h2>\n", n, h->m->n_leaks);
	fputs("<table><tr><th>bytes</th><th>allocations</th><th>memory</th><th>allocated at</th>"
	      "</tr>\n",
	      h->f);
	for (size_t i = 0; i < n; i++) {
		const struct model_group *g = &h->m->leaks[i];

		fputs("<tr>", h->f);
		size_cell(h, g->bytes);
		count_cell(h, g->count);
		fprintf(h->f, "<td>%s</td>", render_mem_name(g->mem));
		stack_cell(h, g->stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

void render_html(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o)
{
	const struct html h = { .f = f, .t = t, .m = m, .o = o };

	print_head(&h);
	print_notes(&h);
	print_headline(&h);
	print_totals(&h);
	print_kinds(&h);
	print_pools(&h);
	print_holders(&h);
	print_sites(&h);
	print_leaks(&h);
	fputs("</body></html>\n", f);
}
