/* What the model's files share and renderers do not see: the live
 * record, the accounting every kind goes through, and the entry points of
 * model-vmm.c (mappings, handle lifetime) and model-device.c (devices,
 * pools, the preallocation note). */
#pragma once

#include "model.h"

#define MODEL_NONE UINT32_MAX

struct model_live {
	uint64_t bytes;
	/* who holds it now: the allocating stack, or for a mapped VMM handle
	 * the stack of its first live mapping (model-vmm.c) */
	int64_t stack;
	uint32_t site, holder; /* that stack's indices in sites / stacks */
	uint32_t pool;	       /* index in pools, or MODEL_NONE */
	int mem;
	int device;
};

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static inline uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a < b ? 0 : a - b;
}

/* ---- model.c ---- */

uint32_t model_site_for(struct model *m, int64_t stack);
uint32_t model_stack_for(struct model *m, int64_t stack);
/* Count rec as live / no longer live in every total it belongs to. */
void model_live_add(struct model *m, const struct model_live *rec, int64_t time_ns);
void model_live_sub(struct model *m, const struct model_live *rec);
/* Move the bytes of a live device-side rec to another holder: the totals
 * and the peak do not change, the sites and stacks do. */
void model_live_move(struct model *m, struct model_live *rec, int64_t stack, uint32_t site,
		     uint32_t holder);
/* A free of rec's kind happened (delta 1) or was undone (delta -1). */
void model_count_free(struct model *m, int mem, int delta);

/* ---- model-vmm.c ---- */

void model_vmm_init(struct model *m);
void model_vmm_fini(struct model *m);
/* A vmm_physical allocation rec was made (or put back) at handle. */
void model_vmm_created(struct model *m, uint64_t handle, const struct model_live *rec,
		       bool released);
/* cuMemRelease of a live handle: free it now, or only mark it released
 * while a mapping still holds the memory. */
enum { VMM_FREE_NOW, VMM_KEPT, VMM_ALREADY_RELEASED };
int model_vmm_release(struct model *m, uint64_t handle);
/* The release failed: the handle is not released after all. */
void model_vmm_unrelease(struct model *m, uint64_t handle);
/* The handle's memory is gone (or its address was reused). */
void model_vmm_forget(struct model *m, uint64_t handle);
void model_vmm_map(struct model *m, const struct mt_event *ev);
void model_vmm_unmap(struct model *m, const struct mt_event *ev);
void model_vmm_unmap_error(struct model *m, const struct mt_event *ev);

/* ---- model-device.c ---- */

void model_device_init(struct model *m);
void model_device_fini(struct model *m);
/* The device with ordinal id, added when first asked for; NULL for id < 0. */
struct model_device *model_device_for(struct model *m, int id);
/* The counter of device-side bytes live on device id (or on no known device). */
uint64_t *model_device_live(struct model *m, int id);
/* A device-side allocation succeeded: remember the first few per device. */
void model_device_alloc(struct model *m, const struct mt_event *ev);
/* An OOM: its device's total, when nothing else gave it. */
void model_device_oom(struct model *m, const struct mt_event *ev);
void model_device_event(struct model *m, const struct mt_event *ev);
/* The pool with this handle (the latest one, after a destroy), added when
 * first seen. */
uint32_t model_pool_for(struct model *m, uint64_t handle);
void model_pool_event(struct model *m, const struct mt_event *ev);
/* Once every event is in: sort the devices, make the notes (model.notes). */
void model_device_finish(struct model *m);
