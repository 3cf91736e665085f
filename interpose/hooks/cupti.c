/* CUPTI, found at run time and never linked (docs/cupti.md).
 *
 * The hooks see what passes through a symbol; CUPTI sees what the driver
 * does, whatever route the program took to it. At the start of the trace
 * this file looks for libcupti, checks its version, subscribes, and turns
 * on the MEMORY2 and MEMORY_POOL activity kinds and the graph resource
 * callbacks. CUPTI fills buffers we lend it and hands them back, on its
 * own thread or on ours when we flush; each record becomes an event with
 * source = CUPTI in the same queue as the hooks' events, off the
 * program's hot path. A small thread asks for a flush every 100 ms so
 * that the trace never lags far behind; an out-of-memory failure and
 * exit flush at once.
 *
 * Whatever goes wrong (no libcupti, too old, another tool holds it, no
 * usable device) is said once, and the hooks go on alone. */
#include "carry.h"
#include "cupti.h"

#include "clock.h"
#include "trace-schema.h"

#include <cupti_result.h>
#include <cupti_version.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

/* MEMORY2 and MEMORY_POOL came with CUDA 11.2 (CUPTI API version 15);
 * every later MEMORY2 record (CUpti_ActivityMemory2, 3, 4) begins with
 * the fields read here, at the same offsets. */
#define MT_CUPTI_MIN_VERSION 15u
#define MT_CUPTI_BUFFER (256u << 10)
#define MT_CUPTI_FLUSH_MS 100

/* ---- the functions we call, found with dlsym on the library ---- */

#define CUPTI_REQUIRED(X)                \
	X(cuptiGetVersion)               \
	X(cuptiGetResultString)          \
	X(cuptiSubscribe)                \
	X(cuptiUnsubscribe)              \
	X(cuptiEnableCallback)           \
	X(cuptiActivityRegisterCallbacks) \
	X(cuptiActivityEnable)           \
	X(cuptiActivityDisable)          \
	X(cuptiActivityFlushAll)         \
	X(cuptiActivityGetNextRecord)    \
	X(cuptiActivityGetNumDroppedRecords) \
	X(cuptiGetTimestamp)
/* Newer than the minimum: used when there. */
#define CUPTI_OPTIONAL(X)                         \
	X(cuptiSubscribe_v2)                      \
	X(cuptiActivityRegisterTimestampCallback) \
	X(cuptiGetGraphId)                        \
	X(cuptiGetGraphExecId)

static struct {
#define X(name) __typeof__(name) *name;
	CUPTI_REQUIRED(X) CUPTI_OPTIONAL(X)
#undef X
} api;

enum mode { MODE_AUTO, MODE_ON, MODE_OFF };
enum cstate { CS_IDLE, CS_STARTING, CS_RUNNING, CS_OFF };

static _Atomic int cstate = CS_IDLE;
static enum mode mode;
static char lib_path[MT_PATH_MAX];
static void *lib;
static CUpti_SubscriberHandle subscriber;
static struct mt_cupti_parse parse; /* its sink: where every event goes */
static void *(*real_dlsym)(void *handle, const char *name);
static uint64_t on_ns; /* when the activity kinds were turned on */
static atomic_bool announced;
static atomic_uint_fast64_t lost; /* records the trace could not take */
static atomic_uint_fast64_t dropped; /* records CUPTI says it dropped */

/* ---- records to events ---- */

static uint8_t mem_kind(CUpti_ActivityMemoryKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
		return MT_MEM_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
		return MT_MEM_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
		return MT_MEM_HOST_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
		return MT_MEM_ARRAY;
	default:
		/* Pageable memory and a module's __device__/__managed__
		 * variables: nothing a program asked to allocate. */
		return 0;
	}
}

static int16_t device_ordinal(uint32_t id)
{
	return id <= INT16_MAX ? (int16_t)id : -1;
}

static void external(struct mt_event *ev, uint64_t cupti_ns, const struct mt_cupti_parse *p)
{
	ev->time_ns = (uint64_t)((int64_t)cupti_ns + p->clock_offset_ns);
	ev->source = MT_SOURCE_CUPTI;
	ev->api = MT_API_NONE;
}

/* An allocation keeps CUPTI's program counter as a one-frame stack, so
 * that the writer names its module and function as it does for hooked
 * stacks: for an allocation only CUPTI saw, that is the library that
 * made it. */
static uint32_t pc_stack(const struct mt_cupti_parse *p, uint64_t pc)
{
	uintptr_t ip = (uintptr_t)pc;
	return p->stacks && pc ? mt_stack_intern(p->stacks, &ip, 1) : 0;
}

static enum mt_cupti_verdict memory_event(const CUpti_ActivityMemory4 *r,
					  const struct mt_cupti_parse *p, struct mt_event *ev)
{
	uint8_t mem = mem_kind(r->memoryKind);
	uint8_t kind = r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ?
			       MT_EV_ALLOC :
		       r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ?
			       MT_EV_FREE :
			       0;
	if (!mem || !kind)
		return MT_CUPTI_IGNORED;
	*ev = (struct mt_event){ 0 };
	external(ev, r->timestamp, p);
	ev->kind = kind;
	ev->mem = mem;
	ev->address = r->address;
	ev->bytes = r->bytes;
	ev->device = device_ordinal(r->deviceId);
	/* A stream-ordered allocation names its pool by its base address:
	 * CUPTI has no pool handle to give. */
	if (r->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID)
		ev->handle = r->memoryPoolConfig.address;
	ev->device_free = r->correlationId;
	ev->device_total = r->PC;
	if (kind == MT_EV_ALLOC)
		ev->stack = pc_stack(p, r->PC);
	return MT_CUPTI_EVENT;
}

static enum mt_cupti_verdict pool_event(const CUpti_ActivityMemoryPool3 *r,
					const struct mt_cupti_parse *p, struct mt_event *ev)
{
	uint8_t kind;
	switch (r->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
		kind = MT_EV_POOL_CREATE;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		kind = MT_EV_POOL_DESTROY;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		kind = MT_EV_POOL_TRIM;
		break;
	default:
		return MT_CUPTI_IGNORED;
	}
	*ev = (struct mt_event){ 0 };
	external(ev, r->timestamp, p);
	ev->kind = kind;
	ev->address = r->address;
	ev->bytes = kind == MT_EV_POOL_TRIM ? r->minBytesToKeep : r->size;
	ev->device = device_ordinal(r->deviceId);
	ev->device_free = r->correlationId;
	return MT_CUPTI_EVENT;
}

enum mt_cupti_verdict mt_cupti_record_event(const CUpti_Activity *rec,
					    const struct mt_cupti_parse *p, struct mt_event *ev)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return memory_event((const CUpti_ActivityMemory4 *)rec, p, ev);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return pool_event((const CUpti_ActivityMemoryPool3 *)rec, p, ev);
	default:
		return MT_CUPTI_IGNORED;
	}
}

bool mt_cupti_graph_event(CUpti_CallbackId cbid, const CUpti_GraphData *g, uint32_t id,
			  uint64_t now_ns, struct mt_event *ev)
{
	*ev = (struct mt_event){ 0 };
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_GRAPH_CREATED:
		ev->kind = MT_EV_GRAPH_CREATE;
		ev->handle = (uintptr_t)g->graph;
		break;
	case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
		ev->kind = MT_EV_GRAPH_CLONE;
		ev->handle = (uintptr_t)g->graph;
		ev->address = (uintptr_t)g->originalGraph;
		break;
	case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
		ev->kind = MT_EV_GRAPH_DESTROY;
		ev->handle = (uintptr_t)g->graph;
		break;
	case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
		ev->kind = MT_EV_EXEC_CREATE;
		ev->handle = (uintptr_t)g->graphExec;
		ev->address = (uintptr_t)g->graph;
		break;
	case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
		ev->kind = MT_EV_EXEC_DESTROY;
		ev->handle = (uintptr_t)g->graphExec;
		break;
	default:
		return false;
	}
	ev->time_ns = now_ns;
	ev->source = MT_SOURCE_CUPTI;
	ev->device = -1;
	ev->device_free = id; /* the cupti row's correlation_id: docs/cupti.md */
	return true;
}

/* ---- into the queue ---- */

static void push(const struct mt_cupti_parse *p, const struct mt_event *ev)
{
	if (!p->sink(ev))
		atomic_fetch_add(&lost, 1);
}

static void push_mark(const char *label, uint64_t time_ns)
{
	struct mt_event ev = { .kind = MT_EV_MARK, .device = -1, .time_ns = time_ns };
	ev.op = mt_nvtx_intern(label);
	ev.source = MT_SOURCE_CUPTI;
	push(&parse, &ev);
}

/* The mark that tells the reporter from when a hooked allocation without
 * a CUPTI record is "not confirmed". Queued at the first chance after the
 * trace runs: the start may come a moment before it does. */
static void announce(void)
{
	if (atomic_load(&announced))
		return;
	struct mt_event ev = { .kind = MT_EV_MARK, .device = -1, .time_ns = on_ns };
	ev.op = mt_nvtx_intern(MT_CUPTI_ON_MARK);
	ev.source = MT_SOURCE_CUPTI;
	if (!atomic_exchange(&announced, true) && !parse.sink(&ev))
		atomic_store(&announced, false);
}

/* ---- buffers: lent to CUPTI, handed back full of records ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, MT_CUPTI_BUFFER);
	*size = *buffer ? MT_CUPTI_BUFFER : 0;
	*max_records = 0;
}

static void count_dropped(void)
{
	size_t n = 0;
	if (api.cuptiActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS && n)
		atomic_fetch_add(&dropped, n);
}

size_t mt_cupti_drain(uint8_t *buffer, size_t valid, mt_cupti_next_fn next,
		      const struct mt_cupti_parse *p)
{
	CUpti_Activity *rec = NULL;
	struct mt_event ev;
	size_t n = 0;
	while (buffer && next(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (mt_cupti_record_event(rec, p, &ev) != MT_CUPTI_EVENT)
			continue;
		push(p, &ev);
		n++;
	}
	return n;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	announce();
	mt_cupti_drain(buffer, valid, api.cuptiActivityGetNextRecord, &parse);
	count_dropped();
	free(buffer);
}

/* ---- graph lifetimes: resource callbacks, on the creating thread ---- */

static uint32_t graph_id(CUpti_CallbackId cbid, const CUpti_GraphData *g)
{
	uint32_t id = 0;
	bool exec = cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED ||
		    cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING;
	if (exec && api.cuptiGetGraphExecId && g->graphExec)
		api.cuptiGetGraphExecId(g->graphExec, &id);
	else if (!exec && api.cuptiGetGraphId && g->graph)
		api.cuptiGetGraphId(g->graph, &id);
	return id;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || !rd || !rd->resourceDescriptor)
		return;
	const CUpti_GraphData *g = rd->resourceDescriptor;
	struct mt_event ev;
	if (!mt_cupti_graph_event(cbid, g, graph_id(cbid, g), mt_now_ns(), &ev))
		return;
	ev.tid = (uint32_t)syscall(SYS_gettid);
	announce();
	push(&parse, &ev);
}

static const CUpti_CallbackId graph_cbids[] = {
	CUPTI_CBID_RESOURCE_GRAPH_CREATED,
	CUPTI_CBID_RESOURCE_GRAPH_CLONED,
	CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
	CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,
	CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
};

/* ---- the flusher thread ---- */

static pthread_t flusher;
static bool flusher_running;
static bool flusher_quit;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_cond;

static void *flusher_main(void *arg)
{
	pthread_mutex_lock(&flusher_lock);
	while (!flusher_quit) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += MT_CUPTI_FLUSH_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&flusher_cond, &flusher_lock, &ts);
		if (flusher_quit)
			break;
		pthread_mutex_unlock(&flusher_lock);
		announce();
		/* 0: the buffers whose records are complete, full or not. */
		api.cuptiActivityFlushAll(0);
		pthread_mutex_lock(&flusher_lock);
	}
	pthread_mutex_unlock(&flusher_lock);
	return NULL;
}

/* The thread takes no signals: they are the program's. */
static void flusher_start(void)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&flusher_cond, &attr);
	pthread_condattr_destroy(&attr);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	flusher_running = pthread_create(&flusher, NULL, flusher_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (flusher_running)
		pthread_setname_np(flusher, "memtrace-cupti");
}

static void flusher_stop(void)
{
	if (!flusher_running)
		return;
	pthread_mutex_lock(&flusher_lock);
	flusher_quit = true;
	pthread_cond_signal(&flusher_cond);
	pthread_mutex_unlock(&flusher_lock);
	pthread_join(flusher, NULL);
	flusher_running = false;
}

/* ---- finding libcupti ---- */

struct finder {
	int major; /* of the runtime the process loaded; 0: unknown */
	char runtime_dir[MT_PATH_MAX];
	char path_error[512]; /* why MEMTRACE_CUPTI_PATH did not load */
};

static bool try_load(const char *path)
{
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return false;
	/* dladdr gives the file a soname resolved to. */
	Dl_info info;
	void *sym = real_dlsym(lib, "cuptiGetVersion");
	snprintf(lib_path, sizeof(lib_path), "%s",
		 sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : path);
	return true;
}

static bool try_file(const char *dir, const char *sub, int major)
{
	char path[MT_PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s/libcupti.so.%d", dir, sub, major);
	return n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0 && try_load(path);
}

/* The majors to try, the runtime's first. */
static void majors(const struct finder *f, int out[2])
{
	out[0] = f->major == 12 ? 12 : 13;
	out[1] = out[0] == 12 ? 13 : 12;
}

static int find_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
	struct finder *f = data;
	const char *name = info->dlpi_name;
	const char *base = name ? strrchr(name, '/') : NULL;
	if (!base || strncmp(base + 1, "libcudart.so", strlen("libcudart.so")))
		return 0;
	snprintf(f->runtime_dir, sizeof(f->runtime_dir), "%.*s", (int)(base - name), name);
	const char *ver = base + 1 + strlen("libcudart.so");
	f->major = *ver == '.' ? atoi(ver + 1) : 0;
	return 1;
}

/* Next to the runtime the process loaded; in a pip install the runtime
 * is in nvidia/cuda_runtime/lib and CUPTI in nvidia/cuda_cupti/lib (with
 * CUDA 13 wheels both are in nvidia/cu13/lib). */
static bool near_runtime(const struct finder *f)
{
	int m[2];
	majors(f, m);
	if (!f->runtime_dir[0])
		return false;
	for (int i = 0; i < 2; i++)
		if (try_file(f->runtime_dir, "", m[i]) ||
		    try_file(f->runtime_dir, "/../../cuda_cupti/lib", m[i]))
			return true;
	return false;
}

static bool in_toolkit(const struct finder *f)
{
	const char *roots[3] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"), NULL };
	int m[2];
	majors(f, m);
	if ((!roots[0] || !*roots[0]) && (!roots[1] || !*roots[1]))
		roots[2] = "/usr/local/cuda";
	for (int r = 0; r < 3; r++) {
		if (!roots[r] || !*roots[r])
			continue;
		for (int i = 0; i < 2; i++)
			if (try_file(roots[r], "/lib64", m[i]) ||
			    try_file(roots[r], "/extras/CUPTI/lib64", m[i]))
				return true;
	}
	return false;
}

static bool by_soname(const struct finder *f)
{
	int m[2];
	majors(f, m);
	for (int i = 0; i < 2; i++) {
		char name[32];
		snprintf(name, sizeof(name), "libcupti.so.%d", m[i]);
		if (try_load(name))
			return true;
	}
	return false;
}

static bool find_cupti(struct finder *f)
{
	const char *path = getenv("MEMTRACE_CUPTI_PATH");
	mt_dl_iterate_phdr(find_runtime, f);
	if (path && *path) {
		if (try_load(path))
			return true;
		const char *err = dlerror();
		snprintf(f->path_error, sizeof(f->path_error), "MEMTRACE_CUPTI_PATH=%.200s: %.250s",
			 path, err ? err : "cannot be loaded");
	}
	return near_runtime(f) || in_toolkit(f) || by_soname(f);
}

/* ---- saying why not, once ---- */

static const char *result_name(CUptiResult r)
{
	const char *s = NULL;
	if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) != CUPTI_SUCCESS)
		s = NULL;
	return s ? s : "unknown error";
}

/* auto: CUPTI is a bonus, its absence news; on: the user asked for it. */
static enum mt_who who(void)
{
	return mode == MODE_ON ? MT_ENV : MT_INFO;
}

#define HOOKS_ALONE "memtrace goes on with its hooks alone"

static void say_not_found(const struct finder *f)
{
	mt_log(who(),
	       "CUPTI not found (%s%slooked next to libcudart, in the CUDA toolkit and for "
	       "libcupti.so.13/.12): " HOOKS_ALONE
	       "; set MEMTRACE_CUPTI_PATH to a libcupti.so to cross-check with the driver",
	       f->path_error, f->path_error[0] ? "; " : "");
}

static void say_failed(const char *call, CUptiResult r)
{
	mt_log(who(), "CUPTI (%s) cannot start: %s returned %s; " HOOKS_ALONE, lib_path, call,
	       result_name(r));
}

static void say_held(const char *holder)
{
	mt_log(who(),
	       "CUPTI is held by another tool (%s): only one may subscribe at a time, and "
	       "profilers (Nsight Systems, Nsight Compute, PyTorch's Kineto) take it; " HOOKS_ALONE,
	       holder && *holder ? holder : "a profiler");
}

/* ---- starting ---- */

/* Every required function is there and the version is new enough. */
static bool check_api(void)
{
#define X(name) api.name = (__typeof__(name) *)real_dlsym(lib, #name);
	CUPTI_REQUIRED(X) CUPTI_OPTIONAL(X)
#undef X
	const char *missing = NULL;
#define X(name)                          \
	if (!missing && !api.name)       \
		missing = #name;
	CUPTI_REQUIRED(X)
#undef X
	uint32_t version = 0;
	if (!missing && api.cuptiGetVersion(&version) == CUPTI_SUCCESS &&
	    version >= MT_CUPTI_MIN_VERSION)
		return true;
	if (missing)
		mt_log(who(), "CUPTI (%s) is too old: it has no %s; " HOOKS_ALONE, lib_path, missing);
	else
		mt_log(who(),
		       "CUPTI (%s) is too old: API version %u, memtrace needs %u (CUDA 11.2) or "
		       "newer; " HOOKS_ALONE,
		       lib_path, version, MT_CUPTI_MIN_VERSION);
	return false;
}

static bool subscribe(void)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUptiResult r;
	if (api.cuptiSubscribe_v2) {
		CUpti_SubscriberParams params = {
			.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
			.subscriberName = "memtrace",
			.oldSubscriberName = holder,
			.oldSubscriberSize = sizeof(holder),
		};
		r = api.cuptiSubscribe_v2(&subscriber, on_callback, NULL, &params);
	} else {
		r = api.cuptiSubscribe(&subscriber, on_callback, NULL);
	}
	holder[sizeof(holder) - 1] = '\0';
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		say_held(holder);
	else if (r != CUPTI_SUCCESS)
		say_failed("cuptiSubscribe", r);
	return r == CUPTI_SUCCESS;
}

static uint64_t CUPTIAPI monotonic_ns(void)
{
	return mt_now_ns();
}

/* CUPTI timestamps come from our clock when CUPTI lets us give it one;
 * otherwise the offset between the clocks is measured once, from the
 * closest of a few pairs of reads. */
static int64_t clock_offset(void)
{
	if (api.cuptiActivityRegisterTimestampCallback &&
	    api.cuptiActivityRegisterTimestampCallback(monotonic_ns) == CUPTI_SUCCESS)
		return 0;
	uint64_t best = UINT64_MAX;
	int64_t offset = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t t = 0, a = mt_now_ns();
		api.cuptiGetTimestamp(&t);
		uint64_t b = mt_now_ns();
		if (b - a < best) {
			best = b - a;
			offset = (int64_t)(a + (b - a) / 2) - (int64_t)t;
		}
	}
	return offset;
}

static bool enable_activity(void)
{
	parse.clock_offset_ns = clock_offset();
	CUptiResult r = api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		say_failed("cuptiActivityRegisterCallbacks", r);
		return false;
	}
	r = api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
	if (r != CUPTI_SUCCESS) {
		say_failed("cuptiActivityEnable(MEMORY2)", r);
		return false;
	}
	/* Pools and graphs are extras: their absence costs no allocation. */
	api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
	for (size_t i = 0; i < sizeof(graph_cbids) / sizeof(graph_cbids[0]); i++)
		api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, graph_cbids[i]);
	on_ns = mt_now_ns();
	return true;
}

static enum mode read_mode(void)
{
	const char *s = getenv("MEMTRACE_CUPTI");
	if (!s || !*s || !strcasecmp(s, "auto"))
		return MODE_AUTO;
	if (!strcasecmp(s, "on") || !strcmp(s, "1"))
		return MODE_ON;
	if (!strcasecmp(s, "off") || !strcmp(s, "0"))
		return MODE_OFF;
	mt_log(MT_USER, "MEMTRACE_CUPTI=%.100s is not auto, on or off; using auto", s);
	return MODE_AUTO;
}

/* A forked child has the parent's CUPTI state but not its threads:
 * CUPTI is not used there. A child of a process that never started it
 * may still start it at its own first CUDA call. */
static void after_fork_child(void)
{
	if (atomic_load(&cstate) != CS_IDLE)
		atomic_store(&cstate, CS_OFF);
	flusher_running = false;
	pthread_mutex_init(&flusher_lock, NULL);
}

static void at_exit(void)
{
	mt_cupti_stop();
}

static bool start(void)
{
	struct finder f = { 0 };
	if (!find_cupti(&f)) {
		say_not_found(&f);
		return false;
	}
	if (f.path_error[0])
		mt_log(MT_USER, "%s; using %s", f.path_error, lib_path);
	if (!check_api() || !subscribe())
		return false;
	if (!enable_activity()) {
		api.cuptiUnsubscribe(subscriber);
		return false;
	}
	flusher_start();
	/* After CUPTI has set up its own exit handlers, so ours runs first
	 * (atexit runs in reverse order) while CUPTI still works. */
	atexit(at_exit);
	mt_log(MT_INFO, "cross-checking allocations with CUPTI (%s)", lib_path);
	return true;
}

static void register_fork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

void mt_cupti_start(const struct mt_cupti_options *opt)
{
	static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
	int idle = CS_IDLE;
	if (!atomic_compare_exchange_strong(&cstate, &idle, CS_STARTING))
		return;
	pthread_once(&fork_once, register_fork);
	mode = read_mode();
	if (mode == MODE_OFF) {
		atomic_store(&cstate, CS_OFF);
		return;
	}
	parse = (struct mt_cupti_parse){ .stacks = opt->stacks, .sink = opt->sink };
	real_dlsym = opt->dlsym;
	bool ok = start();
	atomic_store(&cstate, ok ? CS_RUNNING : CS_OFF);
	if (ok)
		announce();
}

void mt_cupti_flush(void)
{
	if (atomic_load_explicit(&cstate, memory_order_acquire) != CS_RUNNING)
		return;
	announce();
	api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void say_losses(void)
{
	uint64_t d = atomic_load(&dropped), l = atomic_load(&lost);
	if (d)
		mt_log(MT_ENV,
		       "CUPTI dropped %llu records: the allocations they were are shown as not "
		       "confirmed",
		       (unsigned long long)d);
	/* The trace stops taking events when it fails (a full disk) or
	 * stops: records handed over after that are not in it. */
	if (l)
		mt_log(MT_ENV, "%llu CUPTI records arrived when the trace no longer took events",
		       (unsigned long long)l);
}

void mt_cupti_stop(void)
{
	int running = CS_RUNNING;
	if (!atomic_compare_exchange_strong(&cstate, &running, CS_OFF))
		return;
	flusher_stop();
	announce();
	api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	api.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
	api.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
	api.cuptiUnsubscribe(subscriber);
	push_mark(MT_CUPTI_OFF_MARK, mt_now_ns());
	say_losses();
}
