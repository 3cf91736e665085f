/* Macros shared by the wrapper files. Each wrapper calls the real function
 * with the caller's arguments and returns its result untouched; recording
 * happens around it, in record.c, following the rules there. */
#pragma once

#include "hook-real.h"
#include "trace-schema.h"

/* *p after a successful call, as an integer. */
#define MT_OUT(p) ((p) ? (uint64_t)(uintptr_t)*(p) : 0)
#define MT_U64(x) ((uint64_t)(uintptr_t)(x))

/* The real function is missing only if the process has no such library,
 * which cannot happen for a caller that reached this wrapper through it. */
#define MT_REAL_OR(name, err)                    \
	mt_##name##_fn real = mt_real_##name(); \
	if (MT_UNLIKELY(!real))                 \
		return (err)

/* A wrapper and its twin for the per-thread default stream (name_ptsz),
 * which takes the same parameters: W(name, ...) and W(name_ptsz, ...). */
#define MT_WITH_PTSZ(W, name, ...) W(name, __VA_ARGS__) W(name##_ptsz, __VA_ARGS__)

/* An allocation: PTR, BYTES, MEM, STREAM, HANDLE are expressions over the
 * parameters, PTR evaluated only after success. */
#define MT_ALLOC_WRAPPER(ret, ok, oomcode, err, name, params, args, PTR, BYTES, MEM, STREAM,   \
			 HANDLE)                                                                \
	MT_EXPORT ret name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, err);                                                         \
		if (!mt_enter())                                                               \
			return real args;                                                      \
		struct mt_order at_ = mt_record_order();                                       \
		ret rc = real args;                                                            \
		mt_record_alloc(&(struct mt_rec){ .api = MT_API_##name,                        \
						  .status = (int)rc,                            \
						  .oom = rc == (oomcode),                       \
						  .address = rc == (ok) ? (PTR) : 0,            \
						  .bytes = (BYTES),                             \
						  .mem = (MEM),                                 \
						  .stream = MT_U64(STREAM),                     \
						  .handle = MT_U64(HANDLE) },                   \
				at_);                                                          \
		mt_leave();                                                                    \
		mt_frameworks_poll();                                                          \
		return rc;                                                                     \
	}

/* A device allocation that memtrace run --what-fits (MEMTRACE_WHAT_FITS,
 * docs/report.md, "What would fit") lets go beyond the device: refused
 * for want of memory, it is served from managed memory instead (BEYOND,
 * an expression that allocates it and evaluates to ok when it could) and
 * recorded as that, so the step runs to its end and its whole peak is
 * seen. Else as MT_ALLOC_WRAPPER of device memory. */
extern bool mt_what_fits;
#define MT_DEVICE_ALLOC_WRAPPER(ret, ok, oomcode, err, name, params, args, PTR, BYTES, BEYOND, \
				MANAGED)                                                       \
	MT_EXPORT ret name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, err);                                                         \
		if (!mt_enter())                                                               \
			return real args;                                                      \
		struct mt_order at_ = mt_record_order();                                       \
		ret rc = real args;                                                            \
		unsigned api_ = MT_API_##name, mem_ = MT_MEM_DEVICE;                           \
		if (MT_UNLIKELY(rc == (oomcode) && mt_what_fits) && (BEYOND) == (ok)) {        \
			rc = (ok);                                                             \
			api_ = MT_API_##MANAGED;                                               \
			mem_ = MT_MEM_MANAGED;                                                 \
		}                                                                              \
		mt_record_alloc(&(struct mt_rec){ .api = api_,                                 \
						  .status = (int)rc,                            \
						  .oom = rc == (oomcode),                       \
						  .address = rc == (ok) ? (PTR) : 0,            \
						  .bytes = (BYTES),                             \
						  .mem = mem_ },                                \
				at_);                                                          \
		mt_leave();                                                                    \
		mt_frameworks_poll();                                                          \
		return rc;                                                                     \
	}

/* A free, recorded once the real free returned: the memory counts until
 * then. Another thread may get the same address before our record is
 * made, so the free is announced as running first (record.c, rule 3). A
 * free that failed is recorded as free_error too, which puts the
 * allocation back. */
#define MT_FREE_WRAPPER(ret, ok, err, name, params, args, ADDR, STREAM)                       \
	MT_EXPORT ret name params                                                              \
	{                                                                                      \
		MT_REAL_OR(name, err);                                                         \
		uint64_t addr_ = MT_U64(ADDR);                                                 \
		if (!addr_ || !mt_enter())                                                     \
			return real args;                                                      \
		unsigned release_ = mt_record_release_begin(addr_);                            \
		ret rc = real args;                                                            \
		mt_record_free(&(struct mt_rec){ .api = MT_API_##name,                         \
						 .status = rc == (ok) ? 0 : (int)rc,            \
						 .address = addr_,                              \
						 .stream = MT_U64(STREAM) },                    \
			       release_);                                                      \
		mt_leave();                                                                    \
		return rc;                                                                     \
	}

/* The pool calls, the same three in both libraries (LIB: cuda or cu):
 * created; destroyed, recorded before the call (the handle may be reused
 * once it returns); trimmed, whatever the result. */
#define MT_POOL_WRAPPERS(RET, OK, ERR, LIB, POOL, PROPS)                                      \
	MT_EXPORT RET LIB##MemPoolCreate(POOL *pool, const PROPS *props)                      \
	{                                                                                     \
		MT_REAL_OR(LIB##MemPoolCreate, ERR);                                          \
		if (!mt_enter())                                                              \
			return real(pool, props);                                             \
		RET rc = real(pool, props);                                                   \
		if (rc == (OK))                                                               \
			mt_record_event(&(struct mt_rec){ .api = MT_API_##LIB##MemPoolCreate, \
							  .kind = MT_EV_POOL_CREATE,          \
							  .handle = MT_OUT(pool) });          \
		mt_leave();                                                                   \
		return rc;                                                                    \
	}                                                                                     \
                                                                                              \
	MT_EXPORT RET LIB##MemPoolDestroy(POOL pool)                                          \
	{                                                                                     \
		MT_REAL_OR(LIB##MemPoolDestroy, ERR);                                         \
		if (!pool || !mt_enter())                                                     \
			return real(pool);                                                    \
		mt_record_event(&(struct mt_rec){ .api = MT_API_##LIB##MemPoolDestroy,        \
						  .kind = MT_EV_POOL_DESTROY,                 \
						  .handle = MT_U64(pool) });                  \
		RET rc = real(pool);                                                          \
		mt_leave();                                                                   \
		return rc;                                                                    \
	}                                                                                     \
                                                                                              \
	MT_EXPORT RET LIB##MemPoolTrimTo(POOL pool, size_t minBytesToKeep)                    \
	{                                                                                     \
		MT_REAL_OR(LIB##MemPoolTrimTo, ERR);                                          \
		if (!mt_enter())                                                              \
			return real(pool, minBytesToKeep);                                    \
		RET rc = real(pool, minBytesToKeep);                                          \
		mt_record_event(&(struct mt_rec){ .api = MT_API_##LIB##MemPoolTrimTo,         \
						  .kind = MT_EV_POOL_TRIM,                    \
						  .status = (int)rc,                          \
						  .bytes = minBytesToKeep,                    \
						  .handle = MT_U64(pool) });                  \
		mt_leave();                                                                   \
		return rc;                                                                    \
	}
