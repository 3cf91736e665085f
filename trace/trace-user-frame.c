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
		/* Python */
		"libpython",
		/* memtrace */
		"libmemtrace",
		/* framework allocators */
		"libc10_cuda", "libjax",
	};
	const char *p;

	for (size_t i = 0; i < LENGTH(prefixes); i++) {
		if (starts_with(base, prefixes[i]))
			return true;
	}
	/* the python executable: python, python3, python3.12, python3.13t */
	if (!starts_with(base, "python"))
		return false;
	for (p = base + strlen("python"); isdigit((unsigned char)*p) || *p == '.'; p++)
		;
	return *p == '\0' || ((*p == 'd' || *p == 't') && p[1] == '\0');
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
	for (size_t i = 0; i < LENGTH(tf_xla); i++) {
		if (starts_with(base, tf_xla[i]))
			return strstr(function, "llocator") != NULL; /* Allocator, allocator */
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
	base = strrchr(module_path, '/');
	base = base ? base + 1 : module_path;
	return !foreign_module(base) && !framework_allocator(base, function);
}
