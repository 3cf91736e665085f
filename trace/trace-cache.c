/* A framework's cache from its allocator's actions (trace-cache.h). */
#include "trace-cache.h"

#include <stdlib.h>
#include <string.h>

#include "trace-schema.h"
#include "util-grow.h"
#include "util-math.h"

#define MIN_BLOCK 512u
#define SMALL_SIZE (1u << 20)

static uint64_t round_up(uint64_t n, uint64_t to)
{
	return n < to ? to : (n + to - 1) / to * to;
}

/* The segment that holds address, or the index to insert one at. */
static size_t seg_find(const struct trace_cache *c, uint64_t address, bool *found)
{
	size_t lo = 0, hi = c->n_segs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct trace_cache_segment *s = &c->segs[mid];

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

static size_t block_find(const struct trace_cache_segment *s, uint64_t address)
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

uint64_t trace_cache_block_size(const struct trace_cache *c, uint64_t address)
{
	bool found;
	size_t i = seg_find(c, address, &found), k;

	if (!found)
		return 0;
	k = block_find(&c->segs[i], address);
	return k < c->segs[i].n_blocks && c->segs[i].blocks[k].address == address
		       ? c->segs[i].blocks[k].size
		       : 0;
}

/* A segment, or pages mapped at the end of one (expandable segments).
 * Two segments torch took with cudaMalloc stay two even where the device
 * placed them end to end: torch never merges blocks across them. */
static bool seg_add(struct trace_cache *c, bool map, uint64_t address, uint64_t size,
		    uint64_t stream, int64_t stack, int device)
{
	bool found;
	size_t i = seg_find(c, address, &found);

	c->reserved = sat_add(c->reserved, size);
	if (map && i > 0 && c->segs[i - 1].expandable &&
	    c->segs[i - 1].address + c->segs[i - 1].size == address) {
		c->segs[i - 1].size += size;
		return true;
	}
	if (found)
		return true; /* inconsistent: already held */
	struct trace_cache_segment *segs =
		trace_grow(c->segs, &c->cap_segs, c->n_segs + 1, sizeof(*segs), 8, false);
	if (!segs)
		return false;
	c->segs = segs;
	memmove(&c->segs[i + 1], &c->segs[i], (c->n_segs - i) * sizeof(*c->segs));
	c->segs[i] = (struct trace_cache_segment){ .address = address, .size = size,
						   .stream = stream, .stack = stack,
						   .device = device, .expandable = map };
	c->n_segs++;
	return true;
}

/* A segment given back, or pages unmapped at its end. */
static void seg_remove(struct trace_cache *c, uint64_t address, uint64_t size)
{
	bool found;
	size_t i = seg_find(c, address, &found);

	c->reserved = sat_sub(c->reserved, size);
	if (!found)
		return;
	struct trace_cache_segment *s = &c->segs[i];
	if (s->address != address || s->size > size) {
		if (s->address + s->size == address + size)
			s->size -= size; /* the tail */
		return;
	}
	free(s->blocks);
	memmove(s, s + 1, (c->n_segs - i - 1) * sizeof(*s));
	c->n_segs--;
}

/* The block torch cut for a tensor that asked for requested bytes at
 * address: see trace-cache.h. */
static uint64_t block_size(const struct trace_cache_segment *s, size_t at, uint64_t address,
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

static bool tensor_alloc(struct trace_cache *c, uint64_t address, uint64_t requested,
			 int64_t stack)
{
	bool found, ok = true;
	size_t i = seg_find(c, address, &found);
	uint64_t size = round_up(requested, MIN_BLOCK);

	if (found) {
		struct trace_cache_segment *s = &c->segs[i];
		size_t at = block_find(s, address);

		if (at < s->n_blocks && s->blocks[at].address == address)
			return true; /* inconsistent: already held */
		size = s->stream == MT_CACHE_EXACT_BLOCKS ? requested
							  : block_size(s, at, address, requested);
		struct trace_cache_block *blocks =
			trace_grow(s->blocks, &s->cap_blocks, s->n_blocks + 1, sizeof(*blocks), 8, false);
		ok = blocks != NULL;
		if (ok) {
			s->blocks = blocks;
			memmove(&s->blocks[at + 1], &s->blocks[at],
				(s->n_blocks - at) * sizeof(*s->blocks));
			s->blocks[at] = (struct trace_cache_block){ .address = address, .size = size,
								    .requested = requested,
								    .stack = stack,
								    .allocated = true };
			s->n_blocks++;
		}
	}
	c->allocated = sat_add(c->allocated, size);
	c->tensors++;
	return ok;
}

static struct trace_cache_block *block_at(struct trace_cache *c, uint64_t address, size_t *seg,
					  size_t *at)
{
	bool found;

	*seg = seg_find(c, address, &found);
	if (!found)
		return NULL;
	struct trace_cache_segment *s = &c->segs[*seg];
	*at = block_find(s, address);
	return *at < s->n_blocks && s->blocks[*at].address == address ? &s->blocks[*at] : NULL;
}

static void tensor_free_requested(struct trace_cache *c, uint64_t address)
{
	size_t seg, at;
	struct trace_cache_block *b = block_at(c, address, &seg, &at);

	if (!b || !b->allocated)
		return;
	b->allocated = false;
	c->allocated = sat_sub(c->allocated, b->size);
	c->tensors = sat_sub(c->tensors, 1);
}

static void tensor_free(struct trace_cache *c, uint64_t address)
{
	size_t seg, at;
	struct trace_cache_block *b = block_at(c, address, &seg, &at);

	if (!b)
		return;
	if (b->allocated) /* a free completed without its request: both at once */
		tensor_free_requested(c, address);
	struct trace_cache_segment *s = &c->segs[seg];
	memmove(&s->blocks[at], &s->blocks[at + 1], (s->n_blocks - at - 1) * sizeof(*s->blocks));
	s->n_blocks--;
}

bool trace_cache_event(struct trace_cache *c, unsigned kind, uint64_t address, uint64_t bytes,
		       uint64_t stream, int64_t stack, int device)
{
	switch (kind) {
	case MT_EV_TENSOR_ALLOC: return tensor_alloc(c, address, bytes, stack);
	case MT_EV_TENSOR_FREE_REQUESTED: tensor_free_requested(c, address); return true;
	case MT_EV_TENSOR_FREE: tensor_free(c, address); return true;
	case MT_EV_CACHE_SEGMENT_ALLOC:
	case MT_EV_CACHE_SEGMENT_MAP:
		return seg_add(c, kind == MT_EV_CACHE_SEGMENT_MAP, address, bytes, stream, stack,
			       device);
	case MT_EV_CACHE_SEGMENT_FREE:
	case MT_EV_CACHE_SEGMENT_UNMAP: seg_remove(c, address, bytes); return true;
	default: return true;
	}
}

uint64_t trace_cache_largest_free(const struct trace_cache *c)
{
	uint64_t best = 0;

	for (size_t i = 0; i < c->n_segs; i++) {
		const struct trace_cache_segment *s = &c->segs[i];
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

void trace_cache_fini(struct trace_cache *c)
{
	for (size_t i = 0; i < c->n_segs; i++)
		free(c->segs[i].blocks);
	free(c->segs);
	*c = (struct trace_cache){ 0 };
}
