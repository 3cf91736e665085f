/* One ordered pass over the events (see model.h). Per event this does a
 * constant number of hash-map operations and no allocation beyond the
 * amortized growth of the maps, so 10M-event traces stay fast. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

#define NONE UINT32_MAX

enum mem_class { MEM_UNTRACKED, MEM_DEVICE_SIDE, MEM_HOST };

struct model_live {
	uint64_t bytes;
	int64_t stack, seq, time_ns;
	uint32_t site, holder; /* indices in model.sites / model.stacks */
	int mem;
};

struct model_recent_free {
	uint64_t address;
	struct model_live rec;
	bool valid;
	bool unmatched; /* the free found nothing live */
};

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a < b ? 0 : a - b;
}

static enum mem_class mem_class(int mem)
{
	switch (mem) {
	case MT_MEM_DEVICE:
	case MT_MEM_MANAGED:
		return MEM_DEVICE_SIDE;
	case MT_MEM_HOST_PINNED:
		return MEM_HOST;
	}
	return MEM_UNTRACKED;
}

void model_init(struct model *m)
{
	*m = (struct model){ 0 };
	map_init(&m->site_index, sizeof(uint32_t));
	map_init(&m->stack_index, sizeof(uint32_t));
	map_init(&m->live, sizeof(struct model_live));
	m->recent = mt_xcalloc(MODEL_RECENT_FREES, sizeof(*m->recent));
}

void model_fini(struct model *m)
{
	for (size_t i = 0; i < m->n_ooms; i++)
		free(m->ooms[i].holders);
	free(m->ooms);
	free(m->sites);
	free(m->stacks);
	free(m->recent);
	free(m->leaks);
	map_fini(&m->site_index);
	map_fini(&m->stack_index);
	map_fini(&m->live);
	*m = (struct model){ 0 };
}

uint64_t model_site_key(const struct model *m, int64_t stack)
{
	return (uint64_t)stack;
}

static uint32_t site_for(struct model *m, int64_t stack)
{
	uint64_t key = model_site_key(m, stack);
	bool inserted;
	uint32_t *idx = map_put(&m->site_index, key, &inserted);

	if (inserted) {
		mt_grow(&m->sites, &m->cap_sites, m->n_sites + 1, sizeof(*m->sites));
		/* born at the current epoch: it held nothing at earlier peaks */
		m->sites[m->n_sites] = (struct model_site){
			.key = key, .stack = stack, .epoch = m->peak_epoch,
		};
		*idx = (uint32_t)m->n_sites++;
	}
	return *idx;
}

static uint32_t stack_for(struct model *m, int64_t stack)
{
	bool inserted;
	uint32_t *idx = map_put(&m->stack_index, (uint64_t)stack, &inserted);

	if (inserted) {
		mt_grow(&m->stacks, &m->cap_stacks, m->n_stacks + 1, sizeof(*m->stacks));
		m->stacks[m->n_stacks] = (struct model_stack_live){ .stack = stack };
		*idx = (uint32_t)m->n_stacks++;
	}
	return *idx;
}

/* The lazy epoch trick: a new device peak bumps peak_epoch instead of
 * copying every site's live bytes. A site whose epoch is older has not
 * changed since that peak, so its live bytes are still what it held then:
 * save them before the first change. model_finish does the same for sites
 * that never changed again. */
static void site_touch(struct model *m, struct model_site *s)
{
	if (s->epoch < m->peak_epoch) {
		s->at_peak = s->live;
		s->epoch = m->peak_epoch;
	}
}

static void live_add(struct model *m, struct model_live *rec, int64_t time_ns)
{
	enum mem_class c = mem_class(rec->mem);
	struct model_mem *mm = c == MEM_HOST ? &m->host : &m->device;

	if (c == MEM_UNTRACKED)
		return;
	if (c == MEM_DEVICE_SIDE) {
		struct model_site *s = &m->sites[rec->site];
		struct model_stack_live *st = &m->stacks[rec->holder];

		site_touch(m, s);
		s->live = sat_add(s->live, rec->bytes);
		st->bytes = sat_add(st->bytes, rec->bytes);
		st->count++;
	}
	mm->live_bytes = sat_add(mm->live_bytes, rec->bytes);
	mm->live_count++;
	if (mm->live_bytes > mm->peak_bytes) {
		mm->peak_bytes = mm->live_bytes;
		mm->peak_time_ns = time_ns;
		if (c == MEM_DEVICE_SIDE)
			m->peak_epoch++;
	}
}

static void live_sub(struct model *m, const struct model_live *rec)
{
	enum mem_class c = mem_class(rec->mem);
	struct model_mem *mm = c == MEM_HOST ? &m->host : &m->device;

	if (c == MEM_UNTRACKED)
		return;
	if (c == MEM_DEVICE_SIDE) {
		struct model_site *s = &m->sites[rec->site];
		struct model_stack_live *st = &m->stacks[rec->holder];

		site_touch(m, s);
		s->live = sat_sub(s->live, rec->bytes);
		st->bytes = sat_sub(st->bytes, rec->bytes);
		st->count--;
	}
	mm->live_bytes = sat_sub(mm->live_bytes, rec->bytes);
	mm->live_count--;
}

static void on_alloc(struct model *m, const struct mt_event *ev)
{
	struct model_live rec = {
		.bytes = ev->bytes, .stack = ev->stack, .seq = ev->seq,
		.time_ns = ev->time_ns, .mem = ev->mem, .site = NONE, .holder = NONE,
	};
	enum mem_class c = mem_class(ev->mem);
	struct model_mem *mm = c == MEM_HOST ? &m->host : &m->device;
	struct model_live *slot;
	bool inserted;

	/* cudaMalloc of 0 bytes returns NULL: nothing to track */
	if (!ev->has_address || ev->address == 0 || c == MEM_UNTRACKED) {
		if (ev->bytes > 0)
			m->untracked_allocs++;
		return;
	}
	slot = map_put(&m->live, ev->address, &inserted);
	if (!inserted) {
		/* a free memtrace did not see: release the old one first */
		m->reused_addresses++;
		live_sub(m, slot);
	}
	if (c == MEM_DEVICE_SIDE) {
		struct model_site *s;

		rec.site = site_for(m, ev->stack);
		rec.holder = stack_for(m, ev->stack);
		s = &m->sites[rec.site];
		s->total_bytes = sat_add(s->total_bytes, ev->bytes);
		s->count++;
	}
	mm->allocations++;
	mm->bytes_allocated = sat_add(mm->bytes_allocated, ev->bytes);
	live_add(m, &rec, ev->time_ns);
	*slot = rec;
}

static void remember_free(struct model *m, uint64_t address,
			  const struct model_live *rec)
{
	struct model_recent_free *r = &m->recent[m->recent_next];

	m->recent_next = (m->recent_next + 1) % MODEL_RECENT_FREES;
	*r = (struct model_recent_free){ .address = address, .valid = true };
	if (rec)
		r->rec = *rec;
	else
		r->unmatched = true;
}

static void on_free(struct model *m, const struct mt_event *ev)
{
	struct model_live rec;

	/* cudaFree(NULL) is a no-op (and a common way to create a context) */
	if (!ev->has_address || ev->address == 0)
		return;
	if (!map_remove(&m->live, ev->address, &rec)) {
		m->unmatched_frees++;
		remember_free(m, ev->address, NULL);
		return;
	}
	if (mem_class(rec.mem) == MEM_HOST)
		m->host.frees++;
	else if (mem_class(rec.mem) == MEM_DEVICE_SIDE)
		m->device.frees++;
	live_sub(m, &rec);
	remember_free(m, ev->address, &rec);
}

static struct model_recent_free *find_recent(struct model *m, uint64_t address)
{
	for (size_t i = 1; i <= MODEL_RECENT_FREES; i++) {
		size_t at = (m->recent_next + MODEL_RECENT_FREES - i) % MODEL_RECENT_FREES;
		struct model_recent_free *r = &m->recent[at];

		if (r->valid && r->address == address)
			return r;
	}
	return NULL;
}

/* The free recorded just before (on that thread) failed: undo it. */
static void on_free_error(struct model *m, const struct mt_event *ev)
{
	struct model_recent_free *r;
	struct model_live *slot;
	bool inserted;

	m->free_errors++;
	if (!ev->has_address || !(r = find_recent(m, ev->address)))
		return;
	r->valid = false;
	if (r->unmatched) {
		/* a bad pointer the application passed, not one memtrace missed */
		m->unmatched_frees--;
		return;
	}
	slot = map_put(&m->live, ev->address, &inserted);
	if (!inserted)
		return; /* already allocated again: keep the newer one */
	*slot = r->rec;
	if (mem_class(r->rec.mem) == MEM_HOST)
		m->host.frees--;
	else if (mem_class(r->rec.mem) == MEM_DEVICE_SIDE)
		m->device.frees--;
	live_add(m, slot, ev->time_ns);
}

static int cmp_group(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

static void snapshot_holders(struct model *m, struct model_oom *o)
{
	size_t n = 0;

	o->holders = mt_xcalloc(m->n_stacks, sizeof(*o->holders));
	for (size_t i = 0; i < m->n_stacks; i++) {
		const struct model_stack_live *st = &m->stacks[i];

		if (st->count == 0)
			continue;
		o->holders[n++] = (struct model_group){
			.stack = st->stack, .bytes = st->bytes, .count = st->count,
		};
	}
	qsort(o->holders, n, sizeof(*o->holders), cmp_group);
	o->n_holders = n;
	o->has_holders = true;
}

/* Keep the first SNAPSHOTS - 1 live sets and the latest one. */
static void maybe_snapshot(struct model *m, size_t idx)
{
	if (idx >= MODEL_OOM_SNAPSHOTS - 1) {
		if (idx > MODEL_OOM_SNAPSHOTS - 1) {
			struct model_oom *prev = &m->ooms[m->last_snapshot];

			free(prev->holders);
			prev->holders = NULL;
			prev->n_holders = 0;
			prev->has_holders = false;
			m->oom_snapshots_dropped++;
		}
		m->last_snapshot = idx;
	}
	snapshot_holders(m, &m->ooms[idx]);
}

static void on_oom(struct model *m, const struct mt_event *ev)
{
	struct model_oom *o;

	mt_grow(&m->ooms, &m->cap_ooms, m->n_ooms + 1, sizeof(*m->ooms));
	o = &m->ooms[m->n_ooms];
	*o = (struct model_oom){
		.seq = ev->seq, .time_ns = ev->time_ns, .api = ev->api,
		.stack = ev->stack, .requested = ev->bytes, .mem = ev->mem,
		.live_bytes = m->device.live_bytes, .live_count = m->device.live_count,
		.has_device_free = ev->has_device_free, .device_free = ev->device_free,
		.has_device_total = ev->has_device_total, .device_total = ev->device_total,
	};
	maybe_snapshot(m, m->n_ooms);
	m->n_ooms++;
}

void model_feed(struct model *m, const struct mt_event *ev)
{
	if (m->finished)
		return;
	m->events++;
	if (ev->time_ns > m->last_time_ns)
		m->last_time_ns = ev->time_ns;
	switch (ev->kind) {
	case MT_EV_ALLOC: on_alloc(m, ev); break;
	case MT_EV_FREE: on_free(m, ev); break;
	case MT_EV_OOM: on_oom(m, ev); break;
	case MT_EV_ALLOC_ERROR: m->alloc_errors++; break;
	case MT_EV_FREE_ERROR: on_free_error(m, ev); break;
	default: m->unknown_events++; break;
	}
}

static int cmp_live_by_stack(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

/* Group what is still live by (memory kind, stack): sort, then merge runs. */
static void build_leaks(struct model *m)
{
	struct model_group *g = mt_xcalloc(m->live.len, sizeof(*g));
	struct model_live *rec;
	size_t n = 0, out = 0;

	for (size_t pos = 0; map_next(&m->live, &pos, NULL, (void **)&rec);) {
		if (mem_class(rec->mem) != MEM_UNTRACKED)
			g[n++] = (struct model_group){
				.stack = rec->stack, .bytes = rec->bytes, .count = 1, .mem = rec->mem,
			};
	}
	qsort(g, n, sizeof(*g), cmp_live_by_stack);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && cmp_live_by_stack(&g[out - 1], &g[i]) == 0) {
			g[out - 1].bytes = sat_add(g[out - 1].bytes, g[i].bytes);
			g[out - 1].count++;
		} else {
			g[out++] = g[i];
		}
	}
	qsort(g, out, sizeof(*g), cmp_group);
	m->leaks = g;
	m->n_leaks = out;
}

static int cmp_site(const void *a, const void *b)
{
	const struct model_site *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	if (x->total_bytes != y->total_bytes)
		return x->total_bytes > y->total_bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return 0;
}

void model_finish(struct model *m)
{
	if (m->finished)
		return;
	for (size_t i = 0; i < m->n_sites; i++)
		site_touch(m, &m->sites[i]);
	/* indices into sites held by live records are dead from here on */
	qsort(m->sites, m->n_sites, sizeof(*m->sites), cmp_site);
	build_leaks(m);
	m->finished = true;
}
