/* The model, fed hand-built event sequences: no trace file involved. */
#include <check.h>
#include <stdint.h>

#include "model.h"
#include "suites.h"
#include "trace-schema.h"

#define MiB (1024ull * 1024)

static int64_t next_seq;

static struct mt_event ev(int kind, int64_t t, uint64_t addr, uint64_t bytes, int mem,
			  int64_t stack)
{
	return (struct mt_event){
		.seq = next_seq++, .time_ns = t, .kind = kind, .api = 1, .address = addr,
		.has_address = true, .bytes = bytes, .mem = mem, .stack = stack,
	};
}

static void alloc(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int mem,
		  int64_t stack)
{
	struct mt_event e = ev(MT_EV_ALLOC, t, addr, bytes, mem, stack);

	model_feed(m, &e);
}

static void dev_alloc(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int64_t stack)
{
	alloc(m, t, addr, bytes, MT_MEM_DEVICE, stack);
}

/* Frees carry what the writer knew; the model must go by its live map. */
static void dev_free(struct model *m, int64_t t, uint64_t addr)
{
	struct mt_event e = ev(MT_EV_FREE, t, addr, 0, 0, 99);

	model_feed(m, &e);
}

static void free_error(struct model *m, int64_t t, uint64_t addr)
{
	struct mt_event e = ev(MT_EV_FREE_ERROR, t, addr, 0, 0, 99);

	model_feed(m, &e);
}

static void oom(struct model *m, int64_t t, uint64_t bytes, int64_t stack)
{
	struct mt_event e = ev(MT_EV_OOM, t, 0, bytes, MT_MEM_DEVICE, stack);

	e.has_address = false;
	e.has_device_free = e.has_device_total = true;
	e.device_free = 1 * MiB;
	e.device_total = 1024 * MiB;
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
	struct mt_event null_free = ev(MT_EV_FREE, 3, 0, 0, 0, 1);

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
	struct mt_event no_addr = ev(MT_EV_ALLOC, 1, 0, 100, MT_MEM_DEVICE, 1);
	struct mt_event zero = ev(MT_EV_ALLOC, 2, 0, 0, MT_MEM_DEVICE, 1);
	struct mt_event bad_mem = ev(MT_EV_ALLOC, 3, 0x9000, 100, 7, 1);
	struct mt_event bad_kind = ev(42, 4, 0x9000, 100, 1, 1);
	struct mt_event huge = ev(MT_EV_ALLOC, 5, 0xa000, UINT64_MAX - 1, MT_MEM_DEVICE, 1);

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

Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_peak_per_site);
	tcase_add_test(tc, test_peak_first_kept);
	tcase_add_test(tc, test_leaks);
	tcase_add_test(tc, test_oom_holders);
	tcase_add_test(tc, test_oom_snapshot_cap);
	tcase_add_test(tc, test_free_error);
	tcase_add_test(tc, test_free_error_then_free);
	tcase_add_test(tc, test_unmatched_free);
	tcase_add_test(tc, test_host_device_separation);
	tcase_add_test(tc, test_odd_events);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return s;
}
