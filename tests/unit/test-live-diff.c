/* The differential test of the live-set contract (docs/architecture.md):
 * the same events fed to the library's writer (mt_live_*, as
 * trace-writer.c calls it) and to the reporter's model (model_feed);
 * after every event the live sets by holder stack are equal (the
 * writer's read back as a mark's live set, live_at_mark), and at the end
 * the peak and what each stack held at it (live_at_peak) are equal.
 * Cases A-F of issue 34, the kinds and routes of tests/sim, and random
 * sequences from a seeded generator. */
#include <check.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-internal.h"
#include "trace-live.h"
#include "trace-schema.h"

/* One event as a test writes it. */
struct step {
	int kind;
	uint64_t address, bytes;
	int mem;
	int64_t stack;
	uint64_t handle;
};

#define MAX_SITES 512
#define MAX_STACKS 64

struct diff {
	sqlite3 *db;
	struct mt_live *live;
	struct mt_site_table *site_table;
	struct model m;
	uint64_t seq;
	/* the writer's sites, by id: their (kind, stack, mem) */
	struct {
		int kind, mem;
		int64_t stack;
	} sites[MAX_SITES];
	uint32_t n_sites;
	char where[160];
	char holder_diff[320]; /* the first difference of holders */
};

static void diff_open(struct diff *d)
{
	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(sqlite3_open(":memory:", &d->db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(d->db, MT_SCHEMA_SQL, NULL, NULL, NULL), SQLITE_OK);
	d->site_table = mt_site_table_new();
	ck_assert_ptr_nonnull(d->site_table);
	d->live = mt_live_new(&(struct mt_live_options){ .db = d->db, .path = ":memory:",
							 .sites = d->site_table });
	ck_assert_ptr_nonnull(d->live);
	model_init(&d->m);
}

static void diff_close(struct diff *d)
{
	mt_live_free(d->live);
	mt_site_table_free(d->site_table);
	sqlite3_close(d->db);
	model_fini(&d->m);
}

/* The sites the writer's live side interned (site-table.c, all of an
 * event's columns; these are the ones that differ here), as their rows
 * would name them. */
static void note_site(struct diff *d, const struct mt_live_row *row)
{
	if (!row->new_site)
		return;
	ck_assert_uint_lt(row->new_site, MAX_SITES);
	d->sites[row->new_site].kind = row->new_key->kind;
	d->sites[row->new_site].stack = row->new_key->stack;
	d->sites[row->new_site].mem = row->new_key->mem;
	if (row->new_site > d->n_sites)
		d->n_sites = row->new_site;
}

/* The event to the writer, as trace-writer.c's write_event gives it. */
static void to_writer(struct diff *d, const struct step *s)
{
	struct mt_event ev;
	struct mt_live_row row;
	memset(&ev, 0, sizeof(ev));
	ev.kind = (uint8_t)s->kind;
	ev.address = s->address;
	ev.bytes = s->bytes;
	ev.mem = (uint8_t)s->mem;
	ev.stack = (uint32_t)s->stack;
	ev.handle = s->handle;
	ev.api = 1;
	ck_assert(mt_live_event(d->live, d->seq, d->seq * 10, &ev, &row));
	note_site(d, &row);
}

static void to_model(struct diff *d, const struct step *s)
{
	struct trace_event ev = {
		.seq = (int64_t)d->seq, .time_ns = (int64_t)d->seq * 10, .kind = s->kind, .api = 1,
		.address = s->address, .has_address = true, .bytes = s->bytes, .mem = s->mem,
		.stack = s->stack, .handle = s->handle, .has_handle = s->handle != 0,
	};
	model_feed(&d->m, &ev);
}

/* bytes by stack, of every kind (live) or of the peak's kinds */
struct by_stack {
	uint64_t bytes[MAX_STACKS];
};

static void writer_rows(struct diff *d, const char *sql, int64_t key, struct by_stack *out)
{
	sqlite3_stmt *st;
	memset(out, 0, sizeof(*out));
	ck_assert_int_eq(sqlite3_prepare_v2(d->db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, key);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t site = sqlite3_column_int64(st, 0);
		ck_assert(site > 0 && site <= d->n_sites);
		int64_t stack = d->sites[site].stack;
		ck_assert(stack >= 0 && stack < MAX_STACKS);
		out->bytes[stack] += (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
}

/* The model's live set by holder stack, as its own records say (the
 * payload its hooks keep, model.c: the stack model_live_move gave a
 * mapped handle); the kinds it keeps apart from the device's count too,
 * as the writer's sites do. */
static void model_live(const struct model *m, struct by_stack *out)
{
	const struct trace_live_alloc *a;
	memset(out, 0, sizeof(*out));
	for (size_t pos = 0; (a = trace_live_next(&m->live, &pos));) {
		const struct model_live *rec = trace_live_payload(a);
		ck_assert(rec->stack >= 0 && rec->stack < MAX_STACKS);
		out->bytes[rec->stack] += rec->bytes;
	}
}

static uint64_t total(const struct by_stack *b)
{
	uint64_t t = 0;
	for (int i = 0; i < MAX_STACKS; i++)
		t += b->bytes[i];
	return t;
}

/* The live bytes must be equal at once; which stack holds them is
 * checked at the end, so that a case fails first on what is live. */
static void compare(struct diff *d, const struct by_stack *w, const struct by_stack *r,
		    const char *what)
{
	ck_assert_msg(total(w) == total(r),
		      "%s: %s: %" PRIu64 " bytes in the library, %" PRIu64 " in the reporter",
		      d->where, what, total(w), total(r));
	for (int i = 0; i < MAX_STACKS && !d->holder_diff[0]; i++) {
		if (w->bytes[i] != r->bytes[i])
			snprintf(d->holder_diff, sizeof(d->holder_diff),
				 "%s: %s: stack %d holds %" PRIu64 " bytes in the library, %" PRIu64
				 " in the reporter",
				 d->where, what, i, w->bytes[i], r->bytes[i]);
	}
}

/* One event to both, then the live sets compared. */
static void feed(struct diff *d, const struct step *s)
{
	struct by_stack w, r;
	d->seq++;
	to_writer(d, s);
	to_model(d, s);
	/* the writer's live set, by site, at a mark */
	d->seq++;
	struct mt_event mark;
	memset(&mark, 0, sizeof(mark));
	mark.kind = MT_EV_MARK;
	struct mt_live_row row;
	ck_assert(mt_live_event(d->live, d->seq, d->seq * 10, &mark, &row));
	writer_rows(d, "SELECT site, bytes FROM live_at_mark WHERE mark = ?", (int64_t)d->seq, &w);
	model_live(&d->m, &r);
	compare(d, &w, &r, "live");
}

/* At the end: the peak and what each stack held at it. */
static void finish(struct diff *d)
{
	struct by_stack w, r;
	ck_assert(mt_live_commit(d->live));
	model_finish(&d->m);
	sqlite3_stmt *st;
	uint64_t peak = 0;
	ck_assert_int_eq(sqlite3_prepare_v2(d->db, "SELECT value FROM meta WHERE key='peak_bytes'",
					    -1, &st, NULL),
			 SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		peak = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	ck_assert_msg(peak == d->m.device.peak_bytes,
		      "%s: peak %" PRIu64 " in the library, %" PRIu64 " in the reporter", d->where,
		      peak, d->m.device.peak_bytes);
	writer_rows(d, "SELECT site, bytes FROM live_at_peak WHERE ?1 = ?1", 0, &w);
	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < d->m.n_sites; i++) {
		const struct model_site *s = &d->m.sites[i];
		ck_assert(s->stack >= 0 && s->stack < MAX_STACKS);
		r.bytes[s->stack] += s->at_peak;
	}
	compare(d, &w, &r, "at the peak");
	ck_assert_msg(!d->holder_diff[0], "%s", d->holder_diff);
}

static void run_steps(const char *name, const struct step *steps, size_t n)
{
	struct diff d;
	diff_open(&d);
	for (size_t i = 0; i < n; i++) {
		snprintf(d.where, sizeof(d.where), "%s, after event %zu", name, i + 1);
		feed(&d, &steps[i]);
	}
	snprintf(d.where, sizeof(d.where), "%s, at the end", name);
	finish(&d);
	diff_close(&d);
}

#define RUN(name, ...)                                                                   \
	do {                                                                             \
		const struct step steps_[] = { __VA_ARGS__ };                            \
		run_steps(name, steps_, sizeof(steps_) / sizeof(steps_[0]));             \
	} while (0)

#define ALLOC(a, b, m, st) { MT_EV_ALLOC, a, b, m, st, 0 }
#define FREE(a) { MT_EV_FREE, a, 0, 0, 9, 0 }
#define FREE_ERROR(a) { MT_EV_FREE_ERROR, a, 0, 0, 9, 0 }
#define MAP(va, b, h, st) { MT_EV_MAP, va, b, 0, st, h }
#define UNMAP(va) { MT_EV_UNMAP, va, 0, 0, 9, 0 }
#define UNMAP_ERROR(va) { MT_EV_UNMAP_ERROR, va, 0, 0, 9, 0 }

#define X 0x7f0000001000ull
#define V 0x7f0000200000ull
#define H1 0x51ull
#define H2 0x52ull

/* A: a failed free after the address was reused puts back the newest. */
START_TEST(case_a)
{
	RUN("A", ALLOC(X, 100, MT_MEM_DEVICE, 1), FREE(X), ALLOC(X, 200, MT_MEM_DEVICE, 2), FREE(X),
	    FREE_ERROR(X));
}
END_TEST

/* B: a failed release of a mapped handle: the memory stays at the unmap. */
START_TEST(case_b)
{
	RUN("B", ALLOC(H1, 1000, MT_MEM_VMM_PHYSICAL, 3), MAP(V, 1000, H1, 5), FREE(H1),
	    FREE_ERROR(H1), UNMAP(V));
}
END_TEST

/* C: a failed unmap puts the mapping back, and the memory it freed. */
START_TEST(case_c)
{
	RUN("C", ALLOC(H1, 1000, MT_MEM_VMM_PHYSICAL, 3), MAP(V, 1000, H1, 5), FREE(H1), UNMAP(V),
	    UNMAP_ERROR(V));
}
END_TEST

/* D: a mapping over a mapped address is an unmap not seen. */
START_TEST(case_d)
{
	RUN("D", ALLOC(H1, 1000, MT_MEM_VMM_PHYSICAL, 3), MAP(V, 1000, H1, 5), FREE(H1),
	    ALLOC(H2, 1000, MT_MEM_VMM_PHYSICAL, 4), MAP(V, 1000, H2, 6), UNMAP(V), FREE(H2));
}
END_TEST

/* E: graph memory is not live until a launch (the reporter's graphs). */
START_TEST(case_e)
{
	RUN("E", ALLOC(0x7e0000000000ull, 4096, MT_MEM_GRAPH, 7), ALLOC(X, 10, MT_MEM_DEVICE, 1));
}
END_TEST

/* F: a mapped handle is held by the stack that mapped it. */
START_TEST(case_f)
{
	RUN("F", ALLOC(H1, 2u << 20, MT_MEM_VMM_PHYSICAL, 3), MAP(V, 2u << 20, H1, 5));
	RUN("F released", ALLOC(H1, 2u << 20, MT_MEM_VMM_PHYSICAL, 3), MAP(V, 2u << 20, H1, 5),
	    FREE(H1), ALLOC(X, 100, MT_MEM_DEVICE, 1));
}
END_TEST

/* The kinds and routes of tests/sim: runtime and driver allocations,
 * async pools, managed, pinned host, arrays, IPC, host registration,
 * reserved address space with physical memory mapped into it twice. */
START_TEST(sim_routes)
{
	RUN("routes", ALLOC(0x1000, 1 << 20, MT_MEM_DEVICE, 1),
	    ALLOC(0x200000, 4096, MT_MEM_POOL, 2), ALLOC(0x300000, 8192, MT_MEM_MANAGED, 3),
	    ALLOC(0x400000, 512, MT_MEM_HOST_PINNED, 4), ALLOC(0x61, 65536, MT_MEM_ARRAY, 5),
	    ALLOC(0x500000, 1 << 20, MT_MEM_IMPORTED, 6),
	    ALLOC(0x600000, 4096, MT_MEM_HOST_REGISTERED, 7),
	    ALLOC(0x700000, 8 << 20, MT_MEM_VMM_RESERVED, 8),
	    ALLOC(H1, 2 << 20, MT_MEM_VMM_PHYSICAL, 9), MAP(0x700000, 2 << 20, H1, 10),
	    MAP(0x900000, 2 << 20, H1, 11), FREE(H1), FREE(H1), UNMAP(0x700000),
	    FREE(0x200000), FREE(0x300000), FREE(0x61), UNMAP(0x900000), FREE(0x700000),
	    FREE(0x400000), FREE(0x500000), FREE(0x600000), FREE(0x1000), FREE(0x1000),
	    FREE_ERROR(0x1000), ALLOC(0x1000, 64, MT_MEM_DEVICE, 12), FREE_ERROR(0x1000));
}
END_TEST

/* Random sequences: addresses, handles and mappings drawn from small
 * pools, so that reuse, frees not seen and errors after reuse are common. */
static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

static struct step random_step(void)
{
	static const int kinds[] = { MT_MEM_DEVICE, MT_MEM_MANAGED, MT_MEM_POOL,
				     MT_MEM_HOST_PINNED, MT_MEM_ARRAY, MT_MEM_IMPORTED };
	uint64_t addr = 0x10000 * (1 + rnd(8)), handle = 0x51 + rnd(4), va = V + 0x200000 * rnd(4);
	uint64_t bytes = 256 * (1 + rnd(64));
	int64_t stack = 1 + rnd(12);
	switch (rnd(14)) {
	case 0:
	case 1:
	case 2:
		return (struct step){ MT_EV_ALLOC, addr, bytes, kinds[rnd(6)], stack, 0 };
	case 3:
	case 4:
		return (struct step)FREE(addr);
	case 5:
		return (struct step)FREE_ERROR(rnd(2) ? addr : handle);
	case 6:
		return (struct step){ MT_EV_ALLOC, handle, bytes, MT_MEM_VMM_PHYSICAL, stack, 0 };
	case 7:
	case 8:
		return (struct step){ MT_EV_MAP, va, bytes, 0, stack, handle };
	case 9:
		return (struct step)FREE(handle);
	case 10:
		return (struct step)UNMAP(va);
	case 11:
		return (struct step)UNMAP_ERROR(va);
	case 12:
		/* graph memory, at addresses of its own (the reporter's graphs
		 * know them; the live set holds none) */
		return (struct step){ MT_EV_ALLOC, 0x7e0000000000ull + addr, bytes, MT_MEM_GRAPH,
				      stack, 0 };
	default:
		return (struct step){ MT_EV_ALLOC, addr, bytes, MT_MEM_DEVICE, stack, 0 };
	}
}

START_TEST(random_sequences)
{
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct diff d;
		rnd_state = seed * 0x9e3779b97f4a7c15ull;
		diff_open(&d);
		for (int i = 0; i < 300; i++) {
			struct step s = random_step();
			snprintf(d.where, sizeof(d.where), "seed %" PRIu64 ", event %d (kind %d at %#" PRIx64 ")",
				 seed, i + 1, s.kind, s.address);
			feed(&d, &s);
		}
		snprintf(d.where, sizeof(d.where), "seed %" PRIu64 ", at the end", seed);
		finish(&d);
		diff_close(&d);
	}
}
END_TEST

static Suite *live_diff_suite(void)
{
	Suite *s = suite_create("live-diff");
	TCase *tc = tcase_create("cases");
	tcase_add_test(tc, case_a);
	tcase_add_test(tc, case_b);
	tcase_add_test(tc, case_c);
	tcase_add_test(tc, case_d);
	tcase_add_test(tc, case_e);
	tcase_add_test(tc, case_f);
	tcase_add_test(tc, sim_routes);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	tc = tcase_create("random");
	tcase_add_test(tc, random_sequences);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(live_diff_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
