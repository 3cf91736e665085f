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

/* NEW compared with BASE: the change in totals, and sites by the change
 * in bytes at the peak, largest growth first. */
void compare_diff_text(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o);
void compare_diff_json(FILE *f, const struct trace *tn, const struct model *mn,
		       const struct trace *tb, const struct model *mb, const struct render_opts *o);

/* What the rank table keeps of one trace, so that the traces can be read
 * one after the other without holding every model. */
struct compare_rank {
	char *path, *rank, *host, *pid, *end;
	bool has_rank_number;
	int64_t rank_number;
	uint64_t allocations, bytes_allocated, peak_bytes, leaked_bytes;
	int64_t peak_time_ns, duration_ns;
	size_t n_ooms;
	/* the first OOM: the one that started the job's failure */
	bool has_oom, has_wall, has_device;
	int64_t oom_time_ns, oom_wall_ns; /* wall: start_realtime_ns + time_ns */
	uint64_t requested, live_at_oom, device_free, device_total;
	char *oom_api, *oom_site;
	struct diagnoses diag; /* of the last OOM, as the single report says */
};

void compare_rank_from(struct compare_rank *r, const struct trace *t, const struct model *m);
void compare_rank_fini(struct compare_rank *r);

/* The table, and which rank failed first. */
void compare_ranks_text(FILE *f, const struct compare_rank *ranks, size_t n);
void compare_ranks_json(FILE *f, const struct compare_rank *ranks, size_t n);
