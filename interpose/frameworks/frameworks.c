/* The table of framework adapters (frameworks.def) and the one entry of
 * each kind the layers above call: the poll after an allocation, a line
 * on stderr, an exception raised into Python, a symbol looked up on a
 * library handle. On top of the adapters, which call only what they share
 * (framework-base.c). */
#include "frameworks.h"

#include <errno.h>

#define MT_FRAMEWORK(name, exports) extern const struct mt_framework mt_framework_##name;
#include "frameworks.def"
#undef MT_FRAMEWORK

static const struct mt_framework *const rows[] = {
#define MT_FRAMEWORK(name, exports) &mt_framework_##name,
#include "frameworks.def"
#undef MT_FRAMEWORK
};
#define ROWS (sizeof(rows) / sizeof(rows[0]))
_Static_assert(ROWS < 32, "a bit a row");

/* Every row until init says which poll; those that do not, at once. */
_Atomic unsigned mt_frameworks_polling = (1u << ROWS) - 1;
static _Atomic unsigned absent; /* rows not loaded: polled every 1024th time */
static _Atomic unsigned busy;	/* rows a thread is polling now */
static _Atomic unsigned absent_polls;

void mt_frameworks_init(const struct mt_frameworks_options *opt)
{
	unsigned polling = 0;
	mt_framework_base_init(opt);
	for (unsigned i = 0; i < ROWS; i++) {
		if (rows[i]->init)
			rows[i]->init(opt);
		if (rows[i]->poll)
			polling |= 1u << i;
	}
	atomic_store(&mt_frameworks_polling, polling);
}

void mt_frameworks_poll_slow(void)
{
	unsigned due = atomic_load(&mt_frameworks_polling);
	unsigned away = due & atomic_load(&absent);
	if (away && atomic_fetch_add(&absent_polls, 1) % 1024 != 1023)
		due &= ~away;
	for (unsigned i = 0; i < ROWS && due; i++) {
		unsigned bit = 1u << i;
		if (!(due & bit) || (atomic_fetch_or(&busy, bit) & bit))
			continue; /* not due, or another thread is at it */
		int saved_errno = errno;
		enum mt_framework_poll p = rows[i]->poll ? rows[i]->poll() : MT_FRAMEWORK_SETTLED;
		errno = saved_errno;
		if (p == MT_FRAMEWORK_SETTLED)
			atomic_fetch_and(&mt_frameworks_polling, ~bit);
		else if (p == MT_FRAMEWORK_ABSENT)
			atomic_fetch_or(&absent, bit);
		else
			atomic_fetch_and(&absent, ~bit);
		atomic_fetch_and(&busy, ~bit);
	}
}

void mt_frameworks_stderr(const char *text, size_t len)
{
	for (unsigned i = 0; i < ROWS; i++) {
		if (rows[i]->stderr_line && rows[i]->stderr_line(text, len))
			return;
	}
}

void mt_frameworks_raised(const void *type, const void *value)
{
	for (unsigned i = 0; i < ROWS; i++) {
		if (rows[i]->raised && rows[i]->raised(type, value))
			return;
	}
}

void *mt_frameworks_symbol(const char *name, void *p)
{
	for (unsigned i = 0; p && name && i < ROWS; i++) {
		if (rows[i]->symbol) {
			void *q = rows[i]->symbol(name, p);
			if (q != p)
				return q;
		}
	}
	return p;
}
