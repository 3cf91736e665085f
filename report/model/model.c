/* One ordered pass over the events (see model.h). Per event this does a
 * constant number of hash-map operations and no allocation beyond the
 * amortized growth of the maps, so 10M-event traces stay fast. VMM
 * mappings are in model-vmm.c, devices and pools in model-device.c, CUDA
 * graphs in model-graph.c, CUPTI's records in model-cupti.c, marks and
 * growth in model-points.c. */
#include "model-internal.h"
#include "model-timeline.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

enum mem_class { MEM_UNTRACKED, MEM_DEVICE_SIDE, MEM_HOST, MEM_APART };

static enum mem_class mem_class(int mem)
{
	if (model_mem_is_device(mem)) /* graph memory: live only while physical (model-graph.c) */
		return MEM_DEVICE_SIDE;
	switch (mem) {
	case MT_MEM_HOST_PINNED:
		return MEM_HOST;
	case MT_MEM_VMM_RESERVED:
	case MT_MEM_IMPORTED:
	case MT_MEM_HOST_REGISTERED:
		return MEM_APART;
	}
	return MEM_UNTRACKED;
}

/* The class total a kind adds to, or NULL for the kinds listed apart. */
static struct model_mem *class_mem(struct model *m, int mem)
{
	switch (mem_class(mem)) {
	case MEM_DEVICE_SIDE: return &m->device;
	case MEM_HOST: return &m->host;
	default: return NULL;
	}
}

void model_init(struct model *m)
{
	*m = (struct model){ 0 };
	for (size_t i = 0; i < SITE_KINDS; i++)
		map_init(&m->site_index[i], sizeof(uint32_t));
	map_init(&m->site_stacks, 0);
	map_init(&m->site_ops, sizeof(uint64_t));
	map_init(&m->stack_index, sizeof(uint32_t));
	map_init(&m->op_index, sizeof(uint32_t));
	model_live_init(m);
	model_vmm_init(m);
	model_device_init(m);
	model_points_init(m);
	model_graph_init(m);
	model_cupti_init(m);
}

void model_fini(struct model *m)
{
	model_moment_fini(m);
	for (size_t i = 0; i < m->n_ooms; i++) {
		free(m->ooms[i].holders);
		model_framework_free(&m->ooms[i].framework);
	}
	free(m->ooms);
	model_torch_fini(m);
	for (size_t i = 0; i < m->n_sites; i++)
		free(m->sites[i].runs);
	free(m->sites);
	free(m->stacks);
	free(m->stack_memo);
	free(m->site_memo);
	free(m->ops);
	free(m->leaks);
	free(m->notes);
	model_vmm_fini(m);
	model_device_fini(m);
	model_points_fini(m);
	model_graph_fini(m);
	model_cupti_fini(m);
	for (size_t i = 0; i < SITE_KINDS; i++)
		map_fini(&m->site_index[i]);
	map_fini(&m->site_stacks);
	map_fini(&m->site_ops);
	map_fini(&m->stack_index);
	map_fini(&m->op_index);
	trace_live_fini(&m->live);
	*m = (struct model){ 0 };
}

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
	uint32_t *idx = map_put(&m->site_index[k->kind], key, &inserted);

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
	uint32_t *idx = map_put(&m->op_index, (uint64_t)op, &inserted);

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
	uint32_t *idx = map_put(&m->stack_index, (uint64_t)stack, &inserted);

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

/* The lazy epoch trick: a new device peak bumps peak_epoch instead of
 * copying every site's live bytes. A site whose epoch is older has not
 * changed since that peak, so its live bytes are still what it held then:
 * save them before the first change. model_finish does the same for sites
 * that never changed again. */
static void site_touch(struct model *m, struct model_site *s)
{
	if (trace_live_touch(m->peak_epoch, &s->epoch)) {
		s->at_peak = s->live;
		s->at_peak_count = s->live_count;
	}
}

static void op_touch(struct model *m, struct model_op *op)
{
	if (trace_live_touch(m->peak_epoch, &op->epoch))
		op->at_peak = op->live;
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

/* rec's bytes to (add) or from its site, holder stack and op. Inline: once
 * an allocation and once a free, in model_live_add and _sub. */
static inline __attribute__((always_inline)) void charge(struct model *m,
							  const struct model_live *rec, bool add)
{
	struct model_site *s = &m->sites[rec->site];
	struct model_stack_live *st = &m->stacks[rec->holder];
	struct model_op *op = rec->op != MODEL_NONE ? &m->ops[rec->op] : NULL;

	site_touch(m, s);
	if (s->points_saved < m->n_points) /* model_points_touch has work */
		model_points_touch(m, s);
	if (op)
		op_touch(m, op);
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
static bool mem_add(struct model_mem *mm, uint64_t bytes, int64_t time_ns)
{
	mm->live_bytes = sat_add(mm->live_bytes, bytes);
	mm->live_count++;
	if (mm->live_bytes <= mm->peak_bytes)
		return false;
	mm->peak_bytes = mm->live_bytes;
	mm->peak_time_ns = time_ns;
	return true;
}

static void mem_sub(struct model_mem *mm, uint64_t bytes)
{
	mm->live_bytes = sat_sub(mm->live_bytes, bytes);
	mm->live_count--;
}

/* model_live_add and _sub inline, for the model's own allocations and
 * frees: a call less an event. */
static inline __attribute__((always_inline)) void live_add(struct model *m,
							    const struct model_live *rec,
							    int64_t time_ns)
{
	struct model_mem *cls = class_mem(m, rec->mem);

	if (mem_class(rec->mem) == MEM_UNTRACKED)
		return;
	mem_add(&m->kinds[rec->mem], rec->bytes, time_ns);
	if (rec->pool != MODEL_NONE) {
		m->pools[rec->pool].live_bytes = sat_add(m->pools[rec->pool].live_bytes, rec->bytes);
		m->pools[rec->pool].live_count++;
	}
	if (mem_class(rec->mem) == MEM_DEVICE_SIDE) {
		uint64_t *dev = model_device_live_fast(m, rec->device);

		trace_round_next(&m->rounds); /* the first allocation after a free */
		*dev = sat_add(*dev, rec->bytes);
		charge(m, rec, true); /* before the epoch moves on */
	}
	if (cls && mem_add(cls, rec->bytes, time_ns) && cls == &m->device)
		m->peak_epoch++;
}

static inline __attribute__((always_inline)) void live_sub(struct model *m,
							    const struct model_live *rec)
{
	struct model_mem *cls = class_mem(m, rec->mem);

	if (mem_class(rec->mem) == MEM_UNTRACKED)
		return;
	mem_sub(&m->kinds[rec->mem], rec->bytes);
	if (rec->pool != MODEL_NONE) {
		m->pools[rec->pool].live_bytes = sat_sub(m->pools[rec->pool].live_bytes, rec->bytes);
		m->pools[rec->pool].live_count--;
	}
	if (mem_class(rec->mem) == MEM_DEVICE_SIDE) {
		uint64_t *dev = model_device_live_fast(m, rec->device);

		*dev = sat_sub(*dev, rec->bytes);
		charge(m, rec, false);
		trace_round_given_back(&m->rounds);
	}
	if (cls)
		mem_sub(cls, rec->bytes);
}

void model_live_add(struct model *m, const struct model_live *rec, int64_t time_ns)
{
	live_add(m, rec, time_ns);
}

void model_live_sub(struct model *m, const struct model_live *rec)
{
	live_sub(m, rec);
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
	struct model_mem *cls = class_mem(m, rec->mem);

	if (mem_class(rec->mem) == MEM_UNTRACKED)
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
	struct model_mem *cls = class_mem(m, mem);

	if (mem_class(mem) == MEM_UNTRACKED)
		return;
	m->kinds[mem].frees += (uint64_t)(int64_t)delta;
	if (cls)
		cls->frees += (uint64_t)(int64_t)delta;
}

void model_count_trimmed(struct model *m, int mem, uint64_t allocs, uint64_t bytes, uint64_t frees)
{
	struct model_mem *cls = class_mem(m, mem);
	struct model_mem *k;

	if (mem_class(mem) == MEM_UNTRACKED)
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

	map_put(&m->site_stacks, (uint64_t)site << 32 | holder, &inserted);
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
		map_put(&m->site_stacks, (uint64_t)rec->site << 32 | rec->holder, &inserted);
		if (inserted)
			s->stacks++;
		model_stack_site(m, rec->holder, rec->site);
	}
	if (rec->op == MODEL_NONE)
		return;
	op_bytes = map_put(&m->site_ops, (uint64_t)rec->site << 32 | rec->op, NULL);
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
	struct model_mem *cls = class_mem(m, ev->mem);

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
	if (mem_class(ev->mem) == MEM_DEVICE_SIDE) {
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

/* ---- the live set's changes (trace/trace-live-set.h's hooks) ---- */

static inline struct model_live *rec_of(const struct trace_live_alloc *a)
{
	return trace_live_payload(a);
}

/* The holder's name in the live set: its site and stack indices. */
static inline uint64_t owner_of(uint32_t site, uint32_t holder)
{
	return (uint64_t)site << 32 | holder;
}

static void became_live(void *ctx, struct trace_live_alloc *a, enum trace_live_why why)
{
	struct model *m = ctx;
	struct model_live *rec = rec_of(a);

	m->just_live = rec;
	if (why == TRACE_LIVE_RESTORED)
		model_count_free(m, rec->mem, -1);
	live_add(m, rec, m->live_time_ns);
	if (m->live_unmap_error)
		return; /* a handle an unmap had freed: its mappings show it */
	model_moment_live(m, a->address, rec, true, m->live_time_ns);
	if (why != TRACE_LIVE_RESTORED)
		return;
	/* a free_error: what the free did is undone */
	if (rec->mem == MT_MEM_GRAPH)
		model_graph_freed(m, a->address, false);
	else if (rec->mem == MT_MEM_DEVICE && m->graphs.segments)
		model_graph_device_freed(m, a->address, false);
	model_cupti_hooked_free(m, a->address, m->live_time_ns, true);
}

static void became_gone(void *ctx, const struct trace_live_alloc *a, enum trace_live_why why)
{
	struct model *m = ctx;
	struct model_live rec = *rec_of(a);

	if (rec.mem == MT_MEM_VMM_PHYSICAL)
		map_remove(&m->vmm_shown, a->address, NULL);
	if (why == TRACE_LIVE_REUSED) {
		/* a free memtrace did not see: out of the timeline's tables
		 * here (a free seen left them before the free) */
		if (m->timeline)
			model_timeline_forget(m->timeline, &rec);
	} else {
		model_count_free(m, rec.mem, 1);
	}
	if (why == TRACE_LIVE_FREED && m->oom_open && model_mem_is_device(rec.mem)) {
		m->oom_released_bytes += rec.bytes;
		m->oom_released_count++;
	}
	live_sub(m, &rec);
	if (why == TRACE_LIVE_UNMAPPED)
		return;
	model_moment_live(m, a->address, &rec, false, m->live_time_ns);
	if (why == TRACE_LIVE_DROPPED)
		return; /* graph memory its graph freed (model-graph.c) */
	if (rec.mem == MT_MEM_GRAPH)
		model_graph_freed(m, a->address, true);
	else if (rec.mem == MT_MEM_DEVICE && m->graphs.segments)
		model_graph_device_freed(m, a->address, true);
	if (why == TRACE_LIVE_FREED)
		model_cupti_hooked_free(m, a->address, m->live_time_ns, false);
}

/* A mapped handle's bytes go to the stack of its first live mapping, or
 * back to its creator: the totals and the peak do not change, the sites
 * and stacks do. */
static void moved(void *ctx, const struct trace_live_alloc *a,
		  const struct trace_live_holder *before)
{
	(void)before;
	model_live_move(ctx, rec_of(a), a->holder.stack, (uint32_t)(a->holder.owner >> 32),
			(uint32_t)a->holder.owner);
}

void model_live_init(struct model *m)
{
	const struct trace_live_hooks hooks = {
		.ctx = m, .live = became_live, .gone = became_gone, .moved = moved,
		.first_map = model_vmm_first_map,
	};

	if (!trace_live_init_payload(&m->live, &hooks, sizeof(struct model_live)))
		out_of_memory(sizeof(struct model_live));
}

/* The set's counters are the model's: what a free or map found. */
static void live_counts(struct model *m)
{
	m->unmatched_frees = m->live.unmatched_frees;
	m->unmatched_maps = m->live.unmatched_maps;
	m->unmatched_unmaps = m->live.unmatched_unmaps;
	m->reused_addresses = m->live.reused;
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

static void on_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_live rec = {
		.bytes = ev->bytes, .stream = ev->stream, .stack = ev->stack, .mem = ev->mem,
		.device = ev->device, .site = MODEL_NONE, .holder = MODEL_NONE, .pool = MODEL_NONE,
		.op = MODEL_NONE,
	};
	struct model_live *live;

	/* cudaMalloc of 0 bytes returns NULL: nothing to track */
	if (!ev->has_address || ev->address == 0 || mem_class(ev->mem) == MEM_UNTRACKED) {
		if (ev->bytes > 0)
			m->untracked_allocs++;
		return;
	}
	if (ev->mem == MT_MEM_GRAPH) {
		model_graph_alloc(m, ev); /* not memory until a launch */
		return;
	}
	if (m->oom_open && ev->thread == m->oom_thread)
		m->oom_open = false; /* the thread went on: the episode ended */
	model_count_alloc(m, ev, &ev->site, &rec);
	live = model_live_insert(m, ev->address, &rec, ev->time_ns);
	if (m->timeline_on)
		model_timeline_alloc(m->timeline, live, ev);
	if (ev->mem == MT_MEM_DEVICE && m->graphs.capturing)
		model_graph_device_alloc(m, ev);
	model_cupti_hooked(m, ev);
}

static void on_free(struct model *m, const struct trace_event *ev)
{
	struct trace_live_alloc *live, out;

	/* cudaFree(NULL) is a no-op (and a common way to create a context) */
	if (!ev->has_address || ev->address == 0)
		return;
	live = trace_live_get(&m->live, ev->address);
	if (!live && model_graph_known(m, ev->address))
		return; /* graph memory that no launch made physical */
	/* out of the timeline's tables at its free, even a VMM handle whose
	 * memory lives on while mapped (the tables count allocations) */
	if (live && m->timeline)
		model_timeline_forget(m->timeline, rec_of(live));
	/* the rest is the live set's rules and hooks (became_gone): a
	 * mapped handle's release keeps its memory until unmapped */
	m->live_time_ns = ev->time_ns;
	trace_live_free(&m->live, ev->address, &out);
}

/* The free recorded just before (on that thread) failed: the live set
 * undoes it (became_live). */
static void on_free_error(struct model *m, const struct trace_event *ev)
{
	struct trace_live_alloc found;

	m->free_errors++;
	if (!ev->has_address || ev->address == 0)
		return;
	m->live_time_ns = ev->time_ns;
	trace_live_free_error(&m->live, ev->address, (uint64_t)ev->seq, (uint64_t)ev->time_ns,
			      &found);
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

	o->holders = xcalloc(m->n_stacks, sizeof(*o->holders));
	for (size_t i = 0; i < m->n_stacks; i++) {
		const struct model_stack_live *st = &m->stacks[i];

		if (st->count == 0)
			continue;
		o->holders[n] = (struct model_group){
			.stack = st->stack, .bytes = st->bytes, .count = st->count,
		};
		model_stack_rounds(m, st->stack, false, &o->holders[n].rounds);
		o->round_bytes = sat_add(o->round_bytes, o->holders[n].rounds.open_bytes);
		n++;
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

/* What the device had in use that the process's own device-side
 * allocations on it do not explain: contexts, other processes, libraries'
 * workspaces. Allocations on an unknown device count as on this one. */
static void oom_unexplained(struct model *m, struct model_oom *o)
{
	uint64_t used, ours;

	if (!o->has_device_free || !o->has_device_total || o->device_total < 0)
		return;
	used = sat_sub((uint64_t)o->device_total,
		       o->device_free < 0 ? 0 : (uint64_t)o->device_free);
	if (o->device >= 0)
		ours = sat_add(*model_device_live(m, o->device), m->unknown_device_live);
	else
		ours = m->device.live_bytes;
	/* the graph pools' physical memory is the process's too */
	ours = sat_add(ours, model_graph_reserved_on(m, o->device));
	o->has_unexplained = true;
	o->unexplained_bytes = sat_sub(used, ours);
}

static void on_oom(struct model *m, const struct trace_event *ev)
{
	struct model_oom *o;

	grow_array(&m->ooms, &m->cap_ooms, m->n_ooms + 1, sizeof(*m->ooms));
	o = &m->ooms[m->n_ooms];
	*o = (struct model_oom){
		.seq = ev->seq, .time_ns = ev->time_ns, .api = ev->api, .device = ev->device,
		.stack = ev->stack, .requested = ev->bytes, .mem = ev->mem,
		.live_bytes = m->device.live_bytes, .live_count = m->device.live_count,
		.cupti_alone_bytes = m->cupti.alone_live_bytes,
		.has_device_free = ev->has_device_free, .device_free = ev->device_free,
		.has_device_total = ev->has_device_total, .device_total = ev->device_total,
	};
	if (m->n_ooms > 0 && m->oom_open && ev->thread == m->oom_thread) {
		const struct model_oom *prev = &m->ooms[m->n_ooms - 1];

		if (prev->api == o->api && prev->requested == o->requested &&
		    prev->device == o->device && prev->mem == o->mem) {
			o->retry_of = prev->retry_of ? prev->retry_of : prev->seq;
			o->released_bytes = m->oom_released_bytes;
			o->released_count = m->oom_released_count;
		}
	}
	if (!o->retry_of)
		m->n_oom_episodes++;
	m->oom_open = true;
	m->oom_thread = ev->thread;
	m->oom_released_bytes = m->oom_released_count = 0;
	o->round = trace_round_at_oom(&m->rounds);
	o->has_request_rounds = model_stack_rounds(m, ev->stack, false, &o->request_rounds);
	oom_unexplained(m, o);
	model_device_oom(m, ev);
	maybe_snapshot(m, m->n_ooms);
	model_moment_oom(m, ev);
	model_torch_at_oom(m, o);
	m->n_ooms++;
}

/* The allocator gave up with no CUDA call failing since its last OOM (a
 * limit of its own: set_per_process_memory_fraction): an OOM of its own,
 * of the tensor's request. The device's free memory is not known: the
 * action's address field did not hold it under a fraction in the tests. */
static void on_tensor_oom(struct model *m, const struct trace_event *ev)
{
	if (model_torch_oom_alone(m)) {
		struct trace_event o = *ev;

		o.mem = MT_MEM_DEVICE;
		o.has_device_free = o.has_device_total = false;
		on_oom(m, &o);
	}
	model_torch_event(m, ev);
}

static void on_mark(struct model *m, const struct trace_event *ev)
{
	model_points_add(m, MODEL_POINT_MARK, ev);
	model_cupti_mark(m, ev);
	if (ev->at_mark)
		model_graph_at_mark(m, ev);
}

void model_feed(struct model *m, const struct trace_event *ev)
{
	if (m->finished)
		return;
	m->events++;
	/* a flight trace's timeline starts with its ring */
	m->timeline_on = m->timeline && ev->seq >= m->timeline_from_seq;
	if (m->timeline_on)
		model_timeline_feed(m->timeline, m, ev);
	else if (m->timeline)
		model_timeline_mark(m->timeline, ev); /* the writer kept it */
	if (ev->time_ns > m->last_time_ns)
		m->last_time_ns = ev->time_ns;
	m->last_seq = ev->seq;
	if (ev->source == MT_SOURCE_CUPTI && ev->kind != MT_EV_MARK) {
		model_cupti_event(m, ev); /* a witness, not an event of its own */
		return;
	}
	model_points_feed(m, ev);
	switch (ev->kind) {
	case MT_EV_ALLOC: on_alloc(m, ev); break;
	case MT_EV_FREE: on_free(m, ev); break;
	case MT_EV_OOM: on_oom(m, ev); break;
	case MT_EV_ALLOC_ERROR: m->alloc_errors++; break;
	case MT_EV_FREE_ERROR: on_free_error(m, ev); break;
	case MT_EV_MAP: model_vmm_map(m, ev); break;
	case MT_EV_UNMAP: model_vmm_unmap(m, ev); break;
	case MT_EV_UNMAP_ERROR: model_vmm_unmap_error(m, ev); break;
	case MT_EV_POOL_CREATE:
	case MT_EV_POOL_DESTROY:
	case MT_EV_POOL_TRIM: model_pool_event(m, ev); break;
	case MT_EV_DEVICE: model_device_event(m, ev); break;
	case MT_EV_MARK: on_mark(m, ev); break;
	case MT_EV_GRAPH_CREATE:
	case MT_EV_GRAPH_CLONE:
	case MT_EV_GRAPH_DESTROY:
	case MT_EV_EXEC_CREATE:
	case MT_EV_EXEC_DESTROY:
		model_cupti_graph_hooked(m, ev);
		model_graph_event(m, ev);
		break;
	case MT_EV_GRAPH_LAUNCH:
	case MT_EV_GRAPH_UPLOAD:
	case MT_EV_CAPTURE_BEGIN:
	case MT_EV_CAPTURE_END:
	case MT_EV_GRAPH_MEM_TRIM:
	case MT_EV_GRAPH_FREE_NODE:
	case MT_EV_CAPTURE_JOIN: model_graph_event(m, ev); break;
	case MT_EV_TENSOR_ALLOC:
	case MT_EV_TENSOR_FREE_REQUESTED:
	case MT_EV_TENSOR_FREE:
	case MT_EV_CACHE_SEGMENT_ALLOC:
	case MT_EV_CACHE_SEGMENT_FREE:
	case MT_EV_CACHE_SEGMENT_MAP:
	case MT_EV_CACHE_SEGMENT_UNMAP: model_torch_event(m, ev); break;
	case MT_EV_TENSOR_OOM: on_tensor_oom(m, ev); break;
	default: m->unknown_events++; break;
	}
	live_counts(m);
	if (m->moment.wanted)
		model_moment_after(m, ev);
}

static void prefetch_charged(const struct model *m, uint32_t site, uint32_t holder)
{
	if (site < m->n_sites) {
		/* the fields charge changes, at the struct's start */
		__builtin_prefetch(&m->sites[site]);
		__builtin_prefetch((const char *)&m->sites[site] + 63);
	}
	if (holder < m->n_stacks) {
		__builtin_prefetch(&m->stacks[holder]);
		__builtin_prefetch((const char *)&m->stacks[holder] + sizeof(*m->stacks) - 1);
	}
}

void model_prefetch(const struct model *m, const struct trace_event *ev, bool near)
{
	const struct model_site_memo *memo;

	if (!ev->has_address)
		return;
	if (!near) {
		trace_live_prefetch(&m->live, ev->address);
		if (ev->site_slot < m->cap_site_memo)
			__builtin_prefetch(&m->site_memo[ev->site_slot]);
		if (m->timeline && ev->site_slot < m->timeline->cap_site_slots)
			__builtin_prefetch(&m->timeline->site_slots[ev->site_slot]);
		return;
	}
	if (ev->kind == MT_EV_FREE) {
		const struct trace_live_alloc *a = trace_live_get(&m->live, ev->address);

		if (a) {
			__builtin_prefetch(a);
			__builtin_prefetch((const char *)a + m->live.stride - 1);
		}
		return;
	}
	if (ev->site_slot >= m->cap_site_memo)
		return;
	memo = &m->site_memo[ev->site_slot];
	if (memo->valid)
		prefetch_charged(m, memo->site, memo->holder);
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
	struct model_group *g =
		xcalloc(m->live.by_address.count + model_cupti_alone_live(m) + 1, sizeof(*g));
	struct trace_live_alloc *a;
	size_t n = 0, out = 0;

	for (size_t pos = 0; (a = trace_live_next(&m->live, &pos));) {
		const struct model_live *rec = rec_of(a);

		if (mem_class(rec->mem) != MEM_UNTRACKED)
			g[n++] = (struct model_group){
				.stack = rec->stack, .bytes = rec->bytes, .count = 1, .mem = rec->mem,
			};
	}
	n += model_cupti_leaks(m, g + n);
	qsort(g, n, sizeof(*g), cmp_live_by_stack);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && cmp_live_by_stack(&g[out - 1], &g[i]) == 0) {
			g[out - 1].bytes = sat_add(g[out - 1].bytes, g[i].bytes);
			g[out - 1].count++;
		} else {
			g[out++] = g[i];
		}
	}
	for (size_t i = 0; i < out; i++)
		model_stack_rounds(m, g[i].stack, true, &g[i].rounds);
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
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

static int cmp_op(const void *a, const void *b)
{
	const struct model_op *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	if (x->total_bytes != y->total_bytes)
		return x->total_bytes > y->total_bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void model_finish(struct model *m)
{
	if (m->finished)
		return;
	live_counts(m);
	model_moment_finish(m); /* the live set as the trace left it */
	model_torch_finish(m);
	model_cupti_finish(m); /* before the graphs: CUPTI's own go to them */
	model_graph_finish(m);
	model_points_close(m);
	for (size_t i = 0; i < m->n_sites; i++) {
		site_touch(m, &m->sites[i]);
		model_points_touch(m, &m->sites[i]);
	}
	for (size_t i = 0; i < m->n_ops; i++)
		op_touch(m, &m->ops[i]);
	if (m->flight)
		model_flight_finish(m); /* what left a flight trace's ring */
	/* indices into sites and ops held by live records are dead from here on */
	if (m->n_sites) /* qsort wants an array, even an empty one */
		qsort(m->sites, m->n_sites, sizeof(*m->sites), cmp_site);
	if (m->n_ops)
		qsort(m->ops, m->n_ops, sizeof(*m->ops), cmp_op);
	map_fini(&m->site_stacks);
	map_fini(&m->site_ops);
	build_leaks(m);
	model_device_finish(m);
	model_points_finish(m);
	m->finished = true;
}
