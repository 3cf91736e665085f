/* The live bytes charged, inline: the totals by kind, class, pool and
 * device, the site's, stack's and op's live bytes and their lazy-epoch
 * peak. model-base.c's (model_live_add, _sub, _move), and model.c's
 * live-set hooks', which would otherwise call those once an allocation
 * and once a free. Only model-base.c and model.c include it. */
#pragma once

#include "model-internal.h"

/* The class total a kind adds to, or NULL for the kinds listed apart. */
static inline struct model_mem *charge_class_mem(struct model *m, int mem)
{
	switch (model_mem_class(mem)) {
	case MODEL_MEM_DEVICE_SIDE: return &m->device;
	case MODEL_MEM_HOST: return &m->host;
	default: return NULL;
	}
}

/* The lazy epoch trick: a new device peak bumps peak_epoch instead of
 * copying every site's live bytes. A site whose epoch is older has not
 * changed since that peak, so its live bytes are still what it held then:
 * save them before the first change. model_finish does the same for sites
 * that never changed again. */
static inline void charge_site_touch(struct model *m, struct model_site *s)
{
	if (trace_live_touch(m->peak_epoch, &s->epoch)) {
		s->at_peak = s->live;
		s->at_peak_count = s->live_count;
	}
}

static inline void charge_op_touch(struct model *m, struct model_op *op)
{
	if (trace_live_touch(m->peak_epoch, &op->epoch))
		op->at_peak = op->live;
}

/* rec's bytes to (add) or from its site, holder stack and op. Inline: once
 * an allocation and once a free, in model_live_add and _sub. */
static inline __attribute__((always_inline)) void charge(struct model *m,
							  const struct model_live *rec, bool add)
{
	struct model_site *s = &m->sites[rec->site];
	struct model_stack_live *st = &m->stacks[rec->holder];
	struct model_op *op = rec->op != MODEL_NONE ? &m->ops[rec->op] : NULL;

	charge_site_touch(m, s);
	if (s->points_saved < m->n_points) /* model_points_touch has work */
		model_points_touch(m, s);
	if (op)
		charge_op_touch(m, op);
	if (add) {
		trace_round_alloc(&m->rounds, &st->rounds, st->bytes, rec->bytes);
		s->live = sat_add(s->live, rec->bytes);
		s->live_count++;
		if (st->device != rec->device)
			st->device = st->device == MODEL_DEVICE_NONE ? rec->device : MODEL_DEVICE_MIXED;
		st->bytes = sat_add(st->bytes, rec->bytes);
		st->count++;
		if (op)
			op->live = sat_add(op->live, rec->bytes);
	} else {
		trace_round_free(&m->rounds, &st->rounds, st->bytes);
		s->live = sat_sub(s->live, rec->bytes);
		s->live_count -= s->live_count > 0;
		st->bytes = sat_sub(st->bytes, rec->bytes);
		st->count--;
		if (op)
			op->live = sat_sub(op->live, rec->bytes);
	}
}

/* True when this raised mm's peak. */
static inline bool charge_mem_add(struct model_mem *mm, uint64_t bytes, int64_t time_ns)
{
	mm->live_bytes = sat_add(mm->live_bytes, bytes);
	mm->live_count++;
	if (mm->live_bytes <= mm->peak_bytes)
		return false;
	mm->peak_bytes = mm->live_bytes;
	mm->peak_time_ns = time_ns;
	return true;
}

static inline void charge_mem_sub(struct model_mem *mm, uint64_t bytes)
{
	mm->live_bytes = sat_sub(mm->live_bytes, bytes);
	mm->live_count--;
}

/* model_live_add and _sub inline, for the model's own allocations and
 * frees: a call less an event. */
static inline __attribute__((always_inline)) void charge_live_add(struct model *m,
							    const struct model_live *rec,
							    int64_t time_ns)
{
	struct model_mem *cls = charge_class_mem(m, rec->mem);

	if (model_mem_class(rec->mem) == MODEL_MEM_UNTRACKED)
		return;
	charge_mem_add(&m->kinds[rec->mem], rec->bytes, time_ns);
	if (rec->pool != MODEL_NONE) {
		m->pools[rec->pool].live_bytes = sat_add(m->pools[rec->pool].live_bytes, rec->bytes);
		m->pools[rec->pool].live_count++;
	}
	if (model_mem_class(rec->mem) == MODEL_MEM_DEVICE_SIDE) {
		uint64_t *dev = model_device_live_fast(m, rec->device);

		trace_round_next(&m->rounds); /* the first allocation after a free */
		*dev = sat_add(*dev, rec->bytes);
		charge(m, rec, true); /* before the epoch moves on */
	}
	if (cls && charge_mem_add(cls, rec->bytes, time_ns) && cls == &m->device)
		m->peak_epoch++;
}

static inline __attribute__((always_inline)) void charge_live_sub(struct model *m,
							    const struct model_live *rec)
{
	struct model_mem *cls = charge_class_mem(m, rec->mem);

	if (model_mem_class(rec->mem) == MODEL_MEM_UNTRACKED)
		return;
	charge_mem_sub(&m->kinds[rec->mem], rec->bytes);
	if (rec->pool != MODEL_NONE) {
		m->pools[rec->pool].live_bytes = sat_sub(m->pools[rec->pool].live_bytes, rec->bytes);
		m->pools[rec->pool].live_count--;
	}
	if (model_mem_class(rec->mem) == MODEL_MEM_DEVICE_SIDE) {
		uint64_t *dev = model_device_live_fast(m, rec->device);

		*dev = sat_sub(*dev, rec->bytes);
		charge(m, rec, false);
		trace_round_given_back(&m->rounds);
	}
	if (cls)
		charge_mem_sub(cls, rec->bytes);
}
