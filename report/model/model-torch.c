/* A framework's cache from its own actions (PyTorch's caching allocator:
 * docs/trace-format.md, "Tensors inside a framework's cache"): the
 * segments it took, the blocks its tensors hold inside them, and from
 * those, at each OOM, at the peak of its reserved bytes and at the end,
 * what torch's own figures say (memory_allocated(), memory_reserved()),
 * the largest free range and who holds the blocks.
 *
 * Torch records the size a tensor asked for, not its block's: the block is
 * that size rounded up to 512 bytes, unless torch did not split the free
 * block it took, when the block is the whole free range (torch splits a
 * block of the small pool, requests up to 1 MiB, when at least 512 bytes
 * would be left, and one of the large pool when more than 1 MiB would:
 * should_split in CUDACachingAllocator.cpp). A free range runs from the
 * block's start to the next block still in use (torch merges free
 * neighbours) or the segment's end. max_split_size_mb, which keeps large
 * blocks whole, is not followed. */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-mem.h"

#define MIN_BLOCK 512u
#define SMALL_SIZE (1u << 20)
#define HOLDERS_KEPT 256 /* per moment, the largest */

struct block {
	uint64_t address, size, requested;
	int64_t stack;
	bool allocated; /* held by its tensor (no free requested yet) */
};

struct segment {
	uint64_t address, size, stream;
	int64_t stack;
	int device;
	bool expandable;
	struct block *blocks; /* in use (until the free completed), by address */
	size_t n_blocks, cap_blocks;
};

struct model_torch {
	struct segment *segs; /* by address */
	size_t n_segs, cap_segs;
	uint64_t allocated, reserved, tensors, peak_reserved;
	bool peak_due; /* a new peak: its moment is taken after the tensor's block */
	size_t oom_from; /* the first OOM the allocator's next OOM names */
};

static uint64_t round_up(uint64_t n, uint64_t to)
{
	return n < to ? to : (n + to - 1) / to * to;
}

/* The segment that holds address, or the index to insert one at. */
static size_t seg_find(const struct model_torch *t, uint64_t address, bool *found)
{
	size_t lo = 0, hi = t->n_segs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct segment *s = &t->segs[mid];

		if (address < s->address)
			hi = mid;
		else if (address - s->address >= s->size)
			lo = mid + 1;
		else {
			*found = true;
			return mid;
		}
	}
	*found = false;
	return lo;
}

static size_t block_find(const struct segment *s, uint64_t address)
{
	size_t lo = 0, hi = s->n_blocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->blocks[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A segment, or pages mapped at the end of one (expandable segments).
 * Two segments torch took with cudaMalloc stay two even where the device
 * placed them end to end: torch never merges blocks across them. */
static void seg_add(struct model_torch *t, const struct trace_event *ev)
{
	bool found, map = ev->kind == MT_EV_CACHE_SEGMENT_MAP;
	uint64_t address = ev->address, size = ev->bytes;
	size_t i = seg_find(t, address, &found);

	t->reserved = sat_add(t->reserved, size);
	if (map && i > 0 && t->segs[i - 1].expandable &&
	    t->segs[i - 1].address + t->segs[i - 1].size == address) {
		t->segs[i - 1].size += size;
		return;
	}
	if (found)
		return; /* inconsistent: already held */
	grow_array(&t->segs, &t->cap_segs, t->n_segs + 1, sizeof(*t->segs));
	memmove(&t->segs[i + 1], &t->segs[i], (t->n_segs - i) * sizeof(*t->segs));
	t->segs[i] = (struct segment){ .address = address, .size = size, .stream = ev->stream,
				       .stack = ev->stack, .device = ev->device,
				       .expandable = map };
	t->n_segs++;
}

/* A segment given back, or pages unmapped at its end. */
static void seg_remove(struct model_torch *t, uint64_t address, uint64_t size)
{
	bool found;
	size_t i = seg_find(t, address, &found);

	t->reserved = sat_sub(t->reserved, size);
	if (!found)
		return;
	struct segment *s = &t->segs[i];
	if (s->address != address || s->size > size) {
		if (s->address + s->size == address + size)
			s->size -= size; /* the tail */
		return;
	}
	free(s->blocks);
	memmove(s, s + 1, (t->n_segs - i - 1) * sizeof(*s));
	t->n_segs--;
}

/* The block torch cut for a tensor that asked for requested bytes at
 * address: see the head of the file. */
static uint64_t block_size(const struct segment *s, size_t at, uint64_t address,
			   uint64_t requested)
{
	uint64_t rounded = round_up(requested, MIN_BLOCK);
	uint64_t end = at < s->n_blocks ? s->blocks[at].address : s->address + s->size;
	uint64_t range = end > address ? end - address : 0;

	if (range <= rounded)
		return rounded;
	uint64_t left = range - rounded;
	bool split = rounded <= SMALL_SIZE ? left >= MIN_BLOCK : left > SMALL_SIZE;
	return split ? rounded : range;
}

static void tensor_alloc(struct model_torch *t, const struct trace_event *ev)
{
	bool found;
	size_t i = seg_find(t, ev->address, &found);
	uint64_t size = round_up(ev->bytes, MIN_BLOCK);

	if (found) {
		struct segment *s = &t->segs[i];
		size_t at = block_find(s, ev->address);

		if (at < s->n_blocks && s->blocks[at].address == ev->address)
			return; /* inconsistent: already held */
		size = block_size(s, at, ev->address, ev->bytes);
		grow_array(&s->blocks, &s->cap_blocks, s->n_blocks + 1, sizeof(*s->blocks));
		memmove(&s->blocks[at + 1], &s->blocks[at], (s->n_blocks - at) * sizeof(*s->blocks));
		s->blocks[at] = (struct block){ .address = ev->address, .size = size,
						.requested = ev->bytes, .stack = ev->stack,
						.allocated = true };
		s->n_blocks++;
	}
	t->allocated = sat_add(t->allocated, size);
	t->tensors++;
}

static struct block *block_at(struct model_torch *t, uint64_t address, size_t *seg, size_t *at)
{
	bool found;

	*seg = seg_find(t, address, &found);
	if (!found)
		return NULL;
	struct segment *s = &t->segs[*seg];
	*at = block_find(s, address);
	return *at < s->n_blocks && s->blocks[*at].address == address ? &s->blocks[*at] : NULL;
}

static void tensor_free_requested(struct model_torch *t, const struct trace_event *ev)
{
	size_t seg, at;
	struct block *b = block_at(t, ev->address, &seg, &at);

	if (!b || !b->allocated)
		return;
	b->allocated = false;
	t->allocated = sat_sub(t->allocated, b->size);
	t->tensors = sat_sub(t->tensors, 1);
}

static void tensor_free(struct model_torch *t, const struct trace_event *ev)
{
	size_t seg, at;
	struct block *b = block_at(t, ev->address, &seg, &at);

	if (!b)
		return;
	if (b->allocated) /* a free completed without its request: both at once */
		tensor_free_requested(t, ev);
	struct segment *s = &t->segs[seg];
	memmove(&s->blocks[at], &s->blocks[at + 1], (s->n_blocks - at - 1) * sizeof(*s->blocks));
	s->n_blocks--;
}

static uint64_t largest_free(const struct model_torch *t)
{
	uint64_t best = 0;

	for (size_t i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];
		uint64_t from = s->address;

		for (size_t k = 0; k <= s->n_blocks; k++) {
			uint64_t to = k < s->n_blocks ? s->blocks[k].address : s->address + s->size;

			if (to > from && to - from > best)
				best = to - from;
			if (k < s->n_blocks)
				from = s->blocks[k].address + s->blocks[k].size;
		}
	}
	return best;
}

static int cmp_by_stack(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_by_bytes(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The blocks tensors hold, grouped by the stack that made each. */
static void holders(const struct model_torch *t, struct model_framework *f)
{
	struct model_group *g = xcalloc(t->tensors ? t->tensors : 1, sizeof(*g));
	size_t n = 0, out = 0;

	for (size_t i = 0; i < t->n_segs; i++)
		for (size_t k = 0; k < t->segs[i].n_blocks; k++) {
			const struct block *b = &t->segs[i].blocks[k];

			if (b->allocated && n < t->tensors)
				g[n++] = (struct model_group){ .stack = b->stack, .bytes = b->size,
							       .count = 1 };
		}
	qsort(g, n, sizeof(*g), cmp_by_stack);
	for (size_t i = 0; i < n; i++) {
		if (out && g[out - 1].stack == g[i].stack) {
			g[out - 1].bytes += g[i].bytes;
			g[out - 1].count++;
		} else {
			g[out++] = g[i];
		}
	}
	qsort(g, out, sizeof(*g), cmp_by_bytes);
	f->holders = g;
	f->n_holders = out < HOLDERS_KEPT ? out : HOLDERS_KEPT;
}

static void fw_block(struct model_framework *f, size_t *cap, struct model_fw_block b)
{
	grow_array(&f->blocks, cap, f->n_blocks + 1, sizeof(*f->blocks));
	f->blocks[f->n_blocks++] = b;
}

/* A segment's blocks end to end, the free ranges between them included. */
static void seg_blocks(const struct segment *s, struct model_framework *f, size_t *cap)
{
	uint64_t from = s->address, end = s->address + s->size;

	for (size_t k = 0; k <= s->n_blocks; k++) {
		uint64_t to = k < s->n_blocks ? s->blocks[k].address : end;

		if (to > from)
			fw_block(f, cap, (struct model_fw_block){ .address = from, .size = to - from,
								  .state = MODEL_FW_FREE });
		if (k == s->n_blocks)
			break;
		const struct block *b = &s->blocks[k];
		fw_block(f, cap, (struct model_fw_block){
			.address = b->address, .size = b->size, .requested = b->requested,
			.stack = b->stack,
			.state = b->allocated ? MODEL_FW_ALLOCATED : MODEL_FW_PENDING });
		from = b->address + b->size;
	}
}

static void segments(const struct model_torch *t, struct model_framework *f)
{
	size_t cap = 0;

	f->segments = xcalloc(t->n_segs ? t->n_segs : 1, sizeof(*f->segments));
	f->n_segments = t->n_segs;
	for (size_t i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];
		struct model_fw_segment *o = &f->segments[i];

		*o = (struct model_fw_segment){ .address = s->address, .size = s->size,
						.stream = s->stream, .stack = s->stack,
						.device = s->device, .expandable = s->expandable,
						.first = f->n_blocks };
		if (f->n_blocks + 2 * s->n_blocks + 1 > MODEL_FW_BLOCKS_KEPT)
			f->blocks_cut = true;
		else
			seg_blocks(s, f, &cap);
		o->n = f->n_blocks - o->first;
	}
}

void model_framework_free(struct model_framework *f)
{
	free(f->holders);
	free(f->segments);
	free(f->blocks);
	*f = (struct model_framework){ 0 };
}

static void moment(const struct model_torch *t, struct model_framework *f)
{
	model_framework_free(f);
	*f = (struct model_framework){ .has = true, .allocated = t->allocated,
				       .reserved = t->reserved, .largest_free = largest_free(t),
				       .tensors = t->tensors };
	holders(t, f);
	segments(t, f);
}

void model_torch_moment(const struct model *m, struct model_framework *f)
{
	if (m->torch)
		moment(m->torch, f);
}

/* The allocator's OOM names the tensor of the CUDA OOMs since its last. */
static void tensor_oom(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;

	for (size_t i = t->oom_from; i < m->n_ooms; i++) {
		m->ooms[i].framework.has_request = true;
		m->ooms[i].framework.requested = ev->bytes;
	}
	t->oom_from = m->n_ooms;
}

bool model_torch_oom_alone(const struct model *m)
{
	return !m->torch || m->torch->oom_from == m->n_ooms;
}

void model_torch_event(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;

	m->tensor_events++;
	if (!t)
		t = m->torch = xcalloc(1, sizeof(*t));
	switch (ev->kind) {
	case MT_EV_TENSOR_ALLOC: tensor_alloc(t, ev); break;
	case MT_EV_TENSOR_FREE_REQUESTED: tensor_free_requested(t, ev); break;
	case MT_EV_TENSOR_FREE: tensor_free(t, ev); break;
	case MT_EV_CACHE_SEGMENT_ALLOC:
	case MT_EV_CACHE_SEGMENT_MAP: seg_add(t, ev); break;
	case MT_EV_CACHE_SEGMENT_FREE:
	case MT_EV_CACHE_SEGMENT_UNMAP: seg_remove(t, ev->address, ev->bytes); break;
	case MT_EV_TENSOR_OOM: tensor_oom(m, ev); break;
	default: break;
	}
	if (t->reserved > t->peak_reserved) {
		t->peak_reserved = t->reserved;
		t->peak_due = true;
	}
	if (t->peak_due && ev->kind != MT_EV_CACHE_SEGMENT_ALLOC &&
	    ev->kind != MT_EV_CACHE_SEGMENT_MAP) {
		moment(t, &m->framework_peak);
		t->peak_due = false;
	}
}

void model_torch_at_oom(struct model *m, struct model_oom *o)
{
	if (m->torch)
		moment(m->torch, &o->framework);
}

void model_torch_finish(struct model *m)
{
	if (!m->torch)
		return;
	if (m->torch->peak_due)
		moment(m->torch, &m->framework_peak);
	moment(m->torch, &m->framework_end);
}

void model_torch_fini(struct model *m)
{
	struct model_torch *t = m->torch;

	model_framework_free(&m->framework_peak);
	model_framework_free(&m->framework_end);
	if (!t)
		return;
	for (size_t i = 0; i < t->n_segs; i++)
		free(t->segs[i].blocks);
	free(t->segs);
	free(t);
	m->torch = NULL;
}
