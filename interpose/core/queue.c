/* A bounded, lossless multi-producer single-consumer queue of fixed-size
 * events (after Dmitry Vyukov's bounded queue) that is also the trace's
 * order. A producer takes a ticket with one fetch-add at its event's
 * ordering point, which may come well before the push (record.c: an
 * allocation takes it before its call and unwinds its stack after): the
 * ticket is the event's cell. The consumer takes the cells in ticket
 * order, so events come out in the order of their tickets whatever order
 * their threads filled them in.
 *
 * A cell the consumer waits for is a thread still inside its call. When
 * it has waited too long, or the queue passes half full behind it, it
 * gives the cell up (mt_queue_abandon); the producer that comes to it
 * later finds it given up and pushes its event into a new cell, where it
 * arrives late (after cells whose tickets came after its own). A cell is
 * never both filled and given up: a producer claims it with plain stores
 * and the consumer, which gives a cell up rarely, pays for both sides
 * with a membarrier (plain claims, below); where the kernel has no
 * membarrier, the producer claims with a compare-and-swap. When the
 * queue is full the producer waits for
 * its cell (never drops), and the time it waited is added up for the
 * trace. When the queue passes half full the producer pokes the
 * consumer so it drains before anyone has to wait.
 *
 * The consumer may take a filled cell ahead of its turn (a free that an
 * allocation's reuse of its address overtook, trace-writer.c): the cell
 * is marked done and skipped when its turn comes.
 *
 * Cells are cache-line aligned (an 88-byte cell would straddle lines and
 * share them with its neighbours, so producers filling adjacent cells and
 * the consumer emptying them would pull the same lines back and forth),
 * and a producer reads the consumer's `tail` only on every poke_every-th
 * ticket, so that line stays in the consumer's cache. */
#include "clock.h"
#include "core.h"
#include "queue.h"
#include "trace-ring.h"
#include "trace-schema.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A cell's seq, for the ticket pos that owns it this lap: pos (empty),
 * pos | CELL_CLAIMED (being filled), pos + 1 (filled), (pos + 1) |
 * CELL_DONE (taken ahead of its turn), pos + capacity (taken or given
 * up: the next lap's). */
#define CELL_CLAIMED (1ull << 63)
#define CELL_DONE (1ull << 62)
#define CELL_FLAGS (CELL_CLAIMED | CELL_DONE)
/* The ring file is this queue's cells (trace/trace-ring.h). */
_Static_assert(CELL_CLAIMED == MT_RING_CLAIMED && CELL_DONE == MT_RING_DONE, "ring flags");
_Static_assert(sizeof(struct mt_queue_cell) == MT_RING_CELL_SIZE, "ring cell size");
_Static_assert(offsetof(struct mt_queue_cell, ev) == offsetof(struct mt_ring_cell, ev) &&
		       offsetof(struct mt_queue_cell, written) ==
			       offsetof(struct mt_ring_cell, written),
	       "ring cell layout");
_Static_assert(offsetof(struct mt_event, op) == offsetof(struct mt_ring_event, op) &&
		       offsetof(struct mt_event, stack) == offsetof(struct mt_ring_event, stack) &&
		       offsetof(struct mt_event, source) == offsetof(struct mt_ring_event, source),
	       "ring event layout");

/* Plain claims. A producer's claim is a store of its ticket to its own
 * slot (its thread's line of the queue, never written by another: a word
 * of the cell would be overwritten by the producer of the cell's next lap
 * waiting for room), then a load of the cell's given_up (a compiler
 * barrier between); the consumer that would give the cell up stores its
 * intent (the ticket) to given_up, then a membarrier (every thread of the
 * process runs a full barrier, or is off its CPU), then looks for the
 * ticket in the threads' slots. Either the consumer
 * sees the claim and keeps the cell, or the producer sees the intent;
 * where both see the other, a compare-and-swap of given_up to the ticket
 * with GIVEN_UP_KEEP or GIVEN_UP_YES decides. A producer changes seq only
 * after it has passed that point, so the consumer's compare-and-swap of
 * seq, for a given-up cell, never races a producer on the fast path, and
 * one on the slow path (a full queue), or a thread without a slot, claims
 * seq with a compare-and-swap as without membarrier. Tickets tag the
 * claims and given_up, so neither is reset between laps. (The asymmetric fence of a read-copy-update or of
 * folly's hazard pointers, here for a rare give-up.) */
#define GIVEN_UP_KEEP (1ull << 63)
#define GIVEN_UP_YES (1ull << 62)
#define GIVEN_UP_FLAGS (GIVEN_UP_KEEP | GIVEN_UP_YES)

/* A test build (tests/unit/test-queue-race.c) widens the windows of the
 * claim and the give-up, where a thread preempted there would be. */
#ifdef MT_QUEUE_PAUSE
void mt_queue_pause(int where);
#define PAUSE(where) mt_queue_pause(where)
#else
#define PAUSE(where) ((void)0)
#endif

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0u, 0);
}

struct mt_queue *mt_queue_new(unsigned log2_capacity, int ring_fd)
{
	size_t cap = (size_t)1 << log2_capacity;
	struct mt_queue *q = mmap(NULL, sizeof(*q), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return NULL;
	memset(q, 0, sizeof(*q));
	/* In a ring file the cells outlive the process: what a killed
	 * process had pushed is in the page cache (trace-ring.h). A fork
	 * child gets none of it (it makes its own queue). */
	if (ring_fd >= 0)
		q->cells = mmap(NULL, cap * sizeof(struct mt_queue_cell), PROT_READ | PROT_WRITE,
				MAP_SHARED, ring_fd, MT_RING_HEADER_SIZE);
	else
		q->cells = mmap(NULL, cap * sizeof(struct mt_queue_cell), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->cells == MAP_FAILED) {
		munmap(q, sizeof(*q));
		return NULL;
	}
	if (ring_fd >= 0) {
		q->keep = true;
		madvise(q->cells, cap * sizeof(struct mt_queue_cell), MADV_DONTFORK);
	}
	q->mask = cap - 1;
	/* Every 256th ticket, or more often in a small queue, so that the
	 * check still falls between half full and full. */
	q->poke_mask = cap >= 1024 ? 255 : (cap >= 8 ? cap / 4 - 1 : 0);
	for (size_t i = 0; i < cap; i++) {
		atomic_init(&q->cells[i].seq, i);
		atomic_init(&q->cells[i].given_up, ~0ull); /* no ticket's */
		q->cells[i].written = 0;
	}
	for (size_t k = 0; k < MT_RELEASE_SLOTS; k++)
		atomic_init(&q->releases[k].claim, ~0ull);
	/* Once a process (a fork child makes its own queue, and registers
	 * again). Under a kernel without it, or a sandbox that refuses it:
	 * compare-and-swap claims. */
	q->plain_claim = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
	return q;
}

void mt_queue_free(struct mt_queue *q)
{
	if (!q)
		return;
	munmap(q->cells, (q->mask + 1) * sizeof(struct mt_queue_cell));
	munmap(q, sizeof(*q));
}

void mt_queue_set_pressure_cb(struct mt_queue *q, void (*cb)(void *), void *data)
{
	q->pressure_data = data;
	q->pressure_cb = cb;
}

/* The cell is still held by the event of its last lap, which the
 * consumer has not taken. Spin a little, then yield, then sleep in short
 * steps, poking the consumer. Returns the cell's seq once it is this
 * lap's (empty, or given up), or 0 when the queue was closed. */
static uint64_t wait_for_cell(struct mt_queue *q, struct mt_queue_cell *c, uint64_t pos)
{
	uint64_t start = mt_now_ns(), s;
	for (unsigned spins = 0;
	     (int64_t)(((s = atomic_load_explicit(&c->seq, memory_order_acquire)) & ~CELL_FLAGS) -
		       pos) < 0;
	     spins++) {
		if (atomic_load_explicit(&q->closed, memory_order_relaxed))
			return 0;
		if (spins < 64)
			continue;
		if (q->pressure_cb)
			q->pressure_cb(q->pressure_data);
		if (spins < 256) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 50000 };
			nanosleep(&ts, NULL);
		}
	}
	atomic_fetch_add_explicit(&q->wait_ns, mt_now_ns() - start, memory_order_relaxed);
	return s;
}

uint64_t mt_queue_tickets(const struct mt_queue *q)
{
	return atomic_load(&((struct mt_queue *)q)->head);
}

/* Claims the cell of ticket pos: false when the consumer gave it up
 * (or, *closed, the queue was closed while it waited). */
static bool claim(struct mt_queue *q, uint64_t pos, bool *closed)
{
	struct mt_queue_cell *c = &q->cells[pos & q->mask];
	uint64_t s = pos;
	if (atomic_compare_exchange_strong_explicit(&c->seq, &s, pos | CELL_CLAIMED,
						    memory_order_acquire, memory_order_acquire))
		return true;
	if ((int64_t)((s & ~CELL_FLAGS) - pos) < 0 && !(s = wait_for_cell(q, c, pos))) {
		*closed = true;
		return false;
	}
	return s == pos && atomic_compare_exchange_strong(&c->seq, &s, pos | CELL_CLAIMED);
}

/* Poke the consumer when the queue is past half full (looked at only
 * now and then: mt_queue_push). */
static __attribute__((noinline)) void poke(struct mt_queue *q, uint64_t pos)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if ((int64_t)(pos - tail) >= (int64_t)(q->mask + 1) / 2 && q->pressure_cb)
		q->pressure_cb(q->pressure_data);
}

static inline void fill(struct mt_queue *q, struct mt_queue_cell *c, uint64_t pos,
			const struct mt_event *ev)
{
	c->ev = *ev;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	if (MT_UNLIKELY((pos & q->poke_mask) == 0))
		poke(q, pos);
}

/* The cell was not free at once: full (wait), or given up (another). */
static __attribute__((noinline)) uint64_t push_slow(struct mt_queue *q, uint64_t pos,
						    const struct mt_event *ev)
{
	bool closed = false;
	while (!claim(q, pos, &closed)) {
		if (closed)
			return pos;
		/* its cell was given up: a new one, where it comes late */
		atomic_fetch_add_explicit(&q->late, 1, memory_order_relaxed);
		pos = atomic_fetch_add(&q->head, 1);
	}
	fill(q, &q->cells[pos & q->mask], pos, ev);
	return pos;
}

static MT_TLS unsigned release_slot; /* this thread's, + 1; 0: none yet */
static _Atomic unsigned release_threads;

static __attribute__((noinline)) unsigned take_slot(void)
{
	unsigned k = atomic_fetch_add(&release_threads, 1);
	release_slot = k < MT_RELEASE_SLOTS ? k + 1 : MT_RELEASE_SLOTS + 1;
	return release_slot;
}

/* A plain claim met the consumer's intent to give the cell up: one
 * compare-and-swap of given_up decides. */
static __attribute__((noinline)) uint64_t push_contested(struct mt_queue *q, uint64_t ticket,
							 const struct mt_event *ev)
{
	struct mt_queue_cell *c = &q->cells[ticket & q->mask];
	uint64_t g = ticket;
	if (atomic_compare_exchange_strong(&c->given_up, &g, ticket | GIVEN_UP_KEEP) ||
	    g == (ticket | GIVEN_UP_KEEP)) {
		fill(q, c, ticket, ev);
		return ticket;
	}
	/* given up: a new one, where it comes late */
	atomic_fetch_add_explicit(&q->late, 1, memory_order_relaxed);
	return push_slow(q, atomic_fetch_add(&q->head, 1), ev);
}

/* With plain claims, no locked instruction: the claim and the checks are
 * in the cell's first line, which the ticket prefetched for writing.
 * Without, the cell is claimed with a compare-and-swap first, with no
 * load before it: the line comes over once, for writing. */
uint64_t mt_queue_push(struct mt_queue *q, uint64_t ticket, const struct mt_event *ev)
{
	struct mt_queue_cell *c = &q->cells[ticket & q->mask];
	unsigned k = release_slot;
	if (MT_UNLIKELY(!k))
		k = take_slot();
	if (MT_LIKELY(q->plain_claim && k <= MT_RELEASE_SLOTS)) {
		PAUSE(0);
		atomic_store_explicit(&q->releases[k - 1].claim, ticket, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst); /* the consumer's membarrier does the rest */
		PAUSE(1);
		uint64_t g = atomic_load_explicit(&c->given_up, memory_order_relaxed);
		if (MT_UNLIKELY((g & ~GIVEN_UP_FLAGS) == ticket))
			return push_contested(q, ticket, ev);
		PAUSE(2);
		if (MT_UNLIKELY(atomic_load_explicit(&c->seq, memory_order_acquire) != ticket))
			return push_slow(q, ticket, ev); /* full (or a later lap's: given up) */
		PAUSE(3);
		fill(q, c, ticket, ev);
		return ticket;
	}
	uint64_t s = ticket;
	if (MT_UNLIKELY(!atomic_compare_exchange_strong_explicit(&c->seq, &s, ticket | CELL_CLAIMED,
								 memory_order_acquire,
								 memory_order_acquire)))
		return push_slow(q, ticket, ev);
	fill(q, c, ticket, ev);
	return ticket;
}


/* The writer sees a slot through the driver's own ordering: a thread
 * that got the address again got it after the release's call began, so
 * after the store. */
_Atomic uint64_t *mt_queue_release_slot(struct mt_queue *q)
{
	if (MT_UNLIKELY(!release_slot))
		take_slot();
	return release_slot <= MT_RELEASE_SLOTS ? &q->releases[release_slot - 1].address : NULL;
}

void mt_queue_release_unnamed(struct mt_queue *q, bool running)
{
	if (running)
		atomic_fetch_add(&q->releases_unnamed, 1);
	else
		atomic_fetch_sub(&q->releases_unnamed, 1);
}

bool mt_queue_release_running(const struct mt_queue *q, uint64_t address)
{
	struct mt_queue *m = (struct mt_queue *)q;
	if (atomic_load(&m->releases_unnamed))
		return true;
	for (unsigned k = 0; k < MT_RELEASE_SLOTS; k++)
		if (atomic_load(&m->releases[k].address) == address)
			return true;
	return false;
}

bool mt_queue_pop(struct mt_queue *q, struct mt_event *ev)
{
	for (;;) {
		uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		struct mt_queue_cell *c = &q->cells[pos & q->mask];
		uint64_t s = atomic_load_explicit(&c->seq, memory_order_acquire);
		if (s != pos + 1 && s != ((pos + 1) | CELL_DONE))
			return false;
		bool done = s & CELL_DONE;
		if (!done) {
			*ev = c->ev;
			q->taken = pos;
		}
		/* a ring file's cell stays the event's until it is committed */
		if (!q->keep)
			atomic_store_explicit(&c->seq, pos + q->mask + 1, memory_order_release);
		atomic_store_explicit(&q->tail, pos + 1, memory_order_relaxed);
		if (!done)
			return true;
	}
}

/* With plain claims: whether a thread has claimed ticket pos (after the
 * membarrier, so as its thread last stored it). */
static bool claimed(struct mt_queue *q, uint64_t pos)
{
	unsigned n = atomic_load(&release_threads);
	for (unsigned k = 0; k < n && k < MT_RELEASE_SLOTS; k++)
		if (atomic_load_explicit(&q->releases[k].claim, memory_order_relaxed) == pos)
			return true;
	return false;
}

/* Consumer only: gives up on the cell due while its producer has not
 * claimed it. True when given up (the next cell is due). */
bool mt_queue_abandon(struct mt_queue *q)
{
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if (pos == atomic_load(&q->head))
		return false; /* no ticket taken: nothing to wait for */
	struct mt_queue_cell *c = &q->cells[pos & q->mask];
	uint64_t s = pos;
	if (q->plain_claim) {
		if (atomic_load(&c->seq) != pos)
			return false; /* filled, or claimed on the slow path */
		PAUSE(4);
		atomic_store(&c->given_up, pos);
		if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
			/* cannot know whether its producer is there: keep it */
			uint64_t g = pos;
			atomic_compare_exchange_strong(&c->given_up, &g, pos | GIVEN_UP_KEEP);
			return false;
		}
		uint64_t g = pos;
		if (claimed(q, pos)) {
			/* its producer is filling it */
			atomic_compare_exchange_strong(&c->given_up, &g, pos | GIVEN_UP_KEEP);
			return false;
		}
		if (!atomic_compare_exchange_strong(&c->given_up, &g, pos | GIVEN_UP_YES))
			return false; /* the producer came and kept it */
		PAUSE(5);
	}
	/* With plain claims, only a producer on the slow path can still
	 * claim it, with a compare-and-swap of seq too. */
	if (!atomic_compare_exchange_strong(&c->seq, &s, pos + q->mask + 1))
		return false; /* being filled, or filled */
	atomic_store_explicit(&q->tail, pos + 1, memory_order_relaxed);
	q->abandoned++;
	return true;
}

/* Consumer only, for the last drain of a process that ends (_exit): a
 * cell still being filled is given up too, since its producer may be the
 * thread that ends the process, interrupted there by the signal whose
 * handler calls _exit. Nothing reads the queue after, so a producer that
 * does finish the cell writes into one no one reads. */
void mt_queue_skip(struct mt_queue *q)
{
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	if (pos == atomic_load(&q->head))
		return;
	atomic_store_explicit(&q->tail, pos + 1, memory_order_relaxed);
	q->abandoned++;
}

/* Consumer only: a filled cell after the one due, whose event is the
 * release (kind) of the address the event `of` got again, hooked; taken
 * out (marked done). The release looked for is usually a few cells on,
 * but a thread preempted between its call and its ticket may put it
 * anywhere: the search goes to the head. A release by a thread after
 * that thread got the address itself (`of`'s thread, or one whose
 * allocation at the address lies between; after: by the thread's clock,
 * read just before each ticket, in its program order) is never it: it is
 * the release of a later allocation (taking it wrote one free too early
 * and left the late one unmatched: tests/reliability/FINDINGS.md F17). A
 * release of the same thread from before (pushed late, its cell given
 * up) still is. Past MT_TAKE_AHEAD_THREADS such threads the search
 * stops. Not strict: the first release of the address, whoever made it
 * (when the strict search finds none and none is running: an allocation
 * whose call returned long after its ticket was written where its ticket
 * put it, and the address then looks live to every allocation there
 * between; taking the next release keeps the count of each right). */
#define MT_TAKE_AHEAD_THREADS 64
bool mt_queue_take_ahead(struct mt_queue *q, const struct mt_event *of, unsigned kind,
			 bool strict, struct mt_event *ev)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t head = atomic_load(&q->head);
	struct { uint32_t tid; uint64_t time_ns; } held[MT_TAKE_AHEAD_THREADS];
	unsigned nheld = 0;
	held[nheld].tid = of->tid;
	held[nheld++].time_ns = of->time_ns;
	for (uint64_t pos = tail; pos != head && pos - tail <= q->mask; pos++) {
		struct mt_queue_cell *c = &q->cells[pos & q->mask];
		if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
			continue;
		const struct mt_event *e = &c->ev;
		if (e->address != of->address || e->source != MT_SOURCE_HOOK)
			continue;
		unsigned k = 0;
		while (k < nheld && held[k].tid != e->tid)
			k++;
		if (e->kind == of->kind && strict) {
			if (k == nheld) {
				if (nheld == MT_TAKE_AHEAD_THREADS)
					return false;
				held[nheld].tid = e->tid;
				held[nheld++].time_ns = e->time_ns;
			}
			continue;
		}
		/* by a thread after it got the address (its clock, read in
		 * program order): a later allocation's release */
		if (e->kind != kind || (strict && k < nheld && e->time_ns >= held[k].time_ns))
			continue;
		*ev = *e;
		q->taken = pos;
		atomic_store_explicit(&c->seq, (pos + 1) | CELL_DONE, memory_order_relaxed);
		return true;
	}
	return false;
}

uint64_t mt_queue_taken(const struct mt_queue *q)
{
	return q->taken;
}

void mt_queue_note_written(struct mt_queue *q, uint64_t pos, uint64_t seq)
{
	if (q->keep)
		q->cells[pos & q->mask].written = seq + 1;
}

/* A cell taken (filled, or done) goes to the next lap; one given up is
 * there already, and may hold the next lap's event. */
void mt_queue_release(struct mt_queue *q, uint64_t upto)
{
	uint64_t pos = atomic_load_explicit(&q->released, memory_order_relaxed);
	if (!q->keep) {
		atomic_store_explicit(&q->released, upto, memory_order_relaxed);
		return;
	}
	for (; pos != upto; pos++) {
		struct mt_queue_cell *c = &q->cells[pos & q->mask];
		uint64_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
		if (s == pos + 1 || s == ((pos + 1) | CELL_DONE))
			atomic_store_explicit(&c->seq, pos + q->mask + 1, memory_order_release);
	}
	atomic_store_explicit(&q->released, upto, memory_order_relaxed);
}

uint64_t mt_queue_released(const struct mt_queue *q)
{
	return atomic_load_explicit(&((struct mt_queue *)q)->released, memory_order_relaxed);
}

bool mt_queue_in_ring(const struct mt_queue *q)
{
	return q->keep;
}

uint64_t mt_queue_late(const struct mt_queue *q)
{
	return atomic_load_explicit(&((struct mt_queue *)q)->late, memory_order_relaxed);
}

uint64_t mt_queue_abandoned(const struct mt_queue *q)
{
	return q->abandoned;
}

void mt_queue_close(struct mt_queue *q)
{
	atomic_store(&q->closed, true);
}

uint64_t mt_queue_pushed(const struct mt_queue *q)
{
	return atomic_load(&q->head);
}

uint64_t mt_queue_popped(const struct mt_queue *q)
{
	return atomic_load(&q->tail);
}

size_t mt_queue_capacity(const struct mt_queue *q)
{
	return q->mask + 1;
}

uint64_t mt_queue_wait_ns(const struct mt_queue *q)
{
	return atomic_load_explicit(&q->wait_ns, memory_order_relaxed);
}
