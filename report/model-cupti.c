/* CUPTI's records (events with source = CUPTI) checked against the
 * hooks' (docs/report-json.md, "cupti"; the capture side is
 * docs/cupti.md). A CUPTI record is a witness, not an allocation of its
 * own:
 *
 * - a CUPTI allocation matches the oldest hooked allocation at the same
 *   address, of the same class (device-side or pinned host) and of about
 *   the same size (bytes_close), that no CUPTI record matched yet;
 * - one that matches none was seen by CUPTI alone (a route no hook is on):
 *   it is real memory, so it goes live under its own site, "seen by CUPTI
 *   only" in the module of its program counter; a CUPTI free, or a hooked
 *   one, of its address frees it;
 * - a hooked device-side allocation (device, managed, pool, array) made
 *   while CUPTI was on that no CUPTI record matched is "not confirmed".
 *   CUPTI was on from its "memtrace: CUPTI on" mark to its "off" mark;
 *   in a trace without them, throughout, when it has any CUPTI record.
 *
 * CUPTI hands its records over in batches (every 100 ms), so they come
 * after the hooked events they describe. Hooked allocations wait for
 * theirs in a queue per address; one that waited HISTORY_NS of trace time
 * will not be matched any more. When nothing from CUPTI came within
 * HISTORY_NS of the start, CUPTI was off and the queues are dropped. */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

#define HISTORY_NS 2000000000ll
#define SWEEP_EVERY 4096

struct hentry {
	uint64_t bytes;
	int64_t time_ns;
	bool host;	/* pinned host, else device-side */
	bool counts;	/* device-side: unconfirmed if never matched */
	bool in_window; /* made while CUPTI was on, by its marks */
};

struct hist {
	struct hentry *e; /* oldest first */
	size_t n, cap;
};

struct tally {
	uint64_t count, bytes;
};

struct model_cupti_priv {
	struct mt_map hist; /* address -> struct hist */
	bool off;	    /* no sign of CUPTI early on: not tracking */
	bool started;
	int64_t start_ns;
	bool saw_on, window; /* CUPTI's marks: seen, and on now */
	uint64_t since_sweep;
	struct tally unmatched_window, unmatched_all; /* waited too long */
	struct mt_map module_index; /* module + 1 -> index in by_module */
};

void model_cupti_init(struct model *m)
{
	struct model_cupti_priv *p = mt_xcalloc(1, sizeof(*p));

	map_init(&p->hist, sizeof(struct hist));
	map_init(&p->module_index, sizeof(uint32_t));
	m->cupti.priv = p;
}

static void drop_history(struct model_cupti_priv *p)
{
	struct hist *h;

	for (size_t pos = 0; map_next(&p->hist, &pos, NULL, (void **)&h);)
		free(h->e);
	map_fini(&p->hist);
}

void model_cupti_fini(struct model *m)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (p) {
		drop_history(p);
		map_fini(&p->module_index);
		free(p);
	}
	free(m->cupti.by_module);
}

/* CUPTI may report the size the driver rounded the request to. */
static bool bytes_close(uint64_t a, uint64_t b)
{
	uint64_t big = a > b ? a : b, diff = a > b ? a - b : b - a;

	return diff <= 4096 || diff <= big / 16;
}

static bool counts_unconfirmed(int mem)
{
	return mem == MT_MEM_DEVICE || mem == MT_MEM_MANAGED || mem == MT_MEM_POOL ||
	       mem == MT_MEM_ARRAY;
}

static bool witnessed(int mem)
{
	return counts_unconfirmed(mem) || mem == MT_MEM_HOST_PINNED;
}

static struct model_cupti_module *by_module(struct model *m, int64_t module);

/* ---- the hooked side ---------------------------------------------------- */

static void unmatched(struct model_cupti_priv *p, const struct hentry *e)
{
	if (!e->counts)
		return;
	p->unmatched_all.count++;
	p->unmatched_all.bytes = sat_add(p->unmatched_all.bytes, e->bytes);
	if (e->in_window) {
		p->unmatched_window.count++;
		p->unmatched_window.bytes = sat_add(p->unmatched_window.bytes, e->bytes);
	}
}

/* Entries that waited too long will not be matched. */
static void sweep(struct model_cupti_priv *p, int64_t now)
{
	_autofree_ uint64_t *empty = mt_xcalloc(p->hist.len + 1, sizeof(*empty));
	size_t n_empty = 0;
	struct hist *h;
	uint64_t addr;

	for (size_t pos = 0; map_next(&p->hist, &pos, &addr, (void **)&h);) {
		size_t keep = 0;

		for (size_t i = 0; i < h->n; i++) {
			if (now - h->e[i].time_ns > HISTORY_NS)
				unmatched(p, &h->e[i]);
			else
				h->e[keep++] = h->e[i];
		}
		h->n = keep;
		if (keep == 0)
			empty[n_empty++] = addr;
	}
	for (size_t i = 0; i < n_empty; i++) {
		struct hist gone;

		if (map_remove(&p->hist, empty[i], &gone))
			free(gone.e);
	}
}

/* Nothing from CUPTI within HISTORY_NS of the start: it was not on. */
static bool tracking(struct model *m, int64_t now)
{
	struct model_cupti_priv *p = m->cupti.priv;

	if (p->off)
		return false;
	if (!p->started) {
		p->started = true;
		p->start_ns = now;
	}
	if (!m->cupti.active && now - p->start_ns > HISTORY_NS) {
		p->off = true;
		drop_history(p);
		return false;
	}
	return true;
}

void model_cupti_hooked(struct model *m, const struct mt_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h;

	if (!witnessed(ev->mem) || !tracking(m, ev->time_ns))
		return;
	if (++p->since_sweep >= SWEEP_EVERY) {
		p->since_sweep = 0;
		sweep(p, ev->time_ns);
	}
	h = map_put(&p->hist, ev->address, NULL);
	mt_grow(&h->e, &h->cap, h->n + 1, sizeof(*h->e));
	h->e[h->n++] = (struct hentry){
		.bytes = ev->bytes, .time_ns = ev->time_ns, .host = ev->mem == MT_MEM_HOST_PINNED,
		.counts = counts_unconfirmed(ev->mem), .in_window = p->window,
	};
}

/* Its CUPTI record came first (CUPTI flushed between the driver's work and
 * the hook's record): the memory was not CUPTI's alone after all. */
bool model_cupti_claim(struct model *m, const struct mt_event *ev)
{
	struct model_live *live = map_get(&m->live, ev->address);
	struct model_live rec;
	struct model_site *s;
	int64_t module;

	if (!live || !live->cupti || !witnessed(ev->mem) ||
	    (live->mem == MT_MEM_HOST_PINNED) != (ev->mem == MT_MEM_HOST_PINNED) ||
	    !bytes_close(live->bytes, ev->bytes))
		return false;
	map_remove(&m->live, ev->address, &rec);
	model_live_sub(m, &rec);
	model_uncount_alloc(m, &rec);
	s = &m->sites[rec.site];
	module = s->id;
	s->count--;
	s->total_bytes = sat_sub(s->total_bytes, rec.bytes);
	by_module(m, module)->count--;
	by_module(m, module)->bytes = sat_sub(by_module(m, module)->bytes, rec.bytes);
	m->cupti.only_count--;
	m->cupti.only_bytes = sat_sub(m->cupti.only_bytes, rec.bytes);
	m->cupti.matched++;
	m->cupti.matched_bytes = sat_add(m->cupti.matched_bytes, rec.bytes);
	return true;
}

/* ---- the CUPTI side --------------------------------------------------- */

static bool match(struct model *m, const struct mt_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h = p->off ? NULL : map_get(&p->hist, ev->address);
	bool host = ev->mem == MT_MEM_HOST_PINNED;

	for (size_t i = 0; h && i < h->n; i++) {
		if (h->e[i].host != host || !bytes_close(h->e[i].bytes, ev->bytes))
			continue;
		memmove(&h->e[i], &h->e[i + 1], (h->n - i - 1) * sizeof(*h->e));
		h->n--;
		m->cupti.matched++;
		m->cupti.matched_bytes = sat_add(m->cupti.matched_bytes, ev->bytes);
		return true;
	}
	return false;
}

static struct model_cupti_module *by_module(struct model *m, int64_t module)
{
	struct model_cupti_priv *p = m->cupti.priv;
	bool inserted;
	uint32_t *idx = map_put(&p->module_index, (uint64_t)(module + 1), &inserted);

	if (inserted) {
		mt_grow(&m->cupti.by_module, &m->cupti.cap_by_module, m->cupti.n_by_module + 1,
			sizeof(*m->cupti.by_module));
		m->cupti.by_module[m->cupti.n_by_module] = (struct model_cupti_module){ .module = module };
		*idx = (uint32_t)m->cupti.n_by_module++;
	}
	return &m->cupti.by_module[*idx];
}

/* Memory no hook saw allocated: live, under "seen by CUPTI only". */
static void cupti_only(struct model *m, const struct mt_event *ev)
{
	struct mt_site site = { .kind = MT_SITE_CUPTI, .id = ev->module };
	struct model_live rec = {
		.bytes = ev->bytes, .stack = ev->stack, .mem = ev->mem, .device = ev->device,
		.site = MODEL_NONE, .holder = MODEL_NONE, .pool = MODEL_NONE, .op = MODEL_NONE,
		.cupti = true,
	};
	struct model_cupti_module *mod = by_module(m, ev->module);
	struct mt_event plain = *ev;

	plain.mem = ev->mem == MT_MEM_HOST_PINNED ? ev->mem : ev->mem ? ev->mem : MT_MEM_DEVICE;
	plain.has_handle = false; /* CUPTI's pool is a base address, not a handle */
	rec.mem = plain.mem;
	m->cupti.only_count++;
	m->cupti.only_bytes = sat_add(m->cupti.only_bytes, ev->bytes);
	mod->count++;
	mod->bytes = sat_add(mod->bytes, ev->bytes);
	model_count_alloc(m, &plain, &site, &rec);
	model_live_insert(m, ev->address, &rec, ev->time_ns);
}

static void cupti_free(struct model *m, const struct mt_event *ev)
{
	struct model_live *live = map_get(&m->live, ev->address);
	struct model_live rec;

	/* a hooked allocation's free is the hooks' to count */
	if (!live || !live->cupti || !map_remove(&m->live, ev->address, &rec))
		return;
	model_count_free(m, rec.mem, 1);
	model_live_sub(m, &rec);
}

void model_cupti_event(struct model *m, const struct mt_event *ev)
{
	m->cupti.records++;
	m->cupti.active = true;
	if (!ev->has_address || ev->address == 0)
		return;
	switch (ev->kind) {
	case MT_EV_ALLOC:
		m->cupti.allocs++;
		if (!match(m, ev))
			cupti_only(m, ev);
		break;
	case MT_EV_FREE:
		cupti_free(m, ev);
		break;
	}
}

/* CUPTI's own marks say when it was on. A record made before the mark
 * came (it is queued at CUPTI's first flush) is judged by its time. */
void model_cupti_mark(struct model *m, const struct mt_event *ev)
{
	struct model_cupti_priv *p = m->cupti.priv;
	struct hist *h;

	if (ev->mark_kind == MT_MARK_CUPTI_OFF) {
		p->window = false;
		return;
	}
	if (ev->mark_kind != MT_MARK_CUPTI_ON)
		return;
	m->cupti.active = true;
	p->window = true;
	if (p->saw_on || p->off)
		return;
	p->saw_on = true;
	for (size_t pos = 0; map_next(&p->hist, &pos, NULL, (void **)&h);) {
		for (size_t i = 0; i < h->n; i++)
			h->e[i].in_window = h->e[i].time_ns >= ev->time_ns;
	}
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
	const struct tally *t;
	struct hist *h;

	for (size_t pos = 0; !p->off && map_next(&p->hist, &pos, NULL, (void **)&h);) {
		for (size_t i = 0; i < h->n; i++)
			unmatched(p, &h->e[i]);
		h->n = 0;
	}
	t = p->saw_on ? &p->unmatched_window : &p->unmatched_all;
	if (m->cupti.active) {
		m->cupti.unconfirmed = t->count;
		m->cupti.unconfirmed_bytes = t->bytes;
	}
	if (m->cupti.n_by_module)
		qsort(m->cupti.by_module, m->cupti.n_by_module, sizeof(*m->cupti.by_module),
		      cmp_module);
}
