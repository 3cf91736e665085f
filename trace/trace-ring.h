/* The ring file, TRACE-ring: the capture library's event queue kept in a
 * file mapped MAP_SHARED beside the trace, so that an event pushed before
 * the process was killed (SIGKILL, the OOM killer) is still there after
 * it. The library writes it (interpose/core/ring-file.c, queue.c), the
 * reporter reads it (report/read/trace-recover.c: memtrace recover, and
 * the first report of a killed trace). docs/trace-format.md, "The ring
 * file". Removed at a clean close.
 *
 * Layout: a header page, then capacity cells of MT_RING_CELL_SIZE bytes
 * in ticket order modulo the capacity. A cell's seq says what it holds
 * (queue.c): ticket p's event once seq == p + 1, or (p + 1) | MT_RING_DONE
 * when the writer took it ahead of its turn. The writer frees a cell for
 * the next lap only after the transaction that wrote its event has
 * committed, so every cell at or after the trace's meta ring_tail that
 * holds its ticket's event holds one that may be missing from the trace:
 * it is missing unless its written (the trace seq + 1 the writer gave it)
 * is below the trace's meta events_written. */
#pragma once

#include <stdint.h>

#define MT_RING_MAGIC "MTRING1"
#define MT_RING_VERSION 1
#define MT_RING_HEADER_SIZE 4096
#define MT_RING_CELL_SIZE 128
#define MT_RING_CLAIMED (1ull << 63)
#define MT_RING_DONE (1ull << 62)

struct mt_ring_header {
	char magic[8]; /* MT_RING_MAGIC, with its NUL */
	uint32_t version;
	uint32_t cell_size; /* MT_RING_CELL_SIZE */
	uint64_t capacity; /* cells, a power of two */
	uint64_t id; /* the trace's meta ring_id */
	uint64_t pid;
	uint64_t start_ns; /* CLOCK_MONOTONIC at trace start: an event's time is time_ns - this */
};

/* A cell as the file holds it (queue.c's struct mt_queue_cell, whose
 * offsets it asserts), its event as core.h's struct mt_event. */
struct mt_ring_event {
	uint64_t time_ns;
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;
	uint64_t device_free; /* or limit (tensor_oom) */
	uint64_t device_total;
	uint64_t handle;
	uint32_t stack;
	uint32_t tid;
	int32_t status;
	int16_t device;
	uint8_t kind;
	uint8_t mem;
	uint16_t api;
	uint8_t source;
	uint8_t pad;
	uint32_t op;
};

struct mt_ring_cell {
	uint64_t seq;
	uint64_t given_up;
	struct mt_ring_event ev;
	uint64_t written; /* the trace seq + 1 the writer gave the event; 0: none */
	uint8_t rest[MT_RING_CELL_SIZE - 8 - 8 - 80 - 8];
};
_Static_assert(sizeof(struct mt_ring_event) == 80, "a ring event is 80 bytes");
_Static_assert(sizeof(struct mt_ring_cell) == MT_RING_CELL_SIZE, "a ring cell is 128 bytes");
