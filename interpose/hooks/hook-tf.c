/* TensorFlow's eager entry point, TFE_Execute (its C API, version node
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
#include "hook-real.h"
#include "python.h"


MT_EXPORT void TFE_Execute(void *op, void **retvals, int *num_retvals, void *status);

typedef void (*tfe_execute_fn)(void *op, void **retvals, int *num_retvals, void *status);
static tfe_execute_fn _Atomic real_execute_ptr;

static tfe_execute_fn real_execute(void)
{
	tfe_execute_fn fn = atomic_load_explicit(&real_execute_ptr, memory_order_relaxed);
	if (MT_LIKELY(fn != NULL))
		return fn;
	fn = (tfe_execute_fn)mt_real_loaded("TFE_Execute", (void *)TFE_Execute);
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
