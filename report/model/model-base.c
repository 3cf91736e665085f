/* What the parts of the pass share, below them all (model-vmm.c,
 * model-graph.c, model-cupti.c, model-flight.c and model.c call it; it
 * calls none of them): sites, stacks and ops looked up or made, the
 * counts by kind and class, the live bytes charged to a site, a stack
 * and an op, and an entry put into the live set. The live set's hooks,
 * which reach the graphs, CUPTI and the moment, are model.c's, handed to
 * the set in model_live_init. */
#include "model-charge.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

/* The key model_site_for files an allocation at stack under. */
static inline const struct site_ref *site_key(const struct site_ref *site,
					      struct site_ref *by_stack)
{
	return site && site->kind > SITE_UNSET && site->kind < SITE_KINDS ? site : by_stack;
}

uint32_t model_site_for(struct model *m, const struct site_ref *site, int64_t stack)
{
	struct site_ref by_stack = { .kind = SITE_STACK, .id = stack };
	const struct site_ref *k = site_key(site, &by_stack);
	bool inserted;
	/* a frame index fits 32 bits (TRACE_NONE): the caller's goes above */
	uint64_t key = (uint64_t)k->id ^ ((uint64_t)k->caller << 32);
	uint32_t *idx = xmap_put(&m->site_index[k->kind], key, &inserted);

	if (inserted) {
		grow_array(&m->sites, &m->cap_sites, m->n_sites + 1, sizeof(*m->sites));
		/* born at the current epoch: it held nothing at earlier peaks or points */
		m->sites[m->n_sites] = (struct model_site){
			.key = m->n_sites + 1, .kind = k->kind, .id = k->id, .depth = k->depth, .caller = k->caller,
			.stack = stack,
			.epoch = m->peak_epoch, .points_saved = m->n_points,
		};
		*idx = (uint32_t)m->n_sites++;
	}
	return *idx;
}

uint64_t model_site_key(const struct model *m, int64_t stack)
{
	const uint32_t *idx = map_get(&m->stack_index, (uint64_t)stack);

	return idx ? m->stacks[*idx].site_key : 0;
}

void model_stack_site(struct model *m, uint32_t holder, uint32_t site)
{
	if (!m->stacks[holder].site_key)
		m->stacks[holder].site_key = m->sites[site].key;
}

uint32_t model_op_for(struct model *m, int64_t op)
{
	bool inserted;
	uint32_t *idx = xmap_put(&m->op_index, (uint64_t)op, &inserted);

	if (inserted) {
		grow_array(&m->ops, &m->cap_ops, m->n_ops + 1, sizeof(*m->ops));
		m->ops[m->n_ops] = (struct model_op){ .id = op, .epoch = m->peak_epoch };
		*idx = (uint32_t)m->n_ops++;
	}
	return *idx;
}

int model_stack_device(const struct model *m, int64_t stack)
{
	const uint32_t *idx = map_get(&m->stack_index, (uint64_t)stack);

	return idx ? m->stacks[*idx].device : MODEL_DEVICE_NONE;
}

uint32_t model_stack_for(struct model *m, int64_t stack)
{
	bool inserted;
	uint32_t *idx = xmap_put(&m->stack_index, (uint64_t)stack, &inserted);

	if (inserted) {
		grow_array(&m->stacks, &m->cap_stacks, m->n_stacks + 1, sizeof(*m->stacks));
		grow_array(&m->stack_memo, &m->cap_stack_memo, m->n_stacks + 1, sizeof(*m->stack_memo));
		m->stacks[m->n_stacks] = (struct model_stack_live){
			.stack = stack, .device = MODEL_DEVICE_NONE,
		};
		m->stack_memo[m->n_stacks] = (struct model_stack_memo){ .site = MODEL_NONE };
		*idx = (uint32_t)m->n_stacks++;
	}
	return *idx;
}

void model_site_touch(struct model *m, struct model_site *s)
{
	charge_site_touch(m, s);
}

void model_op_touch(struct model *m, struct model_op *op)
{
	charge_op_touch(m, op);
}

bool model_stack_rounds(const struct model *m, int64_t stack, bool open,
			struct trace_rounds *out)
{
	const uint32_t *idx = map_get(&m->stack_index, (uint64_t)stack);

	if (!idx) {
		*out = (struct trace_rounds){ 0 };
		return false;
	}
	return trace_round_view(&m->rounds, &m->stacks[*idx].rounds, m->stacks[*idx].bytes, open,
				out);
}

void model_live_add(struct model *m, const struct model_live *rec, int64_t time_ns)
{
	charge_live_add(m, rec, time_ns);
}

void model_live_sub(struct model *m, const struct model_live *rec)
{
	charge_live_sub(m, rec);
}

void model_live_move(struct model *m, struct model_live *rec, int64_t stack, uint32_t site,
		     uint32_t holder)
{
	if (rec->site == site && rec->holder == holder)
		return;
	charge(m, rec, false);
	rec->stack = stack;
	rec->site = site;
	rec->holder = holder;
	charge(m, rec, true);
}

void model_uncount_alloc(struct model *m, const struct model_live *rec)
{
	struct model_mem *cls = charge_class_mem(m, rec->mem);

	if (model_mem_class(rec->mem) == MODEL_MEM_UNTRACKED)
		return;
	m->kinds[rec->mem].allocations--;
	m->kinds[rec->mem].bytes_allocated = sat_sub(m->kinds[rec->mem].bytes_allocated, rec->bytes);
	if (cls) {
		cls->allocations--;
		cls->bytes_allocated = sat_sub(cls->bytes_allocated, rec->bytes);
	}
}

void model_count_free(struct model *m, int mem, int delta)
{
	struct model_mem *cls = charge_class_mem(m, mem);

	if (model_mem_class(mem) == MODEL_MEM_UNTRACKED)
		return;
	m->kinds[mem].frees += (uint64_t)(int64_t)delta;
	if (cls)
		cls->frees += (uint64_t)(int64_t)delta;
}

void model_count_trimmed(struct model *m, int mem, uint64_t allocs, uint64_t bytes, uint64_t frees)
{
	struct model_mem *cls = charge_class_mem(m, mem);
	struct model_mem *k;

	if (model_mem_class(mem) == MODEL_MEM_UNTRACKED)
		return;
	k = &m->kinds[mem];
	k->allocations = sat_add(k->allocations, allocs);
	k->bytes_allocated = sat_add(k->bytes_allocated, bytes);
	k->frees = sat_add(k->frees, frees);
	if (cls) {
		cls->allocations = sat_add(cls->allocations, allocs);
		cls->bytes_allocated = sat_add(cls->bytes_allocated, bytes);
		cls->frees = sat_add(cls->frees, frees);
	}
}

void model_site_add_stack(struct model *m, uint32_t site, uint32_t holder)
{
	bool inserted;

	xmap_put(&m->site_stacks, (uint64_t)site << 32 | holder, &inserted);
	if (inserted)
		m->sites[site].stacks++;
	model_stack_site(m, holder, site);
}

/* The op a site allocated most bytes under, and how many distinct stacks
 * allocated there: two map operations per allocation. */
static void site_extras(struct model *m, const struct model_live *rec, uint64_t bytes,
			bool pair_seen)
{
	struct model_site *s = &m->sites[rec->site];
	uint64_t *op_bytes;
	bool inserted;

	/* a pair seen before was seen here, and the holder's site kept then */
	if (!pair_seen) {
		xmap_put(&m->site_stacks, (uint64_t)rec->site << 32 | rec->holder, &inserted);
		if (inserted)
			s->stacks++;
		model_stack_site(m, rec->holder, rec->site);
	}
	if (rec->op == MODEL_NONE)
		return;
	op_bytes = xmap_put(&m->site_ops, (uint64_t)rec->site << 32 | rec->op, NULL);
	*op_bytes = sat_add(*op_bytes, bytes);
	if (!s->has_op || *op_bytes > s->op_bytes) {
		s->has_op = true;
		s->op = m->ops[rec->op].id;
		s->op_bytes = *op_bytes;
	} else if (s->op == m->ops[rec->op].id) {
		s->op_bytes = *op_bytes;
	}
}

static struct model_site_memo *site_memo(struct model *m, uint32_t slot)
{
	if (slot >= m->cap_site_memo) {
		size_t old = m->cap_site_memo;

		grow_array(&m->site_memo, &m->cap_site_memo, slot + (size_t)1, sizeof(*m->site_memo));
		memset(&m->site_memo[old], 0, (m->cap_site_memo - old) * sizeof(*m->site_memo));
	}
	return &m->site_memo[slot];
}

void model_count_alloc(struct model *m, const struct trace_event *ev, const struct site_ref *site,
		       struct model_live *rec)
{
	struct model_mem *cls = charge_class_mem(m, ev->mem);

	m->kinds[ev->mem].allocations++;
	m->kinds[ev->mem].bytes_allocated = sat_add(m->kinds[ev->mem].bytes_allocated, ev->bytes);
	if (cls) {
		cls->allocations++;
		cls->bytes_allocated = sat_add(cls->bytes_allocated, ev->bytes);
	}
	if (ev->mem == MT_MEM_POOL && ev->has_handle) {
		struct model_pool *p;

		rec->pool = model_pool_for(m, ev->handle);
		p = &m->pools[rec->pool];
		p->allocations++;
		p->bytes_allocated = sat_add(p->bytes_allocated, ev->bytes);
	}
	if (model_mem_class(ev->mem) == MODEL_MEM_DEVICE_SIDE) {
		struct site_ref by_stack = { .kind = SITE_STACK, .id = ev->stack };
		const struct site_ref *k = site_key(site, &by_stack);
		struct model_site_memo *by_site = NULL;
		struct model_stack_memo *memo;
		struct model_site *s;
		bool pair_seen;

		/* an allocation of the reader's site with its own site: what
		 * the site's first allocation resolved to, no lookup */
		if (ev->site_slot && site == &ev->site)
			by_site = site_memo(m, ev->site_slot);
		if (by_site && by_site->valid) {
			rec->holder = by_site->holder;
			rec->site = by_site->site;
			rec->op = by_site->op;
			pair_seen = true; /* in site_stacks since the first */
		} else {
			/* the stack first: its memo knows the site of its last
			 * allocation, and that (site, stack) is in site_stacks */
			rec->holder = model_stack_for(m, ev->stack);
			memo = &m->stack_memo[rec->holder];
			pair_seen = memo->site != MODEL_NONE && memo->kind == k->kind &&
				    memo->id == k->id;
			if (pair_seen) {
				rec->site = memo->site;
			} else {
				rec->site = model_site_for(m, site, ev->stack);
				*memo = (struct model_stack_memo){ .kind = k->kind, .id = k->id,
								   .site = rec->site };
			}
			if (ev->has_op && ev->kind != MT_EV_MARK)
				rec->op = model_op_for(m, ev->op);
			if (by_site)
				*by_site = (struct model_site_memo){ .valid = true, .site = rec->site,
								     .holder = rec->holder,
								     .op = rec->op };
		}
		if (rec->op != MODEL_NONE) {
			struct model_op *op = &m->ops[rec->op];

			op->total_bytes = sat_add(op->total_bytes, ev->bytes);
			op->count++;
		}
		s = &m->sites[rec->site];
		s->total_bytes = sat_add(s->total_bytes, ev->bytes);
		s->count++;
		site_extras(m, rec, ev->bytes, pair_seen);
		/* it keeps the first few a device: past them, nothing to do */
		if (ev->device < 0 || ev->device >= MODEL_DEVICE_MEMO || !m->device_memo[ev->device] ||
		    m->devices[m->device_memo[ev->device] - 1].n_early < MODEL_EARLY_ALLOCS)
			model_device_alloc(m, ev);
	}
}

/* The holder's name in the live set: its site and stack indices. */
static inline uint64_t owner_of(uint32_t site, uint32_t holder)
{
	return (uint64_t)site << 32 | holder;
}

struct model_live *model_live_insert(struct model *m, uint64_t address,
				     const struct model_live *rec, int64_t time_ns)
{
	const struct trace_live_alloc a = {
		.seq = (uint64_t)m->last_seq, .time_ns = (uint64_t)time_ns, .address = address,
		.bytes = rec->bytes, .holder = { rec->stack, owner_of(rec->site, rec->holder) },
		.mem = rec->mem,
	};

	m->live_time_ns = time_ns;
	if (!trace_live_alloc(&m->live, &a, rec))
		out_of_memory(m->live.stride);
	return m->just_live;
}
