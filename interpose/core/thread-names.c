/* Threads' names, taken by each thread itself at its first event while it
 * surely lives: a thread that allocates and ends before the writer gets
 * to its events (a stream callback's, a short worker's) has no
 * /proc/self/task/TID/comm left to read by then. A fixed table filled
 * once a thread, read by the writer once a thread; past it, the writer
 * falls back to /proc. */
#include "core.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>

#define MT_THREAD_NAMES 4096

struct name_slot {
	_Atomic uint32_t tid; /* 0: not filled yet */
	char name[16]; /* prctl's size, with its NUL */
};

static struct name_slot names[MT_THREAD_NAMES];
static _Atomic unsigned nnames;

void mt_thread_name_note(uint32_t tid)
{
	unsigned i = atomic_fetch_add_explicit(&nnames, 1, memory_order_relaxed);
	if (i >= MT_THREAD_NAMES)
		return;
	char name[16] = { 0 };
	if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
		name[0] = '\0';
	memcpy(names[i].name, name, sizeof(name));
	atomic_store_explicit(&names[i].tid, tid, memory_order_release);
}

bool mt_thread_name_get(uint32_t tid, char *out, size_t n)
{
	unsigned count = atomic_load_explicit(&nnames, memory_order_relaxed);
	if (count > MT_THREAD_NAMES)
		count = MT_THREAD_NAMES;
	for (unsigned i = 0; i < count && n; i++) {
		if (atomic_load_explicit(&names[i].tid, memory_order_acquire) != tid)
			continue;
		size_t len = strnlen(names[i].name, sizeof(names[i].name));
		len = len < n - 1 ? len : n - 1;
		memcpy(out, names[i].name, len);
		out[len] = '\0';
		return true;
	}
	return false;
}

/* The child's threads are new: the parent's names are not theirs. */
void mt_thread_names_after_fork_child(void)
{
	for (unsigned i = 0; i < MT_THREAD_NAMES; i++)
		atomic_store_explicit(&names[i].tid, 0, memory_order_relaxed);
	atomic_store(&nnames, 0);
}
