/* A bounded, lossless multi-producer single-consumer queue of fixed-size
 * events (after Dmitry Vyukov's bounded queue). Each producer takes a
 * cell with one fetch-add. The trace's order is not the queue's: an
 * event carries its own place (ev->order), a ticket from a second
 * counter taken at the event's ordering point, which may come well
 * before the push (record.c: an allocation takes it before its call, and
 * unwinds its stack after). The tickets have no gaps; the writer puts
 * the events back in their order. When the queue is full the
 * producer waits for its cell (never drops), and the time it waited is
 * added up for the trace. When the queue passes half full the producer
 * pokes the consumer so it drains before anyone has to wait.
 *
 * Cells are cache-line aligned (an 88-byte cell would straddle lines and
 * share them with its neighbours, so producers filling adjacent cells and
 * the consumer emptying them would pull the same lines back and forth),
 * and a producer reads the consumer's `tail` only on every poke_every-th
 * ticket, so that line stays in the consumer's cache. */
#include "clock.h"
#include "internal.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

struct cell {
	_Alignas(64) _Atomic uint64_t seq;
	struct mt_event ev;
};
/* 8 + 88 bytes, in two whole cache lines (MT_QUEUE_LOG2 in preload.c
 * counts on it: 65536 cells are 8 MiB). */
_Static_assert(sizeof(struct cell) == 128, "a queue cell is two cache lines");

/* Releases running now, one a slot (reorder.c's reason). A thread takes
 * the first free slot from a starting slot of its own; when all are
 * taken, a count says that some release is running unnamed. */
#define MT_RELEASE_SLOTS 128

struct release_slot {
	_Alignas(64) _Atomic uint64_t address; /* 0: free */
};

struct mt_queue {
	struct release_slot releases[MT_RELEASE_SLOTS];
	_Alignas(64) _Atomic uint64_t releases_unnamed;
	struct cell *cells;
	uint64_t mask;
	uint64_t poke_mask; /* tickets where a producer looks at tail: pos & poke_mask == 0 */
	void (*pressure_cb)(void *);
	void *pressure_data;
	_Alignas(64) _Atomic uint64_t order; /* next ticket of the trace's order */
	_Alignas(64) _Atomic uint64_t head; /* next cell */
	_Alignas(64) _Atomic uint64_t tail; /* next to pop; written by the consumer */
	_Alignas(64) _Atomic uint64_t wait_ns;
	_Atomic bool closed;
};

struct mt_queue *mt_queue_new(unsigned log2_capacity)
{
	size_t cap = (size_t)1 << log2_capacity;
	struct mt_queue *q = mmap(NULL, sizeof(*q), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->cells = mmap(NULL, cap * sizeof(struct cell), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->cells == MAP_FAILED) {
		munmap(q, sizeof(*q));
		return NULL;
	}
	q->mask = cap - 1;
	/* Every 256th ticket, or more often in a small queue, so that the
	 * check still falls between half full and full. */
	q->poke_mask = cap >= 1024 ? 255 : (cap >= 8 ? cap / 4 - 1 : 0);
	for (size_t i = 0; i < cap; i++)
		atomic_init(&q->cells[i].seq, i);
	return q;
}

void mt_queue_free(struct mt_queue *q)
{
	if (!q)
		return;
	munmap(q->cells, (q->mask + 1) * sizeof(struct cell));
	munmap(q, sizeof(*q));
}

void mt_queue_set_pressure_cb(struct mt_queue *q, void (*cb)(void *), void *data)
{
	q->pressure_data = data;
	q->pressure_cb = cb;
}

/* The cell is still held by an event the consumer has not taken. Spin a
 * little, then yield, then sleep in short steps, poking the consumer. */
static bool wait_for_cell(struct mt_queue *q, struct cell *c, uint64_t pos)
{
	uint64_t start = mt_now_ns();
	for (unsigned spins = 0; atomic_load_explicit(&c->seq, memory_order_acquire) != pos;
	     spins++) {
		if (atomic_load_explicit(&q->closed, memory_order_relaxed))
			return false;
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
	return true;
}

/* Sequentially consistent: a ticket is the moment that orders this
 * thread's event against every other thread's (record.c). */
uint64_t mt_queue_ticket(struct mt_queue *q)
{
	return atomic_fetch_add(&q->order, 1);
}

uint64_t mt_queue_tickets(const struct mt_queue *q)
{
	return atomic_load(&((struct mt_queue *)q)->order);
}

void mt_queue_push(struct mt_queue *q, const struct mt_event *ev)
{
	uint64_t pos = atomic_fetch_add_explicit(&q->head, 1, memory_order_relaxed);
	struct cell *c = &q->cells[pos & q->mask];
	if (MT_UNLIKELY(atomic_load_explicit(&c->seq, memory_order_acquire) != pos) &&
	    !wait_for_cell(q, c, pos))
		return;
	c->ev = *ev;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);

	/* Poke the consumer when the queue is past half full, looking only
	 * now and then. */
	if (MT_UNLIKELY((pos & q->poke_mask) == 0)) {
		uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
		if ((int64_t)(pos - tail) >= (int64_t)(q->mask + 1) / 2 && q->pressure_cb)
			q->pressure_cb(q->pressure_data);
	}
}

static MT_TLS unsigned release_hint; /* this thread's first slot, + 1 */
static _Atomic unsigned release_threads;

unsigned mt_queue_release_begin(struct mt_queue *q, uint64_t address)
{
	if (MT_UNLIKELY(!release_hint))
		release_hint = atomic_fetch_add(&release_threads, 1) % MT_RELEASE_SLOTS + 1;
	unsigned first = release_hint - 1;
	for (unsigned i = 0; i < MT_RELEASE_SLOTS; i++) {
		unsigned k = (first + i) % MT_RELEASE_SLOTS;
		uint64_t none = 0;
		if (atomic_load_explicit(&q->releases[k].address, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&q->releases[k].address, &none, address))
			return k;
	}
	atomic_fetch_add(&q->releases_unnamed, 1);
	return MT_RELEASE_SLOTS;
}

/* After the release's event is pushed: the writer that sees the slot
 * empty finds the event in the queue. */
void mt_queue_release_done(struct mt_queue *q, unsigned token)
{
	if (token < MT_RELEASE_SLOTS)
		atomic_store_explicit(&q->releases[token].address, 0, memory_order_release);
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
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	struct cell *c = &q->cells[pos & q->mask];
	if (atomic_load_explicit(&c->seq, memory_order_acquire) != pos + 1)
		return false;
	*ev = c->ev;
	atomic_store_explicit(&c->seq, pos + q->mask + 1, memory_order_release);
	atomic_store_explicit(&q->tail, pos + 1, memory_order_relaxed);
	return true;
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
