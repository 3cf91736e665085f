/* The descriptor guard: memtrace holds no descriptor the program could be
 * handed, and the program cannot close memtrace's (FINDINGS.md F7, F14).
 *
 * memtrace's own descriptors (the trace, its -wal, -shm and -journal, and
 * libunwind's validation pipe) are moved to high numbers when they are
 * made and kept in a small lock-free registry. The program's close,
 * close_range, closefrom, dup2 and dup3 (hook-fd.c) consult it: a close of
 * ours says EBADF, as it would without memtrace; a range skips ours; a dup
 * onto ours is the program's right, so the number becomes the program's and
 * the trace is lost (mt_fdguard_lost) with one message.
 *
 * SQLite's opens are caught in the unix VFS's "open" system call, and only
 * the trace's files are adopted: the program may use the same libsqlite3
 * for its own databases, whose descriptors pass through untouched. Once a
 * number was lost, SQLite's calls on it fail with EIO (the VFS's read, write,
 * truncate, lock and map calls), so not even a checkpoint at exit can write
 * into the program's file. docs/architecture.md, "The descriptor guard". */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS MT_FDGUARD_MAX /* the trace's 4 files, a pipe, room to spare */

/* A slot holds (kind << 24 | fd) + 1; 0 is empty. */
static _Atomic int slots[SLOTS];
static atomic_int registered; /* slots in use: 0 keeps every wrapper on its fast path */
/* Numbers the program took from the trace by dup2/dup3: SQLite must never
 * use them again. Same encoding. */
static _Atomic int lost_slots[SLOTS];
static atomic_int lost_bits; /* 1 << kind for each kind lost */

MT_TLS int mt_fdguard_unwinding;

static int encode(int fd, enum mt_fd_kind kind)
{
	return ((int)kind << 24 | fd) + 1;
}

static int slot_fd(int v)
{
	return (v - 1) & 0xffffff;
}

static enum mt_fd_kind slot_kind(int v)
{
	return (enum mt_fd_kind)((v - 1) >> 24);
}

static bool put(_Atomic int *table, int fd, enum mt_fd_kind kind)
{
	for (int i = 0; i < SLOTS; i++) {
		int empty = 0;
		if (atomic_compare_exchange_strong(&table[i], &empty, encode(fd, kind)))
			return true;
	}
	return false;
}

/* Empties fd's slot; returns its kind, or -1 when fd was not there. */
static int take(_Atomic int *table, int fd)
{
	for (int i = 0; i < SLOTS; i++) {
		int v = atomic_load_explicit(&table[i], memory_order_acquire);
		if (v && slot_fd(v) == fd && atomic_compare_exchange_strong(&table[i], &v, 0))
			return (int)slot_kind(v);
	}
	return -1;
}

static int find(_Atomic int *table, int fd)
{
	for (int i = 0; i < SLOTS; i++) {
		int v = atomic_load_explicit(&table[i], memory_order_acquire);
		if (v && slot_fd(v) == fd)
			return (int)slot_kind(v);
	}
	return -1;
}

bool mt_fdguard_any(void)
{
	return atomic_load_explicit(&registered, memory_order_relaxed) != 0;
}

bool mt_fdguard_has(int fd)
{
	return fd >= 0 && find(slots, fd) >= 0;
}

bool mt_fdguard_lost(void)
{
	return atomic_load_explicit(&lost_bits, memory_order_relaxed) != 0;
}

unsigned mt_fdguard_in_range(unsigned lo, unsigned hi, int *out)
{
	unsigned n = 0;
	for (int i = 0; i < SLOTS; i++) {
		int v = atomic_load_explicit(&slots[i], memory_order_acquire);
		if (!v || (unsigned)slot_fd(v) < lo || (unsigned)slot_fd(v) > hi)
			continue;
		unsigned j = n++;
		for (; j > 0 && out[j - 1] > slot_fd(v); j--)
			out[j] = out[j - 1];
		out[j] = slot_fd(v);
	}
	return n;
}

/* The lowest number for memtrace's descriptors: the top 64 numbers under
 * the soft RLIMIT_NOFILE, the limit taken as at most 4096 (the kernel's
 * descriptor table grows to the highest number in use, and fork copies it:
 * 1 Mi numbers, as some containers allow, would cost 8 MiB a process).
 * Under a small limit, the upper half; never below 3, never at or above the
 * limit. */
static int high_base(void)
{
	struct rlimit rl;
	rlim_t soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
	int top = soft > 4096 ? 4096 : (int)soft;
	int base = top - 64;
	if (base < top / 2)
		base = top / 2;
	if (base < 3)
		base = 3;
	return base;
}

int mt_fdguard_adopt(int fd, enum mt_fd_kind kind)
{
	int saved_errno = errno;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, high_base());
	if (high >= 0) {
		syscall(SYS_close, fd);
		fd = high;
	} /* else (limit too low, all taken): it stays where it is, guarded all the same */
	if (put(slots, fd, kind))
		atomic_fetch_add(&registered, 1);
	else
		mt_log(MT_BUG, "too many descriptors to guard; descriptor %d is not", fd);
	errno = saved_errno;
	return fd;
}

int mt_fdguard_close(int fd)
{
	int rc = (int)syscall(SYS_close, fd);
	if (take(slots, fd) >= 0)
		atomic_fetch_sub(&registered, 1);
	return rc;
}

void mt_fdguard_lose(int fd)
{
	int kind = take(slots, fd);
	if (kind < 0)
		return;
	atomic_fetch_sub(&registered, 1);
	put(lost_slots, fd, (enum mt_fd_kind)kind);
	atomic_fetch_or(&lost_bits, 1 << kind);
	if (kind == MT_FD_TRACE)
		mt_log(MT_USER, "the program replaced the trace's file descriptor %d; tracing stops",
		       fd);
	else
		mt_log(MT_USER, "the program replaced the file descriptor %d of memtrace's "
				"unwinder (libunwind's pipe); tracing stops",
		       fd);
}

/* The child inherits the parent's trace descriptors but never uses them
 * (it forgets the parent's trace): close them, so that generations of
 * forks do not pile them up. libunwind's pipe is the child's as well and
 * stays. */
void mt_fdguard_after_fork_child(void)
{
	for (int i = 0; i < SLOTS; i++) {
		int v = atomic_load(&slots[i]);
		if (v && slot_kind(v) == MT_FD_TRACE) {
			atomic_store(&slots[i], 0);
			atomic_fetch_sub(&registered, 1);
			syscall(SYS_close, slot_fd(v));
		}
		v = atomic_load(&lost_slots[i]);
		if (v && slot_kind(v) == MT_FD_TRACE)
			atomic_store(&lost_slots[i], 0);
	}
	atomic_fetch_and(&lost_bits, ~(1 << MT_FD_TRACE));
}

/* ---- SQLite's unix VFS ---- */

static _Atomic(char *) trace_name; /* SQLite's full path of the trace */

typedef int (*open_fn)(const char *, int, int);
typedef int (*close_fn)(int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*ftruncate_fn)(int, off_t);
typedef int (*fcntl_fn)(int, int, ...);
typedef int (*fchmod_fn)(int, mode_t);
typedef int (*fchown_fn)(int, uid_t, gid_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static struct {
	open_fn open;
	close_fn close;
	read_fn read;
	pread_fn pread64;
	write_fn write;
	pwrite_fn pwrite64;
	ftruncate_fn ftruncate;
	fcntl_fn fcntl;
	fchmod_fn fchmod;
	fchown_fn fchown;
	mmap_fn mmap;
} prev;

static bool is_trace_file(const char *path)
{
	const char *name = atomic_load_explicit(&trace_name, memory_order_acquire);
	if (!name || !path)
		return false;
	size_t n = strlen(name);
	if (strncmp(path, name, n))
		return false;
	const char *rest = path + n;
	return !*rest || !strcmp(rest, "-wal") || !strcmp(rest, "-shm") ||
	       !strcmp(rest, "-journal");
}

/* SQLite opens every file through here, the program's databases too. It
 * takes only descriptors >= 3 and reopens otherwise; ours are high. */
static int vfs_open(const char *path, int flags, int mode)
{
	int fd = prev.open(path, flags, mode);
	if (fd < 0)
		return fd;
	if (is_trace_file(path))
		return mt_fdguard_adopt(fd, MT_FD_TRACE);
	/* the program's database got a number the trace lost: it is the
	 * program's file now, not one to refuse */
	if (MT_UNLIKELY(mt_fdguard_lost()))
		take(lost_slots, fd);
	return fd;
}

static bool is_lost(int fd)
{
	return MT_UNLIKELY(mt_fdguard_lost()) && find(lost_slots, fd) >= 0;
}

static int vfs_close(int fd)
{
	if (mt_fdguard_any() && mt_fdguard_has(fd))
		return mt_fdguard_close(fd);
	if (is_lost(fd)) {
		take(lost_slots, fd); /* the program's now: not ours to close */
		return 0;
	}
	return prev.close(fd);
}

#define REFUSE_LOST(fd, failed)                                                                \
	do {                                                                                   \
		if (is_lost(fd)) {                                                             \
			errno = EIO;                                                           \
			return failed;                                                         \
		}                                                                              \
	} while (0)

static ssize_t vfs_read(int fd, void *buf, size_t n)
{
	REFUSE_LOST(fd, -1);
	return prev.read(fd, buf, n);
}

static ssize_t vfs_pread64(int fd, void *buf, size_t n, off_t off)
{
	REFUSE_LOST(fd, -1);
	return prev.pread64(fd, buf, n, off);
}

static ssize_t vfs_write(int fd, const void *buf, size_t n)
{
	REFUSE_LOST(fd, -1);
	return prev.write(fd, buf, n);
}

static ssize_t vfs_pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	REFUSE_LOST(fd, -1);
	return prev.pwrite64(fd, buf, n, off);
}

static int vfs_ftruncate(int fd, off_t len)
{
	REFUSE_LOST(fd, -1);
	return prev.ftruncate(fd, len);
}

/* SQLite passes one argument at most: an int or a pointer. */
static int vfs_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	REFUSE_LOST(fd, -1);
	return prev.fcntl(fd, cmd, arg);
}

static int vfs_fchmod(int fd, mode_t mode)
{
	REFUSE_LOST(fd, -1);
	return prev.fchmod(fd, mode);
}

static int vfs_fchown(int fd, uid_t uid, gid_t gid)
{
	REFUSE_LOST(fd, -1);
	return prev.fchown(fd, uid, gid);
}

static void *vfs_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	REFUSE_LOST(fd, MAP_FAILED);
	return prev.mmap(addr, len, prot, flags, fd, off);
}

struct vfs_override {
	const char *name;
	void *ours;
	void **prev;
};

static bool override(sqlite3_vfs *vfs, const struct vfs_override *o)
{
	sqlite3_syscall_ptr p = vfs->xGetSystemCall(vfs, o->name);
	if (!p)
		return false;
	*o->prev = (void *)p;
	return vfs->xSetSystemCall(vfs, o->name, (sqlite3_syscall_ptr)o->ours) == SQLITE_OK;
}

static bool install(sqlite3_vfs *vfs)
{
	const struct vfs_override all[] = {
		/* close before open: an adopted descriptor must be closed by us */
		{ "close", (void *)vfs_close, (void **)&prev.close },
		{ "open", (void *)vfs_open, (void **)&prev.open },
		{ "read", (void *)vfs_read, (void **)&prev.read },
		{ "pread64", (void *)vfs_pread64, (void **)&prev.pread64 },
		{ "write", (void *)vfs_write, (void **)&prev.write },
		{ "pwrite64", (void *)vfs_pwrite64, (void **)&prev.pwrite64 },
		{ "ftruncate", (void *)vfs_ftruncate, (void **)&prev.ftruncate },
		{ "fcntl", (void *)vfs_fcntl, (void **)&prev.fcntl },
		{ "fchmod", (void *)vfs_fchmod, (void **)&prev.fchmod },
		{ "fchown", (void *)vfs_fchown, (void **)&prev.fchown },
		{ "mmap", (void *)vfs_mmap, (void **)&prev.mmap },
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!override(vfs, &all[i]) && i < 2)
			return false; /* without open, nothing is adopted */
	return true;
}

static bool can_override(const sqlite3_vfs *vfs)
{
	return vfs->iVersion >= 3 && vfs->xSetSystemCall && vfs->xGetSystemCall;
}

bool mt_fdguard_sqlite(const char *path)
{
	static bool installed; /* under the start lock (record.c) */
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL); /* the one the writer opens with */
	if (!vfs)
		return false;
	/* A default VFS of the program's that does not expose system calls
	 * is a shim over "unix" (probably): the unix VFSs share one table. */
	sqlite3_vfs *sys = can_override(vfs) ? vfs : sqlite3_vfs_find("unix");
	if (!sys || !can_override(sys))
		return false;
	char *full = malloc((size_t)vfs->mxPathname + 1);
	if (!full || vfs->xFullPathname(vfs, path, vfs->mxPathname + 1, full) != SQLITE_OK) {
		free(full);
		return false;
	}
	/* a fork child's trace replaces its parent's name; the old string may
	 * still be read by another thread, so it is left allocated */
	atomic_store_explicit(&trace_name, full, memory_order_release);
	if (!installed)
		installed = install(sys);
	return installed;
}
