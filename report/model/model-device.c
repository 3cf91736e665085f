/* Devices and pools: what the trace says about each device (its size, what
 * was free at first use), the first device-side allocations on it, which
 * give the preallocation note, and the explicit memory pools. */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

void model_device_init(struct model *m)
{
	map_init(&m->device_index, sizeof(uint32_t));
	map_init(&m->pool_index, sizeof(uint32_t));
}

void model_device_fini(struct model *m)
{
	free(m->devices);
	free(m->pools);
	map_fini(&m->device_index);
	map_fini(&m->pool_index);
}

struct model_device *model_device_for(struct model *m, int id)
{
	bool inserted;
	uint32_t *idx;

	if (id < 0)
		return NULL;
	/* every allocation and free asks: the few small ids skip the map */
	if (id < MODEL_DEVICE_MEMO && m->device_memo[id])
		return &m->devices[m->device_memo[id] - 1];
	idx = xmap_put(&m->device_index, (uint64_t)id, &inserted);
	if (inserted) {
		grow_array(&m->devices, &m->cap_devices, m->n_devices + 1, sizeof(*m->devices));
		m->devices[m->n_devices] = (struct model_device){ .id = id };
		*idx = (uint32_t)m->n_devices++;
	}
	if (id < MODEL_DEVICE_MEMO)
		m->device_memo[id] = *idx + 1;
	return &m->devices[*idx];
}

uint64_t *model_device_live(struct model *m, int id)
{
	struct model_device *d = model_device_for(m, id);

	return d ? &d->live_bytes : &m->unknown_device_live;
}

void model_device_info(struct model *m, int device, uint64_t total, bool has_free,
		       uint64_t free_at_first_use)
{
	struct model_device *d = model_device_for(m, device);

	if (!d)
		return;
	d->has_info = true;
	d->has_total = total > 0;
	d->total = total;
	d->has_free = has_free;
	d->free_at_first_use = has_free ? free_at_first_use : 0;
}

void model_device_event(struct model *m, const struct trace_event *ev)
{
	/* the handle column holds what was free: a size, so not negative */
	bool has_free = ev->has_handle && (int64_t)ev->handle >= 0;

	model_device_info(m, ev->device, ev->bytes, has_free, ev->handle);
}

void model_device_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_device *d = model_device_for(m, ev->device);

	if (!d || d->n_early == MODEL_EARLY_ALLOCS)
		return;
	d->early[d->n_early++] = (struct model_early_alloc){
		.seq = ev->seq, .time_ns = ev->time_ns, .api = ev->api, .stack = ev->stack,
		.bytes = ev->bytes, .mem = (int)ev->mem,
	};
}

void model_device_oom(struct model *m, const struct trace_event *ev)
{
	struct model_device *d = model_device_for(m, ev->device);

	if (d && !d->has_total && ev->has_device_total && ev->device_total > 0) {
		d->has_total = true;
		d->total = (uint64_t)ev->device_total;
	}
}

/* ---- pools ------------------------------------------------------------ */

static uint32_t pool_new(struct model *m, uint64_t handle)
{
	grow_array(&m->pools, &m->cap_pools, m->n_pools + 1, sizeof(*m->pools));
	m->pools[m->n_pools] = (struct model_pool){ .handle = handle };
	*(uint32_t *)xmap_put(&m->pool_index, handle, NULL) = (uint32_t)m->n_pools;
	return (uint32_t)m->n_pools++;
}

uint32_t model_pool_for(struct model *m, uint64_t handle)
{
	const uint32_t *idx = map_get(&m->pool_index, handle);

	return idx ? *idx : pool_new(m, handle);
}

void model_pool_event(struct model *m, const struct trace_event *ev)
{
	const uint32_t *idx;
	struct model_pool *p;
	uint32_t i;

	if (!ev->has_handle)
		return;
	switch (ev->kind) {
	case MT_EV_POOL_CREATE:
		/* a handle comes back after its pool was destroyed: a new pool */
		idx = map_get(&m->pool_index, ev->handle);
		i = idx && !m->pools[*idx].destroyed && !m->pools[*idx].created
			    ? *idx
			    : pool_new(m, ev->handle);
		p = &m->pools[i];
		p->created = true;
		p->created_stack = ev->stack;
		break;
	case MT_EV_POOL_DESTROY:
		i = model_pool_for(m, ev->handle); /* may move m->pools */
		m->pools[i].destroyed = true;
		break;
	case MT_EV_POOL_TRIM:
		i = model_pool_for(m, ev->handle);
		m->pools[i].trims++;
		break;
	}
}

/* ---- at the end ------------------------------------------------------- */

static int cmp_device(const void *a, const void *b)
{
	const struct model_device *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_note(const void *a, const void *b)
{
	const struct model_note *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A framework that preallocates takes one huge block early: the first
 * of the device's first MODEL_EARLY_ALLOCS device-side allocations that is
 * at least MODEL_ARENA_SHARE of the device (JAX takes 75 % of it,
 * TensorFlow nearly all that is free) and the first of its kind there
 * (trace_cause_arena_first). A caching allocator that grows its segments
 * on demand (PyTorch's first ones: 2 MiB, 20 MiB, then what a large tensor
 * asks, such as 512 MiB of a 1 GiB device) is no arena, nor is an arena
 * that grew region by region to its limit (JAX with
 * XLA_PYTHON_CLIENT_PREALLOCATE=false: 2, 4, 8, 16 MiB, then 738 MiB). */
static bool first_of_kind(const struct model_device *d, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (d->early[j].mem == d->early[i].mem)
			return false;
	}
	return true;
}

static void note_preallocation(struct model *m, const struct model_device *d)
{
	if (!d->has_total)
		return;
	for (size_t i = 0; i < d->n_early; i++) {
		const struct model_early_alloc *e = &d->early[i];

		if ((double)e->bytes < MODEL_ARENA_SHARE * (double)d->total)
			continue;
		if (!first_of_kind(d, i))
			return;
		m->notes[m->n_notes++] = (struct model_note){
			.kind = MODEL_NOTE_PREALLOCATION, .seq = e->seq, .time_ns = e->time_ns,
			.api = e->api, .stack = e->stack, .device = d->id, .bytes = e->bytes,
			.device_total = d->total,
		};
		return;
	}
}

void model_device_finish(struct model *m)
{
	/* indices in device_index are dead from here on */
	memset(m->device_memo, 0, sizeof(m->device_memo));
	if (m->n_devices)
		qsort(m->devices, m->n_devices, sizeof(*m->devices), cmp_device);
	m->notes = xcalloc(m->n_devices + 1, sizeof(*m->notes));
	for (size_t i = 0; i < m->n_devices; i++)
		note_preallocation(m, &m->devices[i]);
	qsort(m->notes, m->n_notes, sizeof(*m->notes), cmp_note);
}
