/* The hook-path rules, in one place. Every wrapper goes through here.
 *
 * 1. A thread-local guard: a call made while this thread is already inside
 *    a hook (the runtime reaching the driver, our own cudaGetDevice) passes
 *    straight through and is not recorded twice.
 * 2. Lazy start: the constructor only reads the environment; the trace file
 *    and the writer thread are made at the first recorded CUDA call, so
 *    processes that never use CUDA leave no file.
 * 3. Frees are recorded before the real free (see hook-runtime.c).
 * 4. Nothing the application sees changes: results are returned untouched,
 *    errno is restored after our work, no context-creating CUDA call is
 *    made on the application's behalf, and a failure of the tool turns the
 *    tool off (one message) while the program runs on.
 * 5. No lock is held across the real call and no lock is taken per event:
 *    the stack table and the queue are lock-free for producers.
 * 6. An allocation that fails for lack of memory is committed to the file
 *    before the hook returns (bounded wait), so the post-mortem survives
 *    whatever the process does next.
 * 7. fork: the child starts its own trace at its first CUDA call; the
 *    writer is paused across fork() so that it never holds SQLite's locks
 *    in the child. exec'd programs load us again through LD_PRELOAD and
 *    trace into their own file; MEMTRACE_FOLLOW=0 turns both off.
 * 8. exit: the library destructor drains the queue and closes the file.
 * 9. memtrace holds no descriptor the program could be handed, and the
 *    program cannot close memtrace's: the trace's files and libunwind's
 *    pipe live at high numbers, and close, close_range, closefrom, dup2 and
 *    dup3 leave them alone (fd-guard.c, hook-fd.c). */
#include "clock.h"
#include "cupti.h"
#include "hook-real.h"
#include "memtrace.h"
#include "python.h"
#include "trace-schema.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_QUEUE_LOG2 16 /* 65536 cells of 128 bytes (an 80-byte event, aligned): 8 MiB */
#define MT_STACK_SLOTS_LOG2 21 /* up to 1M distinct stacks */
#define MT_STACK_ARENA_FRAMES (64u << 20) /* 512 MiB reserved, touched on use */
#define MT_INTERVAL_MS 50
#define MT_OOM_SYNC_MS 5000

enum state { ST_IDLE, ST_RUNNING, ST_OFF };

static _Atomic int state = ST_IDLE;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mt_config config;
static struct mt_queue *queue;
static struct mt_stack_table *stacks;
static struct mt_writer *writer;
static char trace_path[MT_PATH_MAX];

static MT_TLS int in_hook;
static MT_TLS uint32_t tls_tid;

/* Marks made before the trace exists (before the first CUDA call) wait
 * here, without stacks, and go first into the trace when it starts. */
#define MT_PENDING_MARKS 32
static struct mt_event pending_marks[MT_PENDING_MARKS];
static unsigned npending;

static void flush_pending_marks(void)
{
	for (unsigned i = 0; i < npending; i++)
		mt_queue_push(queue, &pending_marks[i]);
	npending = 0;
}

/* ---- start and stop ---- */

static bool make_path(void)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	if (mt_config_expand_output(config.output, getpid(), host, config.rank, trace_path,
				    sizeof(trace_path))) {
		mt_log(MT_USER, "MEMTRACE_OUTPUT=%.200s has an unknown %%-sequence or is too "
				"long (use %%p, %%h, %%r, %%%%); not tracing",
		       config.output);
		return false;
	}
	return true;
}

/* The status the program passed to exit() (or returned from main). -1:
 * not seen. The handler is registered when the trace starts, not in the
 * constructor: exit handlers run last-registered first, and the one that
 * runs the library destructors (ld.so's, registered when main's process
 * starts, after preloaded constructors ran) must come after ours. */
static int exit_status = -1;
static bool exit_noted;

static void note_exit(int status, void *arg)
{
	(void)arg;
	exit_status = status & 0377;
}

static void start(void)
{
	mt_unwind_init();
	mt_python_init();
	if (!make_path())
		goto off;
	/* before the writer opens it: the trace's descriptors go high and are
	 * guarded (fd-guard.c) */
	if (!mt_fdguard_sqlite(trace_path))
		mt_log(MT_ENV, "this libsqlite3 does not let memtrace guard the trace's file "
			       "descriptors; a program that closes descriptors it did not open "
			       "may get them");
	queue = mt_queue_new(MT_QUEUE_LOG2);
	stacks = mt_stack_table_new(MT_STACK_SLOTS_LOG2, MT_STACK_ARENA_FRAMES);
	if (!queue || !stacks) {
		mt_log(MT_ENV, "cannot reserve memory for the event queue; not tracing");
		goto off;
	}
	struct mt_writer_options opt = {
		.path = trace_path,
		.queue = queue,
		.stacks = stacks,
		.depth = config.depth,
		.interval_ms = MT_INTERVAL_MS,
		.start_ns = mt_now_ns(),
		.rank = config.rank,
		.op_name = mt_nvtx_name,
		.pyframe = mt_python_frame,
	};
	writer = mt_writer_start(&opt);
	if (!writer)
		goto off;
	mt_log(MT_INFO, "tracing to %s", trace_path);
	if (!exit_noted) /* once a process: a fork child inherits it */
		exit_noted = on_exit(note_exit, NULL) == 0;
	flush_pending_marks();
	atomic_store_explicit(&state, ST_RUNNING, memory_order_release);
	mt_cupti_start(stacks); /* the second witness, when it can be had */
	return;
off:
	atomic_store_explicit(&state, ST_OFF, memory_order_release);
}

static bool ensure_started(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (MT_LIKELY(s == ST_RUNNING))
		return true;
	if (s == ST_OFF)
		return false;
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&state) == ST_IDLE)
		start();
	pthread_mutex_unlock(&start_lock);
	return atomic_load(&state) == ST_RUNNING;
}

/* MEMTRACE_FOLLOW=0: programs this one executes must not load us. The
 * entries of LD_PRELOAD that are this library are dropped; the rest stays
 * as it was. */
static void stop_following(void)
{
	const char *preload = getenv("LD_PRELOAD");
	Dl_info self;
	if (!preload || !dladdr((void *)stop_following, &self) || !self.dli_fname)
		return;
	char kept[MT_PATH_MAX];
	size_t n = 0;
	const char *p = preload;
	while (*p) {
		size_t len = strcspn(p, ": ");
		const char *slash = memrchr(p, '/', len);
		const char *base = slash ? slash + 1 : p;
		bool ours = (len == strlen(self.dli_fname) && !strncmp(p, self.dli_fname, len)) ||
			    ((size_t)(p + len - base) == strlen("libmemtrace.so") &&
			     !strncmp(base, "libmemtrace.so", strlen("libmemtrace.so")));
		if (len && !ours && n + len + 2 < sizeof(kept)) {
			if (n)
				kept[n++] = ':';
			memcpy(kept + n, p, len);
			n += len;
		}
		p += len;
		p += strspn(p, ": ");
	}
	kept[n] = '\0';
	if (n)
		setenv("LD_PRELOAD", kept, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* NVTX finds its injection library through this variable: point it at us
 * unless the user chose another tool. */
static void offer_nvtx(void)
{
	Dl_info self;
	const char *set = getenv("NVTX_INJECTION64_PATH");
	if (!dladdr((void *)offer_nvtx, &self) || !self.dli_fname)
		return;
	if (!set || !*set)
		setenv("NVTX_INJECTION64_PATH", self.dli_fname, 1);
	else if (strcmp(set, self.dli_fname))
		mt_log(MT_INFO, "NVTX_INJECTION64_PATH is set to %.200s: NVTX ranges go there, "
				"and events carry no operation names",
		       set);
}

__attribute__((constructor)) static void mt_constructor(void)
{
	mt_log_init();
	mt_hook_fd_init();
	mt_config_load(&config, (mt_getenv_fn)getenv);
	if (!config.follow)
		stop_following();
	offer_nvtx();
}

/* Runs after the program's atexit handlers and after the destructors of
 * the libraries loaded after us, so late frees are still recorded. */
__attribute__((destructor)) static void mt_destructor(void)
{
	pthread_mutex_lock(&start_lock);
	if (atomic_load(&state) == ST_RUNNING) {
		mt_cupti_stop();
		atomic_store(&state, ST_OFF);
		mt_writer_stop(writer, true, exit_status);
		mt_queue_close(queue);
		if (!mt_writer_failed(writer))
			mt_log(MT_INFO, "%llu events written to %s",
			       (unsigned long long)mt_writer_committed(writer), trace_path);
		/* writer stays allocated: a thread still in a hook may use it */
	}
	pthread_mutex_unlock(&start_lock);
}

/* ---- fork ---- */

static void before_fork(void)
{
	pthread_mutex_lock(&start_lock);
	if (writer)
		mt_writer_lock(writer);
}

static void after_fork_parent(void)
{
	if (writer)
		mt_writer_unlock(writer);
	pthread_mutex_unlock(&start_lock);
}

/* The child has no writer thread. Forget the parent's trace (its memory
 * stays mapped but unused, its descriptors are closed) and start a new one
 * at the first CUDA call. */
static void after_fork_child(void)
{
	pthread_mutex_init(&start_lock, NULL);
	tls_tid = 0;
	in_hook = 0;
	npending = 0;
	writer = NULL;
	queue = NULL;
	stacks = NULL;
	mt_fdguard_after_fork_child();
	mt_graph_after_fork_child();
	mt_log_reset();
	if (!config.follow)
		atomic_store(&state, ST_OFF);
	else if (atomic_load(&state) == ST_RUNNING)
		atomic_store(&state, ST_IDLE);
}

__attribute__((constructor)) static void mt_register_fork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* ---- the guard ---- */

bool mt_enter(void)
{
	if (in_hook)
		return false;
	in_hook = 1;
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (MT_LIKELY(s == ST_RUNNING))
		return true;
	/* Starting creates files and a thread: whatever errno that leaves
	 * must not become the program's. */
	int saved_errno = errno;
	bool running = ensure_started();
	errno = saved_errno;
	if (running)
		return true;
	in_hook = 0;
	return false;
}

void mt_leave(void)
{
	in_hook = 0;
}

/* ---- recording ----
 * Allocations carry a stack and the current device. Frees carry neither
 * (stack 0, device -1): the writer knows what a free releases, and the
 * report needs no stack for it, so the hot path skips the unwind. */

static uint32_t current_tid(void)
{
	if (MT_UNLIKELY(!tls_tid))
		tls_tid = (uint32_t)syscall(SYS_gettid);
	return tls_tid;
}

/* The device current on this thread, asked of the library the call went
 * to: both answers are a thread-local read in the real libraries. */
static int16_t current_device(unsigned api)
{
	if (mt_api_is_driver(api)) {
		CUdevice dev;
		mt_cuCtxGetDevice_fn get = mt_real_cuCtxGetDevice();
		return get && get(&dev) == CUDA_SUCCESS ? (int16_t)dev : -1;
	}
	int dev;
	mt_cudaGetDevice_fn get = mt_real_cudaGetDevice();
	return get && get(&dev) == cudaSuccess ? (int16_t)dev : -1;
}

/* The device's free/total memory. Only called after a call of the program
 * that already used a context (a failure, a first allocation). */
static bool mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b)
{
	size_t f = 0, t = 0;
	bool ok;
	if (mt_api_is_driver(api)) {
		mt_cuMemGetInfo_v2_fn get = mt_real_cuMemGetInfo_v2();
		ok = get && get(&f, &t) == CUDA_SUCCESS;
	} else {
		mt_cudaMemGetInfo_fn get = mt_real_cudaMemGetInfo();
		ok = get && get(&f, &t) == cudaSuccess;
	}
	*free_b = f;
	*total_b = t;
	return ok && t;
}

static void fill_common(struct mt_event *ev, const struct mt_rec *r)
{
	ev->time_ns = mt_now_ns();
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

#define MT_MAX_FRAMES 512 /* native (MEMTRACE_DEPTH) plus Python frames */

static uint32_t capture_stack(void)
{
	uintptr_t ips[MT_MAX_FRAMES];
	unsigned n = mt_unwind(ips, (unsigned)config.depth);
	n = mt_python_splice(ips, n, MT_MAX_FRAMES);
	return n ? mt_stack_intern(stacks, ips, n) : 0;
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
static void note_device(const struct mt_rec *r, int16_t device)
{
	if (device < 0 || device >= 64 || !is_device_side(r->mem))
		return;
	uint64_t bit = 1ull << device;
	if (atomic_load_explicit(&devices_seen, memory_order_relaxed) & bit ||
	    atomic_fetch_or(&devices_seen, bit) & bit)
		return;
	struct mt_event ev = { 0 };
	fill_common(&ev, r);
	ev.kind = MT_EV_DEVICE;
	ev.device = device;
	ev.address = 0;
	ev.mem = 0;
	if (mem_info(r->api, &ev.handle, &ev.bytes))
		mt_queue_push(queue, &ev);
}

void mt_record_alloc(const struct mt_rec *r)
{
	int saved_errno = errno;
	struct mt_event ev = { 0 };
	fill_common(&ev, r);
	ev.stack = capture_stack();
	ev.kind = r->status == 0 ? MT_EV_ALLOC : r->oom ? MT_EV_OOM : MT_EV_ALLOC_ERROR;
	/* Allocated on a stream being captured: memory of the graph. */
	if (r->stream && (r->mem == MT_MEM_DEVICE || r->mem == MT_MEM_POOL) &&
	    mt_graph_capturing(r->stream))
		ev.mem = MT_MEM_GRAPH;
	ev.device = current_device(r->api);
	if (ev.kind == MT_EV_OOM) {
		mem_info(r->api, &ev.device_free, &ev.device_total);
		/* CUPTI's records so far go before the OOM and in its commit */
		mt_cupti_flush();
	}
	uint64_t seq = mt_queue_push(queue, &ev);
	if (ev.kind == MT_EV_OOM && !mt_writer_sync(writer, seq, MT_OOM_SYNC_MS) &&
	    !mt_writer_failed(writer))
		mt_log(MT_ENV, "the out-of-memory event was not committed to %s within %d s",
		       trace_path, MT_OOM_SYNC_MS / 1000);
	if (ev.kind == MT_EV_ALLOC && !(ev.mem == MT_MEM_GRAPH && r->mem != MT_MEM_GRAPH))
		note_device(r, ev.device);
	errno = saved_errno;
}

static void record_plain(const struct mt_rec *r, unsigned kind, bool with_stack)
{
	int saved_errno = errno;
	struct mt_event ev = { 0 };
	fill_common(&ev, r);
	ev.kind = (uint8_t)kind;
	ev.stack = with_stack ? capture_stack() : 0;
	ev.device = with_stack ? current_device(r->api) : -1;
	mt_queue_push(queue, &ev);
	errno = saved_errno;
}

/* A free on a stream being captured frees nothing now: it is a free node
 * of the graph. */
void mt_record_free(const struct mt_rec *r)
{
	if (r->stream && mt_graph_capturing(r->stream))
		record_plain(r, MT_EV_GRAPH_FREE_NODE, true);
	else
		record_plain(r, MT_EV_FREE, false);
}

void mt_record_free_error(const struct mt_rec *r)
{
	record_plain(r, MT_EV_FREE_ERROR, false);
}

/* A program whose device memory is all captured graph memory notes its
 * device at its first graph launch or upload (never inside a capture). */
void mt_record_event(const struct mt_rec *r)
{
	record_plain(r, r->kind, !r->no_stack);
	if ((r->kind == MT_EV_GRAPH_LAUNCH || r->kind == MT_EV_GRAPH_UPLOAD) && r->status == 0 &&
	    !atomic_load_explicit(&devices_seen, memory_order_relaxed))
		note_device(&(struct mt_rec){ .api = r->api, .mem = MT_MEM_GRAPH },
			    current_device(r->api));
}

void mt_record_mark(unsigned api, uint32_t label)
{
	int saved_errno = errno;
	struct mt_event ev = { 0 };
	fill_common(&ev, &(struct mt_rec){ .api = api });
	ev.kind = MT_EV_MARK;
	ev.op = label;
	ev.device = -1;
	if (atomic_load_explicit(&state, memory_order_acquire) == ST_RUNNING && !in_hook) {
		in_hook = 1;
		ev.stack = capture_stack();
		mt_queue_push(queue, &ev);
		in_hook = 0;
	} else if (atomic_load(&state) == ST_IDLE) {
		pthread_mutex_lock(&start_lock);
		if (atomic_load(&state) == ST_RUNNING)
			mt_queue_push(queue, &ev);
		else if (npending < MT_PENDING_MARKS)
			pending_marks[npending++] = ev;
		pthread_mutex_unlock(&start_lock);
	}
	errno = saved_errno;
}

bool mt_record_external(const struct mt_event *ev)
{
	if (atomic_load_explicit(&state, memory_order_acquire) != ST_RUNNING)
		return false;
	mt_queue_push(queue, ev);
	return true;
}

/* ---- public API (memtrace.h) ---- */

MT_EXPORT void memtrace_mark(const char *label)
{
	mt_record_mark(MT_API_memtrace_mark, mt_nvtx_intern(label ? label : ""));
}

MT_EXPORT int memtrace_flush(void)
{
	if (atomic_load(&state) != ST_RUNNING)
		return -1;
	mt_cupti_flush();
	uint64_t pushed = mt_queue_pushed(queue);
	if (pushed == 0)
		return 0;
	return mt_writer_sync(writer, pushed - 1, 2000) ? 0 : -1;
}
