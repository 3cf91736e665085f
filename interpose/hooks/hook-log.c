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
 * TensorFlow's BFC allocator is seen before its line, at its own call,
 * which the log level does not stop (below); its line is then ignored.
 *
 * Every other fwrite is one comparison and a tail call. The real fwrite
 * runs first, untouched; errno is what it left.
 *
 * A program that silences the log (TF_CPP_MIN_LOG_LEVEL=2) has no such
 * line; the same failure then shows as the exception XLA raises into
 * Python: jaxlib sets it with PyErr_SetObject(type, message), which
 * resolves to this library's, since the preload comes first. Its message
 * (framework-oom.c) becomes the same OOM event, the request to the three
 * figures the message gives. One failure, one event: an exception after a
 * logged line is that line's failure. Every other PyErr_SetObject is a
 * type comparison (is the value a str?) and a call; the real one runs
 * after, untouched. TensorFlow's ResourceExhaustedError is its own case
 * (seen_tf_raised). A libpython built without -fno-semantic-interposition
 * sends its own calls here too (through the global scope, where the
 * preload is first), and one loaded privately by an embedding program is
 * past RTLD_NEXT's reach: mt_python_real finds its definition. */
#include "hook-real.h"
#include "python.h"
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

/* BFC lines recorded and not yet matched by an exception */
static _Atomic unsigned logged;

static void record_oom(uint64_t bytes)
{
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

/* Inside TensorFlow's BFC allocator on this thread (below): a line it
 * logs there is that call's failure, recorded when it returns. */
static MT_TLS int in_bfc;

static __attribute__((noinline)) void seen_on_stderr(const void *p, size_t len)
{
	uint64_t bytes;
	int device;
	if (in_bfc || !mt_bfc_oom_parse(p, len, &bytes, &device) || !mt_enter())
		return;
	atomic_fetch_add_explicit(&logged, 1, memory_order_relaxed);
	record_oom(bytes);
}

MT_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *stream)
{
	size_t done = real_fwrite()(p, size, n, stream);
	if (MT_UNLIKELY(stream == stderr) && done == n && size && n <= 4096 / size)
		seen_on_stderr(p, size * n);
	return done;
}

/* ---- TensorFlow's BFC allocator ---- */

/* tsl::BFCAllocator::AllocateRawInternal(size_t alignment, size_t bytes,
 * bool dump_log_on_failure, uint64_t freed_before), exported by
 * libtensorflow_framework.so.2 and called through its PLT by every path
 * of AllocateRaw (the first try, each retry, the last). It fails with
 * dump_log_on_failure set exactly where it would log the "ran out of
 * memory" line: the last try of a request the arena cannot serve, after
 * the retries (a request whose caller takes a failure, a scratch buffer,
 * is tried without it). That is the OOM, with the request's own bytes
 * (before the arena rounds them), whether the log is silenced or not:
 * TF_CPP_MIN_LOG_LEVEL=2 stops the line, not the call. Under
 * TF_FORCE_GPU_ALLOW_GROWTH the silenced error names no tensor
 * ("SameWorkerRecvDone unable to allocate output tensor."): this call is
 * the only place its size is. Recorded as the line was, on the
 * allocator's thread before the failure returns; the line, when it comes,
 * is this call's. jaxlib's BFC is its own, not exported: JAX's OOM stays
 * the line's or the exception's. The real one is found in TensorFlow's
 * library (hook-real.c: mt_real_loaded). */
#define BFC_ALLOCATE _ZN3tsl12BFCAllocator19AllocateRawInternalEmmbm
#define BFC_ALLOCATE_NAME "_ZN3tsl12BFCAllocator19AllocateRawInternalEmmbm"
typedef void *(*bfc_allocate_fn)(void *, size_t, size_t, bool, uint64_t);
static bfc_allocate_fn _Atomic real_bfc_ptr;

MT_EXPORT void *BFC_ALLOCATE(void *self, size_t alignment, size_t bytes, bool dump_log_on_failure,
			     uint64_t freed_before);
MT_EXPORT void *BFC_ALLOCATE(void *self, size_t alignment, size_t bytes, bool dump_log_on_failure,
			     uint64_t freed_before)
{
	bfc_allocate_fn fn = atomic_load_explicit(&real_bfc_ptr, memory_order_relaxed);
	if (MT_UNLIKELY(!fn)) {
		fn = (bfc_allocate_fn)mt_real_loaded(BFC_ALLOCATE_NAME, (void *)BFC_ALLOCATE);
		if (!fn)
			return NULL; /* cannot be: only TensorFlow's library calls it */
		atomic_store_explicit(&real_bfc_ptr, fn, memory_order_relaxed);
	}
	in_bfc++;
	void *p = fn(self, alignment, bytes, dump_log_on_failure, freed_before);
	in_bfc--;
	if (MT_UNLIKELY(!p) && dump_log_on_failure && bytes && mt_enter()) {
		atomic_fetch_add_explicit(&logged, 1, memory_order_relaxed);
		record_oom(bytes);
	}
	return p;
}

/* ---- the exception ---- */

struct _object;
typedef void (*set_object_fn)(struct _object *, struct _object *);
static set_object_fn _Atomic real_set_object_ptr;

static __attribute__((noinline)) void seen_raised(const struct _object *value)
{
	char text[160];
	uint64_t bytes;
	bool exact;
	int n = mt_python_str(value, text, sizeof(text));
	if (n <= 0 || !mt_xla_oom_parse(text, (size_t)n, &bytes, &exact))
		return;
	if (atomic_exchange_explicit(&logged, 0, memory_order_relaxed))
		return; /* the line came first: recorded then, exactly */
	if (!mt_enter())
		return;
	record_oom(bytes);
}

/* OOMs recorded (mt_record_ooms) when TensorFlow last raised one */
static _Atomic uint64_t tf_ooms_seen;

/* TensorFlow's ResourceExhaustedError, on the thread that called into
 * TensorFlow (model.fit's), its value a tuple with the message
 * (framework-oom.c). When an OOM was recorded since the last one raised
 * (the allocator's failed call or line, a CUDA call that failed under
 * cuda_malloc_async), it was on the executor thread whose op failed,
 * with no Python frame: this is where that failure reached the program,
 * recorded as such (MT_EV_OOM_RAISED, this thread's stack, with the
 * user's line); the report gives it to that OOM. Else (a TensorFlow
 * whose allocator call is not ours to see, the log silenced) the
 * exception is the OOM, when it names the tensor. */
static __attribute__((noinline)) void seen_tf_raised(const struct _object *value)
{
	char text[1024];
	uint64_t bytes = 0;
	int n = mt_python_tuple_str(value, text, sizeof(text));
	bool sized = n > 0 && mt_tf_oom_parse(text, (size_t)n, &bytes);
	uint64_t ooms = atomic_load_explicit(&mt_record_ooms, memory_order_relaxed);
	atomic_store_explicit(&logged, 0, memory_order_relaxed); /* not XLA's to match */
	if (atomic_exchange_explicit(&tf_ooms_seen, ooms, memory_order_relaxed) != ooms) {
		if (!mt_enter())
			return;
		int saved_errno = errno;
		mt_record_event(&(struct mt_rec){ .api = MT_API_BFCAllocator,
						  .kind = MT_EV_OOM_RAISED,
						  .bytes = bytes,
						  .mem = MT_MEM_DEVICE });
		mt_leave();
		errno = saved_errno;
		return;
	}
	if (sized && mt_enter()) {
		record_oom(bytes);
		atomic_fetch_add_explicit(&tf_ooms_seen, 1, memory_order_relaxed);
	}
}

MT_EXPORT void PyErr_SetObject(struct _object *type, struct _object *value);
MT_EXPORT void PyErr_SetObject(struct _object *type, struct _object *value)
{
	set_object_fn fn = atomic_load_explicit(&real_set_object_ptr, memory_order_relaxed);
	if (MT_UNLIKELY(!fn)) {
		fn = (set_object_fn)mt_python_real("PyErr_SetObject");
		if (!fn)
			return; /* no interpreter defines it: nobody to call */
		atomic_store_explicit(&real_set_object_ptr, fn, memory_order_relaxed);
	}
	if (value) {
		if (MT_UNLIKELY(mt_python_type_named(type, "ResourceExhaustedError")))
			seen_tf_raised(value);
		else
			seen_raised(value);
	}
	fn(type, value);
}
