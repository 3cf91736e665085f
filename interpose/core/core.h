/* The core of the capture library (layer 1, interpose/core/): what every
 * layer above shares, the API ids, the event, the message funnel, the
 * settings, the stack table, the queue, thread names and the descriptor
 * guard. Declarations grouped by the file that defines them; everything
 * not declared in a layer's header is static.
 *
 * The layers, each a folder and a static library linked whole into
 * libmemtrace.so (docs/architecture.md, "Capture"). A file calls into its
 * own layer and the layers below; it reaches a layer above only through
 * a callback: one its caller passes with the call (the queue's pressure
 * callback, mt_dl_iterate_phdr's, the live set's hooks), or one of those
 * preload.c hands out at start:
 *
 *   mt_record_set_start            record/ -> preload.c's start
 *   mt_record_options.device,
 *                    .mem_info     record/ -> hooks/hook-real.c
 *   mt_record_options.flush        record/ -> hooks/cupti.c
 *   mt_writer_options.op_name      writer/ -> carry/nvtx-names.c
 *   mt_writer_options.pyframe      writer/ -> carry/python.c
 *   mt_frameworks_options.loaded,
 *                        .mem_info frameworks/ -> hooks/hook-real.c
 *
 * The layers, top down:
 *
 *   preload.c  start and stop, fork, the public API
 *   hooks/     the witnesses: the wrappers (hooks.h, hook-real.h,
 *              hook-common.h), the NVTX entry points, CUPTI (cupti.h)
 *   frameworks/ the framework adapters, one file and one row of
 *              frameworks.def each, reached through frameworks.h's
 *              entries (the poll after an allocation, stderr, raised)
 *   record/    the record path: the guard and lazy start, the events,
 *              the capture-stream table (record.h)
 *   carry/     what an event carries: native stacks, Python frames,
 *              operation names and range stacks (carry.h, python.h)
 *   writer/    the writer thread and the SQLite file, its live set,
 *              symbols and sites (writer.h, trace-live.h)
 *   core/      this header, queue.h, clock.h, hooks.def
 *
 * Each layer is given only its own folder and those below as include
 * paths, and is also linked alone into a shared library with
 * --no-undefined against the layers below (interpose/meson.build), so
 * an upward include does not compile and an upward call does not link;
 * tests/layers checks the file-level call graph (no cycle outside its
 * allowlist, the hook tables). The calls the linker routes up, not
 * written as calls to a layer above: under -Bsymbolic-functions,
 * memtrace's own close() and dlsym() bind to its exported wrappers
 * (hook-fd.c, hook-dl.c), which pass them through; docs/architecture.md,
 * "Calls routed up", lists every one. */
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

/* ---- the event: the fixed-size record that crosses the queue ---- */
struct mt_event {
	uint64_t time_ns; /* CLOCK_MONOTONIC, absolute */
	uint64_t address;
	uint64_t bytes;
	uint64_t stream;
	union {
		uint64_t device_free; /* oom; CUPTI events: the correlation id */
		/* tensor_oom: the allocator's own cap on what it may reserve
		 * (PyTorch's set_per_process_memory_fraction), 0: none or not
		 * known; the device's free bytes are in address */
		uint64_t limit;
	};
	uint64_t device_total; /* oom, tensor_oom; CUPTI events: the program counter */
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
	bool what_fits; /* MEMTRACE_WHAT_FITS: device allocations go on past the device (hook-common.h) */
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
/* ring_fd >= 0: the cells are the ring file's (mapped MAP_SHARED from
 * it, after its header: ring-file.c), and a cell taken is kept until
 * mt_queue_release; -1: anonymous memory, freed as taken. */
struct mt_queue *mt_queue_new(unsigned log2_capacity, int ring_fd);
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
/* Consumer only, when the process ends (mt_writer_finish): gives up the
 * cell due even while its producer fills it. */
void mt_queue_skip(struct mt_queue *q);
/* Consumer only: takes out a filled event after the one due, hooked, of
 * this kind at the address the event `of` (an allocation or mapping) got
 * again: the release that gave the address back, never one by a thread
 * that held the address since (queue.c); not strict, the first. */
bool mt_queue_take_ahead(struct mt_queue *q, const struct mt_event *of, unsigned kind,
			 bool strict, struct mt_event *ev);
/* Consumer only: the cell of the event last taken (mt_queue_pop,
 * mt_queue_take_ahead); the event of cell pos went into the trace as seq
 * (the ring file's written). */
uint64_t mt_queue_taken(const struct mt_queue *q);
void mt_queue_note_written(struct mt_queue *q, uint64_t pos, uint64_t seq);
/* Consumer only, once the events taken before ticket upto are committed:
 * their cells are free for the next lap (a ring file's queue; a no-op
 * otherwise). Cells taken and not released: mt_queue_popped - this. */
void mt_queue_release(struct mt_queue *q, uint64_t upto);
uint64_t mt_queue_released(const struct mt_queue *q);
bool mt_queue_in_ring(const struct mt_queue *q);
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

/* ---- ring-file.c: the queue's cells in a file beside the trace ---- */
/* Creates TRACE-ring (trace/trace-ring.h) for a queue of 2^log2_capacity
 * cells, its header written and locked while this process lives; returns
 * its descriptor (guarded), or -1 (errno). */
int mt_ring_create(const char *trace_path, unsigned log2_capacity, uint64_t start_ns,
		   uint64_t id);
void mt_ring_remove(const char *trace_path);

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

/* ---- fork-gate.c: no fork while memtrace holds the loader's lock ---- */
/* Around each of memtrace's calls that takes glibc's loader write lock
 * (unw_backtrace, dl_iterate_phdr): fork waits until they have left. */
void mt_fork_gate_enter(void);
void mt_fork_gate_leave(void);
/* fork's prepare handler, after the record and writer locks */
void mt_fork_gate_close(void);
void mt_fork_gate_open(bool child);
struct dl_phdr_info;
/* dl_iterate_phdr through the gate: memtrace's only way to call it */
int mt_dl_iterate_phdr(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data);

/* ---- a Python frame's token in the stack table (python.c makes them) ---- */
/* A Python frame travels through the stack table as a token that no
 * user-space return address can be: the top bit set, then the id of the
 * (function, file) pair in python.c's table, then the line number. */
#define MT_PYFRAME_BIT (1ull << 63)
#define MT_PYFRAME_LINE_BITS 24
#define MT_IS_PYFRAME(ip) (((uint64_t)(ip)&MT_PYFRAME_BIT) != 0)
/* The token that stands between a thread's own frames and the Python
 * frames it borrowed from the thread that launched its work
 * (carry/python-launch.c): a Python frame's bit with no (function, file)
 * id, the launching thread's id in the line's bits. The writer makes it
 * a frame of kind MT_FRAME_LAUNCH. */
#define MT_LAUNCH_FRAME(tid) \
	(MT_PYFRAME_BIT | ((uint64_t)(tid) & ((1ull << MT_PYFRAME_LINE_BITS) - 1)))
#define MT_IS_LAUNCH_FRAME(ip) \
	(((uint64_t)(ip) & ~((1ull << MT_PYFRAME_LINE_BITS) - 1)) == MT_PYFRAME_BIT)
#define MT_LAUNCH_FRAME_TID(ip) ((uint32_t)((uint64_t)(ip) & ((1ull << MT_PYFRAME_LINE_BITS) - 1)))
