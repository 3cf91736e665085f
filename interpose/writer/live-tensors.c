/* Which of a framework allocator's rows flight mode keeps (live-tensors.h). */
#include "live-tensors.h"

#include "trace-schema.h"

bool mt_tkeep_init(struct mt_tensor_keep *k)
{
	map_init(&k->block, sizeof(uint64_t));
	map_init(&k->request, sizeof(uint64_t));
	map_init(&k->segment, sizeof(uint64_t));
	return map_reserve(&k->block, 1024) && map_reserve(&k->request, 256) &&
	       map_reserve(&k->segment, 64);
}

void mt_tkeep_fini(struct mt_tensor_keep *k)
{
	map_fini(&k->block);
	map_fini(&k->request);
	map_fini(&k->segment);
}

/* The action of address in m ends at this row. */
static bool end(struct map *m, uint64_t address, mt_tkeep_fn ended, bool *pinned, void *ctx)
{
	uint64_t v;
	if (!map_remove(m, address, &v))
		return true;
	if (v & MT_TKEEP_PIN) {
		*pinned = true;
		return true;
	}
	return ended(ctx, v);
}

/* A segment's range given back: every alloc or map inside it ends (an
 * expandable segment unmaps several maps at once). Few segments: a scan,
 * the keys taken first (a removal moves the entries after it). */
static bool end_range(struct map *m, uint64_t from, uint64_t bytes, mt_tkeep_fn ended,
		      bool *pinned, void *ctx)
{
	uint64_t keys[32], key;
	size_t n;
	void *val;

	if (!bytes)
		return end(m, from, ended, pinned, ctx);
	do {
		n = 0;
		for (size_t pos = 0; n < 32 && map_next(m, &pos, &key, &val);)
			if (key >= from && key - from < bytes)
				keys[n++] = key;
		for (size_t i = 0; i < n; i++)
			if (!end(m, keys[i], ended, pinned, ctx))
				return false;
	} while (n == 32);
	return true;
}

bool mt_tkeep_event(struct mt_tensor_keep *k, uint64_t seq, const struct mt_event *ev,
		    mt_tkeep_fn ended, mt_tkeep_fn keep, void *ctx)
{
	bool pinned = false, ok = true;
	const uint64_t *held;

	switch (ev->kind) {
	case MT_EV_TENSOR_ALLOC:
		/* an address still held was freed unseen: the new block ends it */
		ok = end(&k->block, ev->address, ended, &pinned, ctx) &&
		     end(&k->request, ev->address, ended, &pinned, ctx) &&
		     map_put_u64(&k->block, ev->address, seq);
		break;
	case MT_EV_TENSOR_FREE_REQUESTED:
		held = map_get(&k->block, ev->address);
		ok = map_put_u64(&k->request, ev->address,
				seq | (held && (*held & MT_TKEEP_PIN) ? MT_TKEEP_PIN : 0));
		break;
	case MT_EV_TENSOR_FREE:
		ok = end(&k->block, ev->address, ended, &pinned, ctx) &&
		     end(&k->request, ev->address, ended, &pinned, ctx);
		break;
	case MT_EV_CACHE_SEGMENT_ALLOC:
	case MT_EV_CACHE_SEGMENT_MAP:
		ok = map_put_u64(&k->segment, ev->address, seq);
		break;
	case MT_EV_CACHE_SEGMENT_FREE:
	case MT_EV_CACHE_SEGMENT_UNMAP:
		ok = end_range(&k->segment, ev->address, ev->bytes, ended, &pinned, ctx);
		break;
	default:
		break;
	}
	return ok && (!pinned || keep(ctx, seq));
}

static bool in_effect(struct map *m, uint64_t from, uint64_t to, bool pin, mt_tkeep_fn keep,
		      void *ctx)
{
	uint64_t key;
	void *val;

	for (size_t pos = 0; map_next(m, &pos, &key, &val);) {
		uint64_t *v = val, seq = *v & ~MT_TKEEP_PIN;
		if (seq < from || seq > to)
			continue;
		if (!(*v & MT_TKEEP_PIN) && !keep(ctx, seq))
			return false;
		if (pin)
			*v |= MT_TKEEP_PIN;
	}
	return true;
}

bool mt_tkeep_in_effect(struct mt_tensor_keep *k, uint64_t from, uint64_t to, bool pin,
			mt_tkeep_fn keep, void *ctx)
{
	return in_effect(&k->block, from, to, pin, keep, ctx) &&
	       in_effect(&k->request, from, to, pin, keep, ctx) &&
	       in_effect(&k->segment, from, to, pin, keep, ctx);
}
