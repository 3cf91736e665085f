/* How python.c splices Python frames into a native stack, without Python:
 * merge() fed made-up stacks, the evaluation loop a made-up address range,
 * the segments written by hand. (The real thing is checked end to end by
 * test_python.py on every interpreter.) python.c is included, so its
 * static functions are reachable; what it calls in other files is stubbed. */
#include "../../interpose/carry/python.c"

#include <stdarg.h>
#include <stdio.h>

void mt_log(enum mt_who who, const char *fmt, ...)
{
	(void)who;
	(void)fmt;
}

const struct mt_py_layout *mt_py_layout_find(unsigned major, unsigned minor)
{
	return NULL;
}

bool mt_py_names_init(void)
{
	return false;
}

uint64_t mt_py_names_id(const struct mt_py_types *t, uintptr_t code)
{
	return 0;
}

unsigned mt_py_names_line(const struct mt_py_types *t, uint64_t id, uintptr_t code,
			  int byte_offset)
{
	return 0;
}

bool mt_py_names_get(uint64_t id, const char **function, const char **file)
{
	return false;
}

int mt_py_str_utf8(const struct mt_py_types *t, uintptr_t obj, char *out, unsigned cap)
{
	return -1;
}

int mt_dl_iterate_phdr(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data)
{
	return dl_iterate_phdr(callback, data);
}

/* Native frames are small numbers, the loop's frames E (0x1000 in the
 * range), Python frames tokens MT_PYFRAME_BIT | n. */
#define E 0x1001u
#define P(n) (MT_PYFRAME_BIT | (n))

static int failures;

/* segments: per segment its number of Python frames, tokens P(1), P(2)... */
static void check(const char *what, const uintptr_t *in, unsigned n, const unsigned *segs,
		  unsigned nseg, unsigned max, const uintptr_t *want, unsigned nwant)
{
	struct pywalk w = { .ntok = 0, .nseg = 0 };
	for (unsigned s = 0; s < nseg; s++) {
		for (unsigned k = 0; k < segs[s]; k++, w.ntok++)
			w.tok[w.ntok] = P(w.ntok + 1);
		w.end[w.nseg++] = (uint16_t)w.ntok;
	}
	/* As the walk counts them, the innermost segments of one token each
	 * (when all are, the one-pass way), and none of them: both ways. */
	unsigned ones = 0;
	while (ones < nseg && segs[ones] == 1)
		ones++;
	for (int way = 0; way <= (ones > 0); way++) {
		w.ones = way ? ones : 0;
		uintptr_t ips[64] = { 0 };
		for (unsigned i = 0; i < n; i++)
			ips[i] = in[i];
		unsigned got = merge(ips, n, max, &w);
		bool ok = got == nwant;
		for (unsigned i = 0; ok && i < got; i++)
			ok = ips[i] == want[i];
		if (ok)
			continue;
		failures++;
		printf("FAIL %s (%u with one each): got %u frames:", what, w.ones, got);
		for (unsigned i = 0; i < got; i++)
			printf(" %#lx", (unsigned long)ips[i]);
		printf("\n");
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK(what, in, segs, max, want) \
	check(what, in, N(in), segs, N(segs), max, want, N(want))

int main(void)
{
	py.eval_lo = 0x1000;
	py.eval_hi = 0x1100;

	/* 3.8-3.10: one frame per loop frame */
	static const uintptr_t in1[] = { 1, 2, E, 3, E, 4, E, 5 };
	static const unsigned s1[] = { 1, 1, 1 };
	static const uintptr_t w1[] = { 1, 2, P(1), 3, P(2), 4, P(3), 5 };
	CHECK("one each", in1, s1, 64, w1);

	/* 3.11+: runs of frames per loop frame */
	static const unsigned s2[] = { 2, 1, 3 };
	static const uintptr_t w2[] = { 1, 2, P(1), P(2), 3, P(3), 4, P(4), P(5), P(6), 5 };
	CHECK("runs", in1, s2, 64, w2);

	/* the native stack cut short: the outer segments follow it, in order */
	static const uintptr_t in3[] = { 1, E, 2, E };
	static const unsigned s3[] = { 1, 2, 1, 1 };
	static const uintptr_t w3[] = { 1, P(1), 2, P(2), P(3), P(4), P(5) };
	CHECK("cut native stack", in3, s3, 64, w3);

	/* more loop frames than segments: the outer ones stay */
	static const unsigned s4[] = { 1 };
	static const uintptr_t w4[] = { 1, 2, P(1), 3, E, 4, E, 5 };
	CHECK("extra loop frames", in1, s4, 64, w4);

	/* an empty segment keeps its loop frame */
	static const unsigned s5[] = { 1, 0, 2 };
	static const uintptr_t w5[] = { 1, 2, P(1), 3, E, 4, P(2), P(3), 5 };
	CHECK("empty segment", in1, s5, 64, w5);

	/* no loop frame found (unknown range, or unwinding failed): at the end */
	static const uintptr_t in6[] = { 1, 2, 3 };
	static const unsigned s6[] = { 2 };
	static const uintptr_t w6[] = { 1, 2, 3, P(1), P(2) };
	CHECK("no loop frame", in6, s6, 64, w6);

	/* never more than max: the outermost are dropped */
	static const uintptr_t w7[] = { 1, 2, P(1), P(2), 3, P(3) };
	CHECK("max", in1, s2, 6, w7);
	static const uintptr_t w8[] = { 1, P(1), 2 };
	CHECK("max, cut", in3, s3, 3, w8);

	/* one each, the native stack cut short; and cut at max */
	static const unsigned s10[] = { 1, 1, 1, 1 };
	static const uintptr_t w10[] = { 1, P(1), 2, P(2), P(3), P(4) };
	CHECK("one each, cut native stack", in3, s10, 64, w10);
	static const uintptr_t w11[] = { 1, P(1), 2, P(2), P(3) };
	CHECK("one each, max", in3, s10, 5, w11);
	static const uintptr_t w12[] = { 1, P(1), 2 };
	CHECK("one each, max inside the native stack", in3, s10, 3, w12);

	/* one each first, then runs: the first ones stay in place */
	static const uintptr_t in13[] = { 1, E, 2, E, 3, E, 4, E, 5 };
	static const unsigned s13[] = { 1, 1, 3, 1 };
	static const uintptr_t w13[] = { 1, P(1), 2, P(2), 3, P(3), P(4), P(5), 4, P(6), 5 };
	CHECK("one each, then runs", in13, s13, 64, w13);
	static const uintptr_t w14[] = { 1, P(1), 2, P(2), 3, P(3), P(4) };
	CHECK("one each, then runs, max", in13, s13, 7, w14);
	static const uintptr_t w15[] = { 1, P(1), 2 };
	CHECK("one each, then runs, max among the ones", in13, s13, 3, w15);
	static const unsigned s16[] = { 1, 1, 0, 2 };
	static const uintptr_t w16[] = { 1, P(1), 2, P(2), 3, E, 4, P(3), P(4), 5 };
	CHECK("one each, then an empty segment", in13, s16, 64, w16);

	/* a return address one past the loop's end is still its call */
	static const uintptr_t in9[] = { 1, 0x1100, 0x1101 };
	static const unsigned s9[] = { 1 };
	static const uintptr_t w9[] = { 1, P(1), 0x1101 };
	CHECK("range ends", in9, s9, 64, w9);

	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
