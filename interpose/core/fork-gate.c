/* The fork gate: fork() never happens while one of memtrace's calls holds
 * the dynamic loader's write lock.
 *
 * dl_iterate_phdr takes glibc's _dl_load_write_lock, and so does
 * libunwind's unw_backtrace (through dl_iterate_phdr, to find each
 * frame's object). glibc's fork does not take that lock first, nor reset
 * it in the child: a thread of the parent inside one of these calls at
 * the moment of fork leaves the child a lock no thread will ever release,
 * and the child hangs at its own first dl_iterate_phdr (its first CUDA
 * call, where memtrace starts). Seen as 1 hang in 13 to 80 runs of
 * tests/reliability's forks-while-threads-allocate program on a loaded
 * machine (docs/reliability.md).
 *
 * So every such call of memtrace's passes the gate (mt_fork_gate_enter
 * and _leave, or mt_dl_iterate_phdr), and fork's prepare handler closes
 * it: no new call enters, and the handler waits until the calls inside
 * have left. The handler runs after preload.c took the record and writer
 * locks, and no thread holds either of them while waiting at the gate, so
 * waiting cannot deadlock. The gate opens again in the parent and in the
 * child after fork.
 *
 * Entry is re-entrant on a thread (a callback that unwinds): only the
 * outermost counts. The program's own calls of the loader are not ours
 * to order. */
#include "core.h"

#include <link.h>
#include <sched.h>
#include <stdatomic.h>

static atomic_uint inside; /* threads between enter and leave */
static atomic_bool closed;
static MT_TLS unsigned mine; /* this thread's depth */

void mt_fork_gate_enter(void)
{
	if (mine++)
		return;
	for (;;) {
		while (MT_UNLIKELY(atomic_load(&closed)))
			sched_yield();
		atomic_fetch_add(&inside, 1);
		/* seq_cst: either the closer sees this thread inside, or this
		 * thread sees the gate closed and steps back */
		if (MT_LIKELY(!atomic_load(&closed)))
			return;
		atomic_fetch_sub(&inside, 1);
	}
}

void mt_fork_gate_leave(void)
{
	if (--mine)
		return;
	atomic_fetch_sub(&inside, 1);
}

void mt_fork_gate_close(void)
{
	atomic_store(&closed, true);
	/* the forking thread itself may be inside (a fork from a callback):
	 * it is not waited for */
	unsigned self = mine ? 1 : 0;
	while (atomic_load(&inside) > self)
		sched_yield();
}

void mt_fork_gate_open(bool child)
{
	/* in the child, the only thread that can be inside is this one */
	if (child)
		atomic_store(&inside, mine ? 1u : 0u);
	atomic_store(&closed, false);
}

int mt_dl_iterate_phdr(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data)
{
	mt_fork_gate_enter();
	int r = dl_iterate_phdr(callback, data);
	mt_fork_gate_leave();
	return r;
}
