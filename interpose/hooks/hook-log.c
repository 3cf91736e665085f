/* The program's fwrite and PyErr_SetObject, where a framework allocator's
 * out-of-memory failure shows when no CUDA call failed: a BFC allocator
 * (XLA's, TensorFlow's) logs it on stderr through absl, one fwrite per
 * line, before it returns the failure; a framework raises it into Python
 * as an exception. Each write to stderr of at most 4 KiB and each
 * exception set goes to the framework adapters
 * (mt_frameworks_stderr, mt_frameworks_raised: frameworks.h), whose
 * rows read them (xla.c, tensorflow.c).
 *
 * Every other fwrite is one comparison and a tail call. The real fwrite
 * runs first, untouched; errno is what it left.
 *
 * jaxlib and TensorFlow set their exceptions with PyErr_SetObject(type,
 * message), which resolves to this library's, since the preload comes
 * first. The real one runs after the adapters, untouched. A libpython
 * built without -fno-semantic-interposition sends its own calls here too
 * (through the global scope, where the preload is first), and one loaded
 * privately by an embedding program is past RTLD_NEXT's reach:
 * mt_python_real finds its definition. */
#include "hook-real.h"
#include "python.h"

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

MT_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *stream)
{
	size_t done = real_fwrite()(p, size, n, stream);
	if (MT_UNLIKELY(stream == stderr) && done == n && size && n <= 4096 / size)
		mt_frameworks_stderr(p, size * n);
	return done;
}

/* ---- the exception ---- */

struct _object;
typedef void (*set_object_fn)(struct _object *, struct _object *);
static set_object_fn _Atomic real_set_object_ptr;

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
	if (value)
		mt_frameworks_raised(type, value);
	fn(type, value);
}
