/* trace/trace-live-set.c's address index (its own compact map, not
 * util-map's): allocations and frees at colliding addresses against a
 * plain array as the oracle, and out of memory (an allocation that
 * cannot be had returns false and the set keeps what it held). The
 * live-diff suite cannot see a fault here: both halves share the set. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace-live-set.h"

struct tag {
	uint64_t k, version;
};

static const struct trace_live_hooks no_hooks = { 0 };

static uint64_t address_of(uint64_t k)
{
	/* a caching allocator's addresses: multiples of 512 in one region */
	return 0x7f0000000000ULL + k * 512;
}

static void alloc_k(struct trace_live_set *s, uint64_t k, uint64_t bytes, uint64_t version)
{
	const struct trace_live_alloc a = {
		.seq = version,
		.address = address_of(k),
		.bytes = bytes,
		.mem = MT_MEM_DEVICE,
	};
	const struct tag t = { k, version };

	ck_assert(trace_live_alloc(s, &a, &t));
}

/* Every key against the oracle: lookups, the count, one visit each. */
static void check_oracle(struct trace_live_set *s, const uint64_t *bytes, const uint64_t *version,
			 size_t n)
{
	size_t live = 0, seen = 0;
	uint64_t sum = 0;
	struct trace_live_alloc *a;

	for (uint64_t k = 0; k < n; k++) {
		a = trace_live_get(s, address_of(k));
		ck_assert_msg((a != NULL) == (bytes[k] != 0), "key %llu", (unsigned long long)k);
		if (!a)
			continue;
		ck_assert_uint_eq(a->bytes, bytes[k]);
		ck_assert_uint_eq(((struct tag *)trace_live_payload(a))->version, version[k]);
		live++;
		sum += bytes[k];
	}
	ck_assert_uint_eq(trace_live_count(s), live);
	ck_assert_uint_eq(s->peak.live, sum);
	for (size_t pos = 0; (a = trace_live_next(s, &pos)); seen++) {
		const struct tag *t = trace_live_payload(a);

		ck_assert_uint_eq(a->address, address_of(t->k));
		ck_assert_uint_eq(bytes[t->k], a->bytes);
	}
	ck_assert_uint_eq(seen, live);
}

/* Random allocations (a live address allocated again is a free not
 * seen), frees and frees of what is not live, the live set growing to
 * thousands and shrinking to a few, so that the index grows, wraps its
 * probes around its end and shifts entries back at each removal. */
START_TEST(churn_matches_oracle)
{
	enum { N = 6000 };
	static uint64_t bytes[N], version[N];
	struct trace_live_set s;
	struct trace_live_alloc out;
	uint64_t v = 0;

	ck_assert(trace_live_init_payload(&s, &no_hooks, sizeof(struct tag)));
	srand(7);
	for (int round = 0; round < 300000; round++) {
		/* phases: mostly allocations, then mostly frees */
		int alloc_share = (round / 20000) % 2 ? 1 : 3;
		uint64_t k = (uint64_t)(rand() % N);

		if (rand() % 4 < alloc_share) {
			bytes[k] = (uint64_t)(rand() % 4096) + 1;
			version[k] = ++v;
			alloc_k(&s, k, bytes[k], v);
		} else {
			enum trace_live_free r = trace_live_free(&s, address_of(k), &out);

			ck_assert_int_eq(r, bytes[k] ? TRACE_LIVE_FREE_DONE
						     : TRACE_LIVE_FREE_UNMATCHED);
			if (bytes[k]) {
				ck_assert_uint_eq(out.address, address_of(k));
				ck_assert_uint_eq(out.bytes, bytes[k]);
			}
			bytes[k] = 0;
		}
		if (round % 25000 == 0)
			check_oracle(&s, bytes, version, N);
	}
	check_oracle(&s, bytes, version, N);
	for (uint64_t k = 0; k < N; k++) {
		if (bytes[k])
			ck_assert_int_eq(trace_live_free(&s, address_of(k), &out),
					 TRACE_LIVE_FREE_DONE);
		bytes[k] = 0;
	}
	check_oracle(&s, bytes, version, N);
	trace_live_fini(&s);
}
END_TEST

/* The address space limited to a little more than the process uses, in
 * a child of its own: allocations until one cannot be recorded. It
 * returns false (the process goes on) and every allocation recorded
 * before is still there. Not under a sanitizer (tests/unit/test-map.c
 * says why). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LIVE_TEST_RLIMIT 0
#else
#define LIVE_TEST_RLIMIT 1
#endif

/* The address space from now on: what the process uses, and room. */
static bool limit_address_space(rlim_t room)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%lu", &pages) != 1)
		return false;
	fclose(f);
	rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + room;
	struct rlimit rl = { limit, limit };
	return setrlimit(RLIMIT_AS, &rl) == 0;
}

/* prefill: allocations made and freed before the limit, so that the
 * slab has entries to spare and the index is the one that cannot grow
 * (its growth holds the old slots and twice as many new). */
static int fill_until_out_of_memory(uint64_t prefill)
{
	struct trace_live_set s;
	struct trace_live_alloc out;
	size_t index_cap;
	uint64_t n = 0;

	if (!trace_live_init(&s, &no_hooks))
		return 11;
	for (uint64_t k = 0; k < prefill; k++)
		alloc_k(&s, k, 1, k);
	for (uint64_t k = 0; k < prefill; k++)
		if (trace_live_free(&s, address_of(k), &out) != TRACE_LIVE_FREE_DONE)
			return 17;
	index_cap = s.by_address.cap;
	if (!limit_address_space(prefill ? 8u << 20 : 64u << 20))
		return 11;
	for (;; n++) {
		const struct trace_live_alloc a = {
			.seq = n,
			.address = address_of(n),
			.bytes = n + 1,
			.mem = MT_MEM_DEVICE,
		};
		if (n == 1u << 26)
			return 12; /* never ran out: the limit did not hold */
		if (!trace_live_alloc(&s, &a, NULL))
			break;
	}
	if (trace_live_count(&s) != n || trace_live_get(&s, address_of(n)))
		return 13;
	if (prefill && (s.by_address.cap != index_cap || n < prefill / 2))
		return 18; /* not the index's growth that failed */
	for (uint64_t k = 0; k < n; k++) {
		const struct trace_live_alloc *a = trace_live_get(&s, address_of(k));
		if (!a || a->bytes != k + 1)
			return 14;
	}
	for (uint64_t k = 0; k < n; k++)
		if (trace_live_free(&s, address_of(k), &out) != TRACE_LIVE_FREE_DONE)
			return 15;
	if (trace_live_count(&s) != 0)
		return 16;
	trace_live_fini(&s);
	return 0;
}

/* The slab's growth fails first (from empty), or the index's (after
 * 3/4 of 2^20 allocations made and freed: the index at 2^20 slots, the
 * slab with as many entries). */
START_TEST(out_of_memory_returns_false)
{
	const uint64_t prefill[] = { 0, 786432 };

	if (!LIVE_TEST_RLIMIT)
		return;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fill_until_out_of_memory(prefill[_i]));
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "the child did not exit (status %d)", status);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

Suite *live_set_suite(void);
Suite *live_set_suite(void)
{
	Suite *s = suite_create("live-set");
	TCase *tc = tcase_create("live-set");
	tcase_add_test(tc, churn_matches_oracle);
	tcase_add_loop_test(tc, out_of_memory_returns_false, 0, 2);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
