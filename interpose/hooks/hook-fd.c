/* The program's calls that close or replace descriptors, and the pipe
 * libunwind makes: the other half of the descriptor guard (fd-guard.c).
 *
 * Until memtrace holds a descriptor (no trace started) every wrapper is one
 * relaxed load and a tail call. After that, a descriptor of memtrace's looks
 * closed to the program: close says EBADF, close_range and closefrom close
 * everything around it, and a dup2/dup3 onto it goes through (the program
 * wants that number) and ends the trace. errno is what the real call left.
 *
 * The real functions are the next definitions (RTLD_NEXT), looked up at
 * load (mt_hook_fd_init) so that a call from a signal handler finds them
 * ready; a wrapper called before that, by another library's constructor,
 * looks up on its own, and a lookup that fails or recurses uses the
 * system call. */
#include "hook-real.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static MT_TLS int resolving;

static int sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static int sys_close_range(unsigned lo, unsigned hi, int flags)
{
	return (int)syscall(SYS_close_range, lo, hi, flags);
}

static void sys_closefrom(int lowfd)
{
	syscall(SYS_close_range, lowfd < 0 ? 0u : (unsigned)lowfd, ~0u, 0);
}

static int sys_dup2(int oldfd, int newfd)
{
	return (int)syscall(SYS_dup2, oldfd, newfd);
}

static int sys_dup3(int oldfd, int newfd, int flags)
{
	return (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

static int sys_pipe(int fds[2])
{
	return (int)syscall(SYS_pipe2, fds, 0);
}

static int sys_pipe2(int fds[2], int flags)
{
	return (int)syscall(SYS_pipe2, fds, flags);
}

#define MT_REAL_LIBC(name, ret, params)                                                        \
	typedef ret(*name##_fn) params;                                                        \
	static name##_fn _Atomic real_##name##_ptr;                                            \
	static name##_fn real_##name(void)                                                     \
	{                                                                                      \
		name##_fn fn = atomic_load_explicit(&real_##name##_ptr, memory_order_relaxed); \
		if (MT_LIKELY(fn != NULL))                                                     \
			return fn;                                                             \
		if (resolving)                                                                 \
			return sys_##name;                                                     \
		resolving = 1;                                                                 \
		fn = (name##_fn)mt_real_dlsym(RTLD_NEXT, #name);                               \
		resolving = 0;                                                                 \
		if (!fn)                                                                       \
			fn = sys_##name;                                                       \
		atomic_store_explicit(&real_##name##_ptr, fn, memory_order_relaxed);           \
		return fn;                                                                     \
	}

MT_REAL_LIBC(close, int, (int))
MT_REAL_LIBC(close_range, int, (unsigned, unsigned, int))
MT_REAL_LIBC(closefrom, void, (int))
MT_REAL_LIBC(dup2, int, (int, int))
MT_REAL_LIBC(dup3, int, (int, int, int))
MT_REAL_LIBC(pipe, int, (int[2]))
MT_REAL_LIBC(pipe2, int, (int[2], int))

void mt_hook_fd_init(void)
{
	real_close();
	real_close_range();
	real_closefrom();
	real_dup2();
	real_dup3();
	real_pipe();
	real_pipe2();
}

/* ---- closing ---- */

MT_EXPORT int close(int fd)
{
	if (MT_LIKELY(!mt_fdguard_any()) || !mt_fdguard_has(fd))
		return real_close()(fd);
	if (mt_fdguard_unwinding)
		return mt_fdguard_close(fd); /* libunwind remaking its pipe */
	errno = EBADF; /* what the program would see without memtrace */
	return -1;
}

/* The real close_range on the parts of [lo, hi] between memtrace's
 * descriptors. */
static int close_around(unsigned lo, unsigned hi, int flags)
{
	int ours[MT_FDGUARD_MAX];
	unsigned n = mt_fdguard_in_range(lo, hi, ours);
	close_range_fn real = real_close_range();
	unsigned from = lo;
	for (unsigned i = 0; i < n; i++) {
		unsigned fd = (unsigned)ours[i]; /* < 2^24: fd + 1 cannot wrap */
		if (fd > from && real(from, fd - 1, flags))
			return -1;
		from = fd + 1;
	}
	if (from <= hi && real(from, hi, flags))
		return -1;
	return 0;
}

MT_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
	/* CLOSE_RANGE_CLOEXEC closes nothing (ours are close-on-exec
	 * already); bad arguments fail as they would */
	if (MT_LIKELY(!mt_fdguard_any()) || lo > hi || (flags & ~CLOSE_RANGE_UNSHARE))
		return real_close_range()(lo, hi, flags);
	return close_around(lo, hi, flags);
}

/* A kernel without close_range (before 5.9): one close per number, up to
 * the soft limit, as glibc's own fallback does from /proc/self/fd. */
static void close_each_from(unsigned lo)
{
	struct rlimit rl;
	rlim_t top = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
	if (top > (1u << 20))
		top = 1u << 20;
	close_fn real = real_close();
	for (unsigned fd = lo; fd < top; fd++)
		if (!mt_fdguard_has((int)fd))
			real((int)fd);
}

/* glibc's closefrom calls its internal close_range, not ours: it needs its
 * own wrapper. */
MT_EXPORT void closefrom(int lowfd)
{
	if (MT_LIKELY(!mt_fdguard_any())) {
		real_closefrom()(lowfd);
		return;
	}
	int saved_errno = errno;
	unsigned lo = lowfd < 0 ? 0u : (unsigned)lowfd;
	if (close_around(lo, ~0u, 0) != 0)
		close_each_from(lo);
	errno = saved_errno;
}

/* ---- replacing ---- */

/* A dup onto one of ours that will succeed: the number is the program's
 * from now on. (An invalid oldfd fails in the real call and changes
 * nothing.) */
static void before_dup(int oldfd, int newfd)
{
	if (oldfd == newfd || !mt_fdguard_has(newfd))
		return;
	int saved_errno = errno;
	if (fcntl(oldfd, F_GETFD) != -1)
		mt_fdguard_lose(newfd);
	errno = saved_errno;
}

MT_EXPORT int dup2(int oldfd, int newfd)
{
	if (MT_UNLIKELY(mt_fdguard_any()))
		before_dup(oldfd, newfd);
	return real_dup2()(oldfd, newfd);
}

MT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (MT_UNLIKELY(mt_fdguard_any()))
		before_dup(oldfd, newfd);
	return real_dup3()(oldfd, newfd, flags);
}

/* ---- libunwind's pipe ---- */

static void adopt_pipe(int fds[2])
{
	fds[0] = mt_fdguard_adopt(fds[0], MT_FD_UNWIND);
	fds[1] = mt_fdguard_adopt(fds[1], MT_FD_UNWIND);
}

MT_EXPORT int pipe(int fds[2])
{
	if (MT_LIKELY(!mt_fdguard_unwinding))
		return real_pipe()(fds);
	int rc = real_pipe()(fds);
	if (rc == 0)
		adopt_pipe(fds);
	return rc;
}

MT_EXPORT int pipe2(int fds[2], int flags)
{
	if (MT_LIKELY(!mt_fdguard_unwinding))
		return real_pipe2()(fds, flags);
	int rc = real_pipe2()(fds, flags);
	if (rc == 0)
		adopt_pipe(fds);
	return rc;
}
