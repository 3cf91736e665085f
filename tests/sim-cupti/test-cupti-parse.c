/* interpose/hooks/cupti.c without CUPTI: hand-built activity buffers, in the
 * record layouts of cupti_activity.h, walked and turned into events; the
 * graph callbacks' events. The events that cupti.c would queue go to the
 * sink below, which every parse is given. */
#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "trace-schema.h"

/* ---- where cupti.c's events go ---- */

#define MAX_CAUGHT 32
static struct mt_event caught[MAX_CAUGHT];
static unsigned ncaught;

static bool catch_event(const struct mt_event *ev)
{
	ck_assert_uint_lt(ncaught, MAX_CAUGHT);
	caught[ncaught++] = *ev;
	return true;
}

/* ---- older records are read through the newest layout ---- */

#define SAME_OFFSET(old, new, field) \
	_Static_assert(offsetof(old, field) == offsetof(new, field), #old "." #field)
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryOperationType);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryKind);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, correlationId);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, address);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, bytes);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, timestamp);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, PC);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, deviceId);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryPoolConfig.memoryPoolType);
SAME_OFFSET(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryPoolConfig.address);
SAME_OFFSET(CUpti_ActivityMemory2, CUpti_ActivityMemory4, PC);
SAME_OFFSET(CUpti_ActivityMemory2, CUpti_ActivityMemory4, deviceId);
SAME_OFFSET(CUpti_ActivityMemory2, CUpti_ActivityMemory4, memoryPoolConfig.address);
SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, memoryPoolOperationType);
SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, minBytesToKeep);
SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, size);
SAME_OFFSET(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, timestamp);

/* ---- a buffer, and a record iterator that walks it as CUPTI's does ---- */

static _Alignas(8) uint8_t buffer[4096];
static size_t used;

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return sizeof(CUpti_ActivityMemoryPool3);
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	default:
		return 0;
	}
}

static CUptiResult next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + record_size((*rec)->kind) : 0;
	if (off + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size_t len = record_size(((CUpti_Activity *)(buf + off))->kind);
	if (!len || off + len > valid)
		return CUPTI_ERROR_INVALID_KIND;
	*rec = (CUpti_Activity *)(buf + off);
	return CUPTI_SUCCESS;
}

static void add(const void *rec, size_t len)
{
	ck_assert_uint_le(used + len, sizeof(buffer));
	ck_assert_uint_eq(len % ACTIVITY_RECORD_ALIGNMENT, 0);
	memcpy(buffer + used, rec, len);
	used += len;
}

static void add_memory(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
		       uint64_t address, uint64_t bytes, uint64_t ts, uint32_t corr, uint64_t pc)
{
	CUpti_ActivityMemory4 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	r.memoryOperationType = op;
	r.memoryKind = kind;
	r.address = address;
	r.bytes = bytes;
	r.timestamp = ts;
	r.correlationId = corr;
	r.PC = pc;
	r.deviceId = 1;
	r.streamId = CUPTI_INVALID_STREAM_ID;
	add(&r, sizeof(r));
}

static void setup(void)
{
	memset(buffer, 0, sizeof(buffer));
	used = 0;
	ncaught = 0;
}

/* ---- tests ---- */

#define ALLOC CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
#define RELEASE CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE

START_TEST(memory_records)
{
	struct mt_stack_table *stacks = mt_stack_table_new(8, 1024);
	struct mt_cupti_parse p = { .clock_offset_ns = -500, .stacks = stacks, .sink = catch_event };
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x200000000, 3000000, 10000, 7,
		   0x401234);
	add_memory(RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x200000000, 3000000, 20000, 8,
		   0x401240);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0x210000000, 12288, 30000, 9, 0);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0x7f0000001000, 8192, 40000, 10, 0);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, 0x220000000, 4096, 50000, 11, 0);

	ck_assert_uint_eq(mt_cupti_drain(buffer, used, next, &p), 5);
	ck_assert_uint_eq(ncaught, 5);

	const struct mt_event *a = &caught[0];
	ck_assert_uint_eq(a->kind, MT_EV_ALLOC);
	ck_assert_uint_eq(a->source, MT_SOURCE_CUPTI);
	ck_assert_uint_eq(a->api, 0);
	ck_assert_uint_eq(a->tid, 0);
	ck_assert_uint_eq(a->mem, MT_MEM_DEVICE);
	ck_assert_uint_eq(a->address, 0x200000000);
	ck_assert_uint_eq(a->bytes, 3000000);
	ck_assert_uint_eq(a->time_ns, 9500);
	ck_assert_int_eq(a->device, 1);
	ck_assert_uint_eq(a->device_free, 7); /* correlation id */
	ck_assert_uint_eq(a->device_total, 0x401234); /* pc */
	ck_assert_uint_eq(a->handle, 0);
	unsigned n;
	const uintptr_t *ips = mt_stack_get(stacks, a->stack, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(ips[0], 0x401234);

	const struct mt_event *f = &caught[1];
	ck_assert_uint_eq(f->kind, MT_EV_FREE);
	ck_assert_uint_eq(f->bytes, 3000000);
	ck_assert_uint_eq(f->mem, MT_MEM_DEVICE);
	ck_assert_uint_eq(f->stack, 0); /* frees carry no stack, as hooked ones */
	ck_assert_uint_eq(f->device_total, 0x401240);

	ck_assert_uint_eq(caught[2].mem, MT_MEM_MANAGED);
	ck_assert_uint_eq(caught[2].stack, 0); /* no pc, no stack */
	ck_assert_uint_eq(caught[3].mem, MT_MEM_HOST_PINNED);
	ck_assert_uint_eq(caught[4].mem, MT_MEM_ARRAY);
	mt_stack_table_free(stacks);
}
END_TEST

START_TEST(pool_allocation_names_its_pool)
{
	struct mt_cupti_parse p = { .sink = catch_event };
	CUpti_ActivityMemory4 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	r.memoryOperationType = ALLOC;
	r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.address = 0x300000200;
	r.bytes = 1000;
	r.isAsync = 1;
	r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	r.memoryPoolConfig.address = 0x300000000;
	r.memoryPoolConfig.pool.size = 2 << 20;
	add(&r, sizeof(r));
	ck_assert_uint_eq(mt_cupti_drain(buffer, used, next, &p), 1);
	ck_assert_uint_eq(caught[0].mem, MT_MEM_DEVICE);
	ck_assert_uint_eq(caught[0].handle, 0x300000000);
	ck_assert_uint_eq(caught[0].bytes, 1000);
}
END_TEST

/* Module statics, pageable memory, an operation of no known type, and
 * records of other kinds are walked past. */
START_TEST(ignored_records)
{
	struct mt_cupti_parse p = { .sink = catch_event };
	CUpti_ActivityAPI api;
	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	api.correlationId = 99;
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, 0x1000, 64, 1, 1, 0);
	add(&api, sizeof(api));
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 0x2000, 64, 2, 2, 0);
	add_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
		   0x3000, 64, 3, 3, 0);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, 0x4000, 64, 4, 4, 0);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x5000, 64, 5, 5, 0);
	ck_assert_uint_eq(mt_cupti_drain(buffer, used, next, &p), 1);
	ck_assert_uint_eq(caught[0].address, 0x5000);
}
END_TEST

/* A buffer whose last record is cut short yields the whole ones only. */
START_TEST(truncated_buffer)
{
	struct mt_cupti_parse p = { .sink = catch_event };
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x5000, 64, 5, 5, 0);
	add_memory(ALLOC, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x6000, 64, 6, 6, 0);
	ck_assert_uint_eq(mt_cupti_drain(buffer, used - 8, next, &p), 1);
	ck_assert_uint_eq(mt_cupti_drain(buffer, 0, next, &p), 0);
	ck_assert_uint_eq(mt_cupti_drain(NULL, 100, next, &p), 0);
}
END_TEST

static void add_pool(CUpti_ActivityMemoryPoolOperationType op, uint64_t size, size_t keep)
{
	CUpti_ActivityMemoryPool3 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	r.memoryPoolOperationType = op;
	r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	r.correlationId = 42;
	r.deviceId = 0;
	r.address = 0x400000000;
	r.size = size;
	r.minBytesToKeep = keep;
	r.timestamp = 777;
	add(&r, sizeof(r));
}

START_TEST(pool_records)
{
	struct mt_cupti_parse p = { .clock_offset_ns = 1000, .sink = catch_event };
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, 4 << 20, 0);
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, 4 << 20, 1 << 20);
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, 4 << 20, 0);
	add_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID, 4 << 20, 0);
	ck_assert_uint_eq(mt_cupti_drain(buffer, used, next, &p), 3);
	ck_assert_uint_eq(caught[0].kind, MT_EV_POOL_CREATE);
	ck_assert_uint_eq(caught[0].address, 0x400000000);
	ck_assert_uint_eq(caught[0].bytes, 4 << 20);
	ck_assert_uint_eq(caught[0].time_ns, 1777);
	ck_assert_uint_eq(caught[0].device_free, 42);
	ck_assert_uint_eq(caught[0].source, MT_SOURCE_CUPTI);
	ck_assert_uint_eq(caught[1].kind, MT_EV_POOL_TRIM);
	ck_assert_uint_eq(caught[1].bytes, 1 << 20);
	ck_assert_uint_eq(caught[2].kind, MT_EV_POOL_DESTROY);
}
END_TEST

START_TEST(graph_callbacks)
{
	CUgraph g = (CUgraph)0x1000, orig = (CUgraph)0x2000;
	CUgraphExec e = (CUgraphExec)0x3000;
	CUpti_GraphData d = { .graph = g, .originalGraph = orig, .graphExec = e };
	struct mt_event ev;

	ck_assert(mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPH_CREATED, &d, 5, 123, &ev));
	ck_assert_uint_eq(ev.kind, MT_EV_GRAPH_CREATE);
	ck_assert_uint_eq(ev.handle, 0x1000);
	ck_assert_uint_eq(ev.device_free, 5);
	ck_assert_uint_eq(ev.time_ns, 123);
	ck_assert_uint_eq(ev.source, MT_SOURCE_CUPTI);

	ck_assert(mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPH_CLONED, &d, 6, 0, &ev));
	ck_assert_uint_eq(ev.kind, MT_EV_GRAPH_CLONE);
	ck_assert_uint_eq(ev.handle, 0x1000);
	ck_assert_uint_eq(ev.address, 0x2000);

	ck_assert(mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, &d, 5, 0, &ev));
	ck_assert_uint_eq(ev.kind, MT_EV_GRAPH_DESTROY);
	ck_assert_uint_eq(ev.handle, 0x1000);

	ck_assert(mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &d, 1, 0, &ev));
	ck_assert_uint_eq(ev.kind, MT_EV_EXEC_CREATE);
	ck_assert_uint_eq(ev.handle, 0x3000);
	ck_assert_uint_eq(ev.address, 0x1000);

	ck_assert(mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING, &d, 1, 0,
				       &ev));
	ck_assert_uint_eq(ev.kind, MT_EV_EXEC_DESTROY);
	ck_assert_uint_eq(ev.handle, 0x3000);

	ck_assert(!mt_cupti_graph_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &d, 0, 0, &ev));
	ck_assert(!mt_cupti_graph_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &d, 0, 0, &ev));
}
END_TEST

/* Without a start, the three calls of the library's life do nothing. */
START_TEST(flush_and_stop_before_start)
{
	mt_cupti_flush();
	mt_cupti_stop();
	ck_assert_uint_eq(ncaught, 0);
}
END_TEST

static Suite *cupti_parse_suite(void)
{
	Suite *s = suite_create("cupti-parse");
	TCase *tc = tcase_create("records");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, memory_records);
	tcase_add_test(tc, pool_allocation_names_its_pool);
	tcase_add_test(tc, ignored_records);
	tcase_add_test(tc, truncated_buffer);
	tcase_add_test(tc, pool_records);
	tcase_add_test(tc, graph_callbacks);
	tcase_add_test(tc, flush_and_stop_before_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cupti_parse_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
