/* The events in batches on the caller's thread: the reader fills a batch
 * of TRACE_BATCH events, fn takes them in turn, with what the model will
 * need of each asked of the memory a few events before it has it
 * (trace_ahead_fn, trace_drain). The reporter drains its batches itself
 * (main.c's read_and_feed, with its functions inlined); this is the same
 * for any fn, which tests/report/rows-same checks against
 * trace_read_events. Reading on a thread of its own, the model's pass and
 * the reading overlapped on two cores but took more CPU in all
 * (docs/performance.md, "One thread"). */
#include "trace.h"
#include "util-mem.h"

struct one {
	trace_event_fn fn;
	trace_ahead_fn ahead;
	void *ctx;
};

static void one_full(struct trace_sink *sink)
{
	const struct one *o = sink->ctx;

	trace_drain(sink->ev, sink->n, o->fn, o->ahead, o->ctx);
	sink->n = 0;
}

int trace_read_events_batched(struct trace *t, trace_event_fn fn, trace_ahead_fn ahead, void *ctx)
{
	_autofree_ struct trace_event *ev = xcalloc(TRACE_BATCH, sizeof(*ev));
	struct one o = { .fn = fn, .ahead = ahead, .ctx = ctx };
	struct trace_sink sink = { .ev = ev, .cap = TRACE_BATCH, .full = one_full, .ctx = &o };
	int rc = trace_read_events_sink(t, &sink);

	one_full(&sink); /* the last batch, not full */
	return rc;
}
