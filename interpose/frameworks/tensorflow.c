/* TensorFlow's adapter: its eager entry point, its BFC allocator's
 * failing call, the ResourceExhaustedError it raises into Python.
 *
 * TFE_Execute, the eager entry point (its C API, version node
 * "tensorflow" of libtensorflow_cc.so.2): every op and every function
 * call the Python API makes goes through it (TFE_Py_FastPathExecute_C,
 * TFE_Py_ExecuteCancelable in lib_pywrap_tensorflow_common.so, which
 * imports it), with the GIL released. A function (tf.function,
 * model.fit's step) runs its ops on TensorFlow's inter-op threads, which
 * have no Python frames, while the calling thread waits inside this
 * call. So the caller publishes its Python frames for the time of the
 * call, and an allocation on a thread without Python frames borrows them
 * (carry/python-launch.c; docs/architecture.md, "Frames borrowed from
 * the launching thread").
 *
 * The definition here comes first in every scope (the preload is in the
 * global scope, which a library loaded with RTLD_LOCAL searches first;
 * an unversioned definition in an object with no version definitions
 * satisfies the versioned reference). The real one is found in the
 * loaded object that defines it, since RTLD_NEXT does not reach
 * TensorFlow's libraries, loaded in a local scope. It runs untouched:
 * the same arguments, no call of ours between the caller and it that
 * could change what it sees. */
#include "frameworks.h"
#include "python.h"
#include "trace-schema.h"

#include <errno.h>

/* ---- the entry point ---- */

MT_EXPORT void TFE_Execute(void *op, void **retvals, int *num_retvals, void *status);

typedef void (*tfe_execute_fn)(void *op, void **retvals, int *num_retvals, void *status);
static tfe_execute_fn _Atomic real_execute_ptr;

static tfe_execute_fn real_execute(void)
{
	tfe_execute_fn fn = atomic_load_explicit(&real_execute_ptr, memory_order_relaxed);
	if (MT_LIKELY(fn != NULL))
		return fn;
	fn = (tfe_execute_fn)mt_framework_loaded("TFE_Execute", (void *)TFE_Execute);
	if (fn)
		atomic_store_explicit(&real_execute_ptr, fn, memory_order_relaxed);
	return fn;
}

MT_EXPORT void TFE_Execute(void *op, void **retvals, int *num_retvals, void *status)
{
	tfe_execute_fn fn = real_execute();
	if (MT_UNLIKELY(!fn))
		return; /* cannot be: only TensorFlow's libraries call it */
	mt_launch_enter();
	fn(op, retvals, num_retvals, status);
	mt_launch_leave();
}

/* ---- its BFC allocator ---- */

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
 * is this call's (stderr_line, below). jaxlib's BFC is its own, not
 * exported: JAX's OOM stays the line's or the exception's (xla.c). The
 * real one is found in TensorFlow's library (mt_framework_loaded). */
#define BFC_ALLOCATE _ZN3tsl12BFCAllocator19AllocateRawInternalEmmbm
#define BFC_ALLOCATE_NAME "_ZN3tsl12BFCAllocator19AllocateRawInternalEmmbm"
typedef void *(*bfc_allocate_fn)(void *, size_t, size_t, bool, uint64_t);
static bfc_allocate_fn _Atomic real_bfc_ptr;

/* Inside TensorFlow's BFC allocator on this thread: a line it logs there
 * is that call's failure, recorded when it returns. */
static MT_TLS int in_bfc;

MT_EXPORT void *BFC_ALLOCATE(void *self, size_t alignment, size_t bytes, bool dump_log_on_failure,
			     uint64_t freed_before);
MT_EXPORT void *BFC_ALLOCATE(void *self, size_t alignment, size_t bytes, bool dump_log_on_failure,
			     uint64_t freed_before)
{
	bfc_allocate_fn fn = atomic_load_explicit(&real_bfc_ptr, memory_order_relaxed);
	if (MT_UNLIKELY(!fn)) {
		fn = (bfc_allocate_fn)mt_framework_loaded(BFC_ALLOCATE_NAME, (void *)BFC_ALLOCATE);
		if (!fn)
			return NULL; /* cannot be: only TensorFlow's library calls it */
		atomic_store_explicit(&real_bfc_ptr, fn, memory_order_relaxed);
	}
	in_bfc++;
	void *p = fn(self, alignment, bytes, dump_log_on_failure, freed_before);
	in_bfc--;
	if (MT_UNLIKELY(!p) && dump_log_on_failure && bytes && mt_enter()) {
		atomic_fetch_add_explicit(&mt_bfc_unmatched, 1, memory_order_relaxed);
		mt_bfc_oom(bytes);
	}
	return p;
}

/* The BFC allocator's line logged inside its call on this thread is that
 * call's, recorded when it fails (XLA's reading of the line is not to see
 * it). */
static bool stderr_line(const char *text, size_t len)
{
	(void)text, (void)len;
	return in_bfc != 0;
}

/* ---- the exception ---- */

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
static __attribute__((noinline)) void seen_raised(const void *value)
{
	char text[1024];
	uint64_t bytes = 0;
	int n = mt_python_tuple_str(value, text, sizeof(text));
	bool sized = n > 0 && mt_tf_oom_parse(text, (size_t)n, &bytes);
	uint64_t ooms = atomic_load_explicit(&mt_record_ooms, memory_order_relaxed);
	atomic_store_explicit(&mt_bfc_unmatched, 0, memory_order_relaxed); /* not XLA's to match */
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
		mt_bfc_oom(bytes);
		atomic_fetch_add_explicit(&tf_ooms_seen, 1, memory_order_relaxed);
	}
}

static bool raised(const void *type, const void *value)
{
	if (MT_LIKELY(!mt_python_type_named(type, "ResourceExhaustedError")))
		return false;
	seen_raised(value);
	return true;
}

static void tensorflow_init(const struct mt_frameworks_options *opt)
{
	if (!opt->tensors)
		mt_tf_bfc_disable();
}

/* TensorFlow's adapter: its entry point and its BFC allocator's OOM are
 * the exported wrappers above, the arena's tensors tensorflow-bfc.c's
 * (its row of frameworks.def). */
const struct mt_framework mt_framework_tensorflow = { .init = tensorflow_init,
						      .stderr_line = stderr_line,
						      .raised = raised };
