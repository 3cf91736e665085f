/* Python frames borrowed from the thread that launched the work. A
 * framework that runs a step's ops on threads of its own (TensorFlow's
 * executor: inter-op threads with no Python state) allocates there while
 * the Python thread that called it waits inside the call. Such an
 * allocation's stack gets, after its own native frames and a marker
 * (MT_LAUNCH_FRAME), the Python frames of that thread, as they were when
 * it entered the framework. Design and evidence: docs/architecture.md,
 * "Frames borrowed from the launching thread"; contract: python.h.
 *
 * - A thread entering the framework (frameworks/tensorflow.c:
 *   TFE_Execute; torch-autograd.c: torch's autograd Engine::execute) publishes
 *   its innermost Python frame in a slot of its own; nested entries keep
 *   the outermost.
 * - A thread with no Python frame, recording an event, borrows only when
 *   exactly one thread is inside: with two, which one launched the work
 *   is not known, and a wrong line is worse than none.
 * - Reading another thread's frames is safe while it cannot return past
 *   the published frame: the reader counts itself in the slot, then
 *   checks the frame is still published; the leaving thread unpublishes,
 *   then waits until no reader is counted (both sequentially consistent:
 *   at least one of the two sees the other). The wait is a walk of frames
 *   long (microseconds), and only when a reader is there.
 *
 * Hot path: no locks, no allocation, no GIL. */
#include "python.h"
#include "core.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LAUNCH_SLOTS 64 /* threads that ever entered; more go without */

struct launch_slot {
	_Atomic uintptr_t frame; /* 0: not inside */
	_Atomic unsigned readers;
	uint32_t tid;
} __attribute__((aligned(64)));

static struct launch_slot slots[LAUNCH_SLOTS];
static _Atomic unsigned slots_used;
/* threads inside the framework now, with a frame published */
static _Atomic unsigned inside;

static MT_TLS struct launch_slot *mine;
static MT_TLS bool no_slot; /* the slots ran out, or no Python state */
static MT_TLS unsigned depth;
static MT_TLS bool published;
/* a framework's worker that runs work launched by another thread, and
 * may call back into Python for it (torch's autograd device threads) */
static MT_TLS bool worker;

static struct launch_slot *my_slot(void)
{
	if (MT_LIKELY(mine != NULL) || no_slot)
		return mine;
	unsigned i = atomic_fetch_add_explicit(&slots_used, 1, memory_order_relaxed);
	if (i >= LAUNCH_SLOTS) {
		no_slot = true;
		return NULL;
	}
	slots[i].tid = (uint32_t)syscall(SYS_gettid);
	mine = &slots[i];
	return mine;
}

void mt_launch_enter(void)
{
	if (depth++)
		return; /* the outermost entry's frame stays published */
	uintptr_t frame = mt_python_this_frame();
	struct launch_slot *s = frame ? my_slot() : NULL;
	if (!s)
		return;
	atomic_store_explicit(&s->frame, frame, memory_order_seq_cst);
	atomic_fetch_add_explicit(&inside, 1, memory_order_seq_cst);
	published = true;
}

void mt_launch_leave(void)
{
	if (!depth || --depth || !published)
		return;
	published = false;
	struct launch_slot *s = mine;
	atomic_fetch_sub_explicit(&inside, 1, memory_order_seq_cst);
	atomic_store_explicit(&s->frame, 0, memory_order_seq_cst);
	/* a reader that counted itself before the frame went keeps it until
	 * it is done with it */
	for (unsigned spins = 0; atomic_load_explicit(&s->readers, memory_order_seq_cst); spins++)
		if (spins > 64)
			sched_yield();
}

/* The one slot with a frame published, or NULL. */
static struct launch_slot *the_launcher(void)
{
	unsigned used = atomic_load_explicit(&slots_used, memory_order_acquire);
	struct launch_slot *found = NULL;
	if (used > LAUNCH_SLOTS)
		used = LAUNCH_SLOTS;
	for (unsigned i = 0; i < used; i++) {
		if (!atomic_load_explicit(&slots[i].frame, memory_order_relaxed))
			continue;
		if (found)
			return NULL; /* two threads inside: not known which */
		found = &slots[i];
	}
	return found;
}

void mt_launch_worker(void)
{
	worker = true;
}

static __attribute__((noinline)) unsigned borrow(uintptr_t *ips, unsigned n, unsigned max)
{
	/* A thread running Python: its own frames say where. Not "a thread
	 * with Python state": torch's autograd device threads have a thread
	 * state (made once, for the GIL of Python backward functions) and
	 * no frame while they run the graph for a waiting caller. A worker
	 * running Python runs a callback of the graph (a dispatch mode such
	 * as torch's MemTracker, a Python autograd Function): its own frames
	 * are the framework's, the launcher's go after them. */
	if (!worker && mt_python_this_frame())
		return n;
	struct launch_slot *s = the_launcher();
	if (!s)
		return n;
	atomic_fetch_add_explicit(&s->readers, 1, memory_order_seq_cst);
	uintptr_t frame = atomic_load_explicit(&s->frame, memory_order_seq_cst);
	if (frame)
		n = mt_python_splice_borrowed(ips, n, max, MT_LAUNCH_FRAME(s->tid), frame);
	atomic_fetch_sub_explicit(&s->readers, 1, memory_order_release);
	return n;
}

unsigned mt_launch_splice(uintptr_t *ips, unsigned n, unsigned max)
{
	if (MT_LIKELY(atomic_load_explicit(&inside, memory_order_relaxed) != 1))
		return n;
	return borrow(ips, n, max);
}
