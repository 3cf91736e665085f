/* NEW --diff BASE: the change in the totals, then the sites by the change
 * in device bytes they held at the peak. A site of one trace is the same
 * site in the other when its frames have the same names: the key is the
 * whole stack's labels, one per line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "util-json.h"
#include "util-mem.h"
#include "util-str.h"

#define WIDTH 100

struct side {
	uint64_t peak, total, count, live;
};

struct row {
	char *key;   /* the stack's frame labels, innermost first, one per line */
	char *label; /* the site frame, as the single report shows it */
	char *text;  /* the same, shortened to the text table's column (file:line whole) */
	struct side s[2]; /* 0: new, 1: base */
	bool in[2];	  /* the site is in that trace */
};

struct rows {
	struct row *r;
	size_t n, cap;
};

static char *stack_key(const struct trace *t, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(t, stack);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return xstrdup("");
	for (uint32_t i = 0; s && i < s->depth; i++) {
		_autofree_ char *l = render_frame_label(t, trace_stack_frame(t, s, i), false);

		fprintf(f, "%s\n", l);
	}
	if (!s)
		fprintf(f, "(stack %" PRId64 ")\n", stack);
	fclose(f);
	return buf ? buf : xstrdup("");
}

static void add_sites(struct rows *rows, const struct trace *t, const struct model *m, int side)
{
	for (size_t i = 0; i < m->n_sites; i++) {
		const struct model_site *site = &m->sites[i];
		struct row *r;

		grow_array(&rows->r, &rows->cap, rows->n + 1, sizeof(*rows->r));
		r = &rows->r[rows->n++];
		*r = (struct row){ .key = stack_key(t, site->stack),
				   .label = render_model_site_label(t, site, true),
				   .text = render_model_site_label_fit(t, site, true, WIDTH - 54) };
		r->in[side] = true;
		r->s[side] = (struct side){ .peak = site->at_peak, .total = site->total_bytes,
					    .count = site->count, .live = site->live };
	}
}

static int cmp_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static int64_t delta(uint64_t a, uint64_t b)
{
	return a >= b ? (int64_t)(a - b) : -(int64_t)(b - a);
}

static int cmp_growth(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int64_t dx = delta(x->s[0].peak, x->s[1].peak), dy = delta(y->s[0].peak, y->s[1].peak);
	int64_t tx = delta(x->s[0].total, x->s[1].total), ty = delta(y->s[0].total, y->s[1].total);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Merge rows with the same key (the same site in both, or several stacks
 * of one trace with the same names), then order by growth. */
static void settle(struct rows *rows)
{
	size_t out = 0;

	if (rows->n == 0)
		return;
	qsort(rows->r, rows->n, sizeof(*rows->r), cmp_key);
	for (size_t i = 0; i < rows->n; i++) {
		struct row *r = &rows->r[i];

		if (out > 0 && strcmp(rows->r[out - 1].key, r->key) == 0) {
			for (int s = 0; s < 2; s++) {
				rows->r[out - 1].s[s].peak += r->s[s].peak;
				rows->r[out - 1].s[s].total += r->s[s].total;
				rows->r[out - 1].s[s].count += r->s[s].count;
				rows->r[out - 1].s[s].live += r->s[s].live;
				rows->r[out - 1].in[s] |= r->in[s];
			}
			free(r->key);
			free(r->label);
			free(r->text);
		} else {
			rows->r[out++] = *r;
		}
	}
	rows->n = out;
	qsort(rows->r, rows->n, sizeof(*rows->r), cmp_growth);
}

static void signed_size(char *buf, size_t len, int64_t d)
{
	snprintf(buf, len, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "",
		 fmt_size(d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d).s);
}

static void text_total(FILE *f, const char *what, uint64_t n, uint64_t b, bool bytes)
{
	struct fmt_str sn, sb;
	char sd[40];

	if (bytes) {
		sn = fmt_size(n);
		sb = fmt_size(b);
		signed_size(sd, sizeof(sd), delta(n, b));
	} else {
		snprintf(sn.s, sizeof(sn.s), "%" PRIu64, n);
		snprintf(sb.s, sizeof(sb.s), "%" PRIu64, b);
		snprintf(sd, sizeof(sd), "%+" PRId64, delta(n, b));
	}
	fprintf(f, "  %-18s %12s  %12s  %12s\n", what, sn.s, sb.s, sd);
}

/* its path, and its rank when it has one: two ranks of a job compare as
 * two runs do */
static void text_side(FILE *f, const struct trace *t)
{
	int64_t rank;

	escape_text(f, t->path, 40);
	if (render_meta_int(t, "rank", &rank))
		fprintf(f, " (rank %" PRId64 ")", rank);
}

static void text_diff(FILE *f, const struct trace *tn, const struct model *mn,
		      const struct trace *tb, const struct model *mb, const struct rows *rows,
		      size_t shown)
{
	fputs("memtrace report: ", f);
	text_side(f, tn);
	fputs(" compared with ", f);
	text_side(f, tb);
	fputs(" (the base)\n\n", f);
	fprintf(f, "  %-18s %12s  %12s  %12s\n", "device memory", "new", "base", "change");
	text_total(f, "peak", mn->device.peak_bytes, mb->device.peak_bytes, true);
	text_total(f, "bytes allocated", mn->device.bytes_allocated, mb->device.bytes_allocated, true);
	text_total(f, "allocations", mn->device.allocations, mb->device.allocations, false);
	text_total(f, "live at end", mn->device.live_bytes, mb->device.live_bytes, true);
	text_total(f, "out of memory", render_ooms_reached(mn), render_ooms_reached(mb), false);
	if (render_recovered_failures(mn) || render_recovered_failures(mb))
		text_total(f, "recovered (no OOM)", render_recovered_failures(mn),
			   render_recovered_failures(mb), false);
	fprintf(f, "\nSites by the change in device memory live at the peak (%zu %s%s):\n",
		rows->n, rows->n == 1 ? "site" : "sites", shown < rows->n ? "; top and bottom" : "");
	fputs("      change     at peak   base peak  total change  site\n", f);
	for (size_t k = 0; k < rows->n && k < shown; k++) {
		/* the first half of the rows shown grew most, the rest shrank most */
		size_t i = shown < rows->n && k >= (shown + 1) / 2 ? rows->n - (shown - k) : k;
		const struct row *r = &rows->r[i];
		char d[40], t[40];

		signed_size(d, sizeof(d), delta(r->s[0].peak, r->s[1].peak));
		signed_size(t, sizeof(t), delta(r->s[0].total, r->s[1].total));
		fprintf(f, "  %10s  %10s  %10s  %12s  ", d, fmt_size(r->s[0].peak).s,
			fmt_size(r->s[1].peak).s, t);
		escape_text(f, r->text, 0); /* never cut: file:line stays whole */
		fputs(!r->in[1] ? " (new)\n" : !r->in[0] ? " (gone)\n" : "\n", f);
	}
}

static void json_side(FILE *f, const struct trace *t, const struct model *m)
{
	int64_t rank;

	fputs("{\"path\":", f);
	json_str(f, t->path);
	if (render_meta_int(t, "rank", &rank))
		fprintf(f, ",\"rank\":%" PRId64, rank);
	else
		fputs(",\"rank\":null", f);
	fprintf(f, ",\"peak_bytes\":%" PRIu64 ",\"bytes_allocated\":%" PRIu64
		   ",\"allocations\":%" PRIu64 ",\"live_bytes_at_end\":%" PRIu64 ",\"ooms\":%zu"
		   ",\"recovered_failures\":%zu}",
		m->device.peak_bytes, m->device.bytes_allocated, m->device.allocations,
		m->device.live_bytes, render_ooms_reached(m), render_recovered_failures(m));
}

static void json_diff(FILE *f, const struct trace *tn, const struct model *mn,
		      const struct trace *tb, const struct model *mb, const struct rows *rows,
		      size_t shown)
{
	fputs("{\"memtrace_diff\":1,\"new\":", f);
	json_side(f, tn, mn);
	fputs(",\"base\":", f);
	json_side(f, tb, mb);
	fputs(",\"sites\":[", f);
	for (size_t i = 0; i < rows->n && i < shown; i++) {
		const struct row *r = &rows->r[i];

		fputs(i ? ",\n" : "\n", f);
		fputs("{\"site\":", f);
		json_str(f, r->label);
		fputs(",\"stack\":", f);
		json_str(f, r->key);
		fprintf(f, ",\"peak_bytes_change\":%" PRId64 ",\"total_bytes_change\":%" PRId64,
			delta(r->s[0].peak, r->s[1].peak), delta(r->s[0].total, r->s[1].total));
		for (int s = 0; s < 2; s++)
			fprintf(f, ",\"%s\":{\"peak_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64
				   ",\"count\":%" PRIu64 ",\"live_bytes_at_end\":%" PRIu64 "}",
				s ? "base" : "new", r->s[s].peak, r->s[s].total, r->s[s].count,
				r->s[s].live);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
}

static void diff(FILE *f, bool json, const struct trace *tn, const struct model *mn,
		 const struct trace *tb, const struct model *mb, const struct render_opts *o)
{
	struct rows rows = { 0 };
	size_t shown;

	add_sites(&rows, tn, mn, 0);
	add_sites(&rows, tb, mb, 1);
	settle(&rows);
	shown = json && !o->top_given ? rows.n : render_limit(o, rows.n);
	if (json)
		json_diff(f, tn, mn, tb, mb, &rows, shown);
	else
		text_diff(f, tn, mn, tb, mb, &rows, shown);
	for (size_t i = 0; i < rows.n; i++) {
		free(rows.r[i].key);
		free(rows.r[i].label);
		free(rows.r[i].text);
	}
	free(rows.r);
}

void compare_diff_text(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o)
{
	diff(f, false, tn, mn, tb, mb, o);
}

void compare_diff_json(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o)
{
	diff(f, true, tn, mn, tb, mb, o);
}
