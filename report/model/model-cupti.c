/* CUPTI's records (events with source = CUPTI) checked against the
 * hooks', by the matching rule of docs/cupti.md (its reference is
 * tests/sim-cupti/reconcile.py; docs/report-json.md, "cupti", says what
 * the report shows). A CUPTI record is a witness, never counted as well
 * as the hooks' event:
 *
 * - memory: a CUPTI allocation (device, managed, pinned host) matches the
 *   unmatched hooked allocation (device, managed, pinned host, pool) at
 *   the same address with the same bytes whose window holds its time:
 *   the window runs from the end of the previous hooked life at that
 *   address to the end of its own. Several: the nearest in time. Then
 *   the CUPTI allocation and its free are dropped;
 * - one that matches none was seen by CUPTI alone: real memory, live
 *   under its own site ("seen by CUPTI only" in the module of its program
 *   counter) until the CUPTI free of its address;
 * - a compared hooked allocation no CUPTI allocation matched, made while
 *   CUPTI watched (its "on" mark to its "off" mark or the end), is not
 *   confirmed;
 * - graphs and execs: the same rule by handle, without bytes, settled at
 *   the end (CUPTI's graph callbacks come before the hooks' events); one
 *   only CUPTI saw takes part in the graph lifetimes (model-graph.c).
 *
 * CUPTI hands its memory records over every 100 ms, after the hooked
 * events they describe, so hooked lives wait for them per address. A
 * life that ended more than HISTORY_NS of trace time ago cannot be
 * matched any more: it is settled, in the order lives end (a queue), so
 * each costs O(1). When nothing from CUPTI came in the first HISTORY_NS,
 * CUPTI was off: the waiting stops. */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

#define HISTORY_NS 2000000000ll
#define NEVER INT64_MAX

/* t is more than HISTORY_NS before now (times are untrusted: no overflow). */
static bool older(int64_t now, int64_t t)
{
	return t < now && (uint64_t)now - (uint64_t)t > HISTORY_NS;
}

struct life {
	int64_t time, after, until; /* its window: (after, until) */
	uint64_t bytes;
	int64_t seq;
	bool matched;
};

struct hist {
	struct life *l; /* in seq order */
	size_t n, cap;
	int64_t last_end, end_before; /* the last life's end, and the one before it */
};

/* A graph or exec as one witness saw it. */
struct glife {
	uint64_t handle, graph;
	int64_t time, after, until;
	bool exec, matched;
};

struct glives {
	struct glife *l;
	size_t n, cap;
};

/* A hooked life that ended, in the order they end. */
struct ended {
	uint64_t address;
	int64_t until;
};

struct alone {
	struct model_live rec;
	int64_t time;
};

struct model_cupti_priv {
	struct map hist;  /* address -> struct hist: hooked lives */
	struct map alone; /* address -> struct alone: live, seen by CUPTI alone */
	bool off;	     /* nothing from CUPTI early on: not waiting */
	bool started;
	int64_t start_ns;
	int64_t on_ns, off_ns; /* CUPTI watched from its first on mark to its last off mark */
	struct ended *ended; /* from ended_head on: waiting to be settled */
	size_t n_ended, cap_ended, ended_head;
	struct map module_index; /* module + 1 -> index in by_module */
	struct glives hooked_graphs, cupti_graphs;
	struct map graph_live[2][2]; /* [cupti][exec]: handle -> index of its live glife */
	struct map graph_end[2][2];  /* handle -> when its last life ended */
};

void model_cupti_init(struct model *m)
{
	struct model_cupti_priv *p = xcalloc(1, sizeof(*p));

	map_init(&p->hist, sizeof(struct hist));
	map_init(&p->alone, sizeof(struct alone));
	map_init(&p->module_index, sizeof(uint32_t));
	for (int c = 0; c < 2; c++) {
		for (int e = 0; e < 2; e++) {
			map_init(&p->graph_live[c][e], sizeof(uint32_t));
			map_init(&p->graph_end[c][e], sizeof(int64_t));
		}
	}
	p->off_ns = NEVER;
	m->cupti.priv = p;
}

static void drop_history(struct model_cupti_priv *p)
{
	struct hist *h;

	for (size_t pos = 0; map_next(&p->hist, &pos, NULL, (void **)&h);)
		free(h->l);
	map_fini(&p->hist);
}

void model_cupti_fini(struct model *m)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (p) {
		drop_history(p);
		free(p->ended);
		map_fini(&p->alone);
		map_fini(&p->module_index);
		free(p->hooked_graphs.l);
		free(p->cupti_graphs.l);
		for (int c = 0; c < 2; c++) {
			for (int e = 0; e < 2; e++) {
				map_fini(&p->graph_live[c][e]);
				map_fini(&p->graph_end[c][e]);
			}
		}
		free(p);
	}
	free(m->cupti.by_module);
}

static bool hooked_compared(int mem)
{
	return mem == MT_MEM_DEVICE || mem == MT_MEM_MANAGED || mem == MT_MEM_HOST_PINNED ||
	       mem == MT_MEM_POOL;
}

static bool cupti_compared(int mem)
{
	return mem == MT_MEM_DEVICE || mem == MT_MEM_MANAGED || mem == MT_MEM_HOST_PINNED;
}

static struct model_cupti_module *by_module(struct model *m, int64_t module)
{
	struct model_cupti_priv *p = m->cupti.priv;
	bool inserted;
	uint32_t *idx = xmap_put(&p->module_index, (uint64_t)(module + 1), &inserted);

	if (inserted) {
		grow_array(&m->cupti.by_module, &m->cupti.cap_by_module, m->cupti.n_by_module + 1,
			   sizeof(*m->cupti.by_module));
		m->cupti.by_module[m->cupti.n_by_module] = (struct model_cupti_module){ .module = module };
		*idx = (uint32_t)m->cupti.n_by_module++;
	}
	return &m->cupti.by_module[*idx];
}

static void count_matched(struct model *m, uint64_t bytes)
{
	m->cupti.matched++;
	m->cupti.matched_bytes = sat_add(m->cupti.matched_bytes, bytes);
}

/* ---- hooked lives ----------------------------------------------------- */

/* A hooked life no CUPTI record matched, made while CUPTI watched. */
static void settle(struct model *m, const struct life *l)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (l->matched || !m->cupti.on || l->time < p->on_ns || l->time > p->off_ns)
		return;
	m->cupti.unconfirmed++;
	m->cupti.unconfirmed_bytes = sat_add(m->cupti.unconfirmed_bytes, l->bytes);
}

/* The oldest ended life at address, settled and forgotten; the address
 * too when nothing is left of it. */
static void settle_ended(struct model *m, const struct ended *e)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h = map_get(&p->hist, e->address);
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n && h->l[i].until != e->until; i++)
		;
	if (i == h->n)
		return; /* a free_error gave it its life back */
	settle(m, &h->l[i]);
	memmove(&h->l[i], &h->l[i + 1], (h->n - i - 1) * sizeof(*h->l));
	if (--h->n == 0 && h->last_end == e->until) {
		struct hist gone;

		if (map_remove(&p->hist, e->address, &gone))
			free(gone.l);
	}
}

/* Lives that ended too long ago to be matched are settled. */
static void sweep(struct model *m, int64_t now)
{
	struct model_cupti_priv *p = m->cupti.priv;

	while (p->ended_head < p->n_ended && older(now, p->ended[p->ended_head].until))
		settle_ended(m, &p->ended[p->ended_head++]);
	if (p->ended_head > 4096 && p->ended_head * 2 > p->n_ended) {
		p->n_ended -= p->ended_head;
		memmove(p->ended, p->ended + p->ended_head, p->n_ended * sizeof(*p->ended));
		p->ended_head = 0;
	}
}

/* Nothing from CUPTI within HISTORY_NS of the start, or a trace the
 * reader says has no CUPTI record: CUPTI was not on. */
static bool waiting(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	int64_t now = ev->time_ns;

	if (p->off)
		return false;
	if (!p->started) {
		p->started = true;
		p->start_ns = now;
	}
	if (ev->no_cupti || (!m->cupti.on && !m->cupti.records && older(now, p->start_ns))) {
		p->off = true;
		drop_history(p);
		free(p->ended);
		p->ended = NULL;
		p->n_ended = p->cap_ended = p->ended_head = 0;
		return false;
	}
	sweep(m, now);
	return true;
}

static void alone_gone(struct model *m, const struct alone *a, bool freed);

/* CUPTI's record of this allocation came before the hook's (CUPTI
 * flushed between the driver's work and the hook): it was not CUPTI's
 * alone after all. */
static bool claim(struct model *m, const struct trace_event *ev, int64_t after)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct alone *a = map_get(&p->alone, ev->address);
	struct alone gone;

	if (!a || a->rec.bytes != ev->bytes || a->time <= after)
		return false;
	map_remove(&p->alone, ev->address, &gone);
	alone_gone(m, &gone, false);
	count_matched(m, ev->bytes);
	return true;
}

bool model_cupti_hooked(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h;
	bool inserted, claimed;

	if (!hooked_compared(ev->mem) || !waiting(m, ev))
		return false;
	h = xmap_put(&p->hist, ev->address, &inserted);
	if (inserted)
		h->last_end = h->end_before = INT64_MIN;
	claimed = claim(m, ev, h->last_end);
	if (h->n == h->cap) { /* most addresses have one or two lives waiting */
		h->cap = h->cap ? 2 * h->cap : 2;
		h->l = xrealloc(h->l, h->cap, sizeof(*h->l));
	}
	h->l[h->n++] = (struct life){
		.time = ev->time_ns, .after = h->last_end, .until = NEVER, .bytes = ev->bytes,
		.seq = ev->seq, .matched = claimed,
	};
	return claimed;
}

void model_cupti_hooked_free(struct model *m, uint64_t address, int64_t time_ns, bool undo)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h = p->off ? NULL : map_get(&p->hist, address);

	if (!h || h->n == 0)
		return;
	if (undo) { /* free_error: the life goes on */
		h->l[h->n - 1].until = NEVER;
		h->last_end = h->end_before;
		return;
	}
	if (h->l[h->n - 1].until != NEVER)
		return;
	h->l[h->n - 1].until = time_ns;
	h->end_before = h->last_end;
	h->last_end = time_ns;
	grow_array(&p->ended, &p->cap_ended, p->n_ended + 1, sizeof(*p->ended));
	p->ended[p->n_ended++] = (struct ended){ address, time_ns };
}

/* ---- CUPTI's memory records ------------------------------------------- */

static bool match(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h = p->off ? NULL : map_get(&p->hist, ev->address);
	struct life *best = NULL;
	uint64_t best_d = UINT64_MAX;

	for (size_t i = 0; h && i < h->n; i++) {
		struct life *l = &h->l[i];
		uint64_t d;

		if (l->matched || l->bytes != ev->bytes || !(l->after < ev->time_ns) ||
		    !(ev->time_ns < l->until))
			continue;
		d = l->time > ev->time_ns ? (uint64_t)l->time - (uint64_t)ev->time_ns
					  : (uint64_t)ev->time_ns - (uint64_t)l->time;
		if (d < best_d) {
			best = l;
			best_d = d;
		}
	}
	if (!best)
		return false;
	best->matched = true;
	count_matched(m, ev->bytes);
	return true;
}

/* Memory no hook saw allocated: live under "seen by CUPTI only". */
static void alone_new(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct site_ref site = { .kind = SITE_CUPTI, .id = ev->module };
	struct model_cupti_module *mod = by_module(m, ev->module);
	struct trace_event plain = *ev;
	struct alone a = {
		.time = ev->time_ns,
		.rec = { .bytes = ev->bytes, .stack = ev->stack, .mem = ev->mem, .device = ev->device,
			 .site = MODEL_NONE, .holder = MODEL_NONE, .pool = MODEL_NONE,
			 .op = MODEL_NONE, .cupti = true },
	};
	struct alone *slot;
	bool inserted;

	plain.has_handle = false; /* CUPTI's pool is a base address, not a handle */
	m->cupti.alone_count++;
	m->cupti.alone_bytes = sat_add(m->cupti.alone_bytes, ev->bytes);
	mod->count++;
	mod->bytes = sat_add(mod->bytes, ev->bytes);
	model_count_alloc(m, &plain, &site, &a.rec);
	slot = xmap_put(&p->alone, ev->address, &inserted);
	if (!inserted)
		alone_gone(m, slot, true); /* its CUPTI free was lost */
	*slot = a;
	model_live_add(m, &a.rec, ev->time_ns);
	m->cupti.alone_live_bytes = sat_add(m->cupti.alone_live_bytes, ev->bytes);
}

/* An allocation seen by CUPTI alone ends: freed, or taken back (its hooked
 * twin came after all). */
static void alone_gone(struct model *m, const struct alone *a, bool freed)
{
	struct model_site *s = &m->sites[a->rec.site];
	struct model_cupti_module *mod;

	model_live_sub(m, &a->rec);
	m->cupti.alone_live_bytes = sat_sub(m->cupti.alone_live_bytes, a->rec.bytes);
	if (freed) {
		model_count_free(m, a->rec.mem, 1);
		return;
	}
	model_uncount_alloc(m, &a->rec);
	s->count--;
	s->total_bytes = sat_sub(s->total_bytes, a->rec.bytes);
	mod = by_module(m, s->id);
	mod->count--;
	mod->bytes = sat_sub(mod->bytes, a->rec.bytes);
	m->cupti.alone_count--;
	m->cupti.alone_bytes = sat_sub(m->cupti.alone_bytes, a->rec.bytes);
}

static void cupti_free(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct alone a;

	/* a matched allocation's free is the hooks' to count */
	if (map_remove(&p->alone, ev->address, &a))
		alone_gone(m, &a, true);
}

/* ---- graphs ------------------------------------------------------------- */

/* One witness's graph event: lives by handle, as for memory. */
static void graph_life(struct model_cupti_priv *p, const struct trace_event *ev)
{
	int c = ev->source == MT_SOURCE_CUPTI;
	bool exec = ev->kind == MT_EV_EXEC_CREATE || ev->kind == MT_EV_EXEC_DESTROY;
	struct glives *gl = c ? &p->cupti_graphs : &p->hooked_graphs;
	const int64_t *end;
	uint32_t idx;

	if (ev->kind == MT_EV_GRAPH_DESTROY || ev->kind == MT_EV_EXEC_DESTROY) {
		if (!map_remove(&p->graph_live[c][exec], ev->handle, &idx))
			return;
		gl->l[idx].until = ev->time_ns;
		*(int64_t *)xmap_put(&p->graph_end[c][exec], ev->handle, NULL) = ev->time_ns;
		return;
	}
	end = map_get(&p->graph_end[c][exec], ev->handle);
	grow_array(&gl->l, &gl->cap, gl->n + 1, sizeof(*gl->l));
	gl->l[gl->n] = (struct glife){
		.handle = ev->handle, .graph = ev->address, .time = ev->time_ns,
		.after = end ? *end : INT64_MIN, .until = NEVER, .exec = exec,
	};
	*(uint32_t *)xmap_put(&p->graph_live[c][exec], ev->handle, NULL) = (uint32_t)gl->n++;
}

void model_cupti_graph_hooked(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (ev->kind >= MT_EV_GRAPH_CREATE && ev->kind <= MT_EV_EXEC_DESTROY)
		graph_life(p, ev);
}

static int cmp_glife_time(const void *a, const void *b)
{
	const struct glife *x = *(const struct glife *const *)a, *y = *(const struct glife *const *)b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static bool graph_match(struct model_cupti_priv *p, struct glife *c)
{
	struct glife *best = NULL;
	uint64_t best_d = UINT64_MAX;

	for (size_t i = 0; i < p->hooked_graphs.n; i++) {
		struct glife *h = &p->hooked_graphs.l[i];
		uint64_t d;

		if (h->matched || h->exec != c->exec || h->handle != c->handle ||
		    !(h->after < c->time) || !(c->time < h->until))
			continue;
		d = h->time > c->time ? (uint64_t)h->time - (uint64_t)c->time
				      : (uint64_t)c->time - (uint64_t)h->time;
		if (d < best_d) {
			best = h;
			best_d = d;
		}
	}
	if (best)
		best->matched = c->matched = true;
	return best != NULL;
}

/* CUPTI's graphs and execs in time order against the hooks'; those it
 * alone saw go to the graph lifetimes. */
static void settle_graphs(struct model *m)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct glives *cg = &p->cupti_graphs;
	_autofree_ struct glife **order = xcalloc(cg->n + 1, sizeof(*order));

	for (size_t i = 0; i < cg->n; i++)
		order[i] = &cg->l[i];
	qsort(order, cg->n, sizeof(*order), cmp_glife_time);
	for (size_t i = 0; i < cg->n; i++) {
		struct glife *c = order[i];
		bool ended = c->until != NEVER;

		if (graph_match(p, c)) {
			m->cupti.graphs_matched++;
			continue;
		}
		if (c->exec) {
			m->cupti.execs_alone++;
			m->cupti.execs_alone_never_destroyed += !ended;
		} else {
			m->cupti.graphs_alone++;
			m->cupti.graphs_alone_never_destroyed += !ended;
		}
		model_graph_alone(m, c->exec, c->handle, c->graph, c->time, ended ? c->until : -1);
	}
}

/* ---- events ----------------------------------------------------------- */

void model_cupti_event(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;

	m->cupti.records++;
	switch (ev->kind) {
	case MT_EV_ALLOC:
		if (!ev->has_address || ev->address == 0 || !cupti_compared(ev->mem))
			return;
		m->cupti.allocs++;
		if (!match(m, ev))
			alone_new(m, ev);
		break;
	case MT_EV_FREE:
		if (ev->has_address)
			cupti_free(m, ev);
		break;
	case MT_EV_GRAPH_CREATE:
	case MT_EV_GRAPH_CLONE:
	case MT_EV_GRAPH_DESTROY:
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
		graph_life(p, ev);
		break;
	}
}

void model_cupti_mark(struct model *m, const struct trace_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (ev->mark_kind == MARK_CUPTI_OFF) {
		p->off_ns = ev->time_ns;
	} else if (ev->mark_kind == MARK_CUPTI_ON && !m->cupti.on) {
		m->cupti.on = true;
		p->on_ns = ev->time_ns;
	}
}

size_t model_cupti_leaks(const struct model *m, struct model_group *out)
{
	const struct model_cupti_priv *p = m->cupti.priv;
	struct alone *a;
	size_t n = 0;

	for (size_t pos = 0; map_next(&p->alone, &pos, NULL, (void **)&a);)
		out[n++] = (struct model_group){
			.stack = a->rec.stack, .bytes = a->rec.bytes, .count = 1, .mem = a->rec.mem,
		};
	return n;
}

size_t model_cupti_alone_live(const struct model *m)
{
	return ((const struct model_cupti_priv *)m->cupti.priv)->alone.len;
}

static int cmp_module(const void *a, const void *b)
{
	const struct model_cupti_module *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->module < y->module ? -1 : x->module > y->module;
}

void model_cupti_finish(struct model *m)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h;
	size_t out = 0;

	for (size_t pos = 0; !p->off && map_next(&p->hist, &pos, NULL, (void **)&h);) {
		for (size_t i = 0; i < h->n; i++)
			settle(m, &h->l[i]);
		h->n = 0;
	}
	settle_graphs(m);
	for (size_t i = 0; i < m->cupti.n_by_module; i++) {
		if (m->cupti.by_module[i].count)
			m->cupti.by_module[out++] = m->cupti.by_module[i];
	}
	m->cupti.n_by_module = out;
	if (out)
		qsort(m->cupti.by_module, out, sizeof(*m->cupti.by_module), cmp_module);
}
