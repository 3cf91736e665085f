/* Whose frame is it (trace-user-frame.h). */
#include "trace-user-frame.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#define LENGTH(a) (sizeof(a) / sizeof((a)[0]))

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool framework_package(const char *pkg)
{
	static const char *const names[] = {
		"torch/", "tensorflow/", "keras/", "jax/", "jaxlib/", "cupy/", "cupyx/",
		/* the frameworks' own layers and optimizers: the user's line is
		 * the call of optimizer.init, of a flax module, not theirs */
		"tf_keras/", "optax/", "flax/", "haiku/", "equinox/",
	};

	for (size_t i = 0; i < LENGTH(names); i++) {
		if (starts_with(pkg, names[i]))
			return true;
	}
	return false;
}

bool trace_python_frame_is_user(const char *file)
{
	const char *pk;

	if (!file)
		return true;
	if (starts_with(file, "<frozen "))
		return false;
	pk = strstr(file, "site-packages/");
	if (!pk)
		pk = strstr(file, "dist-packages/");
	if (pk)
		return !framework_package(pk + strlen("site-packages/"));
	return !strstr(file, "/lib/python3.");
}

/* the python executable: python, python3, python3.12, python3.13t */
static bool python_executable(const char *base)
{
	const char *p;

	if (!starts_with(base, "python"))
		return false;
	for (p = base + strlen("python"); isdigit((unsigned char)*p) || *p == '.'; p++)
		;
	return *p == '\0' || ((*p == 'd' || *p == 't') && p[1] == '\0');
}

/* Modules whose every frame is someone else's: CUDA, the C and C++
 * runtimes, the interpreter, memtrace, allocating layers of frameworks. */
static bool foreign_module(const char *base)
{
	static const char *const prefixes[] = {
		/* CUDA */
		"libcuda.", "libcudart", "libcublas", "libcudnn", "libcufft", "libcurand",
		"libcusparse", "libcusolver", "libcupti", "libnccl", "libnvrtc", "libnvJitLink",
		"libnvToolsExt", "libnvperf", "libcufile", "libnvidia-",
		/* C and C++ runtimes, the dynamic loader */
		"libc.so", "libc-", "ld-linux", "ld.so", "libstdc++", "libgcc_s", "libffi",
		"libpthread", "libdl.so", "libdl-",
		/* Python, and its own extension modules (_ctypes, _ffi...) */
		"libpython", "_ctypes.", "_ctypes_test.",
		/* memtrace */
		"libmemtrace",
		/* framework allocators */
		"libc10_cuda", "libjax",
	};
	for (size_t i = 0; i < LENGTH(prefixes); i++) {
		if (starts_with(base, prefixes[i]))
			return true;
	}
	return python_executable(base);
}

bool trace_module_is_runtime(const char *module_path)
{
	static const char *const prefixes[] = {
		"libpython", "_ctypes.", "libffi", "libc.so", "libc-", "ld-linux", "ld.so",
	};
	const char *base;

	if (!module_path || !*module_path)
		return false;
	if (strstr(module_path, "/lib-dynload/"))
		return true;
	base = strrchr(module_path, '/');
	base = base ? base + 1 : module_path;
	for (size_t i = 0; i < LENGTH(prefixes); i++) {
		if (starts_with(base, prefixes[i]))
			return true;
	}
	return python_executable(base);
}

/* Modules where only the allocator is someone else's. */
static bool framework_allocator(const char *base, const char *function)
{
	static const char *const tf_xla[] = {
		"libtensorflow_framework", "libtensorflow_cc", "_pywrap_tensorflow_internal",
		"xla_extension", "libxla",
	};

	if (!function)
		return false;
	if (starts_with(base, "libtorch_cuda"))
		return strstr(function, "CUDACachingAllocator") != NULL;
	/* the allocator, and the logging through which its own OOM is seen
	 * (absl's LogMessage and sinks: interpose/frameworks/framework-oom.c); the
	 * library's summary reads the names mangled ("12log_internal10Log") */
	for (size_t i = 0; i < LENGTH(tf_xla); i++) {
		if (starts_with(base, tf_xla[i]))
			return strstr(function, "llocator") != NULL || /* Allocator, allocator */
			       strstr(function, "log_internal") != NULL;
	}
	return false;
}

bool trace_native_frame_is_user(const char *module_path, const char *function)
{
	const char *base;

	if (!module_path || !*module_path)
		return false;
	/* CuPy's allocator, and its bindings of the runtime */
	if (strstr(module_path, "/cupy/cuda/memory.") ||
	    strstr(module_path, "/cupy_backends/cuda/api/"))
		return false;
	/* the interpreter's standard extension modules */
	if (strstr(module_path, "/lib-dynload/"))
		return false;
	base = strrchr(module_path, '/');
	base = base ? base + 1 : module_path;
	return !foreign_module(base) && !framework_allocator(base, function);
}

static bool view_user(const struct trace_frame_view *v)
{
	if (v->python)
		return (v->function || v->file) && trace_python_frame_is_user(v->file);
	return v->module_path && !v->cuda_header &&
	       trace_native_frame_is_user(v->module_path, v->function);
}

void trace_user_frames(uint32_t depth, trace_frame_at_fn frame_at, void *ctx,
		       struct trace_user_frames *out)
{
	uint32_t unnamed = TRACE_USER_NONE;

	*out = (struct trace_user_frames){ TRACE_USER_NONE, TRACE_USER_NONE, TRACE_USER_NONE,
					   TRACE_USER_NONE };
	for (uint32_t i = 0; i < depth; i++) {
		struct trace_frame_view v = { 0 };

		if (!frame_at(ctx, i, &v) || !view_user(&v))
			continue;
		if (v.python) {
			if (out->python == TRACE_USER_NONE)
				out->python = i;
			else if (out->python_caller == TRACE_USER_NONE)
				out->python_caller = i;
		} else if (!v.function) {
			if (unnamed == TRACE_USER_NONE)
				unnamed = i;
		} else if (out->native == TRACE_USER_NONE) {
			out->native = i;
		} else if (out->native_caller == TRACE_USER_NONE) {
			out->native_caller = i;
		}
	}
	/* an address in the user's module says less than its caller's name */
	if (out->native == TRACE_USER_NONE)
		out->native = unnamed;
}

uint32_t trace_user_frame(const struct trace_user_frames *u, uint32_t *caller)
{
	bool py = u->python != TRACE_USER_NONE;

	if (caller)
		*caller = py ? u->python_caller : u->native_caller;
	return py ? u->python : u->native;
}
