/* The ranks of one job side by side: what each peaked at, its OOMs and
 * leaks, its top holder at its peak; whether one rank is heavier than the
 * others and which site makes the difference; which failed first.
 * "First" is by wall-clock time (each trace's start_realtime_ns plus the
 * OOM's time), so traces of processes started at different moments
 * compare; without it, by time since start. A site of one rank is the
 * same site in another when its kind and label (the user's frame, with
 * its whole file path) are the same. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "util-json.h"
#include "util-mem.h"
#include "util-str.h"

static char *meta_dup(const struct trace *t, const char *key)
{
	const char *v = trace_meta_get(t, key);

	return v && *v ? xstrdup(v) : NULL;
}

static uint64_t site_key(const struct trace *t, const struct model_site *s)
{
	_autofree_ char *label = render_model_site_label(t, s, false);
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)s->kind;

	for (const unsigned char *c = (const unsigned char *)label; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	return h;
}

static int cmp_key(const void *a, const void *b)
{
	const struct compare_site *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Every site live at the peak by key (sites of one label summed), and the
 * largest with their labels: the model's sites come by bytes at the peak. */
static void keep_sites(struct compare_rank *r, const struct trace *t, const struct model *m)
{
	size_t n = 0;

	r->at_peak = xcalloc(m->n_sites ? m->n_sites : 1, sizeof(*r->at_peak));
	for (size_t i = 0; i < m->n_sites && m->sites[i].at_peak; i++) {
		const struct model_site *s = &m->sites[i];

		r->at_peak[n++] = (struct compare_site){ .key = site_key(t, s), .bytes = s->at_peak };
		if (r->n_top < COMPARE_TOP_SITES)
			r->top[r->n_top++] = (struct compare_site){
				.key = r->at_peak[n - 1].key, .bytes = s->at_peak,
				.label = render_model_site_label(t, s, true),
				.text = render_model_site_label_fit(t, s, true, 28),
			};
	}
	qsort(r->at_peak, n, sizeof(*r->at_peak), cmp_key);
	r->n_at_peak = 0;
	for (size_t i = 0; i < n; i++) {
		if (r->n_at_peak && r->at_peak[r->n_at_peak - 1].key == r->at_peak[i].key)
			r->at_peak[r->n_at_peak - 1].bytes += r->at_peak[i].bytes;
		else
			r->at_peak[r->n_at_peak++] = r->at_peak[i];
	}
}

void compare_rank_from(struct compare_rank *r, const struct trace *t, const struct model *m)
{
	const struct model_oom *o = NULL;
	int64_t start;

	/* the rank's first OOM that reached the program */
	for (size_t i = m->n_ooms; i-- > 0;)
		if (!m->ooms[i].recovered)
			o = &m->ooms[i];

	*r = (struct compare_rank){
		.path = xstrdup(t->path), .rank = meta_dup(t, "rank"), .host = meta_dup(t, "host"),
		.pid = meta_dup(t, "pid"), .end = meta_dup(t, "end"),
		.allocations = m->device.allocations, .bytes_allocated = m->device.bytes_allocated,
		.peak_bytes = m->device.peak_bytes, .peak_time_ns = m->device.peak_time_ns,
		.leaked_bytes = m->device.live_bytes, .duration_ns = render_duration_ns(t, m),
		.n_ooms = render_ooms_reached(m), .n_recovered = render_recovered_failures(m),
	};
	r->has_rank_number = render_meta_int(t, "rank", &r->rank_number);
	diagnose(t, m, &r->diag);
	keep_sites(r, t, m);
	if (!o)
		return;
	r->has_oom = true;
	r->oom_time_ns = o->time_ns;
	r->has_wall = render_meta_int(t, "start_realtime_ns", &start);
	r->oom_wall_ns = r->has_wall ? start + o->time_ns : o->time_ns;
	r->requested = o->requested;
	r->live_at_oom = o->live_bytes;
	r->has_device = o->has_device_free && o->has_device_total;
	r->device_free = o->device_free < 0 ? 0 : (uint64_t)o->device_free;
	r->device_total = o->device_total < 0 ? 0 : (uint64_t)o->device_total;
	r->oom_api = trace_api_name(t, o->api) ? xstrdup(trace_api_name(t, o->api)) : NULL;
	r->oom_site = render_stack_label(t, o->stack, true);
}

void compare_rank_fini(struct compare_rank *r)
{
	free(r->path);
	free(r->rank);
	free(r->host);
	free(r->pid);
	free(r->end);
	free(r->oom_api);
	free(r->oom_site);
	diagnoses_fini(&r->diag);
	for (size_t i = 0; i < r->n_top; i++) {
		free(r->top[i].label);
		free(r->top[i].text);
	}
	free(r->at_peak);
}

static int cmp_rank(const void *a, const void *b)
{
	const struct compare_rank *x = a, *y = b;

	if (x->has_rank_number != y->has_rank_number)
		return x->has_rank_number ? -1 : 1;
	if (x->has_rank_number && x->rank_number != y->rank_number)
		return x->rank_number < y->rank_number ? -1 : 1;
	return strcmp(x->path, y->path);
}

void compare_ranks_sort(struct compare_rank *ranks, size_t n)
{
	qsort(ranks, n, sizeof(*ranks), cmp_rank);
}

/* Wall clocks compare only when every failed rank has one. */
long compare_first_failure(const struct compare_rank *ranks, size_t n)
{
	bool wall = true;
	long best = -1;

	for (size_t i = 0; i < n; i++)
		wall &= !ranks[i].has_oom || ranks[i].has_wall;
	for (size_t i = 0; i < n; i++) {
		int64_t t = wall ? ranks[i].oom_wall_ns : ranks[i].oom_time_ns;
		int64_t b = best < 0 ? 0 : wall ? ranks[best].oom_wall_ns : ranks[best].oom_time_ns;

		if (ranks[i].has_oom && (best < 0 || t < b))
			best = (long)i;
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v (sorted in place): of two middle values, their mean. */
static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) / 2] + (v[n / 2] - v[(n - 1) / 2]) / 2;
}

static uint64_t bytes_of(const struct compare_rank *r, uint64_t key)
{
	const struct compare_site k = { .key = key };
	const struct compare_site *s = bsearch(&k, r->at_peak, r->n_at_peak, sizeof(k), cmp_key);

	return s ? s->bytes : 0;
}

bool compare_skew(const struct compare_rank *ranks, size_t n, struct compare_skew *s)
{
	_autofree_ uint64_t *v = n ? xcalloc(n, sizeof(*v)) : NULL;
	const struct compare_rank *h;

	*s = (struct compare_skew){ 0 };
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		v[i] = ranks[i].peak_bytes;
		if (v[i] > ranks[s->heaviest].peak_bytes)
			s->heaviest = i;
	}
	h = &ranks[s->heaviest];
	s->max_peak = h->peak_bytes;
	s->median_peak = median(v, n);
	for (size_t k = 0; k < h->n_top; k++) {
		uint64_t mine = bytes_of(h, h->top[k].key), med;

		for (size_t i = 0; i < n; i++)
			v[i] = bytes_of(&ranks[i], h->top[k].key);
		med = median(v, n);
		if (mine > med && (!s->site || mine - med > s->site_bytes - s->site_median)) {
			s->site = &h->top[k];
			s->site_bytes = mine;
			s->site_median = med;
		}
	}
	return true;
}

static const char *rank_name(const struct compare_rank *r, size_t i, char *buf, size_t len)
{
	if (r->rank)
		return r->rank;
	snprintf(buf, len, "#%zu", i);
	return buf;
}

static void text_row(FILE *f, const struct compare_rank *r, size_t i, bool first)
{
	char name[32];
	const char *rn = rank_name(r, i, name, sizeof(name));
	size_t w = text_width(rn);

	fputs(first ? "* " : "  ", f);
	escape_text(f, rn, 6);
	fprintf(f, "%*s", w < 6 ? (int)(6 - w) : 0, "");
	fprintf(f, "  %10s  %4zu  %10s  ", fmt_size(r->peak_bytes).s, r->n_ooms,
		fmt_size(r->leaked_bytes).s);
	if (r->has_oom)
		fprintf(f, "%10s at %9s  ", fmt_size(r->requested).s,
			fmt_seconds(r->oom_time_ns).s);
	else
		fprintf(f, "%10s    %9s  ", "-", "");
	if (r->n_top) {
		fprintf(f, "%10s  ", fmt_size(r->top[0].bytes).s);
		/* shortened, never cut: its file:line stays whole */
		w = text_width(r->top[0].text);
		escape_text(f, r->top[0].text, 0);
		fprintf(f, "%*s", w < 28 ? (int)(28 - w) : 0, "");
	} else {
		fprintf(f, "%10s  %28s", "-", "");
	}
	fputs("  ", f);
	escape_text(f, r->path, 32);
	fputc('\n', f);
}

static void text_skew(FILE *f, const struct compare_rank *ranks, size_t n)
{
	struct compare_skew s;
	char name[32];

	if (n < 2 || !compare_skew(ranks, n, &s))
		return;
	fputs("\nHeaviest: rank ", f);
	escape_text(f, rank_name(&ranks[s.heaviest], s.heaviest, name, sizeof(name)), 20);
	fprintf(f, " peaked at %s", fmt_size(s.max_peak).s);
	if (s.median_peak)
		fprintf(f, ", %.2f times the median peak (%s)", (double)s.max_peak / (double)s.median_peak,
			fmt_size(s.median_peak).s);
	else
		fputs(" (the median peak is 0 B)", f);
	if (!s.site) {
		fputs("; none of its sites holds more than on the median rank.\n", f);
		return;
	}
	fputs(".\n  The difference: ", f);
	escape_text(f, s.site->label, 0);
	fprintf(f, " holds %s there, %s on the median rank.\n", fmt_size(s.site_bytes).s,
		fmt_size(s.site_median).s);
}

/* Failures a framework recovered from (cache flushed and retried) are
 * not in the OOMs column: said apart, under the table. */
static void text_recovered(FILE *f, const struct compare_rank *ranks, size_t n)
{
	size_t failures = 0, in = 0;

	for (size_t i = 0; i < n; i++) {
		failures += ranks[i].n_recovered;
		in += ranks[i].n_recovered > 0;
	}
	if (failures)
		fprintf(f, "\nRecovered from, not in OOMs: %zu failed allocation%s on %zu rank%s "
			   "(cache flushed and retried; no OOM).\n",
			failures, failures == 1 ? "" : "s", in, in == 1 ? "" : "s");
}

/* The traces left out, under the header: they are not in the table. */
static void text_skipped(FILE *f, const struct compare_skipped *skipped, size_t n)
{
	if (n == 0)
		return;
	fprintf(f, "Skipped %zu unreadable trace%s, not in the table:\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		fputs("  ", f);
		escape_text(f, skipped[i].path, 0);
		fputs(": ", f);
		escape_text(f, skipped[i].why, 0);
		fputc('\n', f);
	}
	fputc('\n', f);
}

void compare_ranks_text(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped)
{
	long first = compare_first_failure(ranks, n);
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += ranks[i].has_oom;
	fprintf(f, "memtrace report: %zu traces; %zu with an out-of-memory failure\n\n", n, failed);
	text_skipped(f, skipped, n_skipped);
	fputs("  rank          peak  OOMs      leaked  first OOM request        top holder at the "
	      "peak                    trace\n",
	      f);
	for (size_t i = 0; i < n; i++)
		text_row(f, &ranks[i], i, (long)i == first);
	text_recovered(f, ranks, n);
	text_skew(f, ranks, n);
	if (first < 0) {
		fputs("\nNo rank ran out of memory.\n", f);
		return;
	}
	const struct compare_rank *r = &ranks[first];
	char name[32];

	fputs("\nRank ", f);
	escape_text(f, rank_name(r, (size_t)first, name, sizeof(name)), 20);
	fprintf(f, " failed first: %s of %s at %s in ", r->oom_api ? r->oom_api : "allocation",
		fmt_size(r->requested).s, fmt_seconds(r->oom_time_ns).s);
	escape_text(f, r->oom_site, 0);
	if (r->has_device)
		fprintf(f, "; device had %s free of %s", fmt_size(r->device_free).s,
			fmt_size(r->device_total).s);
	fputs(".\n", f);
	for (size_t i = 0; i < r->diag.n; i++) {
		fputs("  Try: ", f);
		escape_text(f, r->diag.items[i].remedy, 0);
		fputs("\n       because ", f);
		escape_text(f, r->diag.items[i].evidence, 0);
		fputc('\n', f);
	}
	fputs("Its whole report: memtrace report ", f);
	escape_text(f, r->path, 0);
	fputc('\n', f);
}

static void json_opt_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, ",\"%s\":", key);
	json_str(f, v);
}

static void json_top_site(FILE *f, const struct compare_rank *r)
{
	if (!r->n_top) {
		fputs(",\"top_site\":null", f);
		return;
	}
	fputs(",\"top_site\":{\"site\":", f);
	json_str(f, r->top[0].label);
	fprintf(f, ",\"bytes\":%" PRIu64 "}", r->top[0].bytes);
}

static void json_rank(FILE *f, const struct compare_rank *r)
{
	fputs("{\"path\":", f);
	json_str(f, r->path);
	if (r->has_rank_number)
		fprintf(f, ",\"rank\":%" PRId64, r->rank_number);
	else
		fputs(",\"rank\":null", f);
	json_opt_str(f, "host", r->host);
	json_opt_str(f, "pid", r->pid);
	json_opt_str(f, "end", r->end);
	fprintf(f, ",\"peak_bytes\":%" PRIu64 ",\"peak_time_ns\":%" PRId64 ",\"allocations\":%" PRIu64
		   ",\"bytes_allocated\":%" PRIu64 ",\"live_bytes_at_end\":%" PRIu64 ",\"ooms\":%zu"
		   ",\"recovered_failures\":%zu",
		r->peak_bytes, r->peak_time_ns, r->allocations, r->bytes_allocated, r->leaked_bytes,
		r->n_ooms, r->n_recovered);
	json_top_site(f, r);
	if (!r->has_oom) {
		fputs(",\"first_oom\":null}", f);
		return;
	}
	fprintf(f, ",\"first_oom\":{\"time_ns\":%" PRId64 ",\"requested_bytes\":%" PRIu64
		   ",\"live_bytes\":%" PRIu64,
		r->oom_time_ns, r->requested, r->live_at_oom);
	if (r->has_wall)
		fprintf(f, ",\"realtime_ns\":%" PRId64, r->oom_wall_ns);
	if (r->has_device)
		fprintf(f, ",\"device_free\":%" PRIu64 ",\"device_total\":%" PRIu64, r->device_free,
			r->device_total);
	json_opt_str(f, "api", r->oom_api);
	json_opt_str(f, "site", r->oom_site);
	fputs("}}", f);
}


static void json_rank_number(FILE *f, const struct compare_rank *r)
{
	if (r->has_rank_number)
		fprintf(f, "%" PRId64, r->rank_number);
	else
		fputs("null", f);
}

static void json_skew(FILE *f, const struct compare_rank *ranks, size_t n)
{
	struct compare_skew s;

	fputs(",\"skew\":", f);
	if (!compare_skew(ranks, n, &s)) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"max_peak_bytes\":%" PRIu64 ",\"median_peak_bytes\":%" PRIu64 ",\"ratio\":",
		s.max_peak, s.median_peak);
	if (s.median_peak)
		fprintf(f, "%.4f", (double)s.max_peak / (double)s.median_peak);
	else
		fputs("null", f);
	fputs(",\"heaviest_rank\":", f);
	json_rank_number(f, &ranks[s.heaviest]);
	json_opt_str(f, "heaviest_path", ranks[s.heaviest].path);
	if (s.site) {
		fputs(",\"site\":{\"site\":", f);
		json_str(f, s.site->label);
		fprintf(f, ",\"bytes\":%" PRIu64 ",\"median_bytes\":%" PRIu64 "}}", s.site_bytes,
			s.site_median);
	} else {
		fputs(",\"site\":null}", f);
	}
}

void compare_ranks_json(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped)
{
	long first = compare_first_failure(ranks, n);

	fputs("{\"memtrace_ranks\":2,\"failed_first\":", f);
	if (first < 0)
		fputs("null,\"failed_first_path\":null", f);
	else {
		json_rank_number(f, &ranks[first]);
		json_opt_str(f, "failed_first_path", ranks[first].path);
	}
	json_skew(f, ranks, n);
	fputs(",\"traces\":[", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_rank(f, &ranks[i]);
	}
	fputs("\n],\"skipped\":[", f);
	for (size_t i = 0; i < n_skipped; i++) {
		fputs(i ? ",\n{\"path\":" : "\n{\"path\":", f);
		json_str(f, skipped[i].path);
		json_opt_str(f, "why", skipped[i].why);
		fputc('}', f);
	}
	fputs("]}\n", f);
}
