/* The ranks of one job side by side: what each peaked at, its OOMs and
 * leaks, and which failed first. "First" is by wall-clock time (each
 * trace's start_realtime_ns plus the OOM's time), so traces of processes
 * started at different moments compare; without it, by time since start. */
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

void compare_rank_from(struct compare_rank *r, const struct trace *t, const struct model *m)
{
	const struct model_oom *o = m->n_ooms ? &m->ooms[0] : NULL;
	int64_t start;

	*r = (struct compare_rank){
		.path = xstrdup(t->path), .rank = meta_dup(t, "rank"), .host = meta_dup(t, "host"),
		.pid = meta_dup(t, "pid"), .end = meta_dup(t, "end"),
		.allocations = m->device.allocations, .bytes_allocated = m->device.bytes_allocated,
		.peak_bytes = m->device.peak_bytes, .peak_time_ns = m->device.peak_time_ns,
		.leaked_bytes = m->device.live_bytes, .duration_ns = render_duration_ns(t, m),
		.n_ooms = m->n_ooms,
	};
	r->has_rank_number = render_meta_int(t, "rank", &r->rank_number);
	diagnose(t, m, &r->diag);
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
}

/* Index of the rank that failed first, or -1 when none failed. Wall
 * clocks compare only when every failed rank has one. */
static long first_failure(const struct compare_rank *ranks, size_t n)
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
	escape_text(f, r->path, 32);
	fputc('\n', f);
}

void compare_ranks_text(FILE *f, const struct compare_rank *ranks, size_t n)
{
	long first = first_failure(ranks, n);
	size_t failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += ranks[i].has_oom;
	fprintf(f, "memtrace report: %zu traces; %zu with an out-of-memory failure\n\n", n, failed);
	fputs("  rank          peak  OOMs      leaked  first OOM request              trace\n", f);
	for (size_t i = 0; i < n; i++)
		text_row(f, &ranks[i], i, (long)i == first);
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
	escape_text(f, r->oom_site, 60);
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
		   ",\"bytes_allocated\":%" PRIu64 ",\"live_bytes_at_end\":%" PRIu64 ",\"ooms\":%zu",
		r->peak_bytes, r->peak_time_ns, r->allocations, r->bytes_allocated, r->leaked_bytes,
		r->n_ooms);
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

void compare_ranks_json(FILE *f, const struct compare_rank *ranks, size_t n)
{
	long first = first_failure(ranks, n);

	fputs("{\"memtrace_ranks\":1,\"failed_first\":", f);
	if (first < 0)
		fputs("null", f);
	else
		fprintf(f, "%ld", first);
	fputs(",\"traces\":[", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_rank(f, &ranks[i]);
	}
	fputs("\n]}\n", f);
}
