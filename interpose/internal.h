/* Shared declarations of the capture library, grouped by the file that
 * defines them, from the bottom layer up. Everything not declared here is
 * static.
 *
 * The layers. A file calls into its own layer and the layers below it;
 * it reaches a layer above only through a callback it was given. No call
 * runs back up, so there is no call cycle between the layers.
 *
 *   5  preload.c            start and stop, fork, the public API: makes the
 *                           trace's parts and hands each its callbacks
 *   4  hook-*.c, nvtx.c,    the witnesses: the wrappers (hook-real.h,
 *      cupti.c              hook-common.h), the NVTX entry points, CUPTI
 *   3  record.c             the record path: the guard and lazy start, the
 *                           events, the capture-stream table
 *   2  unwind.c, python*.c, what an event carries: native stacks, Python
 *      nvtx-names.c         frames, operation names and range stacks
 *   1  the core             api, config, log, fd-guard, queue, stack-table,
 *      (libmemtrace-core.a) trace-writer, site-table, symbols, u64map
 *
 * The callbacks, all given by preload.c: record.c's start at load
 * (mt_record_set_start), the rest when the trace starts. The writer (1)
 * asks for names (struct mt_writer_options: op_name, nvtx-names.c;
 * pyframe, python.c). record.c (3) asks hook-real.c for the current
 * device and its memory and has CUPTI flush before an OOM (struct
 * mt_record_options: device, mem_info, flush). cupti.c hands its events
 * to a sink, mt_record_external, and finds CUPTI's functions with the
 * real dlsym (struct mt_cupti_options), so that it links with layers 1
 * and 2 alone (tests/sim-cupti).
 *
 * The check: the benchmark's libbench-producer-core.so (tests/bench) is
 * layers 1 to 3 alone (libmemtrace-record.a, libmemtrace-core.a), linked
 * with --no-undefined, so a call from them into layer 4 or 5 breaks its
 * link. Two calls the linker routes up, not written as calls to a layer
 * above: under -Bsymbolic-functions, memtrace's own close() (trace-writer.c)
 * and dlsym() (python.c) bind to its exported wrappers (hook-fd.c,
 * hook-dl.c), which pass them through. Within layer 4, hook-real.c and
 * hook-dl.c call each other (the real dlsym; our wrappers for a handle). */
#pragma once

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MT_EXPORT __attribute__((visibility("default")))
#define MT_TLS __thread __attribute__((tls_model("initial-exec")))
#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ==== layer 1: the core (libmemtrace-core.a) ==== */

/* ---- hooks.def: API ids (0 is "none") ---- */
enum mt_api {
	MT_API_NONE = 0,
#define MT_HOOK(lib, ret, name, params, args) MT_API_##name,
#define MT_REAL(lib, ret, name, params, args) MT_API_##name,
#define MT_NAME(lib, name) MT_API_##name,
#include "hooks.def"
	MT_API_COUNT,
};

/* api.c */
const char *mt_api_name(unsigned api);
bool mt_api_is_driver(unsigned api);
/* A function memtrace calls for itself (MT_REAL in hooks.def). */
bool mt_api_is_own(unsigned api);

/* ---- event.h-like: the fixed-size record that crosses the queue ---- */
struct mt_event {
	uint64_t time_ns; /* CLOCK_MONOTONIC, absolute */
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;
	uint64_t device_free; /* oom; CUPTI events: the correlation id */
	uint64_t device_total; /* oom; CUPTI events: the program counter */
	uint64_t handle; /* map: physical handle; pool events and pool allocations: the pool */
	uint32_t stack;
	uint32_t tid;
	int32_t status;
	int16_t device;
	uint8_t kind; /* enum mt_event_kind */
	uint8_t mem; /* enum mt_mem_kind */
	uint16_t api; /* enum mt_api */
	uint8_t source; /* enum mt_source: who saw it */
	uint8_t pad;
	uint32_t op; /* innermost NVTX range of the thread; marks: the label */
};
/* The queue's cells (queue.c) and the documents count on this size. Its
 * place in the trace's order is not in it: that is the cell it is pushed
 * into (mt_queue_push). */
_Static_assert(sizeof(struct mt_event) == 80, "an event is 80 bytes");

/* ---- framework-oom.c: a framework allocator's own OOM, from its log line ---- */
/* text is one write to stderr; true when it is a BFC allocator's "ran out
 * of memory" warning: *bytes the request as rounded, *device from the
 * allocator's name (GPU_<n>_bfc), else -1. */
bool mt_bfc_oom_parse(const char *text, size_t len, uint64_t *bytes, int *device);

/* ---- log.c: the one error funnel ---- */
enum mt_who {
	MT_INFO, /* not an error; silenced by MEMTRACE_QUIET */
	MT_USER, /* a bad setting or input from the user */
	MT_ENV, /* the environment: file system, missing library */
	MT_BUG, /* a bug in memtrace: please report */
};
void mt_log(enum mt_who who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mt_log_set_quiet(bool quiet);
/* Lines already prefixed, in one write: informational, as MT_INFO. */
void mt_log_text(const char *text, size_t len);
/* Remembers which file descriptor 2 is (called at load). */
void mt_log_init(void);
void mt_log_reset(void);

/* ---- config.c: settings from the environment ---- */
#define MT_PATH_MAX 4096
struct mt_config {
	char output[MT_PATH_MAX]; /* pattern, before expansion */
	int depth; /* native frames */
	bool quiet;
	bool follow; /* trace children (fork, exec) too */
	bool tensors; /* MEMTRACE_TENSORS: a framework allocator's actions (PyTorch's) */
	char rank[64]; /* RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID at load; "0" */
	uint64_t flight; /* MEMTRACE_FLIGHT in bytes; 0: the full trace */
#define MT_FLIGHT_MIN (1ull << 20) /* the least it can be */
	char report_at_exit[8]; /* MEMTRACE_REPORT_AT_EXIT: "", "text", "json", "html" */
};
typedef const char *(*mt_getenv_fn)(const char *name);
void mt_config_load(struct mt_config *cfg, mt_getenv_fn get);
int mt_config_expand_output(const char *pattern, pid_t pid, const char *host, const char *rank,
			    char *out, size_t outsz);
const char *mt_config_rank(mt_getenv_fn get);

/* ---- stack-table.c: interned stacks, shared by all threads ---- */
struct mt_stack_table;
struct mt_stack_table *mt_stack_table_new(unsigned log2_slots, size_t max_frames);
void mt_stack_table_free(struct mt_stack_table *t);
/* Returns the stack id (>= 1), or 0 when the table is full. */
uint32_t mt_stack_intern(struct mt_stack_table *t, const uintptr_t *ips, unsigned n);
/* The frames of a stack id returned by mt_stack_intern on any thread. */
const uintptr_t *mt_stack_get(const struct mt_stack_table *t, uint32_t id, unsigned *n);
uint32_t mt_stack_count(const struct mt_stack_table *t);

/* ---- queue.c: bounded, lossless multi-producer single-consumer queue ---- */
struct mt_queue;
struct mt_queue *mt_queue_new(unsigned log2_capacity);
void mt_queue_free(struct mt_queue *q);
/* mt_queue_ticket, a place in the order of events and its cell, is
 * inline in queue.h. */
/* Tickets taken so far: the next one. */
uint64_t mt_queue_tickets(const struct mt_queue *q);
/* Blocks while the queue is full. ticket is the event's (mt_queue_ticket);
 * when its cell was given up, the event goes into a new one (late).
 * Returns the cell it went into (the writer's commit counts cells). */
uint64_t mt_queue_push(struct mt_queue *q, uint64_t ticket, const struct mt_event *ev);
/* Consumer only: the event of the ticket due, false when it is not there
 * yet (skipping the cells taken ahead). */
bool mt_queue_pop(struct mt_queue *q, struct mt_event *ev);
/* Consumer only: gives up on the ticket due, whose producer has not come;
 * false when it is being filled (or none is due). */
bool mt_queue_abandon(struct mt_queue *q);
/* Consumer only: takes out a filled event after the one due, hooked, of
 * this kind at this address. */
bool mt_queue_take_ahead(struct mt_queue *q, unsigned kind, uint64_t address,
			 struct mt_event *ev);
/* Events pushed again after their cell was given up; cells given up. */
uint64_t mt_queue_late(const struct mt_queue *q);
uint64_t mt_queue_abandoned(const struct mt_queue *q);
uint64_t mt_queue_pushed(const struct mt_queue *q);
uint64_t mt_queue_popped(const struct mt_queue *q);
size_t mt_queue_capacity(const struct mt_queue *q);
uint64_t mt_queue_wait_ns(const struct mt_queue *q);
/* After close, producers waiting for room give up (the event is lost):
 * used once the writer has stopped at exit. */
void mt_queue_close(struct mt_queue *q);
/* Called by a producer when the queue is more than half full. */
void mt_queue_set_pressure_cb(struct mt_queue *q, void (*cb)(void *), void *data);
/* A release (free, unmap) running on a thread: while the address is in
 * the thread's slot, the writer knows that an allocation or mapping at
 * that address may be a reuse whose release is still to come. The slot
 * is the calling thread's, for good (the record path keeps it:
 * mt_record_release_begin); NULL when every slot is taken: then
 * mt_queue_release_unnamed says a release is running (true) or done. */
_Atomic uint64_t *mt_queue_release_slot(struct mt_queue *q);
void mt_queue_release_unnamed(struct mt_queue *q, bool running);
/* The writer: is a release of address running now? */
bool mt_queue_release_running(const struct mt_queue *q, uint64_t address);

/* ---- thread-names.c: names taken by each thread at its first event ---- */
/* From the thread itself (tid: its own). */
void mt_thread_name_note(uint32_t tid);
/* The writer: false when the thread named none here. */
bool mt_thread_name_get(uint32_t tid, char *out, size_t n);
void mt_thread_names_after_fork_child(void);


/* ---- fd-guard.c: memtrace's own descriptors, high and guarded ---- */
enum mt_fd_kind {
	MT_FD_TRACE, /* the trace and its -wal, -shm, -journal (SQLite) */
	MT_FD_UNWIND, /* libunwind's validation pipe */
};
/* Set on this thread while libunwind runs (unwind.c): the pipe it makes
 * is memtrace's, and so are its closes (hook-fd.c). */
extern MT_TLS int mt_fdguard_unwinding;
/* Whether any descriptor is guarded: the wrappers' fast path. */
bool mt_fdguard_any(void);
bool mt_fdguard_has(int fd);
/* The program replaced one of memtrace's descriptors (dup2/dup3 onto it):
 * the writer must not run another transaction. */
bool mt_fdguard_lost(void);
/* The guarded descriptors in [lo, hi], ascending; out has room for all. */
unsigned mt_fdguard_in_range(unsigned lo, unsigned hi, int *out);
#define MT_FDGUARD_MAX 32
/* Moves fd to a high number (close-on-exec) and guards it; returns the
 * number it now has. errno is kept. */
int mt_fdguard_adopt(int fd, enum mt_fd_kind kind);
/* memtrace's own close of a guarded descriptor. */
int mt_fdguard_close(int fd);
/* The program is taking fd's number (dup2/dup3): fd is no longer ours. */
void mt_fdguard_lose(int fd);
void mt_fdguard_after_fork_child(void);
/* Before the writer opens path: SQLite's descriptors for it (and its
 * -wal, -shm, -journal) are adopted. false when this SQLite cannot. */
bool mt_fdguard_sqlite(const char *path);

/* ---- symbols.c: writer side, turns addresses into modules and names ---- */
struct mt_symbol {
	const char *module_path; /* never NULL; "" when unknown */
	uintptr_t module_base; /* load bias */
	const char *function; /* NULL when none */
};
bool mt_symbol_lookup(uintptr_t ip, struct mt_symbol *sym);
/* The function of the file's .symtab that holds vaddr (ip less the load
 * bias): names dladdr does not know. Reads the file: the writer only. */
bool mt_symbol_static(const char *path, uintptr_t vaddr, char *out, size_t outsz);
/* Writes the hex GNU build id of the object loaded at base; "" if none. */
void mt_symbol_build_id(uintptr_t base, const char *path, char *out, size_t outsz);

/* ---- site-table.c: the writer's interned event sites (sites table) ---- */
/* The columns of an allocation or free row that repeat: every one but
 * seq, time, address and bytes. Compared whole: zero it before filling. */
struct mt_site_key {
	uint64_t stream;
	uint64_t handle;
	uint32_t stack;
	uint32_t tid;
	uint32_t op;
	int32_t status;
	int16_t device;
	uint16_t api;
	uint8_t kind;
	uint8_t mem;
	uint8_t source;
	uint8_t pad;
};
_Static_assert(sizeof(struct mt_site_key) % 8 == 0, "site keys are hashed 8 bytes at a time");
struct mt_site_table;
struct mt_site_table *mt_site_table_new(void);
void mt_site_table_free(struct mt_site_table *t);
/* The site's id (>= 1; *added when new), or 0 when out of memory. */
uint32_t mt_site_intern(struct mt_site_table *t, const struct mt_site_key *k, bool *added);

/* ---- trace-writer.c: the writer thread and the SQLite file ---- */
struct mt_writer;
struct mt_writer_options {
	const char *path;
	struct mt_queue *queue;
	struct mt_stack_table *stacks;
	int depth;
	unsigned interval_ms;
	uint64_t start_ns; /* CLOCK_MONOTONIC at trace start */
	const char *rank;
	uint64_t flight; /* MEMTRACE_FLIGHT in bytes; 0: the full trace */
	/* Names the capture side interned (NULL: none): NVTX operations and
	 * marks, Python frames. */
	bool (*op_name)(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
	bool (*pyframe)(uintptr_t token, const char **function, const char **file,
			unsigned *line);
};
struct mt_writer *mt_writer_start(const struct mt_writer_options *opt);
/* Waits until every event with seq <= upto is committed (bounded). */
bool mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms);
/* Stops the thread and closes the file; w stays valid (see mt_writer_free). */
/* normal_exit: the library's destructor runs (exit, return from main);
 * exit_status: the status passed to exit(), & 0377, or -1 when unknown. */
void mt_writer_stop(struct mt_writer *w, bool normal_exit, int exit_status);
void mt_writer_free(struct mt_writer *w);
/* The file could not be written: events are dropped from then on. */
bool mt_writer_failed(const struct mt_writer *w);
void mt_writer_lock(struct mt_writer *w); /* around fork */
void mt_writer_unlock(struct mt_writer *w);
uint64_t mt_writer_committed(const struct mt_writer *w);

/* ==== layer 2: what an event carries (and python.h) ==== */

/* ---- unwind.c: native stacks ---- */
void mt_unwind_init(void);
/* Up to max return addresses, the caller of the hooked function first,
 * from ips[*skip] on (before them: the unwind's own frames, inside
 * memtrace; *skip <= MT_UNWIND_SLACK). ips must have room for max +
 * MT_UNWIND_SLACK entries. */
#define MT_UNWIND_SLACK 8
unsigned mt_unwind(uintptr_t *ips, unsigned max, unsigned *skip);

/* ---- nvtx-names.c: operation names and each thread's range stack ---- */
#define MT_NVTX_DOMAINS 64
#define MT_NVTX_NO_DOMAIN 0 /* the default domain */
/* Interns a mark label or range name given by the program. */
uint32_t mt_nvtx_intern(const char *name);
/* A range name in a domain, cut before a per-call field (", seq = ");
 * the same from UTF-32. 0 for NULL. */
uint32_t mt_nvtx_intern_op(uint32_t domain, const char *s);
uint32_t mt_nvtx_intern_wide(uint32_t domain, const wchar_t *w);
/* The index of the domain named by an interned name (MT_NVTX_NO_DOMAIN
 * when there are too many). */
uint32_t mt_nvtx_domain(uint32_t name);
/* This thread's range stack, as NVTX's calls return. id: 0 for a
 * push/pop range; mt_nvtx_start gives a start/end range its id. */
int mt_nvtx_push(uint32_t domain, uint32_t op, uint64_t id);
uint64_t mt_nvtx_start(uint32_t domain, uint32_t op);
int mt_nvtx_pop(uint32_t domain);
void mt_nvtx_end(uint64_t id);
/* The innermost range of this thread (0: none). */
uint32_t mt_nvtx_current_op(void);
/* Writer side: the name (and domain, "" for the default) of an id. */
bool mt_nvtx_name(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);

/* ==== layer 3: the record path ==== */

/* ---- record.c: the record path and the hook-path rules ---- */
/* What the record path writes into and what it asks, given at start. */
struct mt_record_options {
	struct mt_queue *queue;
	struct mt_stack_table *stacks;
	struct mt_writer *writer; /* an OOM waits for its commit (NULL: no wait) */
	const char *path; /* the trace's, for messages */
	int depth; /* native frames */
	/* The device current on this thread (-1: unknown), and its free and
	 * total memory, asked of the library the call api went to. */
	int16_t (*device)(unsigned api);
	bool (*mem_info)(unsigned api, uint64_t *free_b, uint64_t *total_b);
	/* Queues another witness's records so far (CUPTI) before an OOM
	 * (NULL: none). */
	void (*flush)(void);
};
/* At load: what the first recorded call runs, under the start lock, to
 * start the trace. It calls mt_record_begin once the trace runs; if it
 * does not, tracing is off. */
void mt_record_set_start(void (*start)(void));
/* The trace runs: the marks made before it go first, then every hook
 * records. */
void mt_record_begin(const struct mt_record_options *opt);
bool mt_record_running(void);
/* No more events (exit). */
void mt_record_stop(void);
/* The start lock: held while the trace starts, at exit and across fork. */
void mt_record_lock(void);
void mt_record_unlock(void);
/* The child of a fork: no trace, no capture; follow: it starts its own at
 * its first CUDA call. */
void mt_record_after_fork_child(bool follow);

/* The guard (record.c, rule 1), inline in every wrapper: a thread-local
 * flag and the trace's state. */
enum mt_record_state { MT_RECORD_IDLE, MT_RECORD_RUNNING, MT_RECORD_OFF };
extern _Atomic int mt_record_state;
extern MT_TLS int mt_in_hook;
bool mt_enter_slow(void);
/* false: pass the call straight through (nested call, or tracing off). */
static inline bool mt_enter(void)
{
	if (mt_in_hook)
		return false;
	mt_in_hook = 1;
	if (MT_LIKELY(atomic_load_explicit(&mt_record_state, memory_order_acquire) ==
		      MT_RECORD_RUNNING))
		return true;
	return mt_enter_slow();
}
static inline void mt_leave(void)
{
	mt_in_hook = 0;
}

/* What a wrapper knows about one call. */
struct mt_rec {
	unsigned api;
	int status; /* the CUDA result (0: success, in both APIs) */
	bool oom; /* status says: out of memory */
	uint8_t kind; /* mt_record_event only */
	bool no_stack; /* mt_record_event: a frequent call (launches) */
	uint8_t mem;
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;
	uint64_t handle;
};
/* An event's ordering point: its ticket (its place in the trace's order)
 * and its time. Two words: returned and passed in registers. */
struct mt_order {
	uint64_t ticket;
	uint64_t time_ns;
};
/* The ordering point of an allocation, just before its call: the device
 * may hand out the memory at any moment of the call, so it counts from
 * the start (docs/trace-format.md, "seq across threads"). */
struct mt_order mt_record_order(void);
/* After an allocation returned: alloc, oom or alloc_error by status. */
void mt_record_alloc(const struct mt_rec *r, struct mt_order at);
/* A release (free, unmap) counts until its call returned, and its address
 * is in flight while it runs: mt_record_release_begin before the call
 * names it in this thread's slot (inline: one store), the release's
 * events after the call, then mt_record_release_done. mt_record_free
 * records a free (and a free_error when r->status says it failed) and
 * ends the release. */
extern MT_TLS _Atomic uint64_t *mt_release_mine; /* this thread's slot; NULL: none yet */
unsigned mt_record_release_begin_slow(uint64_t address);
void mt_record_release_done_slow(void);
static inline unsigned mt_record_release_begin(uint64_t address)
{
	_Atomic uint64_t *slot = mt_release_mine;
	if (MT_UNLIKELY(!slot))
		return mt_record_release_begin_slow(address);
	atomic_store_explicit(slot, address, memory_order_release);
	return 0;
}
/* After the release's events are pushed: the writer that sees the slot
 * empty finds them in the queue. */
static inline void mt_record_release_done(unsigned release)
{
	if (MT_LIKELY(!release))
		atomic_store_explicit(mt_release_mine, 0, memory_order_release);
	else
		mt_record_release_done_slow();
}
void mt_record_free(const struct mt_rec *r, unsigned release);
/* Any other kind (map, unmap, pools), with a stack. */
void mt_record_event(const struct mt_rec *r);
/* A framework allocator's action (r->kind: MT_EV_TENSOR_* and
 * MT_EV_CACHE_SEGMENT_*), on device; r->no_stack for frees. */
void mt_record_tensor(const struct mt_rec *r, int16_t device);
/* A mark (memtrace_mark, nvtxMark): label is an interned name id. */
void mt_record_mark(unsigned api, uint32_t label);
/* An event another witness saw (CUPTI), already filled in; it is queued
 * as it is (no stack: it was not seen on the thread that made it).
 * Returns false when the trace is not running. */
bool mt_record_external(const struct mt_event *ev);

/* The capture-stream table: which streams are being captured into a
 * graph, kept by the graph wrappers after their real calls. */
void mt_capture_begin(uint64_t stream);
/* The capture begun on origin is over: on every stream that joined it. */
void mt_capture_end(uint64_t origin);
/* event was recorded on stream: a capture event if stream is capturing
 * (and the record is not an external one), else no longer one. */
void mt_capture_event_recorded(uint64_t event, uint64_t stream, bool external);
/* stream waited on event: it joins the capture event was recorded in, if
 * that capture is still open and stream is in none. Returns the origin it
 * joined, or 0. */
uint64_t mt_capture_join(uint64_t stream, uint64_t event);
/* Streams in the table. The wrappers that matter only during a capture
 * (event records, stream waits) look at it first: one load. */
extern atomic_int mt_capture_streams;
static inline bool mt_capture_none(void)
{
	return atomic_load_explicit(&mt_capture_streams, memory_order_relaxed) == 0;
}

/* ==== layer 4: the witnesses (and hook-real.h, hook-common.h, cupti.h) ==== */

/* ---- hook-torch.c: PyTorch's caching allocator, its tensors ---- */
/* Where the tracker stands: polled after each recorded allocation until
 * it is on or off (one relaxed load then). */
enum mt_torch_state {
	MT_TORCH_UNTRIED, /* not looked for yet */
	MT_TORCH_ABSENT, /* no libc10_cuda.so loaded (looked again now and then) */
	MT_TORCH_WAITING, /* loaded, its allocator not initialized yet */
	MT_TORCH_BUSY, /* a thread is attaching */
	MT_TORCH_ON, /* the tracker records torch's allocator actions */
	MT_TORCH_OFF, /* MEMTRACE_TENSORS=0, or torch without a usable tracker */
};
extern _Atomic int mt_torch_state;
void mt_torch_poll_slow(void);
static inline void mt_torch_poll(void)
{
	if (MT_UNLIKELY(atomic_load_explicit(&mt_torch_state, memory_order_relaxed) <
			MT_TORCH_BUSY))
		mt_torch_poll_slow();
}
/* MEMTRACE_TENSORS=0: never looked for (preload.c, at load). */
void mt_torch_disable(void);

/* ---- hook-fd.c: close, close_range, closefrom, dup2, dup3, pipe, pipe2 ---- */
/* Finds the real functions (called at load). */
void mt_hook_fd_init(void);
