/* The record path, in one place: what the application thread does for an
 * event. Every wrapper (hook-*.c), the NVTX entry points (nvtx.c), CUPTI
 * (cupti.c) and the public API call down into it. It calls only what lies
 * below it (the queue, the stack table, the writer's commit, the unwinder,
 * Python frames, operation names) and, through the callbacks it was given,
 * the start of the trace (preload.c), the device queries (hook-real.c) and
 * CUPTI's flush: never a hook file, cupti.c or nvtx.c directly.
 *
 * The hook-path rules, each where it is kept:
 *
 * 1. A thread-local guard: a call made while this thread is already inside
 *    a hook (the runtime reaching the driver, our own cudaGetDevice) passes
 *    straight through and is not recorded twice (mt_enter).
 * 2. Lazy start: the constructor only reads the environment; the trace file
 *    and the writer thread are made at the first recorded CUDA call, so
 *    processes that never use CUDA leave no file (ensure_started, and
 *    preload.c's start).
 * 3. The trace's order is the order the device served the calls, as far
 *    as a hook can know it: an allocation takes its place (a ticket of
 *    the queue's order, mt_record_order) just before its call, a free
 *    or an unmap just after its call returned, so whatever the device held
 *    at once is live at once in the trace. The stack is unwound after
 *    the ticket is taken, outside the ordering. A release in flight is
 *    announced (mt_record_release_begin), so the writer can tell an
 *    address reused at once from a free memtrace missed (reorder.c).
 * 4. Nothing the application sees changes: results are returned untouched,
 *    errno is restored after our work, no context-creating CUDA call is
 *    made on the application's behalf, and a failure of the tool turns the
 *    tool off (one message) while the program runs on.
 * 5. No lock is held across the real call and no lock is taken per event:
 *    the stack table and the queue are lock-free for producers.
 * 6. An allocation that fails for lack of memory is committed to the file
 *    before the hook returns (bounded wait), so the post-mortem survives
 *    whatever the process does next (wait_committed).
 * 7. fork: the child starts its own trace at its first CUDA call; the
 *    writer is paused across fork() so that it never holds SQLite's locks
 *    in the child. exec'd programs load us again through LD_PRELOAD and
 *    trace into their own file; MEMTRACE_FOLLOW=0 turns both off
 *    (preload.c, mt_record_after_fork_child).
 * 8. exit: the library destructor drains the queue and closes the file
 *    (preload.c).
 * 9. memtrace holds no descriptor the program could be handed, and the
 *    program cannot close memtrace's: the trace's files and libunwind's
 *    pipe live at high numbers, and close, close_range, closefrom, dup2 and
 *    dup3 leave them alone (fd-guard.c, hook-fd.c).
 *
 * Allocations and frees made on a stream that is being captured become
 * graph memory and free nodes of the captured graph: the capture-stream
 * table at the end of this file says which streams those are. */
#include "clock.h"
#include "core.h"
#include "writer.h"
#include "carry.h"
#include "record.h"
#include "python.h"
#include "queue.h"
#include "trace-schema.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MT_OOM_SYNC_MS 5000
#define MT_MAX_FRAMES 512 /* native (MEMTRACE_DEPTH) plus Python frames */

_Atomic int mt_record_state = MT_RECORD_IDLE;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*start_trace)(void);
static struct mt_record_options rec; /* written before state turns MT_RECORD_RUNNING */

MT_TLS int mt_in_hook;
MT_TLS _Atomic uint64_t *mt_release_mine;
static MT_TLS uint32_t tls_tid;

/* Marks made before the trace exists (before the first CUDA call) wait
 * here, without stacks, and go first into the trace when it starts. */
#define MT_PENDING_MARKS 32
static struct mt_event pending_marks[MT_PENDING_MARKS];
static unsigned npending;

static void capture_after_fork_child(void);

/* ---- the trace's state ---- */

void mt_record_set_start(void (*start)(void))
{
	start_trace = start;
}

/* Under start_lock, from the start callback. */
void mt_record_begin(const struct mt_record_options *opt)
{
	rec = *opt;
	for (unsigned i = 0; i < npending; i++)
		mt_queue_push(rec.queue, mt_queue_ticket(rec.queue), &pending_marks[i]);
	npending = 0;
	atomic_store_explicit(&mt_record_state, MT_RECORD_RUNNING, memory_order_release);
}

bool mt_record_running(void)
{
	return atomic_load(&mt_record_state) == MT_RECORD_RUNNING;
}

void mt_record_stop(void)
{
	atomic_store(&mt_record_state, MT_RECORD_OFF);
}

void mt_record_lock(void)
{
	pthread_mutex_lock(&start_lock);
}

void mt_record_unlock(void)
{
	pthread_mutex_unlock(&start_lock);
}

/* The child has no writer thread: it forgets the parent's trace and, when
 * it follows, starts its own at its first CUDA call. */
void mt_record_after_fork_child(bool follow)
{
	pthread_mutex_init(&start_lock, NULL);
	tls_tid = 0;
	mt_in_hook = 0;
	mt_release_mine = NULL; /* a slot of the parent's queue */
	npending = 0;
	mt_thread_names_after_fork_child();
	rec = (struct mt_record_options){ 0 };
	capture_after_fork_child();
	if (!follow)
		atomic_store(&mt_record_state, MT_RECORD_OFF);
	else if (atomic_load(&mt_record_state) == MT_RECORD_RUNNING)
		atomic_store(&mt_record_state, MT_RECORD_IDLE);
}

/* Before the constructor has given the start, nothing is configured yet:
 * the call passes through and the trace stays idle. */
static bool ensure_started(void)
{
	int s = atomic_load_explicit(&mt_record_state, memory_order_acquire);
	if (MT_LIKELY(s == MT_RECORD_RUNNING))
		return true;
	if (s == MT_RECORD_OFF || !start_trace)
		return false;
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&mt_record_state) == MT_RECORD_IDLE) {
		start_trace();
		if (atomic_load(&mt_record_state) == MT_RECORD_IDLE)
			atomic_store_explicit(&mt_record_state, MT_RECORD_OFF,
					      memory_order_release);
	}
	pthread_mutex_unlock(&start_lock);
	return atomic_load(&mt_record_state) == MT_RECORD_RUNNING;
}

/* ---- the guard ---- */

/* mt_enter (record.h) found the trace not running. */
bool mt_enter_slow(void)
{
	/* Starting creates files and a thread: whatever errno that leaves
	 * must not become the program's. */
	int saved_errno = errno;
	bool running = ensure_started();
	errno = saved_errno;
	if (running)
		return true;
	mt_in_hook = 0;
	return false;
}

/* ---- recording ----
 * Allocations carry a stack and the current device. Frees carry neither
 * (stack 0, device -1): the writer knows what a free releases, and the
 * report needs no stack for it, so the hot path skips the unwind. */

static bool capturing(uint64_t stream);

static uint32_t current_tid(void)
{
	if (MT_UNLIKELY(!tls_tid)) {
		tls_tid = (uint32_t)syscall(SYS_gettid);
		mt_thread_name_note(tls_tid); /* while it surely lives */
	}
	return tls_tid;
}

/* The ticket last, so that a time read before it is never later than the
 * time of an event ordered after it on another thread. */
static inline struct mt_order order_now(void)
{
	uint64_t time_ns = mt_now_ns();
	return (struct mt_order){ .ticket = mt_queue_ticket(rec.queue), .time_ns = time_ns };
}

struct mt_order mt_record_order(void)
{
	return order_now();
}

/* Everything but the kind, the stack and the device. */
static void fill_common(struct mt_event *ev, const struct mt_rec *r, uint64_t time_ns)
{
	ev->time_ns = time_ns;
	ev->api = (uint16_t)r->api;
	ev->status = r->status;
	ev->address = r->address;
	ev->bytes = r->bytes;
	ev->mem = r->mem;
	ev->stream = r->stream;
	ev->handle = r->handle;
	ev->tid = current_tid();
	ev->op = mt_nvtx_current_op();
}

static uint32_t capture_stack(void)
{
	uintptr_t buf[MT_MAX_FRAMES + MT_UNWIND_SLACK];
	unsigned skip;
	unsigned n = mt_unwind(buf, (unsigned)rec.depth, &skip);
	uintptr_t *ips = buf + skip;
	n = mt_python_splice(ips, n, MT_MAX_FRAMES);
	n = mt_launch_splice(ips, n, MT_MAX_FRAMES);
	return n ? mt_stack_intern(rec.stacks, ips, n) : 0;
}

static bool is_device_side(unsigned mem)
{
	return mem == MT_MEM_DEVICE || mem == MT_MEM_MANAGED || mem == MT_MEM_POOL ||
	       mem == MT_MEM_VMM_PHYSICAL || mem == MT_MEM_ARRAY || mem == MT_MEM_GRAPH;
}

static atomic_uint_fast64_t devices_seen;

/* The first allocation on each device records the device's size and what
 * was free then: the baseline for "what is not ours" in the report. Not
 * during a capture (ev->mem is graph memory from a capturing stream):
 * cudaMemGetInfo must not run inside someone's capture; the first launch
 * notes the device instead. */
static __attribute__((noinline)) void note_new_device(const struct mt_rec *r, int16_t device)
{
	if (!is_device_side(r->mem))
		return;
	uint64_t bit = 1ull << device;
	if (atomic_fetch_or(&devices_seen, bit) & bit)
		return;
	uint64_t free_b, total;
	if (!rec.mem_info(r->api, &free_b, &total))
		return;
	/* a ticket of its own, taken only now: every ticket must be pushed */
	struct mt_order at = order_now();
	struct mt_event ev = { 0 };
	fill_common(&ev, &(struct mt_rec){ .api = r->api }, at.time_ns);
	ev.kind = MT_EV_DEVICE;
	ev.device = device;
	ev.handle = free_b;
	ev.bytes = total;
	mt_queue_push(rec.queue, at.ticket, &ev);
}

/* Once a device is noted, one load. */
static inline void note_device(const struct mt_rec *r, int16_t device)
{
	if (MT_LIKELY((uint16_t)device >= 64 ||
		      atomic_load_explicit(&devices_seen, memory_order_relaxed) >> device & 1))
		return;
	note_new_device(r, device);
}

/* The OOM is in the file before the program hears of it (rule 6). */
static void wait_committed(uint64_t seq)
{
	if (rec.writer && !mt_writer_sync(rec.writer, seq, MT_OOM_SYNC_MS) &&
	    !mt_writer_failed(rec.writer))
		mt_log(MT_ENV, "the out-of-memory event was not committed to %s within %d s",
		       rec.path, MT_OOM_SYNC_MS / 1000);
}

_Atomic uint64_t mt_record_ooms;

void mt_record_alloc(const struct mt_rec *r, struct mt_order at)
{
	int saved_errno = errno;
	struct mt_event ev = { 0 };
	fill_common(&ev, r, at.time_ns);
	ev.stack = capture_stack();
	ev.kind = r->status == 0 ? MT_EV_ALLOC : r->oom ? MT_EV_OOM : MT_EV_ALLOC_ERROR;
	/* Allocated on a stream being captured: memory of the graph. */
	if (r->stream && (r->mem == MT_MEM_DEVICE || r->mem == MT_MEM_POOL) &&
	    capturing(r->stream))
		ev.mem = MT_MEM_GRAPH;
	ev.device = rec.device(r->api);
	uint64_t upto = 0;
	if (ev.kind == MT_EV_OOM) {
		atomic_fetch_add_explicit(&mt_record_ooms, 1, memory_order_relaxed);
		rec.mem_info(r->api, &ev.device_free, &ev.device_total);
		/* CUPTI's records so far go into the OOM's commit (after it in
		 * the order: their tickets are taken now) */
		if (rec.flush)
			rec.flush();
		upto = mt_queue_tickets(rec.queue) - 1;
	}
	uint64_t cell = mt_queue_push(rec.queue, at.ticket, &ev);
	if (ev.kind == MT_EV_OOM)
		wait_committed(cell > upto ? cell : upto);
	if (ev.kind == MT_EV_ALLOC && !(ev.mem == MT_MEM_GRAPH && r->mem != MT_MEM_GRAPH))
		note_device(r, ev.device);
	errno = saved_errno;
}

/* Its ticket now, then the stack. errno is the caller's to keep. */
static void record_plain(const struct mt_rec *r, unsigned kind, int status, bool with_stack)
{
	struct mt_order at = order_now();
	struct mt_event ev = { 0 };
	fill_common(&ev, r, at.time_ns);
	ev.status = status;
	ev.kind = (uint8_t)kind;
	ev.stack = with_stack ? capture_stack() : 0;
	ev.device = with_stack ? rec.device(r->api) : -1;
	mt_queue_push(rec.queue, at.ticket, &ev);
}

/* A free on a stream being captured frees nothing now: it is a free node
 * of the graph. A free that failed is a free_error too, which puts the
 * allocation back. */
void mt_record_free(const struct mt_rec *r, unsigned release)
{
	int saved_errno = errno;
	if (MT_UNLIKELY(r->stream && capturing(r->stream)))
		record_plain(r, MT_EV_GRAPH_FREE_NODE, 0, true);
	else
		record_plain(r, MT_EV_FREE, 0, false);
	if (MT_UNLIKELY(r->status))
		record_plain(r, MT_EV_FREE_ERROR, r->status, false);
	mt_record_release_done(release);
	errno = saved_errno;
}

/* No slot yet on this thread (its first release), or none to be had. */
unsigned mt_record_release_begin_slow(uint64_t address)
{
	_Atomic uint64_t *slot = mt_queue_release_slot(rec.queue);
	if (!slot) {
		mt_queue_release_unnamed(rec.queue, true);
		return 1;
	}
	mt_release_mine = slot;
	return mt_record_release_begin(address);
}

void mt_record_release_done_slow(void)
{
	mt_queue_release_unnamed(rec.queue, false);
}

/* A program whose device memory is all captured graph memory notes its
 * device at its first graph launch or upload (never inside a capture). */
void mt_record_event(const struct mt_rec *r)
{
	int saved_errno = errno;
	record_plain(r, r->kind, r->status, !r->no_stack);
	if ((r->kind == MT_EV_GRAPH_LAUNCH || r->kind == MT_EV_GRAPH_UPLOAD) && r->status == 0 &&
	    !atomic_load_explicit(&devices_seen, memory_order_relaxed))
		note_device(&(struct mt_rec){ .api = r->api, .mem = MT_MEM_GRAPH },
			    rec.device(r->api));
	errno = saved_errno;
}

/* A framework allocator's action (frameworks/torch.c), on the thread
 * that made it, inside the framework's allocator: its device is the one
 * the framework names, not a CUDA question. Its ticket now, so that it
 * follows the CUDA call that gave the segment and precedes the one that
 * returns it. Frees carry no stack, as CUDA frees do; the allocator's
 * OOM is in the file before the framework raises it (rule 6). */
void mt_record_tensor(const struct mt_rec *r, int16_t device)
{
	int saved_errno = errno;
	struct mt_order at = order_now();
	struct mt_event ev = { 0 };
	fill_common(&ev, r, at.time_ns);
	ev.kind = r->kind;
	ev.device = device;
	ev.limit = r->limit;
	ev.device_total = r->device_total;
	ev.stack = r->no_stack ? 0 : capture_stack();
	uint64_t cell = mt_queue_push(rec.queue, at.ticket, &ev);
	if (r->kind == MT_EV_TENSOR_OOM)
		wait_committed(cell);
	errno = saved_errno;
}

void mt_record_mark(unsigned api, uint32_t label)
{
	int saved_errno = errno;
	struct mt_event ev = { 0 };
	/* the ticket once the queue is known to be there: a mark made
	 * before the trace starts takes its ticket at the start */
	fill_common(&ev, &(struct mt_rec){ .api = api }, mt_now_ns());
	ev.kind = MT_EV_MARK;
	ev.op = label;
	ev.device = -1;
	if (atomic_load_explicit(&mt_record_state, memory_order_acquire) == MT_RECORD_RUNNING &&
	    !mt_in_hook) {
		mt_in_hook = 1;
		uint64_t ticket = mt_queue_ticket(rec.queue);
		ev.stack = capture_stack();
		mt_queue_push(rec.queue, ticket, &ev);
		mt_in_hook = 0;
	} else if (atomic_load(&mt_record_state) == MT_RECORD_IDLE) {
		pthread_mutex_lock(&start_lock);
		if (atomic_load(&mt_record_state) == MT_RECORD_RUNNING)
			mt_queue_push(rec.queue, mt_queue_ticket(rec.queue), &ev);
		else if (npending < MT_PENDING_MARKS)
			pending_marks[npending++] = ev;
		pthread_mutex_unlock(&start_lock);
	}
	errno = saved_errno;
}

bool mt_record_external(const struct mt_event *ev)
{
	if (atomic_load_explicit(&mt_record_state, memory_order_acquire) != MT_RECORD_RUNNING)
		return false;
	mt_queue_push(rec.queue, mt_queue_ticket(rec.queue), ev);
	return true;
}

/* ---- the capture-stream table ----
 * Streams being captured, each with the capture's origin: the stream
 * that began it, or for a stream that joined it (fork/join: it waited on
 * an event recorded in the capture), the origin it joined. Captures are
 * few and short-lived: small arrays, changed under a lock after the real
 * call, read without one. Allocations pay one relaxed load while no
 * capture is open (mt_capture_streams == 0), and a scan of the streams
 * otherwise. The table is kept by the wrapper the program called
 * (hook-graph.c); nested calls (runtime -> driver) pass through inside the
 * guard. */
#define MT_MAX_CAPTURES 64
#define MT_MAX_CAPTURE_EVENTS 256

struct capture_slot {
	_Atomic uint64_t stream; /* 0: free */
	uint64_t origin;
};

/* An event recorded on a capturing stream: waiting on it joins its capture. */
struct event_slot {
	uint64_t event; /* 0: free */
	uint64_t origin;
};

static struct capture_slot captures[MT_MAX_CAPTURES];
static struct event_slot capture_events[MT_MAX_CAPTURE_EVENTS];
atomic_int mt_capture_streams;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under capture_lock. */
static struct capture_slot *capture_find(uint64_t stream)
{
	for (unsigned i = 0; stream && i < MT_MAX_CAPTURES; i++)
		if (atomic_load_explicit(&captures[i].stream, memory_order_relaxed) == stream)
			return &captures[i];
	return NULL;
}

/* Under capture_lock. */
static struct capture_slot *capture_find_free(void)
{
	for (unsigned i = 0; i < MT_MAX_CAPTURES; i++)
		if (!atomic_load_explicit(&captures[i].stream, memory_order_relaxed))
			return &captures[i];
	return NULL;
}

void mt_capture_begin(uint64_t stream)
{
	pthread_mutex_lock(&capture_lock);
	if (!capture_find(stream)) {
		struct capture_slot *free_slot = capture_find_free();
		if (free_slot) {
			free_slot->origin = stream;
			atomic_store_explicit(&free_slot->stream, stream, memory_order_release);
			atomic_fetch_add(&mt_capture_streams, 1);
		}
	}
	pthread_mutex_unlock(&capture_lock);
}

void mt_capture_end(uint64_t origin)
{
	pthread_mutex_lock(&capture_lock);
	for (unsigned i = 0; i < MT_MAX_CAPTURES; i++) {
		uint64_t s = atomic_load_explicit(&captures[i].stream, memory_order_relaxed);
		if (s && captures[i].origin == origin) {
			atomic_store_explicit(&captures[i].stream, 0, memory_order_release);
			atomic_fetch_sub(&mt_capture_streams, 1);
		}
	}
	for (unsigned i = 0; i < MT_MAX_CAPTURE_EVENTS; i++)
		if (capture_events[i].event && capture_events[i].origin == origin)
			capture_events[i].event = 0;
	pthread_mutex_unlock(&capture_lock);
}

/* Whether a stream is being captured into a graph right now: one that
 * began a capture, or one that joined it by waiting on its event. */
static bool capturing(uint64_t stream)
{
	if (MT_LIKELY(mt_capture_none()) || !stream)
		return false;
	for (unsigned i = 0; i < MT_MAX_CAPTURES; i++)
		if (atomic_load_explicit(&captures[i].stream, memory_order_relaxed) == stream)
			return true;
	return false;
}

/* CUDA does not carry a capture across fork. */
static void capture_after_fork_child(void)
{
	pthread_mutex_init(&capture_lock, NULL);
	for (unsigned i = 0; i < MT_MAX_CAPTURES; i++)
		atomic_store(&captures[i].stream, 0);
	for (unsigned i = 0; i < MT_MAX_CAPTURE_EVENTS; i++)
		capture_events[i].event = 0;
	atomic_store(&mt_capture_streams, 0);
}

/* Under capture_lock. */
static struct event_slot *event_find(uint64_t event)
{
	for (unsigned i = 0; i < MT_MAX_CAPTURE_EVENTS; i++)
		if (capture_events[i].event == event)
			return &capture_events[i];
	return NULL;
}

void mt_capture_event_recorded(uint64_t event, uint64_t stream, bool external)
{
	pthread_mutex_lock(&capture_lock);
	struct capture_slot *c = external ? NULL : capture_find(stream);
	struct event_slot *e = event_find(event);
	if (!c) {
		if (e)
			e->event = 0;
	} else if (e || (e = event_find(0))) {
		e->event = event;
		e->origin = c->origin;
	}
	pthread_mutex_unlock(&capture_lock);
}

uint64_t mt_capture_join(uint64_t stream, uint64_t event)
{
	uint64_t joined = 0;
	pthread_mutex_lock(&capture_lock);
	struct event_slot *e = event_find(event);
	struct capture_slot *free_slot;
	if (e && stream && capture_find(e->origin) && !capture_find(stream) &&
	    (free_slot = capture_find_free())) {
		free_slot->origin = joined = e->origin;
		atomic_store_explicit(&free_slot->stream, stream, memory_order_release);
		atomic_fetch_add(&mt_capture_streams, 1);
	}
	pthread_mutex_unlock(&capture_lock);
	return joined;
}
