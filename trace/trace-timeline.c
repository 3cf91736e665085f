/* The timeline bucket's rule (trace-timeline.h). */
#include "trace-timeline.h"

void trace_bucket_merge(struct trace_bucket *to, const struct trace_bucket *b)
{
	if (!b->used)
		return;
	if (!to->used) {
		*to = *b;
		return;
	}
	if (b->min < to->min)
		to->min = b->min;
	if (b->max > to->max) {
		to->max = b->max;
		to->t_max = b->t_max;
	}
	to->drops = to->drops > UINT32_MAX - b->drops ? UINT32_MAX : to->drops + b->drops;
	if (b->t_last >= to->t_last) {
		to->last = b->last;
		to->t_last = b->t_last;
	}
}
