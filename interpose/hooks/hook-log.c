/* The program's fwrite, where a framework allocator's out-of-memory
 * failure shows when no CUDA call failed: XLA's and TensorFlow's BFC
 * allocator logs it on stderr through absl, one fwrite per line, before
 * it returns the failure (framework-oom.c has the line and why it is the
 * evidence). A write to stderr that is that line becomes an OOM event of
 * the pseudo-API BFCAllocator, with the request's bytes, this thread's
 * stack (the Python frames of the code that asked, when it is a Python
 * thread) and the device's free memory, committed before the allocator
 * returns, as for a CUDA OOM (record.c, rule 6).
 *
 * Every other fwrite is one comparison and a tail call. The real fwrite
 * runs first, untouched; errno is what it left. */
#include "hook-real.h"
#include "trace-schema.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

typedef size_t (*fwrite_fn)(const void *, size_t, size_t, FILE *);
static fwrite_fn _Atomic real_fwrite_ptr;
static MT_TLS int resolving;

static size_t no_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	(void)p, (void)size, (void)n, (void)f;
	errno = ENOSYS;
	return 0;
}

static fwrite_fn real_fwrite(void)
{
	fwrite_fn fn = atomic_load_explicit(&real_fwrite_ptr, memory_order_relaxed);
	if (MT_LIKELY(fn != NULL))
		return fn;
	if (resolving)
		return no_fwrite;
	resolving = 1;
	fn = (fwrite_fn)mt_real_dlsym(RTLD_NEXT, "fwrite");
	resolving = 0;
	if (!fn)
		return no_fwrite;
	atomic_store_explicit(&real_fwrite_ptr, fn, memory_order_relaxed);
	return fn;
}

static __attribute__((noinline)) void seen_on_stderr(const void *p, size_t len)
{
	uint64_t bytes;
	int device;
	if (!mt_bfc_oom_parse(p, len, &bytes, &device) || !mt_enter())
		return;
	int saved_errno = errno;
	struct mt_order at = mt_record_order();
	mt_record_alloc(&(struct mt_rec){ .api = MT_API_BFCAllocator,
					  .status = 2, /* CUDA_ERROR_OUT_OF_MEMORY */
					  .oom = true,
					  .bytes = bytes,
					  .mem = MT_MEM_DEVICE },
			at);
	mt_leave();
	errno = saved_errno;
}

MT_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *stream)
{
	size_t done = real_fwrite()(p, size, n, stream);
	if (MT_UNLIKELY(stream == stderr) && done == n && size && n <= 4096 / size)
		seen_on_stderr(p, size * n);
	return done;
}
