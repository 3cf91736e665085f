/* The framework adapters (layer 5, interpose/frameworks/): what memtrace
 * does for a framework beyond its CUDA calls, one adapter a framework
 * (struct mt_framework, in a file of its own) and one row of
 * frameworks.def. The layers above reach them through one call each:
 * the allocation wrappers poll (mt_frameworks_poll, after each recorded
 * allocation), hook-log.c hands on what the program writes on stderr
 * (mt_frameworks_stderr) and raises into Python (mt_frameworks_raised).
 * An adapter calls the record path, the carry and the core; what it asks
 * of the hooks (a framework's real function, the device's memory) comes
 * through the callbacks preload.c hands out at load (struct
 * mt_frameworks_options). See core/core.h. */
#pragma once

#include "record.h"

/* ---- frameworks.c: the table (frameworks.def) and its entries ---- */

/* What the adapters ask the layers above, given at load (preload.c,
 * before any framework is loaded). */
struct mt_frameworks_options {
	bool tensors; /* MEMTRACE_TENSORS: PyTorch's tensor view */
	/* The definition of name, other than ours (self), in the objects
	 * loaded now: a framework's libraries are loaded in a local scope
	 * that RTLD_NEXT does not reach (hook-real.c, mt_real_loaded). */
	void *(*loaded)(const char *name, void *self);
	/* The device's free and total memory, asked of the library the call
	 * api went to (hook-real.c, mt_real_mem_info). */
	bool (*mem_info)(unsigned api, uint64_t *free_b, uint64_t *total_b);
};

/* What a poll leaves to do. */
enum mt_framework_poll {
	MT_FRAMEWORK_SETTLED, /* attached, or off: never polled again */
	MT_FRAMEWORK_WAITING, /* loaded, not ready yet: polled after the next allocation */
	MT_FRAMEWORK_ABSENT,  /* not loaded: polled after every 1024th allocation */
};

/* An adapter. A callback it has no use for is NULL. The wrappers of the
 * framework's own functions that memtrace exports are in its file, their
 * names in its row of frameworks.def. */
struct mt_framework {
	/* At load, with the settings. */
	void (*init)(const struct mt_frameworks_options *opt);
	/* After a recorded allocation, outside the guard, until it says
	 * SETTLED: attaches to the framework's allocator once that is loaded
	 * and ready. One thread at a time; errno is kept around it. */
	enum mt_framework_poll (*poll)(void);
	/* One write of the program to stderr (at most 4096 bytes, not
	 * NUL-terminated): true when it is this framework's line (its
	 * allocator's OOM, recorded or already seen); no later row sees it. */
	bool (*stderr_line)(const char *text, size_t len);
	/* An exception the program raises into Python (PyErr_SetObject's
	 * type and value, value not NULL): true when it is this framework's;
	 * no later row sees it. */
	bool (*raised)(const void *type, const void *value);
	/* A symbol looked up with dlsym on a library handle (name), p the
	 * answer (not NULL): what to hand back instead, or p; the first row
	 * that answers other than p has it. */
	void *(*symbol)(const char *name, void *p);
};

/* The settings and callbacks, and each adapter's init (preload.c's
 * constructor). */
void mt_frameworks_init(const struct mt_frameworks_options *opt);

/* The rows whose poll is still due, a bit each: after each recorded
 * allocation (MT_ALLOC_WRAPPER), until every adapter is settled; then one
 * relaxed load. */
extern _Atomic unsigned mt_frameworks_polling;
void mt_frameworks_poll_slow(void);
static inline void mt_frameworks_poll(void)
{
	if (MT_UNLIKELY(atomic_load_explicit(&mt_frameworks_polling, memory_order_relaxed)))
		mt_frameworks_poll_slow();
}

/* A write to stderr, a raised exception: to each row in turn, until one
 * takes it (hook-log.c). */
void mt_frameworks_stderr(const char *text, size_t len);
void mt_frameworks_raised(const void *type, const void *value);
/* dlsym on a library handle answered p for name: what the program gets
 * (hook-dl.c). */
void *mt_frameworks_symbol(const char *name, void *p);

/* ---- framework-base.c: what the adapters share ---- */
/* The settings and callbacks (mt_frameworks_init). */
void mt_framework_base_init(const struct mt_frameworks_options *opt);
/* The callbacks of struct mt_frameworks_options (NULL, false: not
 * given). */
void *mt_framework_loaded(const char *name, void *self);
bool mt_framework_mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b);

/* tsl's BFC allocator, XLA's and TensorFlow's: an OOM of its own (the
 * pseudo-API BFCAllocator), after mt_enter: recorded as a failed
 * allocation of bytes on this thread, committed before it returns
 * (record.c, rule 6); leaves the guard, errno kept. */
void mt_bfc_oom(uint64_t bytes);
/* Its OOMs recorded from its log line or its call and not yet matched by
 * an exception raised into Python: one failure, one event (xla.c,
 * tensorflow.c). */
extern _Atomic unsigned mt_bfc_unmatched;

/* ---- framework-oom.c: a framework allocator's own OOM, from its messages ---- */
/* text is one write to stderr; true when it is a BFC allocator's "ran out
 * of memory" warning: *bytes the request as rounded, *device from the
 * allocator's name (GPU_<n>_bfc), else -1. */
bool mt_bfc_oom_parse(const char *text, size_t len, uint64_t *bytes, int *device);
/* text is the message of an exception raised into Python; true when it
 * is XLA's "RESOURCE_EXHAUSTED: Out of memory while trying to allocate
 * <size>": *bytes the size, *exact false when it was written to three
 * figures ("3.44GiB"). */
bool mt_xla_oom_parse(const char *text, size_t len, uint64_t *bytes, bool *exact);
/* text is the message of TensorFlow's ResourceExhaustedError; true when it
 * names the tensor ("OOM when allocating tensor with shape[200000,1024]
 * and type float"): *bytes its size, the elements times the type's. */
bool mt_tf_oom_parse(const char *text, size_t len, uint64_t *bytes);

/* ---- tensorflow-bfc.c: TensorFlow's BFC arena, its tensors ---- */
/* MEMTRACE_TENSORS=0: the arena's calls pass straight through (the
 * TensorFlow adapter's init). */
void mt_tf_bfc_disable(void);
