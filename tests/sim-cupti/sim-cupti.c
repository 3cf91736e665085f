/* The simulated CUPTI: libcupti.so.13 for the simulated device (a TEST
 * FIXTURE, never installed). It implements the part of the CUPTI API that
 * memtrace uses, with the real record layouts of cupti_activity.h:
 *
 * - activity: MEMORY2 records (CUpti_ActivityMemory4) for every
 *   allocation and release the observed driver performs, whatever route
 *   the program took to it, and the buffer protocol of the real library:
 *   buffers requested from the client, filled, handed back full by a
 *   worker thread or on cuptiActivityFlushAll, walked with
 *   cuptiActivityGetNextRecord;
 * - callbacks: the resource domain's graph and graph-exec callbacks,
 *   with ids from cuptiGetGraphId/cuptiGetGraphExecId;
 * - timestamps: CLOCK_REALTIME, as the real library on Linux, unless the
 *   client registers its own clock.
 *
 * It learns of the driver's work through cudasim_set_observer, which the
 * observed libcuda.so.1 of this directory exports. The environment
 * selects failures (README.md): another subscriber, an old version, a
 * driver that cannot be profiled, lost records. */
#include "cudasim-observer.h"

#include <cupti.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- settings from the environment ---- */

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	const char *v = env("CUPTISIM_API_VERSION");
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = v ? (uint32_t)strtoul(v, NULL, 10) : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

static const struct {
	CUptiResult r;
	const char *name;
} result_names[] = {
	{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
	{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
	{ CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
	{ CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND" },
	{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
	{ CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED" },
	{ CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION" },
	{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
	  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
	{ CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
};

EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < sizeof(result_names) / sizeof(result_names[0]); i++)
		if (result_names[i].r == result) {
			*str = result_names[i].name;
			return CUPTI_SUCCESS;
		}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- the clock ---- */

static _Atomic(CUpti_TimestampCallbackFunc) client_clock;

static uint64_t now_ns(void)
{
	CUpti_TimestampCallbackFunc fn = atomic_load(&client_clock);
	if (fn)
		return fn();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = now_ns();
	return CUPTI_SUCCESS;
}

/* CUPTISIM_NO_TIMESTAMP_CALLBACK: a CUPTI that keeps its own clock. */
EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (env("CUPTISIM_NO_TIMESTAMP_CALLBACK"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (!fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&client_clock, fn);
	return CUPTI_SUCCESS;
}

/* ---- subscribers and callbacks ---- */

static struct CUpti_Subscriber_st {
	CUpti_CallbackFunc fn;
	void *userdata;
	bool live;
	bool resource[CUPTI_CBID_RESOURCE_SIZE];
} the_subscriber;

/* CUPTISIM_HELD_BY=NAME: another tool subscribed first. */
static CUptiResult subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn, void *userdata,
			     char *holder, size_t holdersz)
{
	const char *held = env("CUPTISIM_HELD_BY");
	if (!sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (held && holder && holdersz)
		snprintf(holder, holdersz, "%s", held);
	if (held)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	pthread_mutex_lock(&lock);
	bool taken = the_subscriber.live;
	if (!taken)
		the_subscriber = (struct CUpti_Subscriber_st){ .fn = fn, .userdata = userdata,
							       .live = true };
	pthread_mutex_unlock(&lock);
	if (taken)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	*sub = &the_subscriber;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn,
					   void *userdata)
{
	return subscribe(sub, fn, userdata, NULL, 0);
}

EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn,
					      void *userdata, CUpti_SubscriberParams *params)
{
	if (params && params->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return subscribe(sub, fn, userdata, params ? params->oldSubscriberName : NULL,
			 params ? params->oldSubscriberSize : 0);
}

EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	if (sub != &the_subscriber || !the_subscriber.live)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	the_subscriber = (struct CUpti_Subscriber_st){ 0 };
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* Only the resource domain is simulated. */
EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
						CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (sub != &the_subscriber || !the_subscriber.live)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid >= CUPTI_CBID_RESOURCE_SIZE)
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&lock);
	the_subscriber.resource[cbid] = enable != 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle sub,
					      CUpti_CallbackDomain domain)
{
	for (CUpti_CallbackId id = 1; id < CUPTI_CBID_RESOURCE_SIZE; id++) {
		CUptiResult r = cuptiEnableCallback(enable, sub, domain, id);
		if (r != CUPTI_SUCCESS)
			return r;
	}
	return CUPTI_SUCCESS;
}

/* ---- graph and graph-exec ids: one count each, from 1, as CUPTI ---- */

#define MAX_IDS 1024
static struct {
	const void *handle;
	uint32_t id;
} ids[MAX_IDS];
static uint32_t next_graph_id, next_exec_id;

static uint32_t id_of(const void *handle)
{
	for (size_t i = 0; i < MAX_IDS; i++)
		if (ids[i].handle == handle)
			return ids[i].id;
	return 0;
}

static void id_set(const void *handle, uint32_t id)
{
	for (size_t i = 0; i < MAX_IDS; i++)
		if (!ids[i].handle || ids[i].handle == handle) {
			ids[i].handle = id ? handle : NULL;
			ids[i].id = id;
			return;
		}
}

static CUptiResult get_id(const void *handle, uint32_t *pid)
{
	if (!handle || !pid)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	*pid = id_of(handle);
	pthread_mutex_unlock(&lock);
	return *pid ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t *pid)
{
	return get_id(graph, pid);
}

EXPORT CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec exec, uint32_t *pid)
{
	return get_id(exec, pid);
}

/* ---- activity buffers ---- */

static CUpti_BuffersCallbackRequestFunc buffer_request;
static CUpti_BuffersCallbackCompleteFunc buffer_complete;
static bool kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static size_t dropped;
static uint32_t correlation;
static unsigned long memory_records; /* for CUPTISIM_DROP */

struct done {
	uint8_t *buf;
	size_t size, valid;
	struct done *next;
};

static uint8_t *cur;
static size_t cur_size, cur_used;
static struct done *done_head, **done_tail = &done_head;
static pthread_cond_t worker_wake = PTHREAD_COND_INITIALIZER;
static bool worker_started;

/* Lock held. The current buffer joins the completed ones. */
static void retire_current(void)
{
	struct done *d = cur && cur_used ? malloc(sizeof(*d)) : NULL;
	if (!d)
		return;
	*d = (struct done){ .buf = cur, .size = cur_size, .valid = cur_used };
	*done_tail = d;
	done_tail = &d->next;
	cur = NULL;
	cur_size = cur_used = 0;
}

static struct done *take_done(void)
{
	struct done *all = done_head;
	done_head = NULL;
	done_tail = &done_head;
	return all;
}

/* Outside the lock: the client may take its time. */
static void deliver(struct done *d)
{
	while (d) {
		struct done *next = d->next;
		buffer_complete(NULL, 0, d->buf, d->size, d->valid);
		free(d);
		d = next;
	}
}

/* The worker hands back full buffers, as the real library's thread does. */
static void *worker(void *arg)
{
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!done_head)
			pthread_cond_wait(&worker_wake, &lock);
		struct done *d = take_done();
		pthread_mutex_unlock(&lock);
		deliver(d);
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* Lock held. */
static void start_worker(void)
{
	pthread_t t;
	sigset_t all, old;
	if (worker_started)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	worker_started = pthread_create(&t, NULL, worker, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (worker_started)
		pthread_detach(t);
}

/* Lock held. A record goes into the current buffer; a full buffer goes
 * to the worker and a new one is asked of the client. */
static void append(const void *rec, size_t len)
{
	if (cur && cur_used + len > cur_size) {
		retire_current();
		pthread_cond_signal(&worker_wake);
	}
	if (!cur) {
		size_t max_records = 0;
		buffer_request(&cur, &cur_size, &max_records);
		cur_used = 0;
		if (cur && cur_size < len)
			cur = NULL; /* the client's to free; a real CUPTI drops the record too */
	}
	if (!cur) {
		dropped++;
		return;
	}
	memcpy(cur + cur_used, rec, len);
	cur_used += len;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							   CUpti_BuffersCallbackCompleteFunc comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	buffer_request = req;
	buffer_complete = comp;
	start_worker();
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	if (!buffer_complete)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&lock);
	retire_current();
	struct done *d = take_done();
	pthread_mutex_unlock(&lock);
	deliver(d);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							      size_t *n)
{
	if (!n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	*n = dropped;
	dropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return sizeof(CUpti_ActivityMemoryPool3);
	default:
		return 0;
	}
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						       CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		size_t len = record_size((*record)->kind);
		if (!len)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*record - buffer) + len;
	}
	if (off + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size_t len = record_size(((CUpti_Activity *)(buffer + off))->kind);
	if (!len || off + len > valid)
		return len ? CUPTI_ERROR_MAX_LIMIT_REACHED : CUPTI_ERROR_INVALID_KIND;
	*record = (CUpti_Activity *)(buffer + off);
	return CUPTI_SUCCESS;
}

/* ---- from the driver's work to records and callbacks ---- */

static Dl_info driver_info;

static bool ours(void *ip)
{
	Dl_info self, at;
	if (!dladdr(ip, &at))
		return false;
	return (dladdr((void *)cuptiGetVersion, &self) && at.dli_fbase == self.dli_fbase) ||
	       at.dli_fbase == driver_info.dli_fbase;
}

/* Where the driver was called from: the first frame outside the driver
 * and this library. */
static uint64_t caller_pc(void)
{
	void *frames[64];
	int n = backtrace(frames, 64);
	for (int i = 0; i < n; i++)
		if (!ours(frames[i]))
			return (uint64_t)(uintptr_t)frames[i];
	return 0;
}

static CUpti_ActivityMemoryKind record_mem(enum cudasim_mem mem)
{
	switch (mem) {
	case CUDASIM_MEM_DEVICE:
		return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case CUDASIM_MEM_MANAGED:
		return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
	case CUDASIM_MEM_PINNED:
		return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	case CUDASIM_MEM_ARRAY:
		return CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
	}
	return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
}

/* CUPTISIM_DROP=N: the N-th memory record (from 1) is lost, and counted
 * as dropped, as when the real library has no buffer for it. */
static bool drop_this(void)
{
	const char *n = env("CUPTISIM_DROP");
	return n && ++memory_records == strtoul(n, NULL, 10);
}

/* Lock held. */
static void memory_record(const struct cudasim_event *e)
{
	CUpti_ActivityMemory4 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	r.memoryOperationType = e->op == CUDASIM_ALLOC ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION :
							 CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	r.memoryKind = record_mem(e->mem);
	r.correlationId = ++correlation;
	r.address = e->address;
	r.bytes = e->bytes;
	r.timestamp = now_ns();
	r.PC = caller_pc();
	r.processId = (uint32_t)getpid();
	r.deviceId = (uint32_t)e->device;
	r.contextId = e->context ? e->context : CUPTI_INVALID_CONTEXT_ID;
	r.streamId = CUPTI_INVALID_STREAM_ID;
	r.isAsync = e->from_pool;
	if (e->from_pool) {
		r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		r.memoryPoolConfig.address = e->pool_base;
		r.memoryPoolConfig.pool.size = e->pool_size;
		r.memoryPoolConfig.utilizedSize = e->pool_used;
	}
	if (drop_this())
		dropped++;
	else
		append(&r, sizeof(r));
}

static CUpti_CallbackId resource_cbid(enum cudasim_op op)
{
	switch (op) {
	case CUDASIM_GRAPH_CREATE:
		return CUPTI_CBID_RESOURCE_GRAPH_CREATED;
	case CUDASIM_GRAPH_CLONE:
		return CUPTI_CBID_RESOURCE_GRAPH_CLONED;
	case CUDASIM_GRAPH_DESTROY:
		return CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING;
	case CUDASIM_EXEC_CREATE:
		return CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED;
	case CUDASIM_EXEC_DESTROY:
		return CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING;
	default:
		return CUPTI_CBID_RESOURCE_INVALID;
	}
}

/* Lock held on entry; the callback itself runs without it, since the
 * subscriber may call cuptiGetGraphId. */
static void resource_callback(const struct cudasim_event *e)
{
	CUpti_CallbackId cbid = resource_cbid(e->op);
	if (e->op == CUDASIM_GRAPH_CREATE || e->op == CUDASIM_GRAPH_CLONE)
		id_set(e->graph, ++next_graph_id);
	if (e->op == CUDASIM_EXEC_CREATE)
		id_set(e->exec, ++next_exec_id);
	CUpti_CallbackFunc fn = the_subscriber.live && the_subscriber.resource[cbid] ?
					the_subscriber.fn : NULL;
	void *userdata = the_subscriber.userdata;
	CUpti_GraphData g = { .graph = e->graph, .originalGraph = e->original, .graphExec = e->exec };
	CUpti_ResourceData rd = { .resourceDescriptor = &g };
	pthread_mutex_unlock(&lock);
	if (fn)
		fn(userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
	pthread_mutex_lock(&lock);
	if (e->op == CUDASIM_GRAPH_DESTROY)
		id_set(e->graph, 0);
	if (e->op == CUDASIM_EXEC_DESTROY)
		id_set(e->exec, 0);
}

static void observe(const struct cudasim_event *e)
{
	pthread_mutex_lock(&lock);
	if (e->op == CUDASIM_ALLOC || e->op == CUDASIM_FREE) {
		if (kind_on[CUPTI_ACTIVITY_KIND_MEMORY2] && buffer_request)
			memory_record(e);
	} else {
		resource_callback(e);
	}
	pthread_mutex_unlock(&lock);
}

/* The driver is the one the program will use: same soname, same object.
 * CUPTISIM_UNPROFILABLE, or a driver without the observer export (the
 * plain tests/sim one): activity cannot be enabled, as on a machine where
 * the real library finds no usable device. */
static CUptiResult attach(void)
{
	static bool attached;
	if (attached)
		return CUPTI_SUCCESS;
	if (env("CUPTISIM_UNPROFILABLE"))
		return CUPTI_ERROR_NOT_INITIALIZED;
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void (*set)(cudasim_observer_fn) =
		driver ? (void (*)(cudasim_observer_fn))dlsym(driver, "cudasim_set_observer") : NULL;
	if (!set || !dladdr((void *)set, &driver_info))
		return CUPTI_ERROR_NOT_INITIALIZED;
	set(observe);
	attached = true;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (kind != CUPTI_ACTIVITY_KIND_MEMORY2 && kind != CUPTI_ACTIVITY_KIND_MEMORY_POOL)
		return CUPTI_ERROR_NOT_SUPPORTED;
	CUptiResult r = attach();
	if (r != CUPTI_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	kind_on[kind] = true;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if (kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&lock);
	kind_on[kind] = false;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}
