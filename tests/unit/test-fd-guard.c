/* fd-guard.c without preload: descriptors moved high and kept, SQLite's
 * opens of the trace adopted and the program's databases left alone, a
 * lost number refused to SQLite, the fork child's registry. (The program's
 * side, close/closefrom/dup2 through the exported wrappers, is
 * tests/reliability's fdguard.) Check runs each test in its own process, so
 * each starts with an empty registry. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core.h"
#include "writer.h"

/* A soft limit of 1024: memtrace's numbers start at 960. */
static void limit_1024(void)
{
	struct rlimit rl;
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert(rl.rlim_max >= 1024);
	rl.rlim_cur = 1024;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static int open_null(void)
{
	int fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(adopt_moves_high)
{
	limit_1024();
	ck_assert(!mt_fdguard_any());
	int low = open_null();
	int fd = mt_fdguard_adopt(low, MT_FD_TRACE);
	ck_assert_int_eq(fd, 960);
	ck_assert_int_eq(fcntl(low, F_GETFD), -1); /* the low number is free again */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	ck_assert(mt_fdguard_any() && mt_fdguard_has(fd) && !mt_fdguard_has(low));
	ck_assert_int_eq(mt_fdguard_close(fd), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
	ck_assert(!mt_fdguard_any() && !mt_fdguard_has(fd));
}
END_TEST

START_TEST(in_range_sorted)
{
	limit_1024();
	int a = mt_fdguard_adopt(open_null(), MT_FD_TRACE);
	int b = mt_fdguard_adopt(open_null(), MT_FD_UNWIND);
	int c = mt_fdguard_adopt(open_null(), MT_FD_TRACE);
	ck_assert(a == 960 && b == 961 && c == 962);
	mt_fdguard_close(b);
	b = mt_fdguard_adopt(open_null(), MT_FD_UNWIND); /* 961 again, in another slot */
	int out[MT_FDGUARD_MAX];
	ck_assert_uint_eq(mt_fdguard_in_range(0, ~0u, out), 3);
	ck_assert(out[0] == 960 && out[1] == 961 && out[2] == 962);
	ck_assert_uint_eq(mt_fdguard_in_range(961, 961, out), 1);
	ck_assert_int_eq(out[0], 961);
	ck_assert_uint_eq(mt_fdguard_in_range(3, 959, out), 0);
}
END_TEST

static char dir[PATH_MAX];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "%s/mt-fdguard-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static sqlite3 *open_wal(const char *name)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	sqlite3 *db;
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); "
					  "INSERT INTO t VALUES (1);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	return db;
}

/* The descriptor open on dir/name, or -1. */
static int fd_of(const char *name)
{
	char want[PATH_MAX + 32], got[PATH_MAX + 32];
	snprintf(want, sizeof(want), "%s/%s", dir, name);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;
	while (d && (e = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), e->d_name, got, sizeof(got) - 1);
		if (n > 0 && (got[n] = '\0', !strcmp(got, want)))
			fd = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

START_TEST(sqlite_trace_files_only)
{
	limit_1024();
	make_dir();
	char trace[PATH_MAX + 32];
	snprintf(trace, sizeof(trace), "%s/t.db", dir);
	ck_assert(mt_fdguard_sqlite(trace));
	sqlite3 *ours = open_wal("t.db"), *theirs = open_wal("other.db");
	static const char *const files[] = { "t.db", "t.db-wal", "t.db-shm" };
	for (int i = 0; i < 3; i++) {
		int fd = fd_of(files[i]);
		ck_assert_msg(fd >= 960 && mt_fdguard_has(fd), "%s: %d", files[i], fd);
	}
	static const char *const others[] = { "other.db", "other.db-wal", "other.db-shm" };
	for (int i = 0; i < 3; i++) {
		int fd = fd_of(others[i]);
		ck_assert_msg(fd >= 3 && fd < 960 && !mt_fdguard_has(fd), "%s: %d", others[i], fd);
	}
	ck_assert_int_eq(sqlite3_close(ours), SQLITE_OK);
	ck_assert(!mt_fdguard_any()); /* SQLite's closes went through the guard */
	ck_assert_int_eq(fd_of("t.db"), -1);
	ck_assert_int_eq(sqlite3_close(theirs), SQLITE_OK);
	remove_dir();
}
END_TEST

/* The program took the -wal's number (dup2): SQLite's calls on it fail,
 * its close leaves it open, and the program's file holds its own bytes. */
START_TEST(lost_number_refused)
{
	limit_1024();
	make_dir();
	char trace[PATH_MAX + 32], mine[PATH_MAX + 32];
	snprintf(trace, sizeof(trace), "%s/t.db", dir);
	snprintf(mine, sizeof(mine), "%s/mine", dir);
	ck_assert(mt_fdguard_sqlite(trace));
	sqlite3 *db = open_wal("t.db");
	int wal = fd_of("t.db-wal");
	int fd = open(mine, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_eq(write(fd, "mine\n", 5), 5);
	ck_assert(!mt_fdguard_lost());
	mt_fdguard_lose(wal);
	ck_assert(mt_fdguard_lost() && !mt_fdguard_has(wal));
	ck_assert_int_eq(dup2(fd, wal), wal);
	close(fd);
	ck_assert_int_ne(sqlite3_exec(db, "INSERT INTO t VALUES (2)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_ne(fcntl(wal, F_GETFD), -1); /* the program's: not closed by SQLite */
	char buf[64];
	ck_assert_int_eq(pread(wal, buf, sizeof(buf), 0), 5);
	ck_assert(!memcmp(buf, "mine\n", 5));
	close(wal);
	remove_dir();
}
END_TEST

START_TEST(fork_child_closes_the_parents_trace)
{
	limit_1024();
	int trace = mt_fdguard_adopt(open_null(), MT_FD_TRACE);
	int pipe_end = mt_fdguard_adopt(open_null(), MT_FD_UNWIND);
	mt_fdguard_after_fork_child();
	ck_assert_int_eq(fcntl(trace, F_GETFD), -1);
	ck_assert(!mt_fdguard_has(trace) && mt_fdguard_has(pipe_end));
	ck_assert_int_ne(fcntl(pipe_end, F_GETFD), -1);
}
END_TEST

Suite *fd_guard_suite(void);

Suite *fd_guard_suite(void)
{
	Suite *s = suite_create("fd-guard");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, adopt_moves_high);
	tcase_add_test(tc, in_range_sorted);
	tcase_add_test(tc, sqlite_trace_files_only);
	tcase_add_test(tc, lost_number_refused);
	tcase_add_test(tc, fork_child_closes_the_parents_trace);
	suite_add_tcase(s, tc);
	return s;
}
