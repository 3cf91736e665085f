/* Points: moments at which the live set is looked at again — every mark,
 * the end of each range of a per-build series ("build 1", "build 2"...),
 * every graph instantiation, the ends of MODEL_SPAN_POINTS spans of the
 * trace, of as many events each, — and what they show: the sites live at each
 * mark, and the sites that grow from one build to the next
 * (docs/report-json.md, "marks" and "growth").
 *
 * No snapshots: like the peak, a point only bumps a counter. A site
 * that changes after points it has not seen first saves its live bytes
 * for them as one run (first point, value), so the cost is one run per
 * site change, at most, and per point nothing. */
#include "model-internal.h"

#include <math.h>
#include <stdlib.h>

#include "trace-schema.h"
#include "util-mem.h"

void model_points_init(struct model *m)
{
	map_init(&m->builds_seen, 0);
}

void model_points_fini(struct model *m)
{
	for (size_t i = 0; i < m->n_marks; i++)
		free(m->marks[i].sites);
	free(m->marks);
	for (size_t i = 0; i < m->growth.n_sites; i++)
		free(m->growth.sites[i].live);
	free(m->growth.sites);
	free(m->growth.points);
	free(m->points);
	map_fini(&m->builds_seen);
}

void model_points_touch(struct model *m, struct model_site *s)
{
	uint64_t held = s->n_runs ? s->runs[s->n_runs - 1].value : 0;

	if (s->points_saved >= m->n_points)
		return;
	if (held != s->live) {
		grow_array(&s->runs, &s->cap_runs, s->n_runs + 1, sizeof(*s->runs));
		s->runs[s->n_runs++] = (struct model_run){ .first = s->points_saved, .value = s->live };
	}
	s->points_saved = m->n_points;
}

uint64_t model_site_at_point(const struct model_site *s, size_t k)
{
	size_t lo = 0, hi = s->n_runs;

	if (k >= s->points_saved)
		return s->live;
	/* the last run that starts at or before k */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->runs[mid].first <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s->runs[lo - 1].value : 0;
}

static void add_point(struct model *m, struct model_point p)
{
	p.live_bytes = m->device.live_bytes;
	p.live_count = m->device.live_count;
	grow_array(&m->points, &m->cap_points, m->n_points + 1, sizeof(*m->points));
	m->points[m->n_points++] = p;
}

void model_points_add(struct model *m, int kind, const struct trace_event *ev)
{
	struct model_point p = {
		.kind = kind, .seq = ev->seq, .time_ns = ev->time_ns, .api = ev->api,
		.stack = ev->stack, .has_op = ev->has_op, .op = ev->op, .mark_kind = ev->mark_kind,
	};

	if (kind == MODEL_POINT_INSTANTIATION) {
		p.exec = ev->handle;
		p.graph = ev->address;
		p.has_op = false;
	}
	add_point(m, p);
}

/* The first seq past span k (1-based) of the trace's events:
 * span_events * k / MODEL_SPAN_POINTS rounded down, for span_events > 0.
 * In integers, split so that the product cannot overflow: it runs on
 * every event, where a long double's conversions cost tens of cycles. */
static int64_t span_end(const struct model *m, size_t k)
{
	int64_t q = m->span_events / MODEL_SPAN_POINTS, r = m->span_events % MODEL_SPAN_POINTS;

	return q * (int64_t)k + r * (int64_t)k / MODEL_SPAN_POINTS;
}

/* A span ends before the first event past it: the point is the state
 * just before that event (spans without events share it). */
static void span_points_feed(struct model *m, const struct trace_event *ev)
{
	while (m->span_events > 0 && m->n_span_points + 1 < MODEL_SPAN_POINTS &&
	       ev->seq >= span_end(m, m->n_span_points + 1)) {
		m->n_span_points++;
		add_point(m, (struct model_point){
			.kind = MODEL_POINT_SPAN, .seq = ev->seq, .time_ns = ev->time_ns,
		});
	}
}

/* A range of the per-build series ends when the next one begins: the
 * point is the state just before that event. A number seen again means
 * the ranges are not one per build (layers of a model, say). */
void model_points_feed(struct model *m, const struct trace_event *ev)
{
	bool inserted;

	span_points_feed(m, ev);
	if (!ev->has_build || ev->kind == MT_EV_MARK || (m->in_build && ev->build == m->build))
		return;
	if (m->in_build)
		add_point(m, (struct model_point){
			.kind = MODEL_POINT_RANGE, .seq = ev->seq, .time_ns = ev->time_ns,
			.has_op = true, .op = m->build_op,
		});
	xmap_put(&m->builds_seen, (uint64_t)ev->build, &inserted);
	if (!inserted)
		m->builds_revisited = true;
	m->in_build = true;
	m->build = ev->build;
	m->build_op = ev->op;
}

void model_points_close(struct model *m)
{
	if (m->in_build)
		add_point(m, (struct model_point){
			.kind = MODEL_POINT_RANGE, .seq = m->last_seq + 1, .time_ns = m->last_time_ns,
			.has_op = true, .op = m->build_op,
		});
	m->in_build = false;
	/* the last span ends with the trace */
	while (m->span_events > 0 && m->n_span_points < MODEL_SPAN_POINTS) {
		m->n_span_points++;
		add_point(m, (struct model_point){
			.kind = MODEL_POINT_SPAN, .seq = m->last_seq + 1, .time_ns = m->last_time_ns,
		});
	}
}

/* ---- marks ------------------------------------------------------------ */

static int cmp_site_bytes(const void *a, const void *b)
{
	const struct model_site_bytes *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static void build_mark(struct model *m, struct model_mark *mk, size_t point)
{
	mk->point = point;
	mk->sites = xcalloc(m->n_sites + 1, sizeof(*mk->sites));
	for (size_t i = 0; i < m->n_sites; i++) {
		uint64_t bytes = model_site_at_point(&m->sites[i], point);

		if (bytes)
			mk->sites[mk->n_sites++] = (struct model_site_bytes){ (uint32_t)i, bytes };
	}
	qsort(mk->sites, mk->n_sites, sizeof(*mk->sites), cmp_site_bytes);
}

/* Every mark; the sites live at the first MODEL_MARK_SNAPSHOTS - 1 and
 * the last (each costs a look at every site). */
static void build_marks(struct model *m)
{
	size_t n = 0;

	for (size_t k = 0; k < m->n_points; k++)
		n += m->points[k].kind == MODEL_POINT_MARK;
	m->marks = xcalloc(n + 1, sizeof(*m->marks));
	for (size_t k = 0; k < m->n_points; k++) {
		struct model_mark *mk = &m->marks[m->n_marks];

		if (m->points[k].kind != MODEL_POINT_MARK)
			continue;
		mk->point = k;
		if (m->n_marks < MODEL_MARK_SNAPSHOTS - 1 || m->n_marks == n - 1) {
			build_mark(m, mk, k);
			mk->has_sites = true;
		}
		m->n_marks++;
	}
}

/* ---- growth ----------------------------------------------------------- */

static bool counts_for(const struct model_point *p, int basis)
{
	return p->kind == basis && (basis != MODEL_POINT_MARK || p->mark_kind == MARK_USER);
}

/* Marks made by the program, else ranges named per build (each number
 * once), else graph instantiations: the first with two points or more;
 * else the span points (build_growth keeps them only when a site grows
 * by them). */
static int growth_basis(const struct model *m)
{
	size_t n[MODEL_POINT_SPAN + 1] = { 0 };

	for (size_t k = 0; k < m->n_points; k++) {
		for (int b = MODEL_POINT_MARK; b <= MODEL_POINT_SPAN; b++)
			n[b] += counts_for(&m->points[k], b);
	}
	if (n[MODEL_POINT_MARK] >= 2)
		return MODEL_POINT_MARK;
	if (n[MODEL_POINT_RANGE] >= 2 && !m->builds_revisited)
		return MODEL_POINT_RANGE;
	if (n[MODEL_POINT_INSTANTIATION] >= 2)
		return MODEL_POINT_INSTANTIATION;
	if (n[MODEL_POINT_SPAN] >= 2)
		return MODEL_POINT_SPAN;
	return 0;
}

/* Least squares: the slope of live bytes against the point's index. */
static int64_t slope(const uint64_t *v, size_t n)
{
	long double mx = (long double)(n - 1) / 2, my = 0, num = 0, den = 0;

	for (size_t i = 0; i < n; i++)
		my += (long double)v[i];
	my /= (long double)n;
	for (size_t i = 0; i < n; i++) {
		num += ((long double)i - mx) * ((long double)v[i] - my);
		den += ((long double)i - mx) * ((long double)i - mx);
	}
	if (!(den > 0))
		return 0;
	num /= den;
	if (num > 9e18L || num < -9e18L) /* absurd traces only */
		return num > 0 ? INT64_MAX : INT64_MIN;
	return (int64_t)llroundl(num);
}

/* The rules of docs/report-json.md ("growth"): per_point is the least
 * squares slope; growing means three points or more, no step down, and
 * steps up in at least half the steps (rounded down), and at least two:
 * a leak every other build grows, a one-off jump does not. By spans, up
 * in every step but one: a working set allocated in a few of the spans
 * (a training loop's first step) is no growth. */
static void judge(struct model_growth_site *g, size_t n, int basis)
{
	size_t up = 0, down = 0, need = (n - 1) / 2 > 2 ? (n - 1) / 2 : 2;

	if (basis == MODEL_POINT_SPAN)
		need = n - 2 > 2 ? n - 2 : 2;

	for (size_t i = 0; i + 1 < n; i++) {
		up += g->live[i + 1] > g->live[i];
		down += g->live[i + 1] < g->live[i];
	}
	g->per_point = slope(g->live, n);
	g->growing = n >= 3 && down == 0 && up >= need;
}

static int cmp_growth(const void *a, const void *b)
{
	const struct model_growth_site *x = a, *y = b;

	if (x->growing != y->growing)
		return x->growing ? -1 : 1;
	if (x->per_point != y->per_point)
		return x->per_point > y->per_point ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* At most MODEL_GROWTH_POINTS points, evenly spaced among the candidates,
 * the first and the last kept: enough to see a trend, a bounded report. */
static void thin(struct model_growth *g)
{
	size_t n = g->n_points, keep = MODEL_GROWTH_POINTS;

	if (n <= keep)
		return;
	for (size_t i = 0; i < keep; i++)
		g->points[i] = g->points[i * (n - 1) / (keep - 1)];
	g->n_points = keep;
	g->thinned_from = n;
}

static void build_growth(struct model *m)
{
	struct model_growth *g = &m->growth;

	g->basis = growth_basis(m);
	if (!g->basis)
		return;
	g->points = xcalloc(m->n_points, sizeof(*g->points));
	for (size_t k = 0; k < m->n_points; k++) {
		if (counts_for(&m->points[k], g->basis))
			g->points[g->n_points++] = k;
	}
	thin(g);
	g->sites = xcalloc(m->n_sites + 1, sizeof(*g->sites));
	for (size_t i = 0; i < m->n_sites; i++) {
		struct model_growth_site *gs = &g->sites[g->n_sites];
		uint64_t any = 0;

		gs->site = (uint32_t)i;
		gs->live = xcalloc(g->n_points, sizeof(*gs->live));
		bool moving = false;

		for (size_t k = 0; k < g->n_points; k++) {
			any |= gs->live[k] = model_site_at_point(&m->sites[i], g->points[k]);
			moving |= gs->live[k] != gs->live[0];
		}
		if (!any) {
			free(gs->live);
			continue;
		}
		judge(gs, g->n_points, g->basis);
		g->n_sites++;
		g->n_moving += moving;
	}
	qsort(g->sites, g->n_sites, sizeof(*g->sites), cmp_growth);
	/* spans are no builds: without a site that grows by them, no growth */
	if (g->basis == MODEL_POINT_SPAN && !(g->n_sites && g->sites[0].growing)) {
		for (size_t i = 0; i < g->n_sites; i++)
			free(g->sites[i].live);
		free(g->sites);
		free(g->points);
		*g = (struct model_growth){ 0 };
	}
}

void model_points_finish(struct model *m)
{
	build_marks(m);
	build_growth(m);
}
