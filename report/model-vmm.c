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
 *   one just removed there (and the memory, if that unmap had freed it). */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

struct vmm_ref {
	int64_t seq;
	uint64_t va;
};

struct model_vmm {
	int64_t create_stack;
	uint32_t create_site, create_holder;
	bool released;
	/* where the moment (model-moment.c) shows the handle's memory: its
	 * first live mapping's address, 0 while it has none */
	uint64_t shown_va;
	struct vmm_ref *maps; /* its live mappings, oldest first */
	size_t n_maps, cap_maps;
};

struct model_mapping {
	uint64_t handle, bytes;
	int64_t stack, seq;
	uint32_t site, holder;
	bool counted; /* its handle was a live vmm_physical allocation */
};

struct model_recent_unmap {
	uint64_t va;
	struct model_mapping mapping;
	bool valid, unmatched;
	bool freed; /* the unmap freed its released handle, which was: */
	struct model_live handle_rec;
};

void model_vmm_init(struct model *m)
{
	map_init(&m->vmm, sizeof(struct model_vmm));
	map_init(&m->maps, sizeof(struct model_mapping));
	m->recent_unmaps = xcalloc(MODEL_RECENT_FREES, sizeof(*m->recent_unmaps));
}

void model_vmm_fini(struct model *m)
{
	struct model_vmm *v;

	for (size_t pos = 0; map_next(&m->vmm, &pos, NULL, (void **)&v);)
		free(v->maps);
	map_fini(&m->vmm);
	map_fini(&m->maps);
	free(m->recent_unmaps);
}

void model_vmm_created(struct model *m, uint64_t handle, const struct model_live *rec,
		       bool released)
{
	bool inserted;
	struct model_vmm *v = map_put(&m->vmm, handle, &inserted);

	if (!inserted)
		free(v->maps);
	*v = (struct model_vmm){
		.create_stack = rec->stack, .create_site = rec->site,
		.create_holder = rec->holder, .released = released,
	};
}

void model_vmm_forget(struct model *m, uint64_t handle)
{
	struct model_vmm v;

	if (map_remove(&m->vmm, handle, &v))
		free(v.maps);
}

int model_vmm_release(struct model *m, uint64_t handle)
{
	struct model_vmm *v = map_get(&m->vmm, handle);

	if (!v || v->n_maps == 0)
		return VMM_FREE_NOW;
	if (v->released)
		return VMM_ALREADY_RELEASED;
	v->released = true;
	return VMM_KEPT;
}

void model_vmm_unrelease(struct model *m, uint64_t handle)
{
	struct model_vmm *v = map_get(&m->vmm, handle);

	if (v)
		v->released = false;
}

/* Give the handle's bytes to its first live mapping, or to its creator;
 * the moment sees the memory move to that mapping's address. */
static void update_owner(struct model *m, uint64_t handle, struct model_vmm *v)
{
	struct model_live *rec = map_get(&m->live, handle);
	const struct model_mapping *mp;
	uint64_t va = v->n_maps ? v->maps[0].va : 0;

	if (!rec || rec->mem != MT_MEM_VMM_PHYSICAL)
		return;
	if (v->n_maps && (mp = map_get(&m->maps, v->maps[0].va)))
		model_live_move(m, rec, mp->stack, mp->site, mp->holder);
	else
		model_live_move(m, rec, v->create_stack, v->create_site, v->create_holder);
	if (va == v->shown_va)
		return;
	if (v->shown_va)
		model_moment_map(m, v->shown_va, rec, false);
	if (va)
		model_moment_map(m, va, rec, true);
	v->shown_va = va;
}

static void attach(struct model *m, uint64_t handle, uint64_t va, int64_t seq)
{
	struct model_vmm *v = map_get(&m->vmm, handle);
	size_t i;

	if (!v)
		return;
	grow_array(&v->maps, &v->cap_maps, v->n_maps + 1, sizeof(*v->maps));
	/* in seq order: an unmap_error puts an older mapping back */
	for (i = v->n_maps; i > 0 && v->maps[i - 1].seq > seq; i--)
		v->maps[i] = v->maps[i - 1];
	v->maps[i] = (struct vmm_ref){ .seq = seq, .va = va };
	v->n_maps++;
	update_owner(m, handle, v);
}

/* Drop the mapping at va from its handle; true when that freed the
 * handle's memory (released, and this was its last mapping): *freed is
 * then the record that was live. */
static bool detach(struct model *m, uint64_t handle, uint64_t va, struct model_live *freed)
{
	struct model_vmm *v = map_get(&m->vmm, handle);
	size_t i;

	if (!v)
		return false;
	for (i = 0; i < v->n_maps && v->maps[i].va != va; i++)
		;
	if (i == v->n_maps)
		return false;
	v->n_maps--;
	memmove(&v->maps[i], &v->maps[i + 1], (v->n_maps - i) * sizeof(*v->maps));
	update_owner(m, handle, v);
	if (!v->released || v->n_maps > 0 || !map_remove(&m->live, handle, freed))
		return false;
	model_vmm_forget(m, handle);
	model_count_free(m, freed->mem, 1);
	model_live_sub(m, freed);
	return true;
}

bool model_vmm_next_shown(const struct model *m, size_t *pos, uint64_t *va,
			  const struct model_live **rec)
{
	struct model_vmm *v;
	uint64_t handle;

	while (map_next(&m->vmm, pos, &handle, (void **)&v)) {
		const struct model_live *h = map_get(&m->live, handle);

		if (!v->shown_va || !h || h->mem != MT_MEM_VMM_PHYSICAL)
			continue;
		*va = v->shown_va;
		*rec = h;
		return true;
	}
	return false;
}

void model_vmm_map(struct model *m, const struct trace_event *ev)
{
	struct model_mapping mp = {
		.handle = ev->handle, .bytes = ev->bytes, .stack = ev->stack, .seq = ev->seq,
		.site = MODEL_NONE, .holder = MODEL_NONE,
	};
	struct model_mapping old;
	struct model_live *rec, freed;

	if (!ev->has_address || ev->address == 0) {
		m->unmatched_maps++;
		return;
	}
	if (map_remove(&m->maps, ev->address, &old)) {
		/* an unmap memtrace did not see */
		m->reused_addresses++;
		if (old.counted)
			detach(m, old.handle, ev->address, &freed);
	}
	rec = ev->has_handle ? map_get(&m->live, ev->handle) : NULL;
	if (rec && rec->mem == MT_MEM_VMM_PHYSICAL) {
		struct model_site *s;

		mp.counted = true;
		mp.site = model_site_for(m, &ev->site, ev->stack);
		mp.holder = model_stack_for(m, ev->stack);
		model_stack_site(m, mp.holder, mp.site);
		s = &m->sites[mp.site];
		s->maps++;
		s->mapped_bytes = sat_add(s->mapped_bytes, ev->bytes);
	} else {
		m->unmatched_maps++;
	}
	*(struct model_mapping *)map_put(&m->maps, ev->address, NULL) = mp;
	if (mp.counted)
		attach(m, mp.handle, ev->address, mp.seq);
}

void model_vmm_unmap(struct model *m, const struct trace_event *ev)
{
	struct model_recent_unmap *r = &m->recent_unmaps[m->recent_unmap_next];

	if (!ev->has_address || ev->address == 0)
		return;
	m->recent_unmap_next = (m->recent_unmap_next + 1) % MODEL_RECENT_FREES;
	*r = (struct model_recent_unmap){ .va = ev->address, .valid = true };
	if (!map_remove(&m->maps, ev->address, &r->mapping)) {
		m->unmatched_unmaps++;
		r->unmatched = true;
		return;
	}
	if (r->mapping.counted)
		r->freed = detach(m, r->mapping.handle, ev->address, &r->handle_rec);
}

static struct model_recent_unmap *find_recent(struct model *m, uint64_t va)
{
	for (size_t i = 1; i <= MODEL_RECENT_FREES; i++) {
		size_t at = (m->recent_unmap_next + MODEL_RECENT_FREES - i) % MODEL_RECENT_FREES;
		struct model_recent_unmap *r = &m->recent_unmaps[at];

		if (r->valid && r->va == va)
			return r;
	}
	return NULL;
}

/* The unmap just before failed: the mapping stays, and so does the
 * memory it held. */
void model_vmm_unmap_error(struct model *m, const struct trace_event *ev)
{
	struct model_recent_unmap *r;
	struct model_mapping *slot;
	bool inserted;

	m->unmap_errors++;
	if (!ev->has_address || !(r = find_recent(m, ev->address)))
		return;
	r->valid = false;
	if (r->unmatched) {
		m->unmatched_unmaps--;
		return;
	}
	if (r->freed) {
		struct model_live *live = map_put(&m->live, r->mapping.handle, &inserted);

		if (inserted) {
			*live = r->handle_rec;
			model_count_free(m, r->handle_rec.mem, -1);
			model_live_add(m, &r->handle_rec, ev->time_ns);
			model_vmm_created(m, r->mapping.handle, &r->handle_rec, true);
		} else {
			r->mapping.counted = false; /* the handle is another allocation now */
		}
	}
	slot = map_put(&m->maps, ev->address, &inserted);
	if (!inserted)
		return; /* mapped again already: keep the newer one */
	*slot = r->mapping;
	if (r->mapping.counted)
		attach(m, r->mapping.handle, ev->address, r->mapping.seq);
}
