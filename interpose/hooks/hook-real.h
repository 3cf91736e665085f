/* The real CUDA functions behind the hooks: a typedef and an inline getter
 * for each line of hooks.def. The first call resolves the pointer
 * (hook-real.c); later calls are one atomic load. */
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdatomic.h>

#include "hooks.h"

/* cuda.h maps the old name to the current ABI; the old ABI is hooked too. */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

extern void *_Atomic mt_real_ptrs[MT_API_COUNT];
void *mt_real_resolve(unsigned api);

/* Every hooked function is declared here, also those the CUDA headers
 * declare only for per-thread default stream builds (the _ptsz variants),
 * which every runtime and driver export all the same. */
#define MT_HOOK(lib, ret, name, params, args)                                                  \
	ret name params;                                                                       \
	typedef ret(*mt_##name##_fn) params;                                                   \
	static inline mt_##name##_fn mt_real_##name(void)                                      \
	{                                                                                      \
		void *p = atomic_load_explicit(&mt_real_ptrs[MT_API_##name],                   \
					       memory_order_acquire);                          \
		return (mt_##name##_fn)(p ? p : mt_real_resolve(MT_API_##name));               \
	}
#define MT_REAL MT_HOOK
#include "hooks.def"

/* hook-real.c: the questions memtrace asks CUDA for itself (the MT_REAL
 * lines), of the library the call api went to: both answers are
 * thread-local reads in the real libraries. record.c gets them as
 * callbacks (struct mt_record_options). */

/* The device current on this thread; -1 when unknown. */
int16_t mt_real_device(unsigned api);
/* The device's free/total memory. Only called after a call of the
 * program that already used a context (a failure, a first allocation). */
bool mt_real_mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b);
/* memtrace run --what-fits: device allocations go on past the device
 * (hook-common.h). */
extern bool mt_what_fits;

/* hook-real.c: the routes by which a caller gets a function pointer. */

/* symbol is a base name as cuGetProcAddress takes it ("cuMemAlloc"); p the
 * real driver's answer. Returns our wrapper of exactly the ABI p has, or p
 * when we do not hook that function. */
void *mt_wrap_driver_proc(const char *symbol, void *p);
/* name is an exact symbol name from a dlsym on a library handle. */
void *mt_wrap_symbol(const char *name, void *p);

/* The definition of name, other than ours (self), in the objects loaded
 * now: RTLD_NEXT's, else the first loaded object whose scope defines it,
 * for a framework's libraries, which Python loads in a local scope that
 * RTLD_NEXT does not reach (the framework adapters' wrappers, through
 * struct mt_frameworks_options). NULL when none does. */
void *mt_real_loaded(const char *name, void *self);

/* hook-dl.c: the real dlsym, for memtrace's own lookups (our exported dlsym
 * would hand back our own wrappers). */
void *mt_real_dlsym(void *handle, const char *name);
