/* The live set at one moment (model.h, struct model_moment): what
 * PyTorch's memory snapshot holds, for the torch-snapshot export. Until
 * the moment, model-actions.c keeps the changes that lead to it; at the
 * moment the live set is copied here, by address, with the VMM handles
 * where their first mapping shows them (model-vmm.c) and the framework's
 * cache (model-torch.c). */
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

static int cmp_block(const void *a, const void *b)
{
	const struct model_block *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

static void take(struct model *m, int64_t seq, int64_t time_ns)
{
	struct model_moment *mo = &m->moment;
	size_t n = 0, cap = trace_live_count(&m->live) + 1;
	const struct trace_live_alloc *a;
	const struct model_live *h;
	uint64_t key;

	mo->blocks = xcalloc(cap, sizeof(*mo->blocks));
	for (size_t pos = 0; (a = trace_live_next(&m->live, &pos));) {
		const struct model_live *rec = trace_live_payload(a);

		key = a->address;
		if (!model_moment_shown(rec))
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

	if (model_moment_recording(m) &&
	    ((mo->seq >= 0 && ev->seq == mo->seq) || (mo->at_mark && ev->at_mark)))
		take(m, ev->seq, ev->time_ns);
}

void model_moment_finish(struct model *m)
{
	if (model_moment_recording(m))
		take(m, m->last_seq, m->last_time_ns);
}
