/* python.c's memo of frames (code object, instruction -> token), without
 * Python: made-up frames and code objects laid out with each version's
 * row of python-layout.c, walked twice and more, changed in between the
 * ways a live interpreter changes them. Every walk's tokens must be what
 * reading each frame afresh gives; the names table (stubbed here) must not
 * be asked again for a frame the memo knows. (test_python.py checks the
 * same end to end on every interpreter installed.) python.c is included, so
 * its static functions are reachable. */
#include "../../interpose/carry/python.c"
#include "../../interpose/carry/python-layout.c"

#include <stdarg.h>
#include <stdio.h>

void mt_log(enum mt_who who, const char *fmt, ...)
{
	(void)who;
	(void)fmt;
}

bool mt_py_names_init(void)
{
	return true;
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

/* The names stub: a code object's id is the index + 1 of its name object
 * in names[]; the line of byte offset b is 1000 + b. */
#define NNAMES 16
static _Alignas(16) uintptr_t names[NNAMES][4];
static _Alignas(16) uintptr_t files[2][4];
static _Alignas(16) uintptr_t code_type[8];
static unsigned id_calls, line_calls;

static uintptr_t name_of(unsigned k)
{
	return (uintptr_t)names[k];
}

uint64_t mt_py_names_id(const struct mt_py_types *t, uintptr_t code)
{
	(void)t;
	id_calls++;
	uintptr_t name = *(const uintptr_t *)(code + (uintptr_t)py.name_off);
	if (name < (uintptr_t)names[0] || name >= (uintptr_t)names[NNAMES])
		return 0;
	return (name - (uintptr_t)names[0]) / sizeof(names[0]) + 1;
}

unsigned mt_py_names_line(const struct mt_py_types *t, uint64_t id, uintptr_t code,
			  int byte_offset)
{
	(void)t;
	(void)id;
	(void)code;
	line_calls++;
	return 1000 + (unsigned)byte_offset;
}

/* ---- made-up objects ---- */

#define NCODES 8
#define CODE_BYTES 2048
#define NFRAMES 320
#define FRAME_BYTES 128

static _Alignas(16) unsigned char codes[NCODES][CODE_BYTES];
static _Alignas(16) unsigned char frames[NFRAMES][FRAME_BYTES];
static const struct mt_py_layout *L;
static int failures;

static void set_ptr(void *base, int off, uintptr_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

static void set_i32(void *base, int off, int32_t v)
{
	memcpy((char *)base + off, &v, sizeof(v));
}

/* Code object c named names[name], first line 10 + name. */
static uintptr_t make_code(unsigned c, unsigned name)
{
	memset(codes[c], 0, CODE_BYTES);
	set_ptr(codes[c], 8, (uintptr_t)code_type);
	set_ptr(codes[c], py.name_off, name_of(name));
	set_ptr(codes[c], L->code_filename, (uintptr_t)files[0]);
	set_i32(codes[c], L->code_firstlineno, 10 + (int32_t)name);
	return (uintptr_t)codes[c];
}

/* Frame f runs code at byte offset off (an owner for 3.11+), called by
 * back (0: the outermost). */
static uintptr_t make_frame(unsigned f, uintptr_t code, int off, int owner, uintptr_t back)
{
	memset(frames[f], 0, FRAME_BYTES);
	set_ptr(frames[f], L->frame_back, back);
	set_ptr(frames[f], L->frame_code, code);
	if (L->frame_kind == MT_PY_FRAME_OBJECT) {
		set_i32(frames[f], L->frame_instr, off / L->lasti_scale);
	} else {
		uintptr_t instr = code + (uintptr_t)L->code_adaptive + (uintptr_t)off;
		set_ptr(frames[f], L->frame_instr, instr);
		frames[f][L->frame_owner] = (unsigned char)owner;
	}
	return (uintptr_t)frames[f];
}

/* What a frame becomes when read afresh, without the memo. */
static uint64_t expected_token(uintptr_t f)
{
	uintptr_t code = load_ptr(f, L->frame_code);
	if (!is_code(code))
		return 0;
	int off;
	if (L->frame_kind == MT_PY_FRAME_OBJECT) {
		off = *(const int *)(f + (uintptr_t)L->frame_instr) * L->lasti_scale;
	} else {
		off = (int)(load_ptr(f, L->frame_instr) - (code + (uintptr_t)L->code_adaptive));
		int first = *(const int *)(code + (uintptr_t)L->code_firsttraceable);
		int owner = *(const signed char *)(f + (uintptr_t)L->frame_owner);
		if (owner != L->owner_generator && off < first * L->lasti_scale)
			return 0;
	}
	uintptr_t name = load_ptr(code, py.name_off);
	if (name < (uintptr_t)names[0] || name >= (uintptr_t)names[NNAMES])
		return 0;
	uint64_t id = (name - (uintptr_t)names[0]) / sizeof(names[0]) + 1;
	return MT_PYFRAME_BIT | id << MT_PYFRAME_LINE_BITS | (1000 + (unsigned)off);
}

/* Walks the chain from f and compares with each frame read afresh; calls:
 * how many frames the names table must have been asked about (-1: any). */
static void walk_check(const char *what, uintptr_t f, int calls)
{
	uint64_t want[MT_PY_MAX_FRAMES];
	unsigned nwant = 0;
	for (uintptr_t g = f; g && nwant < MT_PY_MAX_FRAMES; g = load_ptr(g, L->frame_back)) {
		uint64_t t = expected_token(g);
		if (t)
			want[nwant++] = t;
	}
	unsigned ids = id_calls;
	struct pywalk w = { .ntok = 0, .nseg = 0 };
	if (L->frame_kind == MT_PY_FRAME_OBJECT)
		walk_frame_objects(f, &w);
	else
		walk_interpreter_frames(f, &w);
	bool ok = w.ntok == nwant && !memcmp(w.tok, want, sizeof(want[0]) * nwant);
	if (ok && calls >= 0 && id_calls - ids != (unsigned)calls) {
		fprintf(stderr, "3.%u %s: the names table was asked %u times, not %d\n",
			L->minor, what, id_calls - ids, calls);
		failures++;
	}
	if (!ok) {
		fprintf(stderr, "3.%u %s: %u tokens, want %u\n", L->minor, what, w.ntok, nwant);
		for (unsigned i = 0; i < w.ntok || i < nwant; i++)
			fprintf(stderr, "  %3u got %#llx want %#llx\n", i,
				i < w.ntok ? (unsigned long long)w.tok[i] : 0ull,
				i < nwant ? (unsigned long long)want[i] : 0ull);
		failures++;
	}
}

static void test_version(unsigned minor)
{
	L = mt_py_layout_find(3, minor);
	if (!L) {
		fprintf(stderr, "3.%u: no layout\n", minor);
		failures++;
		return;
	}
	py.types.layout = L;
	py.types.code_type = (uintptr_t)code_type;
	py.name_off = L->code_qualname >= 0 ? L->code_qualname : L->code_name;
	memset(memo, 0, sizeof(memo));
	const int thread = 0, gen = L->owner_generator;

	/* A chain main -> outer -> leaf, walked twice: the second walk is
	 * all memo. */
	uintptr_t c1 = make_code(0, 1), c2 = make_code(1, 2), c3 = make_code(2, 3);
	uintptr_t f2 = make_frame(2, c3, 30, thread, 0);
	uintptr_t f1 = make_frame(1, c2, 20, thread, f2);
	uintptr_t f0 = make_frame(0, c1, 10, thread, f1);
	walk_check("first walk", f0, 3);
	walk_check("same stack", f0, 0);

	/* The same frame moves on in the same function: another line. */
	make_frame(0, c1, 14, thread, f1);
	walk_check("same frame, other instruction", f0, 1);
	make_frame(0, c1, 10, thread, f1);
	walk_check("same frame, back to the first instruction", f0, 0);

	/* The parent moves on to another call, from the same frame address
	 * with the same code (a loop calling the same function from two
	 * lines). */
	make_frame(1, c2, 24, thread, f2);
	walk_check("parent at another call", f0, 1);

	/* The leaf returned and a frame of another function took its place
	 * (same address, same caller). */
	uintptr_t c4 = make_code(3, 4);
	make_frame(0, c4, 10, thread, f1);
	walk_check("frame address reused by another function", f0, 1);

	/* A code object freed and another made at its address, its frame at
	 * the same place with the same instruction: the key matches, the
	 * identity does not. */
	make_frame(0, c1, 10, thread, f1);
	walk_check("back to the first function", f0, 0);
	set_ptr(codes[0], py.name_off, name_of(5));
	walk_check("code object replaced: another name", f0, 1);
	set_ptr(codes[0], py.name_off, name_of(1));
	walk_check("code object replaced: the first name again", f0, 0);
	set_i32(codes[0], L->code_firstlineno, 99);
	walk_check("code object replaced: another first line", f0, 1);
	set_ptr(codes[0], L->code_filename, (uintptr_t)files[1]);
	walk_check("code object replaced: another file", f0, 1);
	set_ptr(codes[0], 8, (uintptr_t)files[0]);
	walk_check("not a code object any more", f0, 0);
	make_code(0, 1);
	walk_check("the first code object again", f0, -1);

	/* Recursion at changing depths, the outer frames the same. */
	uintptr_t c5 = make_code(4, 6);
	for (unsigned depth = 3, round = 0; round < 4; round++, depth = (depth * 5) % 11 + 1) {
		uintptr_t back = f1;
		for (unsigned d = 0; d < depth; d++)
			back = make_frame(10 + d, c5, 40, thread, back);
		uintptr_t leaf = make_frame(9, c5, 44, thread, back);
		char what[64];
		snprintf(what, sizeof(what), "recursion %u deep", depth + 1);
		walk_check(what, leaf, round == 0 ? 2 : 0);
	}

	/* Garbage where the code object should be: no token, no crash. */
	make_frame(0, 0, 0, thread, f1);
	walk_check("no code object", f0, 0);
	make_frame(0, 8, 0, thread, f1);
	walk_check("an implausible code object", f0, 0);

	if (L->frame_kind == MT_PY_FRAME_INTERP) {
		/* Not started (before _co_firsttraceable) unless a generator's:
		 * the same code and instruction, the token depends on the
		 * owner. */
		uintptr_t c6 = make_code(5, 7);
		set_i32(codes[5], L->code_firsttraceable, 4);
		make_frame(0, c6, 2, thread, f1);
		walk_check("not started", f0, 0);
		make_frame(0, c6, 2, gen, f1);
		walk_check("a generator's, at the same instruction", f0, 1);
		make_frame(0, c6, 2, thread, f1);
		walk_check("not started, again", f0, 0);
		make_frame(0, c6, 10, thread, f1);
		walk_check("started", f0, 1);
	}

	/* More keys than the memo holds: evictions, then the same again. */
	uintptr_t c7 = make_code(6, 8), back = 0;
	for (unsigned d = 0; d < 300; d++)
		back = make_frame(10 + d, c7, 2 * (int)d + 2, thread, back);
	walk_check("300 frames", back, -1);
	walk_check("300 frames again", back, -1);
}

int main(void)
{
	for (unsigned minor = 8; minor <= 13; minor++)
		test_version(minor);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
