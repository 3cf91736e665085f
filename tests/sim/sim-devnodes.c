/* The simulated driver's device nodes (libcudasim-devnodes.so): a TEST
 * FIXTURE, preloaded by scripts/sim-run. NVIDIA's kernel driver makes
 * /dev/nvidiactl and /dev/nvidia0, /dev/nvidia1... and JAX looks for them
 * before it starts its CUDA backend: jax._src.hardware_utils
 * .has_visible_nvidia_gpu() is os.path.exists() of /dev/nvidia0,
 * /dev/nvidiactl or /dev/dxg, and without one of them jax 0.10 skips the
 * "cuda" platform (then fails "assert _default_backend is not None" when
 * JAX_PLATFORMS=cuda). No file is made: stat() and access() of those
 * paths answer as for the real nodes (character devices of major 195,
 * mode 0666) for the devices the simulated driver has
 * (CUDASIM_DEVICE_COUNT, read as sim-config.c reads it); every other path,
 * and every other call, is the C library's. Opening them still fails
 * (ENOENT): nothing here talks to a kernel driver. */
/* stat and stat64 are two symbols here; with 64-bit offsets the headers
 * would rename the first to the second. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sim-config.h"

#define EXPORT __attribute__((visibility("default")))
#define SIM_NVIDIA_MAJOR 195
#define SIM_NVIDIACTL_MINOR 255

EXPORT int stat(const char *path, struct stat *st);
EXPORT int stat64(const char *path, struct stat64 *st);
EXPORT int access(const char *path, int mode);

/* The minor number of PATH when it is one of the simulated nodes, else -1. */
static int node_minor(const char *path)
{
	struct sim_config cfg;
	char *end;
	long n;

	if (!path || strncmp(path, "/dev/nvidia", 11) != 0)
		return -1;
	path += 11;
	if (strcmp(path, "ctl") == 0)
		return SIM_NVIDIACTL_MINOR;
	if (*path < '0' || *path > '9')
		return -1;
	n = strtol(path, &end, 10);
	if (*end || !sim_config_load(&cfg) || n >= cfg.device_count)
		return -1;
	return (int)n;
}

static void fill(struct stat64 *st, int minor)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(SIM_NVIDIA_MAJOR, minor);
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

int stat64(const char *path, struct stat64 *st)
{
	static int (*real)(const char *, struct stat64 *);
	int minor = node_minor(path);

	if (minor >= 0) {
		fill(st, minor);
		return 0;
	}
	if (!real)
		real = (int (*)(const char *, struct stat64 *))dlsym(RTLD_NEXT, "stat64");
	return real ? real(path, st) : (errno = ENOSYS, -1);
}

int stat(const char *path, struct stat *st)
{
	static int (*real)(const char *, struct stat *);
	int minor = node_minor(path);

	if (minor >= 0) {
		/* x86_64: struct stat and struct stat64 are one layout */
		_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat layout");
		fill((struct stat64 *)(void *)st, minor);
		return 0;
	}
	if (!real)
		real = (int (*)(const char *, struct stat *))dlsym(RTLD_NEXT, "stat");
	return real ? real(path, st) : (errno = ENOSYS, -1);
}

int access(const char *path, int mode)
{
	static int (*real)(const char *, int);

	if (node_minor(path) >= 0)
		return (mode & X_OK) ? (errno = EACCES, -1) : 0;
	if (!real)
		real = (int (*)(const char *, int))dlsym(RTLD_NEXT, "access");
	return real ? real(path, mode) : (errno = ENOSYS, -1);
}
