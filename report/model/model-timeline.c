/* The timeline sampler (model-timeline.h). Per event: a division, a few
 * compares, and now and then a merge of all buckets (at most once per
 * doubling of the trace's duration) or a snapshot of the live stacks (at
 * most TIMELINE_SNAPSHOTS per doubling; with a duration hint, at most
 * TIMELINE_SNAPSHOTS in all). */
#include "model-timeline.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"
#include "trace-schema.h"
#include "util-mem.h"

/* a live record's slots (TIMELINE_STREAMS: streams_other, the same for
 * threads) fit its bytes */
static_assert(TIMELINE_STREAMS < UINT8_MAX && TIMELINE_THREADS < UINT8_MAX,
	      "model_live.tl_stream holds a slot");

#define SNAP_EVERY (TIMELINE_BUCKETS / TIMELINE_SNAPSHOTS) /* buckets per snapshot */

void model_timeline_init(struct model_timeline *tl, int64_t duration_hint_ns)
{
	memset(tl, 0, sizeof(*tl));
	tl->width = 1;
	tl->cur_lo = 1; /* the bucket memo is empty */
	/* the first width that holds the whole run: no merge will be needed */
	if (duration_hint_ns > 0)
		tl->width = duration_hint_ns / TIMELINE_BUCKETS + 1;
}

void model_timeline_fini(struct model_timeline *tl)
{
	for (size_t i = 0; i < tl->n_snaps; i++)
		free(tl->snaps[i].stacks);
	for (size_t i = 0; i < tl->n_devices; i++)
		free(tl->devices[i].buckets);
	free(tl->markers);
	free(tl->site_slots);
	memset(tl, 0, sizeof(*tl));
}

/* t / width >= TIMELINE_BUCKETS (time past the last bucket), without the
 * division: for t >= 0 it is t >= width * TIMELINE_BUCKETS when that does
 * not overflow, and never true when it would (t would exceed INT64_MAX). */
static inline bool past_end(const struct model_timeline *tl, int64_t t)
{
	return tl->width <= INT64_MAX / TIMELINE_BUCKETS && t >= tl->width * TIMELINE_BUCKETS;
}

/* The time between snapshots; saturates at INT64_MAX for a hostile trace
 * whose times reach the end of the range. */
static int64_t snap_period(const struct model_timeline *tl)
{
	return tl->width > INT64_MAX / SNAP_EVERY ? INT64_MAX : tl->width * SNAP_EVERY;
}

/* Double the width: bucket i takes buckets 2i and 2i+1; the snapshots
 * kept are those on the new, twice as wide grid. */
static void halve_buckets(struct trace_bucket *buckets)
{
	for (size_t i = 0; i < TIMELINE_BUCKETS / 2; i++) {
		struct trace_bucket b = { 0 };

		trace_bucket_merge(&b, &buckets[2 * i]);
		trace_bucket_merge(&b, &buckets[2 * i + 1]);
		buckets[i] = b;
	}
	memset(&buckets[TIMELINE_BUCKETS / 2], 0, sizeof(buckets[0]) * (TIMELINE_BUCKETS / 2));
}

static void halve(struct model_timeline *tl)
{
	size_t n = 0;
	int64_t period;

	halve_buckets(tl->buckets);
	for (size_t i = 0; i < tl->n_devices; i++)
		halve_buckets(tl->devices[i].buckets);
	tl->n_buckets = (tl->n_buckets + 1) / 2;
	tl->width *= 2;
	tl->cur_lo = 1; /* the bucket memo is empty */
	tl->cur_hi = 0;
	period = snap_period(tl);
	for (size_t i = 0; i < tl->n_snaps; i++) {
		if (tl->snaps[i].time_ns % period == 0)
			tl->snaps[n++] = tl->snaps[i];
		else
			free(tl->snaps[i].stacks);
	}
	tl->n_snaps = n;
	if (tl->next_snap_ns % period)
		tl->next_snap_ns = tl->next_snap_ns <= INT64_MAX - period / 2
					   ? tl->next_snap_ns + period / 2
					   : INT64_MAX;
}

/* The line of device d (the model's k-th), added when it first holds
 * memory; NULL past TIMELINE_DEVICES. Until the model sorts its devices
 * (model_finish), line k is device k's: no search per event. */
static struct timeline_device_line *device_line(struct model_timeline *tl, size_t k, int d)
{
	struct timeline_device_line *l;

	if (k < tl->n_devices && tl->devices[k].device == d)
		return &tl->devices[k];
	for (size_t i = 0; i < tl->n_devices; i++) {
		if (tl->devices[i].device == d)
			return &tl->devices[i];
	}
	if (tl->n_devices >= TIMELINE_DEVICES)
		return NULL;
	l = &tl->devices[tl->n_devices++];
	*l = (struct timeline_device_line){ .device = d };
	l->buckets = xcalloc(TIMELINE_BUCKETS, sizeof(*l->buckets));
	return l;
}

static void record_devices(struct model_timeline *tl, const struct model *m, size_t i, int64_t t)
{
	/* one device and its line: most traces */
	if (m->n_devices == 1 && tl->n_devices == 1 && tl->devices[0].device == m->devices[0].id) {
		struct timeline_device_line *l = &tl->devices[0];
		uint64_t live = m->devices[0].live_bytes;

		trace_bucket_put(&l->buckets[i], t, live, &l->last_live);
		if (live > l->max)
			l->max = live;
		return;
	}
	for (size_t k = 0; k < m->n_devices; k++) {
		const struct model_device *d = &m->devices[k];
		struct timeline_device_line *l;

		if (!d->live_bytes && (k >= tl->n_devices || tl->devices[k].device != d->id)) {
			bool seen = false;

			for (size_t j = 0; j < tl->n_devices && !seen; j++)
				seen = tl->devices[j].device == d->id;
			if (!seen)
				continue; /* not a line until it holds memory */
		}
		l = device_line(tl, k, d->id);
		if (!l)
			continue;
		trace_bucket_put(&l->buckets[i], t, d->live_bytes, &l->last_live);
		if (d->live_bytes > l->max)
			l->max = d->live_bytes;
	}
}

/* record's way for an event outside the bucket of the one before, or on
 * a trace of several devices: out of line, so that the common way is a
 * few instructions in model_timeline_feed. */
static __attribute__((noinline)) void record_slow(struct model_timeline *tl,
						  const struct model *m, int64_t t)
{
	uint64_t live = m->device.live_bytes;
	size_t i;

	if (t >= tl->cur_lo && t < tl->cur_hi) {
		i = tl->cur_i; /* the bucket of the previous event: no division */
	} else {
		while (past_end(tl, t) && tl->width <= INT64_MAX / 4)
			halve(tl);
		i = (size_t)(t / tl->width);
		if (i >= TIMELINE_BUCKETS) {
			i = TIMELINE_BUCKETS - 1;
		} else if (t >= 0) {
			tl->cur_i = i;
			tl->cur_lo = (int64_t)i * tl->width;
			tl->cur_hi = tl->cur_lo <= INT64_MAX - tl->width ? tl->cur_lo + tl->width
									  : INT64_MAX;
		}
	}
	trace_bucket_put(&tl->buckets[i], t, live, &tl->last_live);
	record_devices(tl, m, i, t);
	if (i + 1 > tl->n_buckets)
		tl->n_buckets = i + 1;
}

/* The model's state after an event at t into its bucket. Most events fall
 * in the bucket of the one before (the memo cur_lo..cur_hi, whose bucket
 * n_buckets already counts) on a trace of one device whose line is 0. */
static inline void record(struct model_timeline *tl, const struct model *m, int64_t t)
{
	struct timeline_device_line *l = &tl->devices[0];
	uint64_t live = m->device.live_bytes;

	if (!(t >= tl->cur_lo && t < tl->cur_hi && m->n_devices == 1 && tl->n_devices == 1 &&
	      l->device == m->devices[0].id)) {
		record_slow(tl, m, t);
		return;
	}
	trace_bucket_put(&tl->buckets[tl->cur_i], t, live, &tl->last_live);
	live = m->devices[0].live_bytes;
	trace_bucket_put(&l->buckets[tl->cur_i], t, live, &l->last_live);
	if (live > l->max)
		l->max = live;
}

static int cmp_stack_live(const void *a, const void *b)
{
	const struct model_stack_live *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

/* heap[0..n) is a heap with the stack that sorts last (cmp_stack_live)
 * on top; restore that below i. */
static void sift_down(struct model_stack_live *heap, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct model_stack_live x;

		if (c >= n)
			return;
		if (c + 1 < n && cmp_stack_live(&heap[c + 1], &heap[c]) > 0)
			c++;
		if (cmp_stack_live(&heap[c], &heap[i]) <= 0)
			return;
		x = heap[i];
		heap[i] = heap[c];
		heap[c] = x;
		i = c;
	}
}

/* The live stacks, the TIMELINE_SNAPSHOT_STACKS largest kept (those a
 * sort of all would put first), in the heap's order; the others summed. A heap of the
 * kept ones, not a sort of all: a trace of many stacks takes 64 of these
 * whatever its length. */
static void snapshot(struct model_timeline *tl, const struct model *m, int64_t t)
{
	struct timeline_snapshot *s;
	uint64_t bytes = 0, count = 0;
	size_t n = 0;

	if (tl->n_snaps >= ARRAY_LENGTH(tl->snaps))
		return; /* cannot happen: halve() keeps every other one */
	s = &tl->snaps[tl->n_snaps++];
	*s = (struct timeline_snapshot){
		.time_ns = t, .live_bytes = m->device.live_bytes, .live_count = m->device.live_count,
	};
	for (size_t i = 0; i < m->n_stacks; i++)
		n += m->stacks[i].count != 0;
	if (n > TIMELINE_SNAPSHOT_STACKS)
		n = TIMELINE_SNAPSHOT_STACKS;
	s->stacks = xcalloc(n ? n : 1, sizeof(*s->stacks));
	for (size_t i = 0; i < m->n_stacks; i++) {
		const struct model_stack_live *st = &m->stacks[i];

		if (!st->count)
			continue;
		bytes += st->bytes;
		count += st->count;
		if (s->n_stacks < n) {
			/* up the heap */
			size_t at = s->n_stacks++;

			s->stacks[at] = *st;
			while (at > 0 && cmp_stack_live(&s->stacks[(at - 1) / 2], &s->stacks[at]) < 0) {
				struct model_stack_live x = s->stacks[at];

				s->stacks[at] = s->stacks[(at - 1) / 2];
				s->stacks[(at - 1) / 2] = x;
				at = (at - 1) / 2;
			}
		} else if (cmp_stack_live(st, &s->stacks[0]) < 0) {
			s->stacks[0] = *st;
			sift_down(s->stacks, s->n_stacks, 0);
		}
	}
	for (size_t i = 0; i < s->n_stacks; i++) {
		bytes -= s->stacks[i].bytes;
		count -= s->stacks[i].count;
	}
	s->other_bytes = bytes;
	s->other_count = count;
}

void model_timeline_sort_stacks(struct model_stack_live *stacks, size_t n)
{
	if (n > 1)
		qsort(stacks, n, sizeof(*stacks), cmp_stack_live);
}

static bool wants_marker(int kind)
{
	switch (kind) {
	case MT_EV_OOM:
	case MT_EV_MARK:
	case MT_EV_GRAPH_CREATE:
	case MT_EV_GRAPH_CLONE:
	case MT_EV_GRAPH_DESTROY:
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
	case MT_EV_CAPTURE_END:
		return true;
	}
	return false; /* launches can number millions: not markers */
}

static void add_marker(struct model_timeline *tl, const struct trace_event *ev, int64_t t)
{
	/* OOMs are always kept: the model has them all anyway, and they are
	 * what the report is about */
	if (tl->n_markers >= TIMELINE_MARKERS && ev->kind != MT_EV_OOM) {
		tl->markers_dropped++;
		return;
	}
	grow_array(&tl->markers, &tl->cap_markers, tl->n_markers + 1, sizeof(*tl->markers));
	tl->markers[tl->n_markers++] = (struct timeline_marker){
		.time_ns = t, .seq = ev->seq, .kind = ev->kind, .bytes = ev->bytes,
	};
}

/* ---- device bytes live by stream ---- */

static struct timeline_stream *stream_slot(struct model_timeline *tl, uint32_t slot)
{
	return slot < TIMELINE_STREAMS ? &tl->streams[slot] : &tl->streams_other;
}

static uint32_t stream_find(struct model_timeline *tl, uint64_t stream)
{
	/* allocations come in runs on one stream */
	if (tl->last_stream < tl->n_streams && tl->streams[tl->last_stream].stream == stream)
		return tl->last_stream;
	for (size_t i = 0; i < tl->n_streams; i++) {
		if (tl->streams[i].stream == stream)
			return tl->last_stream = (uint32_t)i;
	}
	if (tl->n_streams == TIMELINE_STREAMS)
		return TIMELINE_STREAMS;
	tl->streams[tl->n_streams] = (struct timeline_stream){ .stream = stream };
	return tl->last_stream = (uint32_t)tl->n_streams++;
}

static struct timeline_thread *thread_slot(struct model_timeline *tl, uint32_t slot)
{
	return slot < TIMELINE_THREADS ? &tl->threads[slot] : &tl->threads_other;
}

static uint32_t thread_find(struct model_timeline *tl, int64_t thread)
{
	if (tl->last_thread < tl->n_threads && tl->threads[tl->last_thread].thread == thread)
		return tl->last_thread;
	for (size_t i = 0; i < tl->n_threads; i++) {
		if (tl->threads[i].thread == thread)
			return tl->last_thread = (uint32_t)i;
	}
	if (tl->n_threads == TIMELINE_THREADS)
		return TIMELINE_THREADS;
	tl->threads[tl->n_threads] = (struct timeline_thread){ .thread = thread };
	return tl->last_thread = (uint32_t)tl->n_threads++;
}

void model_timeline_forget(struct model_timeline *tl, struct model_live *rec)
{
	struct timeline_stream *s;
	struct timeline_thread *th;

	if (!rec->tl_live)
		return;
	rec->tl_live = false;
	s = stream_slot(tl, rec->tl_stream);
	s->bytes -= rec->bytes < s->bytes ? rec->bytes : s->bytes;
	s->count -= s->count ? 1 : 0;
	th = thread_slot(tl, rec->tl_thread);
	th->bytes -= rec->bytes < th->bytes ? rec->bytes : th->bytes;
	th->count -= th->count ? 1 : 0;
}

void model_timeline_alloc(struct model_timeline *tl, struct model_live *rec,
			  const struct trace_event *ev)
{
	struct timeline_stream *s;
	struct timeline_thread *th;

	/* device-side memory but graph memory (physical at launch, not at
	 * its allocation); CUPTI's records witness the hooks' events and are
	 * never fed here */
	if (!model_mem_is_device(ev->mem) || ev->mem == MT_MEM_GRAPH)
		return;
	rec->tl_live = true;
	if (ev->site_slot) {
		/* a site's stream and thread are the same for all its events,
		 * and so are their slots once found */
		struct timeline_site_slots *memo;

		if (ev->site_slot >= tl->cap_site_slots) {
			size_t old = tl->cap_site_slots;

			grow_array(&tl->site_slots, &tl->cap_site_slots, ev->site_slot + (size_t)1,
				   sizeof(*tl->site_slots));
			memset(&tl->site_slots[old], 0,
			       (tl->cap_site_slots - old) * sizeof(*tl->site_slots));
		}
		memo = &tl->site_slots[ev->site_slot];
		if (!memo->stream) {
			memo->stream = (uint8_t)(stream_find(tl, ev->stream) + 1);
			memo->thread = (uint8_t)(thread_find(tl, ev->thread) + 1);
		}
		rec->tl_stream = (uint8_t)(memo->stream - 1);
		rec->tl_thread = (uint8_t)(memo->thread - 1);
	} else {
		rec->tl_stream = (uint8_t)stream_find(tl, ev->stream);
		rec->tl_thread = (uint8_t)thread_find(tl, ev->thread);
	}
	s = stream_slot(tl, rec->tl_stream);
	s->bytes += rec->bytes;
	s->count++;
	th = thread_slot(tl, rec->tl_thread);
	th->bytes += rec->bytes;
	th->count++;
}

/* The model's state is that after the previous event, and so is the
 * table: a new peak takes a copy. */
static void stream_peak(struct model_timeline *tl, const struct model *m)
{
	if (m->device.peak_bytes <= tl->peak_seen)
		return;
	tl->peak_seen = m->device.peak_bytes;
	memcpy(tl->at_peak, tl->streams, sizeof(tl->streams));
	tl->at_peak_other = tl->streams_other;
	tl->n_at_peak = tl->n_streams;
	memcpy(tl->thread_at_peak, tl->threads, sizeof(tl->threads));
	tl->thread_at_peak_other = tl->threads_other;
	tl->n_thread_at_peak = tl->n_threads;
}

/* The exact line's point of an event (TIMELINE_EXACT). */
static inline void record_exact(struct model_timeline *tl, const struct model *m, int64_t t)
{
	if (tl->n_exact < TIMELINE_EXACT)
		tl->exact[tl->n_exact] = (struct timeline_point){ t, m->device.live_bytes };
	if (tl->n_exact <= TIMELINE_EXACT)
		tl->n_exact++;
}

void model_timeline_feed(struct model_timeline *tl, const struct model *m,
			 const struct trace_event *ev)
{
	/* times from several threads can be a little out of order: never
	 * let the line go back */
	int64_t t = ev->time_ns > tl->last_ns ? ev->time_ns : tl->last_ns;

	if (tl->pending) {
		record(tl, m, tl->pending_ns);
		record_exact(tl, m, tl->pending_ns);
	}
	if (!tl->started) {
		tl->started = true;
		tl->first_ns = t;
	}
	/* within the bucket of the event before: not past the end */
	while (t >= tl->cur_hi && past_end(tl, t) && tl->width <= INT64_MAX / 4)
		halve(tl);
	/* the live set as it was when the line crossed the next moment; a
	 * quiet stretch crossing several gives one (they would be the same) */
	if (t >= tl->next_snap_ns && tl->next_snap_ns < INT64_MAX) {
		int64_t period = snap_period(tl);
		int64_t k = t / period + 1;

		snapshot(tl, m, tl->next_snap_ns);
		tl->next_snap_ns = k > INT64_MAX / period ? INT64_MAX : k * period;
	}
	if (wants_marker(ev->kind))
		add_marker(tl, ev, t);
	/* before the model applies ev (model_timeline_alloc, _forget) */
	stream_peak(tl, m);
	tl->pending = true;
	tl->pending_ns = t;
	tl->last_ns = t;
}

void model_timeline_finish(struct model_timeline *tl, const struct model *m)
{
	if (tl->pending) {
		record(tl, m, tl->pending_ns);
		record_exact(tl, m, tl->pending_ns);
	}
	tl->pending = false;
	stream_peak(tl, m);
}

void model_timeline_start_at(struct model_timeline *tl, int64_t time_ns)
{
	int64_t period, k;

	while (past_end(tl, time_ns) && tl->width <= INT64_MAX / 4)
		halve(tl);
	if (time_ns <= 0)
		return;
	period = snap_period(tl);
	k = time_ns / period + (time_ns % period != 0);
	tl->next_snap_ns = k > INT64_MAX / period ? INT64_MAX : k * period;
}

void model_timeline_mark(struct model_timeline *tl, const struct trace_event *ev)
{
	if (wants_marker(ev->kind))
		add_marker(tl, ev, ev->time_ns);
}

void model_timeline_add_before(struct model_timeline *tl, const struct trace_bucket *b,
			       int64_t first_ns)
{
	int64_t t = b->t_last < 0 ? 0 : b->t_last;
	size_t i;

	if (!b->used)
		return;
	tl->n_exact = TIMELINE_EXACT + 1; /* events before the ring: not exact */
	while (past_end(tl, t) && tl->width <= INT64_MAX / 4)
		halve(tl);
	i = (size_t)(t / tl->width);
	if (i >= TIMELINE_BUCKETS)
		i = TIMELINE_BUCKETS - 1;
	trace_bucket_merge(&tl->buckets[i], b);
	if (i + 1 > tl->n_buckets)
		tl->n_buckets = i + 1;
	if (!tl->started || first_ns < tl->first_ns)
		tl->first_ns = first_ns;
	tl->started = true;
	tl->cur_lo = 1; /* the bucket memo is empty */
	tl->cur_hi = 0;
}

bool model_timeline_add_snapshot(struct model_timeline *tl, struct timeline_snapshot *s)
{
	size_t i = tl->n_snaps;

	if (tl->n_snaps >= ARRAY_LENGTH(tl->snaps))
		return false;
	for (; i > 0 && tl->snaps[i - 1].time_ns > s->time_ns; i--)
		tl->snaps[i] = tl->snaps[i - 1];
	tl->snaps[i] = *s;
	tl->n_snaps++;
	return true;
}

uint64_t model_timeline_at(const struct model_timeline *tl, int64_t time_ns)
{
	size_t i = time_ns < 0 ? 0 : (size_t)(time_ns / tl->width);

	if (i >= tl->n_buckets)
		i = tl->n_buckets ? tl->n_buckets - 1 : 0;
	for (;; i--) {
		if (tl->buckets[i].used)
			return tl->buckets[i].last;
		if (i == 0)
			return 0;
	}
}

uint64_t model_timeline_drops(const struct model_timeline *tl, int64_t from_ns, int64_t to_ns)
{
	size_t from = from_ns < 0 ? 0 : (size_t)(from_ns / tl->width);
	size_t to = to_ns < 0 ? 0 : (size_t)(to_ns / tl->width);
	uint64_t n = 0;

	for (size_t i = from; i <= to && i < tl->n_buckets; i++)
		n += tl->buckets[i].drops;
	return n;
}

uint64_t model_timeline_floor(const struct model_timeline *tl, int64_t from_ns, int64_t to_ns)
{
	size_t from = from_ns < 0 ? 0 : (size_t)(from_ns / tl->width);
	size_t to = to_ns < 0 ? 0 : (size_t)(to_ns / tl->width);
	uint64_t low = model_timeline_at(tl, from_ns);

	for (size_t i = from; i <= to && i < tl->n_buckets; i++) {
		if (tl->buckets[i].used && tl->buckets[i].min < low)
			low = tl->buckets[i].min;
	}
	return low;
}
