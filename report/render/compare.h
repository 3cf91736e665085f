/* Several traces at once: a diff of two (what grew, by site), and the
 * ranks of one distributed job side by side (which rank failed). Sites of
 * two traces are matched by their frames' names (function, file, line,
 * else module and offset), since stack ids are per trace. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "diagnose.h"
#include "model.h"
#include "render.h"
#include "trace.h"

/* ---- compare-diff.c ---- */

/* NEW compared with BASE: the change in totals, and sites by the change
 * in bytes at the peak, largest growth first. */
void compare_diff_text(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o);
void compare_diff_json(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o);

/* ---- compare-ranks.c ---- */

#define COMPARE_TOP_SITES 16 /* a rank's largest sites at its peak, with their labels */

/* A site of a rank at the rank's peak. key: a hash of the site's kind and
 * label, the same in every rank (stack ids are per trace). */
struct compare_site {
	uint64_t key, bytes;
	char *label; /* in top only */
	char *text; /* in top only: label shortened to the rank table's column */
};

/* What the rank table keeps of one trace, so that the traces can be read
 * (in parallel) without holding every model. */
struct compare_rank {
	char *path, *rank, *host, *pid, *end;
	bool has_rank_number;
	int64_t rank_number;
	uint64_t allocations, bytes_allocated, peak_bytes, leaked_bytes;
	int64_t peak_time_ns, duration_ns;
	size_t n_ooms;	      /* that reached the program */
	size_t n_recovered; /* failures recovered from: no OOM */
	/* the first OOM: the one that started the job's failure */
	bool has_oom, has_wall, has_device;
	int64_t oom_time_ns, oom_wall_ns; /* wall: start_realtime_ns + time_ns */
	uint64_t requested, live_at_oom, device_free, device_total;
	char *oom_api, *oom_site;
	struct diagnoses diag; /* of the last OOM, as the single report says */
	/* its sites at its peak: the largest (top[0]: the top holder), and
	 * every one by key, sorted by key, for the skew */
	struct compare_site top[COMPARE_TOP_SITES];
	size_t n_top;
	struct compare_site *at_peak;
	size_t n_at_peak;
};

void compare_rank_from(struct compare_rank *r, const struct trace *t, const struct model *m);
void compare_rank_fini(struct compare_rank *r);

/* By rank number; traces without one last, by path. */
void compare_ranks_sort(struct compare_rank *ranks, size_t n);

/* The index of the rank that failed first, or -1 when none failed. */
long compare_first_failure(const struct compare_rank *ranks, size_t n);

/* Is one rank heavier than the others: the heaviest rank's peak against
 * the median peak (of two middle ranks, their mean), and of its largest
 * sites the one that holds the most beyond that site's median over the
 * ranks (a rank without it holding 0): the site that makes the
 * difference; NULL when none holds more than its median. */
struct compare_skew {
	size_t heaviest; /* index in ranks */
	uint64_t max_peak, median_peak;
	const struct compare_site *site; /* in ranks[heaviest].top */
	uint64_t site_bytes, site_median;
};

/* false when there are no ranks */
bool compare_skew(const struct compare_rank *ranks, size_t n, struct compare_skew *s);

/* A trace given that could not be read: left out of the table, and said. */
struct compare_skipped {
	const char *path;
	const char *why; /* the reader's message */
};

/* The table, the skew and which rank failed first: ranks sorted; then
 * the traces skipped. */
void compare_ranks_text(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped);
void compare_ranks_json(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped);

/* ---- compare-ranks-html.c ---- */

void compare_ranks_html(FILE *f, const struct compare_rank *ranks, size_t n,
			const struct compare_skipped *skipped, size_t n_skipped);
