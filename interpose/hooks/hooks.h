/* The witnesses (layer 5, interpose/hooks/): what the wrappers share
 * beyond hook-real.h and hook-common.h. See core/core.h. */
#pragma once

#include "record.h"

/* ---- hook-torch.c: PyTorch's caching allocator, its tensors ---- */
/* Where the tracker stands: polled after each recorded allocation until
 * it is on or off (one relaxed load then). */
enum mt_torch_state {
	MT_TORCH_UNTRIED, /* not looked for yet */
	MT_TORCH_ABSENT, /* no libc10_cuda.so loaded (looked again now and then) */
	MT_TORCH_WAITING, /* loaded, its allocator not initialized yet */
	MT_TORCH_BUSY, /* a thread is attaching */
	MT_TORCH_ON, /* the tracker records torch's allocator actions */
	MT_TORCH_OFF, /* MEMTRACE_TENSORS=0, or torch without a usable tracker */
};
extern _Atomic int mt_torch_state;
void mt_torch_poll_slow(void);
static inline void mt_torch_poll(void)
{
	if (MT_UNLIKELY(atomic_load_explicit(&mt_torch_state, memory_order_relaxed) <
			MT_TORCH_BUSY))
		mt_torch_poll_slow();
}
/* MEMTRACE_TENSORS=0: never looked for (preload.c, at load). */
void mt_torch_disable(void);

/* ---- hook-fd.c: close, close_range, closefrom, dup2, dup3, pipe, pipe2 ---- */
/* Finds the real functions (called at load). */
void mt_hook_fd_init(void);
