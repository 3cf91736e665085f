/* The one error funnel of the capture library. Messages are prefixed
 * "memtrace: ", say whose fault it is, go out in one write(2) (no stdio:
 * the program may have closed or redirected stdout, and we may be called
 * from any thread at any time), and are rate-limited so that a broken
 * environment cannot flood the program's stderr. */
#include "core.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MT_LOG_LIMIT 20

static atomic_int log_count;
static atomic_bool log_quiet;

/* The stderr the program had when we were loaded. A program that closes
 * its descriptors and opens files gets descriptor 2 for one of them:
 * our messages must not land in it. */
static struct {
	bool open;
	dev_t dev;
	ino_t ino;
} log_target;

void mt_log_init(void)
{
	struct stat st;
	log_target.open = fstat(STDERR_FILENO, &st) == 0;
	log_target.dev = st.st_dev;
	log_target.ino = st.st_ino;
}

static bool stderr_is_ours(void)
{
	struct stat st;
	return log_target.open && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == log_target.dev &&
	       st.st_ino == log_target.ino;
}

void mt_log_set_quiet(bool quiet)
{
	atomic_store(&log_quiet, quiet);
}

void mt_log_reset(void)
{
	atomic_store(&log_count, 0);
}

/* Messages from MT_USER and MT_ENV say what to do in their text; a bug
 * asks to be reported. */
static const char *who_suffix(enum mt_who who)
{
	return who == MT_BUG ? " (this is a bug in memtrace; please report it)" : "";
}

void mt_log(enum mt_who who, const char *fmt, ...)
{
	if (who == MT_INFO && atomic_load(&log_quiet))
		return;

	int saved_errno = errno;
	if (!stderr_is_ours())
		goto out;
	int n = atomic_fetch_add(&log_count, 1);
	if (n > MT_LOG_LIMIT)
		goto out;

	char buf[1024];
	size_t len = 0;
	if (n == MT_LOG_LIMIT) {
		len = (size_t)snprintf(buf, sizeof(buf), "memtrace: further messages suppressed\n");
	} else {
		va_list ap;
		va_start(ap, fmt);
		int w = snprintf(buf, sizeof(buf), "memtrace: ");
		w += vsnprintf(buf + w, sizeof(buf) - (size_t)w, fmt, ap);
		va_end(ap);
		len = (size_t)w < sizeof(buf) ? (size_t)w : sizeof(buf) - 1;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s\n", who_suffix(who));
		if (len >= sizeof(buf)) {
			len = sizeof(buf) - 1;
			buf[len - 1] = '\n';
		}
	}
	ssize_t r = write(STDERR_FILENO, buf, len);
	(void)r;
out:
	errno = saved_errno;
}

void mt_log_text(const char *text, size_t len)
{
	if (atomic_load(&log_quiet))
		return;
	int saved_errno = errno;
	if (stderr_is_ours() && atomic_fetch_add(&log_count, 1) < MT_LOG_LIMIT) {
		ssize_t r = write(STDERR_FILENO, text, len);
		(void)r;
	}
	errno = saved_errno;
}
