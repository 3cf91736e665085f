/* The live set at one moment and the changes that led to it (model.h,
 * struct model_moment): what PyTorch's memory snapshot holds, for the
 * torch-snapshot export. The model tells this file every time an entry
 * of its live map or a VMM mapping comes or goes; until the moment, the
 * most recent MODEL_MOMENT_ACTIONS of them are kept in a ring, and at the
 * moment the live set is copied, by address. Nothing is done when the
 * moment is not wanted. */
#include "model-internal.h"

#include <stdlib.h>

#include "trace-schema.h"
#include "util-mem.h"

void model_moment_fini(struct model *m)
{
	free(m->moment.blocks);
	free(m->moment.actions);
	model_framework_free(&m->moment.framework);
}

static bool recording(const struct model *m)
{
	return m->moment.wanted && !m->moment.taken;
}

/* Out of line: the callers return early on most events and need no frame. */
static __attribute__((noinline)) void push(struct model *m, const struct model_action *a)
{
	struct model_moment *mo = &m->moment;

	if (!mo->actions)
		mo->actions = xcalloc(MODEL_MOMENT_ACTIONS, sizeof(*mo->actions));
	if (mo->n_actions < MODEL_MOMENT_ACTIONS) {
		mo->actions[(mo->head + mo->n_actions++) % MODEL_MOMENT_ACTIONS] = *a;
		return;
	}
	mo->actions[mo->head] = *a; /* over the oldest */
	mo->head = (mo->head + 1) % MODEL_MOMENT_ACTIONS;
	mo->actions_dropped++;
}

/* What the export shows: device-side memory with an address. A VMM
 * handle is not an address (its mappings are); CUPTI's own records have
 * no stack or stream to show. */
static bool shown(const struct model_live *rec)
{
	return model_mem_is_device(rec->mem) && rec->mem != MT_MEM_VMM_PHYSICAL && !rec->cupti;
}

void model_moment_live(struct model *m, uint64_t address, const struct model_live *rec,
		       bool live, int64_t time_ns)
{
	if (!recording(m) || !shown(rec))
		return;
	push(m, &(struct model_action){
			.seq = m->last_seq, .time_ns = time_ns, .address = address,
			.bytes = rec->bytes, .stream = rec->stream, .stack = rec->stack,
			.kind = live ? MODEL_ACTION_ALLOC : MODEL_ACTION_FREE, .mem = rec->mem,
			.device = rec->device,
		});
}

void model_moment_map(struct model *m, uint64_t va, const struct model_live *handle,
		      bool mapped)
{
	if (!recording(m))
		return;
	push(m, &(struct model_action){
			.seq = m->last_seq, .time_ns = m->last_time_ns, .address = va,
			.bytes = handle->bytes, .stack = handle->stack,
			.kind = mapped ? MODEL_ACTION_MAP : MODEL_ACTION_UNMAP,
			.mem = MT_MEM_VMM_PHYSICAL, .device = handle->device,
		});
}

void model_moment_oom(struct model *m, const struct trace_event *ev)
{
	if (!recording(m))
		return;
	push(m, &(struct model_action){
			.seq = ev->seq, .time_ns = ev->time_ns, .bytes = ev->bytes,
			.stream = ev->stream, .stack = ev->stack, .kind = MODEL_ACTION_OOM,
			.mem = ev->mem, .device = ev->device,
			.device_free = ev->device_free > 0 ? (uint64_t)ev->device_free : 0,
			.has_device_free = ev->has_device_free,
		});
}

static int cmp_block(const void *a, const void *b)
{
	const struct model_block *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

static void take(struct model *m, int64_t seq, int64_t time_ns)
{
	struct model_moment *mo = &m->moment;
	size_t n = 0, cap = m->live.by_address.count + 1;
	const struct trace_live_alloc *a;
	const struct model_live *h;
	uint64_t key;

	mo->blocks = xcalloc(cap, sizeof(*mo->blocks));
	for (size_t pos = 0; (a = trace_live_next(&m->live, &pos));) {
		const struct model_live *rec = trace_live_payload(a);

		key = a->address;
		if (!shown(rec))
			continue;
		mo->blocks[n++] = (struct model_block){
			.address = key, .bytes = rec->bytes, .stream = rec->stream,
			.stack = rec->stack, .mem = rec->mem, .device = rec->device,
			.graph = rec->mem == MT_MEM_GRAPH ? model_graph_of(m, key) : 0,
		};
	}
	for (size_t pos = 0; n < cap && model_vmm_next_shown(m, &pos, &key, &h);) {
		mo->blocks[n++] = (struct model_block){
			.address = key, .bytes = h->bytes, .stack = h->stack,
			.mem = MT_MEM_VMM_PHYSICAL, .device = h->device, .mapping = true,
		};
	}
	qsort(mo->blocks, n, sizeof(*mo->blocks), cmp_block);
	mo->n_blocks = n;
	model_torch_moment(m, &mo->framework);
	mo->taken = true;
	mo->at_seq = seq;
	mo->time_ns = time_ns;
}

void model_moment_after(struct model *m, const struct trace_event *ev)
{
	const struct model_moment *mo = &m->moment;

	if (recording(m) && ((mo->seq >= 0 && ev->seq == mo->seq) || (mo->at_mark && ev->at_mark)))
		take(m, ev->seq, ev->time_ns);
}

void model_moment_finish(struct model *m)
{
	if (recording(m))
		take(m, m->last_seq, m->last_time_ns);
}
