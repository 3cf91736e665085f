/* The queue's layout (queue.c), for what a producer does on every event
 * without a call: take a ticket (mt_queue_ticket, below) and name the
 * release it is running in its slot (mt_queue_release_slot). Everything
 * else goes through the functions declared in core.h. */
#pragma once

#include "core.h"

#include <stdatomic.h>

struct mt_queue_cell {
	_Alignas(64) _Atomic uint64_t seq;
	/* With plain claims (queue.c): the consumer's intent to give the cell
	 * up, and what was decided. */
	_Atomic uint64_t given_up;
	struct mt_event ev;
	/* The consumer's: the trace seq + 1 it gave the event (the ring
	 * file's recovery, trace/trace-ring.h); the producer never touches
	 * it. */
	uint64_t written;
};
/* 16 + 80 + 8 bytes, in two whole cache lines (MT_QUEUE_LOG2 in preload.c
 * counts on it: 65536 cells are 8 MiB). */
_Static_assert(sizeof(struct mt_queue_cell) == 128, "a queue cell is two cache lines");

/* A thread's own line of the queue, kept for good and written with plain
 * stores: the release it is running (trace-writer.c's early releases need
 * to know; past MT_RELEASE_SLOTS threads, a count says that some release
 * is running unnamed) and the ticket whose cell it is claiming (plain
 * claims, queue.c; past MT_RELEASE_SLOTS threads, compare-and-swap
 * claims). */
#define MT_RELEASE_SLOTS 1024

struct mt_release_slot {
	_Alignas(64) _Atomic uint64_t address; /* 0: free */
	_Atomic uint64_t claim;                /* ~0: none yet */
};

struct mt_queue {
	struct mt_release_slot releases[MT_RELEASE_SLOTS];
	_Alignas(64) _Atomic uint64_t releases_unnamed;
	struct mt_queue_cell *cells;
	uint64_t mask;
	uint64_t poke_mask; /* tickets where a producer looks at tail: pos & poke_mask == 0 */
	bool plain_claim; /* producers claim with plain stores (membarrier registered) */
	void (*pressure_cb)(void *);
	void *pressure_data;
	_Alignas(64) _Atomic uint64_t head; /* next ticket: the next cell */
	_Alignas(64) _Atomic uint64_t tail; /* next to pop; written by the consumer */
	_Alignas(64) _Atomic uint64_t wait_ns;
	_Atomic uint64_t late; /* events pushed again after their cell was given up */
	uint64_t abandoned; /* cells given up (the consumer's) */
	/* In a ring file (mt_queue_new with a descriptor): a cell the
	 * consumer took is freed for the next lap only by mt_queue_release,
	 * after its event is committed; released is where that stopped,
	 * taken the cell of the last event taken (the consumer's). */
	bool keep;
	uint64_t taken;
	_Atomic uint64_t released;
	_Atomic bool closed;
};

/* A place in the order of events and its cell, taken at the event's
 * ordering point, before the event is pushed (mt_queue_push). Every
 * ticket taken must be pushed: the consumer waits for the ones it has not
 * seen (bounded: mt_queue_abandon). Sequentially consistent: a ticket is
 * the moment that orders this thread's event against every other
 * thread's (record.c). */
static inline uint64_t mt_queue_ticket(struct mt_queue *q)
{
	uint64_t pos = atomic_fetch_add(&q->head, 1);
	/* the cell's line, for writing: an allocation pushes after its call,
	 * by when it is here, and the claim does not wait for it */
	__builtin_prefetch(&q->cells[pos & q->mask], 1);
	return pos;
}
