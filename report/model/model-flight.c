/* A flight-mode trace (docs/trace-format.md, "Flight mode"): its events
 * are a ring of the most recent ones plus every allocation still live and
 * the kept kinds, so the pass over them is exact from the ring's start on
 * and for what is live at the end. What came before is put back here,
 * from what the writer kept:
 *
 * - totals: the allocations and frees that left the ring, by site, into
 *   their kind, class, site and op (never live: they were freed);
 * - the peak, when the writer saw a higher one than the ring holds: its
 *   bytes, time and the sites and ops live at it;
 * - each OOM and mark before the ring: its live set (holders, bytes);
 * - the timeline before the ring: the writer's buckets of device bytes
 *   live and its live sets at moments spread over the run, so that the
 *   diagnosis sees the run's floor and growth as in the full trace.
 *
 * Graph memory and CUPTI's records are the ring's alone (the writer's
 * peak does not count graph memory; docs/report.md says which sections
 * come from the ring). */
#include "model-internal.h"

#include <stdlib.h>

#include "model-timeline.h"
#include "trace-schema.h"
#include "trace.h"
#include "util-mem.h"

static bool device_side(int mem)
{
	/* graph memory is memory only while physical: not in the writer's sets */
	return mem != MT_MEM_GRAPH && model_mem_is_device(mem);
}

static uint32_t site_of(struct model *m, const struct trace_event *ev)
{
	uint32_t site = model_site_for(m, &ev->site, ev->stack);
	uint32_t holder = model_stack_for(m, ev->stack);

	model_site_add_stack(m, site, holder);
	return site;
}

static void add_trimmed(struct model *m, const struct trace *t, const struct trace_flight *f)
{
	for (size_t i = 0; i < f->n_sites; i++) {
		const struct trace_trimmed_site *r = &f->sites[i];
		const struct trace_event *ev = &trace_find_site(t, r->site)->ev;

		if (ev->source == MT_SOURCE_CUPTI || ev->mem <= 0 || ev->mem >= MODEL_MEM_KINDS ||
		    ev->mem == MT_MEM_GRAPH)
			continue;
		model_count_trimmed(m, ev->mem, r->allocs, r->alloc_bytes, r->frees);
		if (!r->allocs || !device_side(ev->mem))
			continue;
		uint32_t idx = site_of(m, ev);
		struct model_site *s = &m->sites[idx];
		s->total_bytes = sat_add(s->total_bytes, r->alloc_bytes);
		s->count = sat_add(s->count, r->allocs);
		if (ev->has_op) {
			uint32_t oi = model_op_for(m, ev->op);
			struct model_op *op = &m->ops[oi];
			op->total_bytes = sat_add(op->total_bytes, r->alloc_bytes);
			op->count = sat_add(op->count, r->allocs);
		}
	}
	m->alloc_errors = sat_add(m->alloc_errors, f->kinds[MT_EV_ALLOC_ERROR]);
	m->free_errors = sat_add(m->free_errors, f->kinds[MT_EV_FREE_ERROR]);
	m->unmatched_frees = sat_add(m->unmatched_frees, f->kinds[MT_EV_FREE]);
	m->graphs.launches = sat_add(m->graphs.launches, f->kinds[MT_EV_GRAPH_LAUNCH]);
	m->graphs.uploads = sat_add(m->graphs.uploads, f->kinds[MT_EV_GRAPH_UPLOAD]);
	m->events = sat_add(m->events, f->trimmed);
}

static void set_peak(struct model *m, const struct trace *t, const struct trace_flight *f)
{
	m->device.peak_bytes = f->peak_bytes;
	m->device.peak_time_ns = f->peak_time_ns;
	for (size_t i = 0; i < m->n_sites; i++) {
		m->sites[i].at_peak = 0;
		m->sites[i].at_peak_count = 0;
	}
	for (size_t i = 0; i < m->n_ops; i++)
		m->ops[i].at_peak = 0;
	for (size_t i = 0; i < f->n_peak; i++) {
		const struct trace_live_row *r = &f->peak[i];
		const struct trace_event *ev = &trace_find_site(t, r->site)->ev;

		if (!device_side(ev->mem) || ev->source == MT_SOURCE_CUPTI)
			continue;
		uint32_t idx = site_of(m, ev);
		struct model_site *s = &m->sites[idx];
		s->at_peak = sat_add(s->at_peak, r->bytes);
		s->at_peak_count = sat_add(s->at_peak_count, r->count);
		if (ev->has_op) {
			uint32_t oi = model_op_for(m, ev->op);
			struct model_op *op = &m->ops[oi];
			op->at_peak = sat_add(op->at_peak, r->bytes);
		}
	}
}

/* The rows of rows[0..n) whose key is key (rows are sorted by key). */
static const struct trace_live_row *rows_of(const struct trace_live_row *rows, size_t n,
					    int64_t key, size_t *count)
{
	size_t lo = 0, hi = n, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < n && rows[end].key == key; end++)
		;
	*count = end - lo;
	return rows + lo;
}

static int cmp_holder(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* An OOM before the ring: its live set, its holders by stack, and what
 * the device had in use beyond them. */
static void set_oom(struct model_oom *o, const struct trace *t, const struct trace_live_row *rows,
		    size_t n)
{
	struct model_group *h = xcalloc(n + 1, sizeof(*h));
	size_t nh = 0;
	uint64_t on_device = 0;

	o->live_bytes = o->live_count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct trace_event *ev = &trace_find_site(t, rows[i].site)->ev;
		size_t j;

		if (!device_side(ev->mem) || ev->source == MT_SOURCE_CUPTI)
			continue;
		o->live_bytes = sat_add(o->live_bytes, rows[i].bytes);
		o->live_count = sat_add(o->live_count, rows[i].count);
		if (o->device < 0 || ev->device < 0 || ev->device == o->device)
			on_device = sat_add(on_device, rows[i].bytes);
		for (j = 0; j < nh && h[j].stack != ev->stack; j++)
			;
		if (j == nh)
			h[nh++] = (struct model_group){ .stack = ev->stack };
		h[j].bytes = sat_add(h[j].bytes, rows[i].bytes);
		h[j].count = sat_add(h[j].count, rows[i].count);
	}
	qsort(h, nh, sizeof(*h), cmp_holder);
	free(o->holders);
	o->holders = h;
	o->n_holders = nh;
	o->has_holders = true;
	o->cupti_alone_bytes = 0;
	if (o->has_unexplained && o->device_total >= 0) {
		uint64_t used = sat_sub((uint64_t)o->device_total,
					o->device_free < 0 ? 0 : (uint64_t)o->device_free);

		o->unexplained_bytes = sat_sub(used, on_device);
	}
}

struct mark_live {
	uint32_t site; /* index in sites */
	uint64_t bytes;
};

static int cmp_mark_live(const void *a, const void *b)
{
	const struct mark_live *x = a, *y = b;

	return x->site < y->site ? -1 : x->site > y->site;
}

static uint64_t mark_value(const struct mark_live *v, size_t n, uint32_t site)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].site < site)
			lo = mid + 1;
		else if (v[mid].site > site)
			hi = mid;
		else
			return v[mid].bytes;
	}
	return 0;
}

/* Marks before the ring: their live bytes, and each site's at them (the
 * runs model_site_at_point reads, rebuilt over every point). */
static void set_marks(struct model *m, const struct trace *t, const struct trace_flight *f)
{
	struct mark_live **at = xcalloc(m->n_points + 1, sizeof(*at));
	size_t *n_at = xcalloc(m->n_points + 1, sizeof(*n_at));
	size_t before = 0;

	for (size_t k = 0; k < m->n_points; k++) {
		struct model_point *p = &m->points[k];
		const struct trace_live_row *rows;
		size_t n;

		if (p->kind != MODEL_POINT_MARK || p->seq >= f->ring_first_seq)
			continue;
		rows = rows_of(f->marks, f->n_marks, p->seq, &n);
		at[k] = xcalloc(n + 1, sizeof(**at));
		p->live_bytes = p->live_count = 0;
		for (size_t i = 0; i < n; i++) {
			const struct trace_event *ev = &trace_find_site(t, rows[i].site)->ev;

			if (!device_side(ev->mem) || ev->source == MT_SOURCE_CUPTI)
				continue;
			p->live_bytes = sat_add(p->live_bytes, rows[i].bytes);
			p->live_count = sat_add(p->live_count, rows[i].count);
			uint32_t idx = site_of(m, ev);
			at[k][n_at[k]++] = (struct mark_live){ idx, rows[i].bytes };
		}
		qsort(at[k], n_at[k], sizeof(**at), cmp_mark_live);
		/* one site, several rows (threads, streams): summed */
		size_t w = 0;
		for (size_t i = 0; i < n_at[k]; i++) {
			if (w && at[k][w - 1].site == at[k][i].site)
				at[k][w - 1].bytes = sat_add(at[k][w - 1].bytes, at[k][i].bytes);
			else
				at[k][w++] = at[k][i];
		}
		n_at[k] = w;
		before++;
	}
	for (size_t i = 0; before && i < m->n_sites; i++) {
		struct model_site *s = &m->sites[i];
		struct model_run *runs = NULL;
		size_t n_runs = 0, cap = 0;
		uint64_t held = 0;

		for (size_t k = 0; k < m->n_points; k++) {
			uint64_t v = at[k] ? mark_value(at[k], n_at[k], (uint32_t)i)
					   : model_site_at_point(s, k);

			if (v == held)
				continue;
			grow_array(&runs, &cap, n_runs + 1, sizeof(*runs));
			runs[n_runs++] = (struct model_run){ .first = k, .value = v };
			held = v;
		}
		free(s->runs);
		s->runs = runs;
		s->n_runs = n_runs;
		s->cap_runs = cap;
		s->points_saved = m->n_points;
	}
	for (size_t k = 0; k < m->n_points; k++)
		free(at[k]);
	free(at);
	free(n_at);
}

/* A live set of the writer's (rows[0..n) of one moment, site 0 the
 * device's total) as the timeline keeps one: by stack, largest first. */
static void snapshot_of(struct timeline_snapshot *s, const struct trace *t,
			const struct trace_live_row *rows, size_t n)
{
	*s = (struct timeline_snapshot){ .time_ns = rows[0].key };
	s->stacks = xcalloc(n + 1, sizeof(*s->stacks));
	for (size_t i = 0; i < n; i++) {
		const struct trace_event *ev;
		size_t j;

		if (rows[i].site == 0) {
			s->live_bytes = rows[i].bytes;
			s->live_count = rows[i].count;
			continue;
		}
		ev = &trace_find_site(t, rows[i].site)->ev;
		for (j = 0; j < s->n_stacks && s->stacks[j].stack != ev->stack; j++)
			;
		if (j == s->n_stacks)
			s->stacks[s->n_stacks++] = (struct model_stack_live){ .stack = ev->stack };
		s->stacks[j].bytes = sat_add(s->stacks[j].bytes, rows[i].bytes);
		s->stacks[j].count = sat_add(s->stacks[j].count, rows[i].count);
	}
	for (size_t i = 1; i < s->n_stacks; i++) {
		struct model_stack_live v = s->stacks[i];
		size_t j = i;

		for (; j > 0 && s->stacks[j - 1].bytes < v.bytes; j--)
			s->stacks[j] = s->stacks[j - 1];
		s->stacks[j] = v;
	}
	/* what the writer did not keep of the total */
	uint64_t kept_bytes = 0, kept_count = 0;

	for (size_t i = 0; i < s->n_stacks; i++) {
		kept_bytes = sat_add(kept_bytes, s->stacks[i].bytes);
		kept_count = sat_add(kept_count, s->stacks[i].count);
	}
	s->other_bytes = sat_sub(s->live_bytes, kept_bytes);
	s->other_count = sat_sub(s->live_count, kept_count);
}

/* The writer's timeline before the ring: its buckets whose last event
 * is before the ring's first, and its live sets before it. */
static void set_timeline(struct model_timeline *tl, const struct trace *t,
			 const struct trace_flight *f)
{
	size_t first = 0, n_before = 0, room, step;

	for (size_t i = 0; i < f->n_timeline; i++) {
		const struct trace_timeline_bucket *w = &f->timeline[i];
		struct trace_bucket b = {
			.used = true, .min = w->min, .max = w->max, .last = w->last,
			.t_max = w->t_max, .t_last = w->t_last,
			.drops = w->drops > UINT32_MAX ? UINT32_MAX : (uint32_t)w->drops,
		};

		if (w->t_last < f->ring_first_time_ns)
			model_timeline_add_before(tl, &b, f->timeline_first_ns);
	}
	for (size_t i = 0; i < f->n_snaps; i++) {
		if (f->snaps[i].key >= f->ring_first_time_ns)
			break;
		if (i == 0 || f->snaps[i].key != f->snaps[i - 1].key)
			n_before++;
	}
	/* the room the ring's own live sets left, shared evenly */
	room = ARRAY_LENGTH(tl->snaps) - tl->n_snaps;
	step = n_before > room && room ? (n_before + room - 1) / room : 1;
	for (size_t k = 0; first < f->n_snaps && f->snaps[first].key < f->ring_first_time_ns; k++) {
		size_t n = 1;
		struct timeline_snapshot s;

		while (first + n < f->n_snaps && f->snaps[first + n].key == f->snaps[first].key)
			n++;
		if (room && k % step == 0) {
			snapshot_of(&s, t, f->snaps + first, n);
			if (!model_timeline_add_snapshot(tl, &s))
				free(s.stacks);
		}
		first += n;
	}
}

void model_flight_finish(struct model *m)
{
	const struct trace *t = m->flight;
	const struct trace_flight *f = &t->flight;

	if (!f->on)
		return;
	add_trimmed(m, t, f);
	if (f->peak_bytes > m->device.peak_bytes)
		set_peak(m, t, f);
	for (int k = 1; k < MODEL_MEM_KINDS; k++) {
		if (k != MT_MEM_GRAPH && f->mem_peak[k] > m->kinds[k].peak_bytes)
			m->kinds[k].peak_bytes = f->mem_peak[k];
	}
	/* the host class is one kind: its peak is that kind's */
	if (f->mem_peak[MT_MEM_HOST_PINNED] > m->host.peak_bytes)
		m->host.peak_bytes = f->mem_peak[MT_MEM_HOST_PINNED];
	for (size_t i = 0; i < m->n_ooms; i++) {
		struct model_oom *o = &m->ooms[i];
		const struct trace_live_row *rows;
		size_t n;

		if (o->seq >= f->ring_first_seq || !o->has_holders)
			continue;
		rows = rows_of(f->ooms, f->n_ooms, o->seq, &n);
		set_oom(o, t, rows, n);
	}
	set_marks(m, t, f);
	if (m->timeline)
		set_timeline(m->timeline, t, f);
}
