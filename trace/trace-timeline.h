/* A bucket of device bytes live over time, as both halves keep it: the
 * writer's whole-run timeline of a flight trace (interpose/writer/live-timeline.c,
 * table timeline) and the reporter's (report/model/model-timeline.c), which lays
 * the writer's buckets on its own line. One rule for both: what an event
 * does to a bucket, and what two buckets make when the width doubles. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct trace_bucket {
	bool used;		 /* an event ended in it */
	uint64_t min, max, last; /* device bytes live after its events */
	int64_t t_max, t_last;	 /* when max and last were reached */
	uint32_t drops;		 /* events that lowered it: frees, not a ramp */
};

/* The bucket takes the value live after an event at t; *last_live (the
 * value before, across buckets) tells a drop. Inline: the reporter puts
 * every event of a trace. */
static inline void trace_bucket_put(struct trace_bucket *b, int64_t t, uint64_t live,
				    uint64_t *last_live)
{
	if (!b->used) {
		*b = (struct trace_bucket){ .used = true, .min = live, .max = live, .t_max = t };
	} else if (live > b->max) {
		b->max = live;
		b->t_max = t;
	}
	if (live < b->min)
		b->min = live;
	if (live < *last_live && b->drops < UINT32_MAX)
		b->drops++;
	*last_live = live;
	b->last = live;
	b->t_last = t;
}

/* b merged into to: the lower min, the higher max and its time, the later
 * last, the drops of both. */
void trace_bucket_merge(struct trace_bucket *to, const struct trace_bucket *b);
