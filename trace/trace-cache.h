/* A framework's cache from its allocator's actions (PyTorch's caching
 * allocator: the MT_EV_TENSOR_* and MT_EV_CACHE_* events): the segments
 * it holds and the blocks its tensors hold in them, with torch's own
 * figures (memory_allocated(), memory_reserved()), the largest free range.
 * One model for both halves: the reporter's tensor view
 * (report/model/model-torch.c) and the library's answer on stderr at an
 * OOM (interpose/writer/trace-live.c). One thread; no exit: when it
 * cannot grow it says so to its caller.
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
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_cache_block {
	uint64_t address, size, requested;
	int64_t stack;
	bool allocated; /* held by its tensor (no free requested yet) */
};

struct trace_cache_segment {
	uint64_t address, size, stream;
	int64_t stack;
	int device;
	bool expandable;
	struct trace_cache_block *blocks; /* in use (until the free completed), by address */
	size_t n_blocks, cap_blocks;
};

struct trace_cache {
	struct trace_cache_segment *segs; /* by address */
	size_t n_segs, cap_segs;
	uint64_t allocated, reserved, tensors;
};

/* The action of kind (MT_EV_TENSOR_* but the OOM, MT_EV_CACHE_*) at
 * address for bytes (a tensor's: the size it asked for). False when out
 * of memory: the action is then counted in the figures but not placed. */
bool trace_cache_event(struct trace_cache *c, unsigned kind, uint64_t address, uint64_t bytes,
		       uint64_t stream, int64_t stack, int device);
/* The size of the block at address, held by a tensor or waiting for its
 * streams; 0 when none starts there. */
uint64_t trace_cache_block_size(const struct trace_cache *c, uint64_t address);
/* The largest free range inside the segments. */
uint64_t trace_cache_largest_free(const struct trace_cache *c);
void trace_cache_fini(struct trace_cache *c);
