/* The ranks of one job as one page: which rank failed first and why, the
 * heaviest rank against the median, and the table of the ranks (sorted by
 * rank), each with a bar of its peak against the heaviest's. No script:
 * the page's Content-Security-Policy allows its stylesheet alone, and
 * trace strings reach it escaped, cut at MAX_CHARS. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "util-mem.h"
#include "util-str.h"

#define MAX_CHARS 200

/* s escaped, at most MAX_CHARS bytes of it, cut on a character's start */
static void put(FILE *f, const char *s)
{
	_autofree_ char *cut = NULL;
	size_t n;

	if (!s)
		s = "";
	n = strlen(s);
	if (n > MAX_CHARS) {
		n = MAX_CHARS;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		cut = xasprintf("%.*s...", (int)n, s);
		s = cut;
	}
	escape_html(f, s);
}

static void rank_name(FILE *f, const struct compare_rank *r, size_t i)
{
	if (r->rank)
		put(f, r->rank);
	else
		fprintf(f, "#%zu", i);
}

static void failed_first(FILE *f, const struct compare_rank *ranks, long first)
{
	const struct compare_rank *r = &ranks[first];

	fputs("<h1><span class=\"tag\">OUT OF MEMORY</span> Rank ", f);
	rank_name(f, r, (size_t)first);
	fprintf(f, " failed first: %s of %s at %s in <code>",
		r->oom_api ? r->oom_api : "allocation", fmt_size(r->requested).s,
		fmt_seconds(r->oom_time_ns).s);
	put(f, r->oom_site);
	fputs("</code></h1>\n", f);
	if (r->has_device)
		fprintf(f, "<p>The device had %s free of %s.</p>\n", fmt_size(r->device_free).s,
			fmt_size(r->device_total).s);
	if (r->diag.n) {
		fputs("<div class=\"try\"><ul>", f);
		for (size_t i = 0; i < r->diag.n; i++) {
			fputs("<li>", f);
			put(f, r->diag.items[i].remedy);
			fputs(" <span class=\"why\">because ", f);
			put(f, r->diag.items[i].evidence);
			fputs("</span></li>", f);
		}
		fputs("</ul></div>\n", f);
	}
	fputs("<p>Its whole report: <code>memtrace report ", f);
	put(f, r->path);
	fputs("</code></p>\n", f);
}

static void skew(FILE *f, const struct compare_rank *ranks, size_t n)
{
	struct compare_skew s;

	if (n < 2 || !compare_skew(ranks, n, &s))
		return;
	fputs("<p>Heaviest: rank ", f);
	rank_name(f, &ranks[s.heaviest], s.heaviest);
	fprintf(f, " peaked at %s", fmt_size(s.max_peak).s);
	if (s.median_peak)
		fprintf(f, ", %.2f times the median peak (%s)",
			(double)s.max_peak / (double)s.median_peak, fmt_size(s.median_peak).s);
	if (!s.site) {
		fputs("; none of its sites holds more than on the median rank.</p>\n", f);
		return;
	}
	fputs(". The difference: <code>", f);
	put(f, s.site->label);
	fprintf(f, "</code> holds %s there, %s on the median rank.</p>\n", fmt_size(s.site_bytes).s,
		fmt_size(s.site_median).s);
}

static void row(FILE *f, const struct compare_rank *r, size_t i, uint64_t max, bool first,
		bool heaviest)
{
	fprintf(f, "<tr%s><td>", first ? " class=\"failed\"" : heaviest ? " class=\"heavy\"" : "");
	rank_name(f, r, i);
	fputs("</td><td>", f);
	put(f, r->host);
	fprintf(f,
		"</td><td class=\"n\">%s</td><td class=\"bar\"><svg viewBox=\"0 0 100 8\" "
		"preserveAspectRatio=\"none\"><rect width=\"%.1f\" height=\"8\"/></svg></td>",
		fmt_size(r->peak_bytes).s, max ? 100.0 * (double)r->peak_bytes / (double)max : 0.0);
	fprintf(f, "<td class=\"n\">%zu</td><td class=\"n\">%s</td>", r->n_ooms,
		fmt_size(r->leaked_bytes).s);
	if (r->has_oom)
		fprintf(f, "<td class=\"n\">%s at %s</td>", fmt_size(r->requested).s,
			fmt_seconds(r->oom_time_ns).s);
	else
		fputs("<td class=\"n\">-</td>", f);
	if (r->n_top) {
		fprintf(f, "<td class=\"n\">%s</td><td class=\"site\">",
			fmt_size(r->top[0].bytes).s);
		put(f, r->top[0].label);
		fputs("</td>", f);
	} else {
		fputs("<td class=\"n\">-</td><td></td>", f);
	}
	fputs("<td><code>", f);
	put(f, r->path);
	fputs("</code></td></tr>\n", f);
}

/* The traces left out: they are not in the table. */
static void html_skipped(FILE *f, const struct compare_skipped *skipped, size_t n)
{
	if (n == 0)
		return;
	fprintf(f, "<h2>Skipped: %zu unreadable trace%s, not in the table</h2>\n<ul>\n", n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		fputs("<li><code>", f);
		escape_html(f, skipped[i].path);
		fputs("</code>: ", f);
		escape_html(f, skipped[i].why);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

void compare_ranks_html(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped)
{
	long first = compare_first_failure(ranks, n);
	struct compare_skew s = { 0 };
	bool has_skew = compare_skew(ranks, n, &s);
	size_t failed = 0;
	_autofree_ char *title = xasprintf("%zu ranks", n);

	for (size_t i = 0; i < n; i++)
		failed += ranks[i].has_oom;
	render_html_head(f, title, false);
	fprintf(f,
		"<header class=\"top\"><b>memtrace</b><span class=\"meta\">%zu traces · %zu with "
		"an out-of-memory failure</span></header>\n<main>\n",
		n, failed);
	fprintf(f, "<section class=\"headline%s ranks\"><div>\n", first >= 0 ? " oom" : "");
	if (first >= 0)
		failed_first(f, ranks, first);
	else
		fputs("<h1><span class=\"tag ok\">NO OOM</span> No rank ran out of memory.</h1>\n",
		      f);
	skew(f, ranks, n);
	fputs("</div></section>\n<h2>Ranks</h2>\n<table class=\"grid ranks\"><tr><th>rank</th>"
	      "<th>host</th><th class=\"n\">peak</th><th></th><th class=\"n\">OOMs</th>"
	      "<th class=\"n\">leaked</th><th class=\"n\">first OOM request</th>"
	      "<th class=\"n\">top holder at the peak</th><th>site</th><th>trace</th></tr>\n",
	      f);
	for (size_t i = 0; i < n; i++)
		row(f, &ranks[i], i, s.max_peak, (long)i == first, has_skew && i == s.heaviest);
	fputs("</table>\n", f);
	html_skipped(f, skipped, n_skipped);
	fputs("</main></body></html>\n", f);
}
