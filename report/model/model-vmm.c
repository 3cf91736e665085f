/* VMM: physical memory made by cuMemCreate, known by its handle, made
 * usable by cuMemMap at a virtual address, given back by cuMemRelease. The
 * rules (docs/report-json.md, "Memory kinds and VMM"):
 *
 * - a handle's bytes are live from its creation until it is released AND
 *   no mapping of it is left: the driver keeps released memory while it is
 *   mapped (PyTorch releases right after mapping);
 * - while mapped, its bytes belong to the stack of its first live mapping,
 *   otherwise to the stack that created it; a handle mapped twice still
 *   counts once;
 * - an unmap removes the mapping at its address; unmap_error puts back the
 *   one just removed there (and the memory, if that unmap had freed it).
 *
 * The rules are the live set's (trace/trace-live-set.c), which keeps the
 * handles and mappings; this file names a mapping's site and stack, and
 * tracks where the moment (model-moment.c) shows a handle's memory. */
#include "model-internal.h"

#include "trace-schema.h"
#include "util-mem.h"

void model_vmm_init(struct model *m)
{
	map_init(&m->vmm_shown, sizeof(uint64_t));
}

void model_vmm_fini(struct model *m)
{
	map_fini(&m->vmm_shown);
}

void model_vmm_first_map(void *ctx, const struct trace_live_alloc *a, uint64_t va)
{
	struct model *m = ctx;
	const struct model_live *rec = trace_live_payload(a);
	uint64_t *shown = map_get(&m->vmm_shown, a->address), was = shown ? *shown : 0;

	if (va == was)
		return;
	if (was)
		model_moment_map(m, was, rec, false);
	if (va)
		model_moment_map(m, va, rec, true);
	if (va)
		*(uint64_t *)xmap_put(&m->vmm_shown, a->address, NULL) = va;
	else
		map_remove(&m->vmm_shown, a->address, NULL);
}

bool model_vmm_next_shown(const struct model *m, size_t *pos, uint64_t *va,
			  const struct model_live **rec)
{
	uint64_t handle, *shown;

	while (map_next(&m->vmm_shown, pos, &handle, (void **)&shown)) {
		const struct trace_live_alloc *h = trace_live_get(&m->live, handle);

		if (!*shown || !h || h->mem != MT_MEM_VMM_PHYSICAL)
			continue;
		*va = *shown;
		*rec = trace_live_payload(h);
		return true;
	}
	return false;
}

/* The mapping's site and stack, when it maps live memory: counted in its
 * site's maps, and the holder of that memory while it is the first. */
void model_vmm_map(struct model *m, const struct trace_event *ev)
{
	uint64_t va = ev->has_address ? ev->address : 0, handle = ev->has_handle ? ev->handle : 0;
	struct trace_live_holder holder = { ev->stack, (uint64_t)MODEL_NONE << 32 | MODEL_NONE };

	if (trace_live_map_counts(&m->live, va, handle)) {
		uint32_t site = model_site_for(m, &ev->site, ev->stack);
		uint32_t stack = model_stack_for(m, ev->stack);
		struct model_site *s = &m->sites[site];

		model_stack_site(m, stack, site);
		s->maps++;
		s->mapped_bytes = sat_add(s->mapped_bytes, ev->bytes);
		holder.owner = (uint64_t)site << 32 | stack;
	}
	m->live_time_ns = ev->time_ns;
	if (!trace_live_map(&m->live, va, handle, ev->bytes, (uint64_t)ev->seq, &holder))
		out_of_memory(sizeof(holder));
}

void model_vmm_unmap(struct model *m, const struct trace_event *ev)
{
	if (!ev->has_address || ev->address == 0)
		return;
	m->live_time_ns = ev->time_ns;
	trace_live_unmap(&m->live, ev->address, (uint64_t)ev->seq);
}

/* The unmap just before failed: the mapping stays, and so does the
 * memory it held. */
void model_vmm_unmap_error(struct model *m, const struct trace_event *ev)
{
	m->unmap_errors++;
	if (!ev->has_address || ev->address == 0)
		return;
	m->live_time_ns = ev->time_ns;
	m->live_unmap_error = true;
	trace_live_unmap_error(&m->live, ev->address, (uint64_t)ev->seq, (uint64_t)ev->time_ns);
	m->live_unmap_error = false;
}
