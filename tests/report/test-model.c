/* The model, fed hand-built event sequences: no trace file involved. */
#include <check.h>
#include <stdint.h>

#include "model-timeline.h"
#include "model.h"
#include "suites.h"
#include "trace-schema.h"

#define MiB (1024ull * 1024)

static int64_t next_seq;

static struct trace_event ev(int kind, int64_t t, uint64_t addr, uint64_t bytes, int mem,
			     int64_t stack)
{
	return (struct trace_event){
		.seq = next_seq++, .time_ns = t, .kind = kind, .api = 1, .address = addr,
		.has_address = true, .bytes = bytes, .mem = mem, .stack = stack,
	};
}

static void alloc(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int mem,
		  int64_t stack)
{
	struct trace_event e = ev(MT_EV_ALLOC, t, addr, bytes, mem, stack);

	model_feed(m, &e);
}

static void dev_alloc(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int64_t stack)
{
	alloc(m, t, addr, bytes, MT_MEM_DEVICE, stack);
}

/* Frees carry what the writer knew; the model must go by its live map. */
static void dev_free(struct model *m, int64_t t, uint64_t addr)
{
	struct trace_event e = ev(MT_EV_FREE, t, addr, 0, 0, 99);

	model_feed(m, &e);
}

static void free_error(struct model *m, int64_t t, uint64_t addr)
{
	struct trace_event e = ev(MT_EV_FREE_ERROR, t, addr, 0, 0, 99);

	model_feed(m, &e);
}

static void oom(struct model *m, int64_t t, uint64_t bytes, int64_t stack)
{
	struct trace_event e = ev(MT_EV_OOM, t, 0, bytes, MT_MEM_DEVICE, stack);

	e.has_address = false;
	e.has_device_free = e.has_device_total = true;
	e.device_free = 1 * MiB;
	e.device_total = 1024 * MiB;
	model_feed(m, &e);
}

/* An event with a handle (map: the physical allocation; pools: the pool). */
static void feed_h(struct model *m, int kind, int64_t t, uint64_t addr, uint64_t bytes, int mem,
		   int64_t stack, uint64_t handle)
{
	struct trace_event e = ev(kind, t, addr, bytes, mem, stack);

	e.handle = handle;
	e.has_handle = true;
	model_feed(m, &e);
}

static void vmm_create(struct model *m, int64_t t, uint64_t handle, uint64_t bytes, int64_t stack)
{
	alloc(m, t, handle, bytes, MT_MEM_VMM_PHYSICAL, stack);
}

static void vmm_map(struct model *m, int64_t t, uint64_t va, uint64_t bytes, uint64_t handle,
		    int64_t stack)
{
	feed_h(m, MT_EV_MAP, t, va, bytes, 0, stack, handle);
}

static void vmm_unmap(struct model *m, int64_t t, uint64_t va)
{
	struct trace_event e = ev(MT_EV_UNMAP, t, va, 0, 0, 99);

	model_feed(m, &e);
}

static void unmap_error(struct model *m, int64_t t, uint64_t va)
{
	struct trace_event e = ev(MT_EV_UNMAP_ERROR, t, va, 0, 0, 99);

	model_feed(m, &e);
}

static void on_device(struct model *m, int64_t t, int device, uint64_t total, uint64_t free_b)
{
	struct trace_event e = ev(MT_EV_DEVICE, t, 0, total, 0, 0);

	e.has_address = false;
	e.device = device;
	e.handle = free_b;
	e.has_handle = true;
	model_feed(m, &e);
}

static void alloc_on(struct model *m, int64_t t, int device, uint64_t addr, uint64_t bytes,
		     int64_t stack)
{
	struct trace_event e = ev(MT_EV_ALLOC, t, addr, bytes, MT_MEM_DEVICE, stack);

	e.device = device;
	model_feed(m, &e);
}

static const struct model_site *site(const struct model *m, int64_t stack)
{
	for (size_t i = 0; i < m->n_sites; i++) {
		if (m->sites[i].stack == stack)
			return &m->sites[i];
	}
	ck_abort_msg("no site for stack %lld", (long long)stack);
	return NULL;
}

static void setup(struct model *m)
{
	next_seq = 0;
	model_init(m);
}

static void torch_event(struct model *m, int kind, int64_t t, uint64_t addr, uint64_t bytes)
{
	struct trace_event e = ev(kind, t, addr, bytes, 0, 7);

	model_feed(m, &e);
}

/* Inside PyTorch's allocator (its actions in the trace), a failed
 * cudaMalloc whose retry, after the cache was given back, succeeded was
 * recovered from: no OOM episode. One whose allocator then gave up
 * (its own OOM), or whose thread went on to ask for something else, was
 * an OOM. */
START_TEST(test_oom_recovered)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 600 * MiB, 1);
	torch_event(&m, MT_EV_CACHE_SEGMENT_ALLOC, 1, 0x1000, 600 * MiB);
	oom(&m, 2, 700 * MiB, 2);
	torch_event(&m, MT_EV_CACHE_SEGMENT_FREE, 3, 0x1000, 600 * MiB);
	dev_free(&m, 3, 0x1000);
	dev_alloc(&m, 4, 0x2000, 700 * MiB, 2); /* the retry worked */
	/* then one that failed twice and was the allocator's OOM */
	oom(&m, 5, 900 * MiB, 3);
	oom(&m, 6, 900 * MiB, 3);
	torch_event(&m, MT_EV_TENSOR_OOM, 6, 0, 900 * MiB);
	dev_alloc(&m, 7, 0x3000, 900 * MiB, 3);
	/* and one whose thread asked for something else */
	oom(&m, 8, 950 * MiB, 4);
	dev_alloc(&m, 9, 0x4000, 1 * MiB, 4);
	model_finish(&m);

	ck_assert_uint_eq(m.n_ooms, 4);
	ck_assert(m.ooms[0].recovered);
	ck_assert_uint_eq(m.ooms[0].recovered_bytes, 600 * MiB);
	ck_assert_uint_eq(m.ooms[0].recovered_count, 1);
	ck_assert(!m.ooms[1].recovered && !m.ooms[2].recovered && !m.ooms[3].recovered);
	ck_assert_uint_eq(m.n_recovered_episodes, 1);
	ck_assert_uint_eq(m.n_oom_episodes, 2);
	/* the allocator's OOM named its tensor, not the recovered failure's */
	ck_assert(!m.ooms[0].framework.has_request);
	ck_assert(m.ooms[2].framework.has_request);
	model_fini(&m);
}
END_TEST

/* Without a framework's allocator in the trace, a failed cudaMalloc is
 * the program's to see: tried again and served, it was an OOM still. */
START_TEST(test_oom_retried_bare)
{
	struct model m;

	setup(&m);
	oom(&m, 1, 700 * MiB, 2);
	dev_alloc(&m, 2, 0x2000, 700 * MiB, 2);
	model_finish(&m);
	ck_assert(!m.ooms[0].recovered);
	ck_assert_uint_eq(m.n_oom_episodes, 1);
	ck_assert_uint_eq(m.n_recovered_episodes, 0);
	model_fini(&m);
}
END_TEST

/* A site that changes after the peak must report what it held at the peak,
 * not its last value; one that never changes again must report its live
 * bytes; one born after the peak held nothing. */
START_TEST(test_peak_per_site)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 10, 0x1000, 100, 1); /* live 100 */
	dev_alloc(&m, 20, 0x2000, 50, 2);  /* 150: peak 1 */
	dev_free(&m, 30, 0x1000);	   /* 50 */
	dev_alloc(&m, 40, 0x3000, 30, 1);  /* 80 */
	dev_alloc(&m, 50, 0x4000, 60, 3);  /* 140 */
	dev_alloc(&m, 60, 0x5000, 20, 3);  /* 160: peak 2: s1 30, s2 50, s3 80 */
	dev_free(&m, 70, 0x2000);	   /* s2 0 after the peak */
	dev_alloc(&m, 80, 0x6000, 5, 1);   /* s1 35 after the peak */
	dev_alloc(&m, 90, 0x7000, 7, 4);   /* born after the peak */
	model_finish(&m);

	ck_assert_uint_eq(m.device.peak_bytes, 160);
	ck_assert_int_eq(m.device.peak_time_ns, 60);
	ck_assert_uint_eq(site(&m, 1)->at_peak, 30);
	ck_assert_uint_eq(site(&m, 1)->live, 35);
	ck_assert_uint_eq(site(&m, 1)->total_bytes, 135);
	ck_assert_uint_eq(site(&m, 1)->count, 3);
	ck_assert_uint_eq(site(&m, 2)->at_peak, 50);
	ck_assert_uint_eq(site(&m, 2)->live, 0);
	ck_assert_uint_eq(site(&m, 3)->at_peak, 80);
	ck_assert_uint_eq(site(&m, 4)->at_peak, 0);
	ck_assert_uint_eq(site(&m, 4)->live, 7);
	/* ranked by bytes at the peak */
	ck_assert_int_eq(m.sites[0].stack, 3);
	ck_assert_int_eq(m.sites[1].stack, 2);
	ck_assert_int_eq(m.sites[2].stack, 1);
	ck_assert_int_eq(m.sites[3].stack, 4);
	ck_assert_uint_eq(m.device.live_bytes, 30 + 60 + 20 + 5 + 7);
	model_fini(&m);
}
END_TEST

/* The first peak stays the peak when a later high only equals it. */
START_TEST(test_peak_first_kept)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 10, 0x1000, 100, 1);
	dev_free(&m, 20, 0x1000);
	dev_alloc(&m, 30, 0x2000, 100, 2);
	model_finish(&m);
	ck_assert_uint_eq(m.device.peak_bytes, 100);
	ck_assert_int_eq(m.device.peak_time_ns, 10);
	ck_assert_uint_eq(site(&m, 1)->at_peak, 100);
	ck_assert_uint_eq(site(&m, 2)->at_peak, 0);
	model_fini(&m);
}
END_TEST

START_TEST(test_leaks)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 10, 1);
	dev_alloc(&m, 2, 0x2000, 20, 1);
	dev_alloc(&m, 3, 0x3000, 5, 2);
	alloc(&m, 4, 0x4000, 64, MT_MEM_MANAGED, 2);
	alloc(&m, 5, 0x5000, 40, MT_MEM_HOST_PINNED, 2);
	dev_alloc(&m, 6, 0x6000, 1000, 3);
	dev_free(&m, 7, 0x6000);
	dev_free(&m, 8, 0x3000);
	model_finish(&m);

	ck_assert_uint_eq(m.n_leaks, 3);
	ck_assert_int_eq(m.leaks[0].stack, 2);
	ck_assert_int_eq(m.leaks[0].mem, MT_MEM_MANAGED);
	ck_assert_uint_eq(m.leaks[0].bytes, 64);
	ck_assert_int_eq(m.leaks[1].mem, MT_MEM_HOST_PINNED);
	ck_assert_uint_eq(m.leaks[1].bytes, 40);
	ck_assert_int_eq(m.leaks[2].stack, 1);
	ck_assert_int_eq(m.leaks[2].mem, MT_MEM_DEVICE);
	ck_assert_uint_eq(m.leaks[2].bytes, 30);
	ck_assert_uint_eq(m.leaks[2].count, 2);
	model_fini(&m);
}
END_TEST

START_TEST(test_oom_holders)
{
	struct model m;
	const struct model_oom *o;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 10 * MiB, 1);
	dev_alloc(&m, 2, 0x2000, 30 * MiB, 2);
	dev_alloc(&m, 3, 0x3000, 15 * MiB, 1);
	alloc(&m, 4, 0x4000, 5 * MiB, MT_MEM_MANAGED, 3);
	alloc(&m, 5, 0x5000, 99 * MiB, MT_MEM_HOST_PINNED, 4); /* not device memory */
	dev_free(&m, 6, 0x3000);
	oom(&m, 7, 512 * MiB, 5);
	dev_free(&m, 8, 0x2000); /* after the OOM: its snapshot must not change */
	model_finish(&m);

	ck_assert_uint_eq(m.n_ooms, 1);
	o = &m.ooms[0];
	ck_assert_int_eq(o->time_ns, 7);
	ck_assert_uint_eq(o->requested, 512 * MiB);
	ck_assert_int_eq(o->stack, 5);
	ck_assert_uint_eq(o->live_bytes, 45 * MiB);
	ck_assert_uint_eq(o->live_count, 3);
	ck_assert_int_eq(o->device_free, 1 * MiB);
	ck_assert(o->has_holders);
	ck_assert_uint_eq(o->n_holders, 3);
	ck_assert_int_eq(o->holders[0].stack, 2);
	ck_assert_uint_eq(o->holders[0].bytes, 30 * MiB);
	ck_assert_int_eq(o->holders[1].stack, 1);
	ck_assert_uint_eq(o->holders[1].bytes, 10 * MiB);
	ck_assert_uint_eq(o->holders[1].count, 1);
	ck_assert_int_eq(o->holders[2].stack, 3);
	model_fini(&m);
}
END_TEST

START_TEST(test_oom_snapshot_cap)
{
	struct model m;
	const size_t n = MODEL_OOM_SNAPSHOTS + 36;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 10, 1);
	for (size_t i = 0; i < n; i++)
		oom(&m, 2 + (int64_t)i, 100, 2);
	model_finish(&m);
	ck_assert_uint_eq(m.n_ooms, n);
	for (size_t i = 0; i < n; i++) {
		bool kept = i < MODEL_OOM_SNAPSHOTS - 1 || i == n - 1;

		ck_assert_msg(m.ooms[i].has_holders == kept, "OOM %zu", i);
		ck_assert_uint_eq(m.ooms[i].n_holders, kept ? 1 : 0);
	}
	ck_assert_uint_eq(m.oom_snapshots_dropped, n - MODEL_OOM_SNAPSHOTS);
	model_fini(&m);
}
END_TEST

/* free_error: the free just before failed, the allocation stays live. */
START_TEST(test_free_error)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 100, 1);
	dev_alloc(&m, 2, 0x2000, 50, 2);
	dev_free(&m, 3, 0x1000);
	free_error(&m, 4, 0x1000);
	dev_free(&m, 5, 0x2000);
	model_finish(&m);

	ck_assert_uint_eq(m.free_errors, 1);
	ck_assert_uint_eq(m.device.frees, 1);
	ck_assert_uint_eq(m.device.live_bytes, 100);
	ck_assert_uint_eq(m.device.live_count, 1);
	ck_assert_uint_eq(m.device.peak_bytes, 150);
	ck_assert_uint_eq(site(&m, 1)->live, 100);
	ck_assert_uint_eq(site(&m, 1)->at_peak, 100);
	ck_assert_uint_eq(m.n_leaks, 1);
	ck_assert_int_eq(m.leaks[0].stack, 1);
	ck_assert_uint_eq(m.unmatched_frees, 0);
	model_fini(&m);
}
END_TEST

/* A later free of the same address really frees it. */
START_TEST(test_free_error_then_free)
{
	struct model m;

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 100, 1);
	dev_free(&m, 2, 0x1000);
	free_error(&m, 3, 0x1000);
	dev_free(&m, 4, 0x1000);
	model_finish(&m);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 1);
	ck_assert_uint_eq(m.n_leaks, 0);
	model_fini(&m);
}
END_TEST

START_TEST(test_unmatched_free)
{
	struct model m;
	struct trace_event null_free = ev(MT_EV_FREE, 3, 0, 0, 0, 1);

	setup(&m);
	dev_alloc(&m, 1, 0x1000, 100, 1);
	dev_free(&m, 2, 0xdead);  /* never allocated */
	model_feed(&m, &null_free); /* cudaFree(NULL): a no-op */
	dev_free(&m, 4, 0xbad);	  /* a bad pointer ... */
	free_error(&m, 5, 0xbad); /* ... that CUDA refused: not memtrace's miss */
	model_finish(&m);
	ck_assert_uint_eq(m.unmatched_frees, 1);
	ck_assert_uint_eq(m.free_errors, 1);
	ck_assert_uint_eq(m.device.frees, 0);
	ck_assert_uint_eq(m.device.live_bytes, 100);
	model_fini(&m);
}
END_TEST

START_TEST(test_host_device_separation)
{
	struct model m;

	setup(&m);
	alloc(&m, 1, 0x1000, 1000, MT_MEM_HOST_PINNED, 1);
	dev_alloc(&m, 2, 0x2000, 10, 2);
	alloc(&m, 3, 0x3000, 20, MT_MEM_MANAGED, 3);
	dev_free(&m, 4, 0x1000);
	alloc(&m, 5, 0x4000, 300, MT_MEM_HOST_PINNED, 1);
	model_finish(&m);

	ck_assert_uint_eq(m.host.allocations, 2);
	ck_assert_uint_eq(m.host.frees, 1);
	ck_assert_uint_eq(m.host.bytes_allocated, 1300);
	ck_assert_uint_eq(m.host.peak_bytes, 1000);
	ck_assert_int_eq(m.host.peak_time_ns, 1);
	ck_assert_uint_eq(m.host.live_bytes, 300);
	ck_assert_uint_eq(m.device.allocations, 2);
	ck_assert_uint_eq(m.device.frees, 0);
	ck_assert_uint_eq(m.device.peak_bytes, 30);
	ck_assert_int_eq(m.device.peak_time_ns, 3);
	/* sites are device memory only */
	ck_assert_uint_eq(m.n_sites, 2);
	ck_assert_int_eq(m.sites[0].stack, 3);
	model_fini(&m);
}
END_TEST

START_TEST(test_odd_events)
{
	struct model m;
	struct trace_event no_addr = ev(MT_EV_ALLOC, 1, 0, 100, MT_MEM_DEVICE, 1);
	struct trace_event zero = ev(MT_EV_ALLOC, 2, 0, 0, MT_MEM_DEVICE, 1);
	struct trace_event bad_mem = ev(MT_EV_ALLOC, 3, 0x9000, 100, 77, 1);
	struct trace_event bad_kind = ev(42, 4, 0x9000, 100, 1, 1);
	struct trace_event huge = ev(MT_EV_ALLOC, 5, 0xa000, UINT64_MAX - 1, MT_MEM_DEVICE, 1);

	setup(&m);
	no_addr.has_address = false;
	model_feed(&m, &no_addr);
	model_feed(&m, &zero);
	model_feed(&m, &bad_mem);
	model_feed(&m, &bad_kind);
	dev_alloc(&m, 5, 0x1000, 10, 2);
	dev_alloc(&m, 6, 0x1000, 20, 2); /* the free in between was not seen */
	model_feed(&m, &huge);
	dev_alloc(&m, 7, 0xb000, 20, 2); /* saturates, never wraps */
	model_finish(&m);
	ck_assert_uint_eq(m.untracked_allocs, 2);
	ck_assert_uint_eq(m.unknown_events, 1);
	ck_assert_uint_eq(m.reused_addresses, 1);
	ck_assert_uint_eq(m.device.live_bytes, UINT64_MAX);
	ck_assert_uint_eq(m.events, 8);
	model_fini(&m);
}
END_TEST

/* ---- VMM: handles, mappings, release ------------------------------------ */

/* PyTorch's order: create, map, release at once; the memory lives on,
 * held by the stack that mapped it, until the unmap. */
START_TEST(test_vmm_release_before_unmap)
{
	struct model m;

	setup(&m);
	vmm_create(&m, 1, 0x11, 2 * MiB, 1);
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	vmm_map(&m, 2, 0x7000000000, 2 * MiB, 0x11, 2);
	dev_free(&m, 3, 0x11); /* cuMemRelease */
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	ck_assert_uint_eq(m.device.live_count, 1);
	ck_assert_uint_eq(m.device.frees, 0);
	ck_assert_uint_eq(m.unmatched_frees, 0);
	vmm_unmap(&m, 4, 0x7000000000);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 1);
	ck_assert_uint_eq(m.kinds[MT_MEM_VMM_PHYSICAL].frees, 1);
	model_finish(&m);

	ck_assert_uint_eq(m.device.peak_bytes, 2 * MiB);
	/* the peak was reached at the create, before the map */
	ck_assert_uint_eq(site(&m, 1)->at_peak, 2 * MiB);
	ck_assert_uint_eq(site(&m, 1)->count, 1);
	ck_assert_uint_eq(site(&m, 2)->at_peak, 0);
	ck_assert_uint_eq(site(&m, 2)->count, 0);
	ck_assert_uint_eq(site(&m, 2)->maps, 1);
	ck_assert_uint_eq(site(&m, 2)->mapped_bytes, 2 * MiB);
	ck_assert_uint_eq(m.n_leaks, 0);
	model_fini(&m);
}
END_TEST

/* One handle mapped twice counts once; its bytes go with its first live
 * mapping, then the next one, then back to its creator. */
START_TEST(test_vmm_double_map)
{
	struct model m;

	setup(&m);
	vmm_create(&m, 1, 0x22, 4 * MiB, 1);
	vmm_map(&m, 2, 0x7000000000, 4 * MiB, 0x22, 2);
	vmm_map(&m, 3, 0x7100000000, 4 * MiB, 0x22, 3);
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB);
	dev_alloc(&m, 4, 0x5000, 1 * MiB, 4); /* peak: 5 MiB, held by stack 2 and 4 */
	dev_free(&m, 5, 0x5000);
	vmm_unmap(&m, 6, 0x7000000000); /* to stack 3 */
	dev_free(&m, 7, 0x22);		/* released, still mapped at 0x71... */
	ck_assert_uint_eq(m.device.live_bytes, 4 * MiB);
	model_finish(&m);

	ck_assert_uint_eq(m.device.peak_bytes, 5 * MiB);
	ck_assert_int_eq(m.device.peak_time_ns, 4);
	ck_assert_uint_eq(site(&m, 1)->at_peak, 0);
	ck_assert_uint_eq(site(&m, 2)->at_peak, 4 * MiB);
	ck_assert_uint_eq(site(&m, 3)->at_peak, 0);
	ck_assert_uint_eq(site(&m, 4)->at_peak, 1 * MiB);
	ck_assert_uint_eq(site(&m, 3)->live, 4 * MiB);
	ck_assert_uint_eq(site(&m, 2)->live, 0);
	ck_assert_uint_eq(site(&m, 1)->live, 0);
	/* the leak is the handle, under the stack of its live mapping */
	ck_assert_uint_eq(m.n_leaks, 1);
	ck_assert_int_eq(m.leaks[0].stack, 3);
	ck_assert_int_eq(m.leaks[0].mem, MT_MEM_VMM_PHYSICAL);
	ck_assert_uint_eq(m.leaks[0].bytes, 4 * MiB);
	ck_assert_uint_eq(m.kinds[MT_MEM_VMM_PHYSICAL].live_count, 1);
	model_fini(&m);
}
END_TEST

/* Unmapped everywhere but not released: back to the creator, still live. */
START_TEST(test_vmm_unmap_then_release)
{
	struct model m;

	setup(&m);
	vmm_create(&m, 1, 0x33, 2 * MiB, 1);
	vmm_map(&m, 2, 0x7000000000, 2 * MiB, 0x33, 2);
	vmm_unmap(&m, 3, 0x7000000000);
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	ck_assert_uint_eq(m.stacks[0].bytes, 2 * MiB); /* stack 1 holds it again */
	dev_free(&m, 4, 0x33);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 1);
	/* a handle never mapped is freed by its release */
	vmm_create(&m, 5, 0x44, 2 * MiB, 1);
	dev_free(&m, 6, 0x44);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 2);
	model_finish(&m);
	ck_assert_uint_eq(m.n_leaks, 0);
	ck_assert_uint_eq(m.unmatched_unmaps, 0);
	model_fini(&m);
}
END_TEST

/* unmap_error puts back the mapping and, when that unmap had freed a
 * released handle, the memory. A failed release leaves it unreleased. */
START_TEST(test_vmm_errors)
{
	struct model m;

	setup(&m);
	vmm_create(&m, 1, 0x55, 2 * MiB, 1);
	vmm_map(&m, 2, 0x7000000000, 2 * MiB, 0x55, 2);
	dev_free(&m, 3, 0x55);
	vmm_unmap(&m, 4, 0x7000000000);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	unmap_error(&m, 5, 0x7000000000);
	ck_assert_uint_eq(m.unmap_errors, 1);
	ck_assert_uint_eq(m.device.live_bytes, 2 * MiB);
	ck_assert_uint_eq(m.device.frees, 0);
	vmm_unmap(&m, 6, 0x7000000000); /* still released: this frees it */
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 1);

	vmm_create(&m, 7, 0x66, 1 * MiB, 1);
	vmm_map(&m, 8, 0x7200000000, 1 * MiB, 0x66, 2);
	dev_free(&m, 9, 0x66);
	free_error(&m, 10, 0x66); /* the release failed */
	vmm_unmap(&m, 11, 0x7200000000);
	ck_assert_uint_eq(m.device.live_bytes, 1 * MiB);
	ck_assert_uint_eq(m.free_errors, 1);
	dev_free(&m, 12, 0x66);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	ck_assert_uint_eq(m.device.frees, 2);
	model_finish(&m);
	ck_assert_uint_eq(m.n_leaks, 0);
	model_fini(&m);
}
END_TEST

/* At an OOM a mapped handle is held by the stack that mapped it. */
START_TEST(test_vmm_oom_holders)
{
	struct model m;
	const struct model_oom *o;

	setup(&m);
	vmm_create(&m, 1, 0x77, 20 * MiB, 1);
	vmm_map(&m, 2, 0x7000000000, 20 * MiB, 0x77, 2);
	vmm_map(&m, 3, 0x7100000000, 20 * MiB, 0x77, 3);
	dev_free(&m, 4, 0x77);
	vmm_create(&m, 5, 0x88, 2 * MiB, 1); /* created, not mapped yet */
	oom(&m, 6, 512 * MiB, 5);
	model_finish(&m);
	o = &m.ooms[0];
	ck_assert_uint_eq(o->live_bytes, 22 * MiB);
	ck_assert_uint_eq(o->live_count, 2);
	ck_assert_uint_eq(o->n_holders, 2);
	ck_assert_int_eq(o->holders[0].stack, 2);
	ck_assert_uint_eq(o->holders[0].bytes, 20 * MiB);
	ck_assert_uint_eq(o->holders[0].count, 1);
	ck_assert_int_eq(o->holders[1].stack, 1);
	ck_assert_uint_eq(o->holders[1].bytes, 2 * MiB);
	model_fini(&m);
}
END_TEST

START_TEST(test_vmm_unmatched)
{
	struct model m;

	setup(&m);
	vmm_map(&m, 1, 0x7000000000, 2 * MiB, 0x99, 2); /* handle never seen */
	ck_assert_uint_eq(m.unmatched_maps, 1);
	ck_assert_uint_eq(m.device.live_bytes, 0);
	vmm_unmap(&m, 2, 0x7000000000); /* it was mapped: not unmatched */
	vmm_unmap(&m, 3, 0x7100000000); /* never mapped */
	vmm_unmap(&m, 4, 0x7200000000);
	unmap_error(&m, 5, 0x7200000000); /* ... a bad address the driver refused */
	model_finish(&m);
	ck_assert_uint_eq(m.unmatched_unmaps, 1);
	ck_assert_uint_eq(m.unmap_errors, 1);
	ck_assert_uint_eq(m.n_sites, 0);
	model_fini(&m);
}
END_TEST

/* ---- memory kinds, pools, devices ---------------------------------------- */

/* Device memory is device + managed + pool + vmm_physical + array; pinned
 * host is host; reserved address space, imported and registered memory
 * are listed apart, in their kinds and leaks only. */
START_TEST(test_kinds)
{
	struct model m;

	setup(&m);
	alloc(&m, 1, 0x1000, 1, MT_MEM_DEVICE, 1);
	alloc(&m, 2, 0x2000, 2, MT_MEM_MANAGED, 2);
	alloc(&m, 3, 0x3000, 4, MT_MEM_HOST_PINNED, 3);
	feed_h(&m, MT_EV_ALLOC, 4, 0x4000, 8, MT_MEM_POOL, 4, 0xb001);
	vmm_create(&m, 5, 0x5000, 16, 5);
	alloc(&m, 6, 0x6000, 1000, MT_MEM_VMM_RESERVED, 6);
	alloc(&m, 7, 0x7000, 2000, MT_MEM_IMPORTED, 7);
	alloc(&m, 8, 0x8000, 32, MT_MEM_ARRAY, 8);
	alloc(&m, 9, 0x9000, 4000, MT_MEM_HOST_REGISTERED, 9);
	dev_free(&m, 10, 0x7000); /* cuIpcCloseMemHandle */
	model_finish(&m);

	ck_assert_uint_eq(m.device.allocations, 5);
	ck_assert_uint_eq(m.device.peak_bytes, 1 + 2 + 8 + 16 + 32);
	ck_assert_uint_eq(m.device.live_bytes, 1 + 2 + 8 + 16 + 32);
	ck_assert_uint_eq(m.host.allocations, 1);
	ck_assert_uint_eq(m.host.live_bytes, 4);
	ck_assert_uint_eq(m.kinds[MT_MEM_IMPORTED].allocations, 1);
	ck_assert_uint_eq(m.kinds[MT_MEM_IMPORTED].frees, 1);
	ck_assert_uint_eq(m.kinds[MT_MEM_IMPORTED].peak_bytes, 2000);
	ck_assert_uint_eq(m.kinds[MT_MEM_IMPORTED].live_bytes, 0);
	ck_assert_uint_eq(m.kinds[MT_MEM_VMM_RESERVED].live_bytes, 1000);
	ck_assert_uint_eq(m.kinds[MT_MEM_HOST_REGISTERED].live_count, 1);
	ck_assert_uint_eq(m.kinds[MT_MEM_ARRAY].bytes_allocated, 32);
	ck_assert_uint_eq(m.device.frees, 0);
	/* sites: device-side stacks only */
	ck_assert_uint_eq(m.n_sites, 5);
	ck_assert_int_eq(m.sites[0].stack, 8);
	/* leaks: every kind, with its kind */
	ck_assert_uint_eq(m.n_leaks, 8);
	ck_assert_int_eq(m.leaks[0].mem, MT_MEM_HOST_REGISTERED);
	ck_assert_int_eq(m.leaks[1].mem, MT_MEM_VMM_RESERVED);
	ck_assert_int_eq(m.leaks[7].mem, MT_MEM_DEVICE);
	ck_assert(model_mem_is_device(MT_MEM_ARRAY));
	ck_assert(!model_mem_is_device(MT_MEM_IMPORTED));
	ck_assert(!model_mem_is_device(MT_MEM_HOST_PINNED));
	model_fini(&m);
}
END_TEST

START_TEST(test_pools)
{
	struct model m;

	setup(&m);
	feed_h(&m, MT_EV_POOL_CREATE, 1, 0, 0, 0, 7, 0xa0);
	feed_h(&m, MT_EV_ALLOC, 2, 0x1000, 100, MT_MEM_POOL, 8, 0xa0);
	feed_h(&m, MT_EV_ALLOC, 3, 0x2000, 50, MT_MEM_POOL, 8, 0xa0);
	dev_free(&m, 4, 0x1000);
	feed_h(&m, MT_EV_POOL_TRIM, 5, 0, 0, 0, 9, 0xa0);
	feed_h(&m, MT_EV_POOL_DESTROY, 6, 0, 0, 0, 9, 0xa0);
	feed_h(&m, MT_EV_POOL_CREATE, 7, 0, 0, 0, 10, 0xa0); /* the handle again */
	feed_h(&m, MT_EV_ALLOC, 8, 0x3000, 30, MT_MEM_POOL, 8, 0xa0);
	feed_h(&m, MT_EV_ALLOC, 9, 0x4000, 20, MT_MEM_POOL, 8, 0xb0); /* created before? */
	model_finish(&m);

	ck_assert_uint_eq(m.n_pools, 3);
	ck_assert(m.pools[0].created && m.pools[0].destroyed);
	ck_assert_int_eq(m.pools[0].created_stack, 7);
	ck_assert_uint_eq(m.pools[0].allocations, 2);
	ck_assert_uint_eq(m.pools[0].bytes_allocated, 150);
	ck_assert_uint_eq(m.pools[0].live_bytes, 50);
	ck_assert_uint_eq(m.pools[0].trims, 1);
	ck_assert(m.pools[1].created && !m.pools[1].destroyed);
	ck_assert_int_eq(m.pools[1].created_stack, 10);
	ck_assert_uint_eq(m.pools[1].live_bytes, 30);
	ck_assert(!m.pools[2].created);
	ck_assert_uint_eq(m.pools[2].handle, 0xb0);
	ck_assert_uint_eq(m.pools[2].allocations, 1);
	ck_assert_uint_eq(m.device.live_bytes, 100);
	ck_assert_uint_eq(m.kinds[MT_MEM_POOL].live_bytes, 100);
	ck_assert_uint_eq(m.events, 9);
	ck_assert_uint_eq(m.unknown_events, 0);
	model_fini(&m);
}
END_TEST

/* What the device had in use beyond this process's own allocations on it. */
START_TEST(test_oom_unexplained)
{
	struct model m;
	struct trace_event e;

	setup(&m);
	alloc_on(&m, 1, 0, 0x1000, 300, 1);
	on_device(&m, 2, 0, 1000, 600);
	alloc_on(&m, 3, 1, 0x2000, 200, 1); /* another device: not ours on 0 */
	alloc_on(&m, 4, -1, 0x3000, 50, 1); /* unknown device: counted as ours */
	e = ev(MT_EV_OOM, 5, 0, 400, MT_MEM_DEVICE, 2);
	e.has_address = false;
	e.device = 0;
	e.has_device_free = e.has_device_total = true;
	e.device_free = 100;
	e.device_total = 1000;
	model_feed(&m, &e);
	e.device_free = 800; /* less in use than we hold: clamped */
	model_feed(&m, &e);
	e.has_device_free = false;
	model_feed(&m, &e);
	model_finish(&m);

	ck_assert(m.ooms[0].has_unexplained);
	ck_assert_uint_eq(m.ooms[0].unexplained_bytes, 900 - 300 - 50);
	ck_assert_uint_eq(m.ooms[0].live_bytes, 550);
	ck_assert(m.ooms[1].has_unexplained);
	ck_assert_uint_eq(m.ooms[1].unexplained_bytes, 0);
	ck_assert(!m.ooms[2].has_unexplained);
	ck_assert_uint_eq(m.n_devices, 2);
	ck_assert_int_eq(m.devices[0].id, 0);
	ck_assert(m.devices[0].has_info && m.devices[0].has_free);
	ck_assert_uint_eq(m.devices[0].total, 1000);
	ck_assert_uint_eq(m.devices[0].free_at_first_use, 600);
	ck_assert(!m.devices[1].has_info);
	ck_assert_uint_eq(m.events, 7);
	model_fini(&m);
}
END_TEST

/* One allocation of at least 70 % of the device among its first 16
 * device-side allocations, the first of its kind there; the device's size
 * from the devices table, a device event or an OOM. */
START_TEST(test_preallocation)
{
	struct model m;
	struct trace_event e;

	setup(&m);
	model_device_info(&m, 0, 1000, true, 990);
	model_device_info(&m, 3, 1000, true, 990);
	alloc(&m, 1, 0x1000, 10, MT_MEM_VMM_PHYSICAL, 1); /* another kind */
	alloc(&m, 2, 0x2000, 900, MT_MEM_HOST_PINNED, 1); /* not device memory */
	alloc(&m, 3, 0x3000, 699, MT_MEM_VMM_PHYSICAL, 1); /* less than 70 % */
	alloc_on(&m, 4, 0, 0x4000, 700, 2);		   /* this one */
	alloc_on(&m, 5, 0, 0x5000, 800, 3);		   /* only the first is noted */
	/* device 3: an arena grown region by region is none */
	alloc_on(&m, 6, 3, 0x6000, 10, 7);
	alloc_on(&m, 7, 3, 0x7000, 800, 7);
	for (int i = 0; i < MODEL_EARLY_ALLOCS; i++)
		alloc_on(&m, 10 + i, 1, 0x10000 + (uint64_t)i * 0x100, 1, 4);
	alloc_on(&m, 40, 1, 0x20000, 2000, 5); /* the 17th on device 1: too late */
	alloc_on(&m, 41, 2, 0x30000, 800, 6);  /* device 2: size from its OOM */
	e = ev(MT_EV_OOM, 42, 0, 400, MT_MEM_DEVICE, 2);
	e.has_address = false;
	e.device = 2;
	e.has_device_free = e.has_device_total = true;
	e.device_free = 0;
	e.device_total = 1024;
	model_feed(&m, &e);
	on_device(&m, 43, 1, 3000, 10);
	model_finish(&m);

	ck_assert_uint_eq(m.n_notes, 2);
	ck_assert_int_eq(m.notes[0].kind, MODEL_NOTE_PREALLOCATION);
	ck_assert_int_eq(m.notes[0].device, 0);
	ck_assert_int_eq(m.notes[0].time_ns, 4);
	ck_assert_uint_eq(m.notes[0].bytes, 700);
	ck_assert_uint_eq(m.notes[0].device_total, 1000);
	ck_assert_int_eq(m.notes[0].stack, 2);
	ck_assert_int_eq(m.notes[1].device, 2);
	ck_assert_uint_eq(m.notes[1].device_total, 1024);
	model_fini(&m);
}
END_TEST

/* PyTorch's caching allocator on a 1 GiB device: its first segments
 * (2 MiB, 20 MiB, then 512 MiB for a large tensor) grow on demand; none is
 * a preallocated arena. */
START_TEST(test_caching_segments_not_preallocation)
{
	struct model m;

	setup(&m);
	model_device_info(&m, 0, 1 << 30, true, 1 << 30);
	alloc_on(&m, 1, 0, 0x1000000, 2 << 20, 1);
	alloc_on(&m, 2, 0, 0x2000000, 20 << 20, 2);
	alloc_on(&m, 3, 0, 0x4000000, 512 << 20, 3);
	model_finish(&m);
	ck_assert_uint_eq(m.n_notes, 0);
	model_fini(&m);
}
END_TEST

/* Many allocations through the live map: grows, removes, stays exact. */
START_TEST(test_many)
{
	struct model m;
	const uint64_t n = 200000;

	setup(&m);
	for (uint64_t i = 0; i < n; i++)
		dev_alloc(&m, (int64_t)i, 0x7f0000000000 + i * 512, 512, (int64_t)(i % 100));
	for (uint64_t i = 0; i < n; i += 2)
		dev_free(&m, (int64_t)(n + i), 0x7f0000000000 + i * 512);
	model_finish(&m);
	ck_assert_uint_eq(m.device.live_count, n / 2);
	ck_assert_uint_eq(m.device.live_bytes, n / 2 * 512);
	ck_assert_uint_eq(m.device.peak_bytes, n * 512);
	ck_assert_uint_eq(m.n_sites, 100);
	ck_assert_uint_eq(m.n_leaks, 50);
	model_fini(&m);
}
END_TEST

/* An allocation of one of the reader's sites (site_slot) on a stream and
 * thread of its own. */
static void site_alloc(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int64_t stack,
		       uint64_t stream, int64_t thread, uint32_t slot)
{
	struct trace_event e = ev(MT_EV_ALLOC, t, addr, bytes, MT_MEM_DEVICE, stack);

	e.stream = stream;
	e.thread = thread;
	e.site_slot = slot;
	model_feed(m, &e);
}

static const struct timeline_stream *stream_row(const struct timeline_stream *rows, size_t n,
						uint64_t stream)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].stream == stream)
			return &rows[i];
	}
	ck_abort_msg("no row for stream %#llx", (unsigned long long)stream);
	return NULL;
}

static const struct timeline_thread *thread_row(const struct timeline_thread *rows, size_t n,
						int64_t thread)
{
	for (size_t i = 0; i < n; i++) {
		if (rows[i].thread == thread)
			return &rows[i];
	}
	ck_abort_msg("no row for thread %lld", (long long)thread);
	return NULL;
}

/* The bytes live by stream and thread, kept in the live records: a reused
 * address moves its bytes to the new allocation's stream, a free takes
 * them out, and so does the release of a mapped VMM handle (the tables
 * count allocations), though the model keeps its memory live. The
 * allocations of one site after its first take what it resolved to. */
START_TEST(test_timeline_streams)
{
	const uint64_t a = 0xa00, b = 0xb00;
	struct model_timeline tl;
	struct model m;

	setup(&m);
	model_timeline_init(&tl, 0);
	m.timeline = &tl;
	site_alloc(&m, 1, 0x1000, 4 * MiB, 1, a, 7, 1);
	site_alloc(&m, 2, 0x2000, 2 * MiB, 2, b, 8, 2);
	site_alloc(&m, 3, 0x3000, 1 * MiB, 1, a, 7, 1);
	/* 0x2000 again, no free seen: its 2 MiB leave stream b */
	site_alloc(&m, 4, 0x2000, 3 * MiB, 1, a, 7, 1);
	ck_assert_uint_eq(m.device.live_bytes, 8 * MiB); /* the peak */
	dev_free(&m, 5, 0x1000);
	vmm_create(&m, 6, 0x11, 2 * MiB, 3);
	vmm_map(&m, 7, 0x7000000000, 2 * MiB, 0x11, 3);
	dev_free(&m, 8, 0x11); /* cuMemRelease while mapped */
	ck_assert_uint_eq(m.device.live_bytes, 6 * MiB);
	model_finish(&m);
	model_timeline_finish(&tl, &m);

	ck_assert_uint_eq(m.device.peak_bytes, 8 * MiB);
	ck_assert_uint_eq(stream_row(tl.at_peak, tl.n_at_peak, a)->bytes, 8 * MiB);
	ck_assert_uint_eq(stream_row(tl.at_peak, tl.n_at_peak, a)->count, 3);
	ck_assert_uint_eq(stream_row(tl.at_peak, tl.n_at_peak, b)->bytes, 0);
	ck_assert_uint_eq(stream_row(tl.at_peak, tl.n_at_peak, b)->count, 0);
	ck_assert_uint_eq(thread_row(tl.thread_at_peak, tl.n_thread_at_peak, 7)->bytes, 8 * MiB);
	ck_assert_uint_eq(thread_row(tl.thread_at_peak, tl.n_thread_at_peak, 8)->bytes, 0);
	/* at the end: 0x3000 and 0x2000 on a; the handle counted, then not */
	ck_assert_uint_eq(stream_row(tl.streams, tl.n_streams, a)->bytes, 4 * MiB);
	ck_assert_uint_eq(stream_row(tl.streams, tl.n_streams, a)->count, 2);
	ck_assert_uint_eq(stream_row(tl.streams, tl.n_streams, 0)->bytes, 0);
	ck_assert_uint_eq(stream_row(tl.streams, tl.n_streams, 0)->count, 0);
	ck_assert_uint_eq(thread_row(tl.threads, tl.n_threads, 7)->bytes, 4 * MiB);
	/* site 1's three allocations, the last two through its memo */
	ck_assert_uint_eq(site(&m, 1)->count, 3);
	ck_assert_uint_eq(site(&m, 1)->total_bytes, 8 * MiB);
	ck_assert_uint_eq(site(&m, 1)->live, 4 * MiB);
	ck_assert_uint_eq(site(&m, 2)->count, 1);
	ck_assert_uint_eq(site(&m, 2)->live, 0);
	model_fini(&m);
	model_timeline_fini(&tl);
}
END_TEST

Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_peak_per_site);
	tcase_add_test(tc, test_peak_first_kept);
	tcase_add_test(tc, test_leaks);
	tcase_add_test(tc, test_oom_holders);
	tcase_add_test(tc, test_oom_recovered);
	tcase_add_test(tc, test_oom_retried_bare);
	tcase_add_test(tc, test_oom_snapshot_cap);
	tcase_add_test(tc, test_free_error);
	tcase_add_test(tc, test_free_error_then_free);
	tcase_add_test(tc, test_unmatched_free);
	tcase_add_test(tc, test_host_device_separation);
	tcase_add_test(tc, test_odd_events);
	tcase_add_test(tc, test_many);
	tcase_add_test(tc, test_timeline_streams);
	tcase_add_test(tc, test_vmm_release_before_unmap);
	tcase_add_test(tc, test_vmm_double_map);
	tcase_add_test(tc, test_vmm_unmap_then_release);
	tcase_add_test(tc, test_vmm_errors);
	tcase_add_test(tc, test_vmm_oom_holders);
	tcase_add_test(tc, test_vmm_unmatched);
	tcase_add_test(tc, test_kinds);
	tcase_add_test(tc, test_pools);
	tcase_add_test(tc, test_oom_unexplained);
	tcase_add_test(tc, test_preallocation);
	tcase_add_test(tc, test_caching_segments_not_preallocation);
	suite_add_tcase(s, tc);
	return s;
}
