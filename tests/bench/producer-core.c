/* The application-thread half of a recorded event, without preload and
 * without CUDA: the same steps as mt_record_alloc and mt_record_free in
 * interpose/preload.c (clock, thread id, native unwind, stack intern,
 * queue push), built from the capture core (libmemtrace-core.a) and
 * interpose/unwind.c. A consumer thread drains the queue and discards
 * (or, with bp_start(stalled = true), nobody drains a queue big enough
 * for every event). This is a shared library so that unwind.c drops its
 * frames as it drops libmemtrace.so's, and the caller's are kept. */
#include "producer-core.h"

#include "clock.h"
#include "internal.h"
#include "trace-schema.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BP_MAX_FRAMES 512

static struct mt_queue *queue;
static struct mt_stack_table *stacks;
static pthread_t consumer;
static _Atomic bool stop;
static bool have_consumer;
static _Atomic uint64_t consumed;
static __thread uint32_t tls_tid;

static void *
consume(void *arg)
{
	(void)arg;
	struct mt_event ev;
	uint64_t n = 0;
	for (;;) {
		if (mt_queue_pop(queue, &ev)) {
			n++;
			continue;
		}
		if (atomic_load_explicit(&stop, memory_order_acquire))
			break;
		sched_yield();
	}
	atomic_store(&consumed, n);
	return NULL;
}

bool
bp_start(unsigned queue_log2, bool stalled)
{
	mt_unwind_init();
	queue = mt_queue_new(queue_log2);
	stacks = mt_stack_table_new(21, 64u << 20);
	if (!queue || !stacks)
		return false;
	have_consumer = !stalled;
	return !have_consumer || pthread_create(&consumer, NULL, consume, NULL) == 0;
}

uint64_t
bp_stop(void)
{
	if (have_consumer) {
		atomic_store_explicit(&stop, true, memory_order_release);
		pthread_join(consumer, NULL);
	}
	return have_consumer ? atomic_load(&consumed) : mt_queue_pushed(queue);
}

uint64_t
bp_wait_ns(void)
{
	return mt_queue_wait_ns(queue);
}

uint32_t
bp_stack_count(void)
{
	return mt_stack_count(stacks);
}

static uint32_t
current_tid(void)
{
	if (__builtin_expect(!tls_tid, 0))
		tls_tid = (uint32_t)syscall(SYS_gettid);
	return tls_tid;
}

static void
fill(struct mt_event *ev, unsigned kind, uint64_t address, uint64_t bytes)
{
	ev->time_ns = mt_now_ns();
	ev->kind = (uint8_t)kind;
	ev->address = address;
	ev->bytes = bytes;
	ev->tid = current_tid();
	ev->api = 1;
}

unsigned
bp_unwind(unsigned depth)
{
	uintptr_t ips[BP_MAX_FRAMES];
	return mt_unwind(ips, depth);
}

uint32_t
bp_intern(const uintptr_t *ips, unsigned n)
{
	return mt_stack_intern(stacks, ips, n);
}

unsigned
bp_capture(uintptr_t *ips, unsigned depth)
{
	return mt_unwind(ips, depth);
}

void
bp_push(uint64_t address)
{
	struct mt_event ev = { 0 };
	fill(&ev, MT_EV_FREE, address, 0);
	mt_queue_push(queue, &ev);
}

void
bp_alloc_event(uint64_t address, uint64_t bytes, unsigned depth)
{
	uintptr_t ips[BP_MAX_FRAMES];
	struct mt_event ev = { 0 };
	fill(&ev, MT_EV_ALLOC, address, bytes);
	unsigned n = mt_unwind(ips, depth);
	ev.stack = n ? mt_stack_intern(stacks, ips, n) : 0;
	ev.device = 0;
	mt_queue_push(queue, &ev);
}

void
bp_free_event(uint64_t address)
{
	struct mt_event ev = { 0 };
	fill(&ev, MT_EV_FREE, address, 0);
	ev.device = -1;
	mt_queue_push(queue, &ev);
}
