/* The actions before the moment (model.h, struct model_moment): every
 * time an entry of the live map or a VMM mapping comes or goes, the
 * model tells this file, which keeps the most recent
 * MODEL_MOMENT_ACTIONS of them in a ring until the moment is taken
 * (model-moment.c, above model-vmm.c, which calls this). Nothing is done
 * when the moment is not wanted. */
#include "model-internal.h"

#include "trace-schema.h"
#include "util-mem.h"

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
bool model_moment_shown(const struct model_live *rec)
{
	return model_mem_is_device(rec->mem) && rec->mem != MT_MEM_VMM_PHYSICAL && !rec->cupti;
}

void model_moment_live(struct model *m, uint64_t address, const struct model_live *rec,
		       bool live, int64_t time_ns)
{
	if (!model_moment_recording(m) || !model_moment_shown(rec))
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
	if (!model_moment_recording(m))
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
	if (!model_moment_recording(m))
		return;
	push(m, &(struct model_action){
			.seq = ev->seq, .time_ns = ev->time_ns, .bytes = ev->bytes,
			.stream = ev->stream, .stack = ev->stack, .kind = MODEL_ACTION_OOM,
			.mem = ev->mem, .device = ev->device,
			.device_free = ev->device_free > 0 ? (uint64_t)ev->device_free : 0,
			.has_device_free = ev->has_device_free,
		});
}

