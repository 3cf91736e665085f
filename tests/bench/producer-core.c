/* The application-thread half of a recorded event, without preload and
 * without CUDA: interpose/record/record.c's own mt_record_alloc and
 * mt_record_free (clock, thread id, operation, native unwind, Python
 * frames, stack intern, current device, queue push), from the record
 * path's layer (libmemtrace-record.a) on the carry, writer and core
 * layers. The device is asked of a stand-in for the runtime,
 * a thread-local read as in the real one. A consumer thread drains the
 * queue and discards (or, with bp_start(stalled = true), nobody drains a
 * queue big enough for every event). This is a shared library so that
 * unwind.c drops its frames (the record path's) as it drops
 * libmemtrace.so's, and the caller's are kept. */
#include "producer-core.h"

#include "clock.h"
#include "core.h"
#include "writer.h"
#include "carry.h"
#include "record.h"
#include "python.h"
#include "queue.h"
#include "trace-schema.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BP_MAX_FRAMES 512
#define BP_API 1 /* the first hook of hooks.def: a runtime call */

static struct mt_queue *queue;
static struct mt_stack_table *stacks;
static pthread_t consumer;
static _Atomic bool stop;
static bool have_consumer;
static _Atomic uint64_t consumed;
static MT_TLS int16_t tls_device; /* what cudaSetDevice would set: 0 */
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

static int16_t
current_device(unsigned api)
{
	(void)api;
	return tls_device;
}

/* No device to ask: the first allocation notes none. */
static bool
mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b)
{
	(void)api;
	*free_b = *total_b = 0;
	return false;
}

bool
bp_start(unsigned queue_log2, bool stalled, unsigned depth)
{
	mt_unwind_init();
	mt_python_init();
	queue = mt_queue_new(queue_log2, -1);
	stacks = mt_stack_table_new(21, 64u << 20);
	if (!queue || !stacks)
		return false;
	mt_record_begin(&(struct mt_record_options){
		.queue = queue,
		.stacks = stacks,
		.path = "(bench-producer)",
		.depth = (int)depth,
		.device = current_device,
		.mem_info = mem_info,
	});
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

unsigned
bp_unwind(unsigned depth)
{
	uintptr_t ips[BP_MAX_FRAMES + MT_UNWIND_SLACK];
	unsigned skip;
	return mt_unwind(ips, depth, &skip);
}

uint32_t
bp_intern(const uintptr_t *ips, unsigned n)
{
	return mt_stack_intern(stacks, ips, n);
}

unsigned
bp_capture(uintptr_t *ips, unsigned depth)
{
	uintptr_t buf[BP_MAX_FRAMES + MT_UNWIND_SLACK];
	unsigned skip, n = mt_unwind(buf, depth, &skip);
	memcpy(ips, buf + skip, n * sizeof(ips[0]));
	return n;
}

/* A push with the fields every event has (clock, thread id), without
 * the rest of the record path. */
void
bp_push(uint64_t address)
{
	if (__builtin_expect(!tls_tid, 0))
		tls_tid = (uint32_t)syscall(SYS_gettid);
	struct mt_event ev = { .time_ns = mt_now_ns(), .kind = MT_EV_FREE, .address = address,
			       .tid = tls_tid, .api = BP_API };
	mt_queue_push(queue, mt_queue_ticket(queue), &ev);
}

void
bp_alloc_event(uint64_t address, uint64_t bytes)
{
	/* as the wrappers do: the ticket before the call (here, none) */
	struct mt_order at = mt_record_order();
	mt_record_alloc(&(struct mt_rec){ .api = BP_API,
					  .address = address,
					  .bytes = bytes,
					  .mem = MT_MEM_DEVICE },
			at);
}

void
bp_free_event(uint64_t address)
{
	unsigned release = mt_record_release_begin(address);
	mt_record_free(&(struct mt_rec){ .api = BP_API, .address = address }, release);
}
