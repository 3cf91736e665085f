/* Python frames of the calling thread, read without the GIL, spliced into
 * its native stack where the interpreter's evaluation frames are. The
 * contract is python.h; the design, the versions and the costs are in
 * docs/python.md.
 *
 * - The interpreter is found by its exported symbols, in the global scope
 *   or in a libpython3.* loaded privately, when the trace starts and then
 *   every RESCAN_EVERY calls on each thread until it is there.
 * - The calling thread's PyThreadState comes from
 *   PyGILState_GetThisThreadState(), a thread-local read that takes no
 *   lock and works while the thread has released the GIL.
 * - Its frame chain cannot change while the thread is inside our hook. We
 *   read it with the offsets of python-layout.c, and read only: no lock,
 *   no allocation, no reference count, no GIL.
 * - Each C call of _PyEval_EvalFrameDefault in the native stack runs one
 *   run of Python frames (one frame up to 3.10; up to an entry frame from
 *   3.11): those replace it, innermost first.
 * - What a frame becomes (its token) is remembered per thread, by code
 *   object and instruction: see "the memo" below. */
#include "python.h"
#include "core.h"
#include "carry.h"
#include "python-layout.h"
#include "python-names.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MT_PY_MAX_FRAMES 256 /* Python frames kept per stack */
#define MT_PY_MAX_VISITS 512 /* frames visited per stack, entry frames included */
#define RESCAN_EVERY 4096
#define LINE_MASK ((1ull << MT_PYFRAME_LINE_BITS) - 1)

typedef void *(*this_thread_state_fn)(void);
typedef int (*addr2line_fn)(void *code, int byte_offset);
typedef int (*finalizing_fn)(void);

/* Written once before py_state turns PY_READY (release), read after. */
static struct {
	struct mt_py_types types;
	this_thread_state_fn this_thread_state;
	finalizing_fn finalizing; /* NULL when the version has none */
	uintptr_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault; 0, 0 if unknown */
	int name_off; /* of the name python-names.c reads: co_qualname, else co_name */
	unsigned long (*type_flags)(void *type); /* PyType_GetFlags */
	uintptr_t tuple_type; /* &PyTuple_Type */
} py;

enum { PY_ABSENT, PY_READY, PY_UNSUPPORTED };
static _Atomic int py_state = PY_ABSENT;
static _Atomic int discovering;
static MT_TLS unsigned calls_without_python;

/* ---- finding the interpreter (not on the hot path) ---- */

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	if (strncmp(base, "libpython3.", strlen("libpython3.")) != 0)
		return 0;
	snprintf(data, MT_PATH_MAX, "%s", name);
	return 1;
}

/* A handle to look the interpreter's symbols up in: the global scope (a
 * python executable, static or linked with libpython; an embedding program
 * that loaded libpython with RTLD_GLOBAL), else a libpython3.* loaded
 * privately. The object is pinned so that it cannot be unloaded under us.
 * (RTLD_DEFAULT is NULL: the answer is the return value.) */
static bool python_handle(void **h)
{
	void *sym = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (sym) {
		Dl_info info;
		if (dladdr(sym, &info) && info.dli_fname && info.dli_fname[0])
			dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		*h = RTLD_DEFAULT;
		return true;
	}
	char path[MT_PATH_MAX] = "";
	mt_dl_iterate_phdr(find_libpython, path);
	*h = path[0] ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	return *h != NULL;
}

void *mt_python_real(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (fn)
		return fn;
	/* libpython loaded with RTLD_LOCAL (an embedding program): its own
	 * calls came here through the global scope, where this library is
	 * first, but RTLD_NEXT does not reach it */
	char path[MT_PATH_MAX] = "";
	mt_dl_iterate_phdr(find_libpython, path);
	void *h = path[0] ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL; /* pinned */
	return h ? dlsym(h, name) : NULL;
}

static bool python_version(void *h, unsigned *major, unsigned *minor)
{
	const unsigned long *hex = dlsym(h, "Py_Version"); /* 3.11+ */
	if (hex) {
		*major = (unsigned)(*hex >> 24 & 0xff);
		*minor = (unsigned)(*hex >> 16 & 0xff);
		return true;
	}
	const char *(*get)(void) = (const char *(*)(void))dlsym(h, "Py_GetVersion");
	return get && sscanf(get(), "%u.%u", major, minor) == 2;
}

/* The address range of the evaluation loop, to recognize its frames in
 * native stacks. Its size comes from the symbol table entry. */
static void find_eval_loop(void *h)
{
	void *f = dlsym(h, "_PyEval_EvalFrameDefault");
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!f || !dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		mt_log(MT_ENV, "Python's _PyEval_EvalFrameDefault has no size in the symbol "
			       "table; Python frames go at the end of each stack");
		return;
	}
	py.eval_lo = (uintptr_t)f;
	py.eval_hi = (uintptr_t)f + sym->st_size;
}

static int discover(void)
{
	void *h;
	unsigned major = 0, minor = 0;
	if (!python_handle(&h) || !python_version(h, &major, &minor))
		return PY_ABSENT;
	py.types.layout = mt_py_layout_find(major, minor);
	/* The free-threaded build (3.13t) lays objects out differently. */
	if (!py.types.layout || dlsym(h, "_Py_MergeZeroLocalRefcount")) {
		mt_log(MT_ENV, "Python %u.%u%s is not supported (3.8 to 3.13 are); stacks have "
			       "native frames only", major, minor,
		       py.types.layout ? " (free-threaded)" : "");
		return PY_UNSUPPORTED;
	}
	py.this_thread_state = (this_thread_state_fn)dlsym(h, "PyGILState_GetThisThreadState");
	py.types.addr2line = (addr2line_fn)dlsym(h, "PyCode_Addr2Line");
	py.finalizing = (finalizing_fn)dlsym(h, "Py_IsFinalizing"); /* 3.13+ */
	if (!py.finalizing)
		py.finalizing = (finalizing_fn)dlsym(h, "_Py_IsFinalizing");
	py.types.code_type = (uintptr_t)dlsym(h, "PyCode_Type");
	py.types.str_type = (uintptr_t)dlsym(h, "PyUnicode_Type");
	py.type_flags = (unsigned long (*)(void *))dlsym(h, "PyType_GetFlags");
	py.tuple_type = (uintptr_t)dlsym(h, "PyTuple_Type");
	if (!py.this_thread_state || !py.types.addr2line || !py.types.code_type ||
	    !py.types.str_type) {
		mt_log(MT_ENV, "Python %u.%u lacks the symbols memtrace reads frames with; stacks "
			       "have native frames only", major, minor);
		return PY_UNSUPPORTED;
	}
	if (!mt_py_names_init()) {
		mt_log(MT_ENV, "cannot reserve memory for Python function names; stacks have "
			       "native frames only");
		return PY_UNSUPPORTED;
	}
	find_eval_loop(h);
	py.name_off = py.types.layout->code_qualname >= 0 ? py.types.layout->code_qualname :
							    py.types.layout->code_name;
	mt_log(MT_INFO, "Python %u.%u: stacks get Python frames", major, minor);
	return PY_READY;
}

/* One thread at a time; the others go on without Python frames meanwhile. */
static void try_discover(void)
{
	if (atomic_exchange_explicit(&discovering, 1, memory_order_acquire))
		return;
	if (atomic_load_explicit(&py_state, memory_order_relaxed) == PY_ABSENT) {
		int s = discover();
		if (s != PY_ABSENT)
			atomic_store_explicit(&py_state, s, memory_order_release);
	}
	atomic_store_explicit(&discovering, 0, memory_order_release);
}

void mt_python_init(void)
{
	try_discover();
}

/* ---- reading the frame chain (hot path) ---- */

/* See python-names.c: a guard against a wrong layout, not a proof. */
static inline bool plausible(uintptr_t p)
{
	/* p >= 4096 && p < 2^47 && (p & 7) == 0, in one comparison: rotated
	 * right by 3, misaligned bits land on top. */
	uintptr_t q = p - 4096;
	return (q >> 3 | q << 61) < ((1ull << 47) - 4096) >> 3;
}

static inline uintptr_t load_ptr(uintptr_t base, int off)
{
	return *(const uintptr_t *)(base + (uintptr_t)off);
}

static inline bool is_code(uintptr_t code)
{
	return plausible(code) && load_ptr(code, 8) == py.types.code_type;
}

/* The Python frames of the thread, innermost first, cut into segments:
 * the frames one C call of the evaluation loop runs. */
struct pywalk {
	uint64_t tok[MT_PY_MAX_FRAMES];
	uint16_t end[MT_PY_MAX_VISITS + 1]; /* segment i: tok[end[i - 1] .. end[i]) */
	unsigned ntok, nseg;
	unsigned ones; /* segments 0 .. ones - 1 have one token each: tok[i] */
};

static uint64_t token(uintptr_t code, int byte_offset)
{
	uint64_t id = mt_py_names_id(&py.types, code);
	if (!id)
		return 0;
	unsigned line = mt_py_names_line(&py.types, id, code, byte_offset);
	return MT_PYFRAME_BIT | id << MT_PYFRAME_LINE_BITS | line;
}

/* ---- the memo ----
 *
 * A frame's token depends only on its code object (which names, which
 * line table) and where the frame is in it (the byte offset; and, from
 * 3.11, whether it has started, which depends on the owner too). So each
 * thread remembers the tokens it made last, keyed by (code object,
 * instruction): the frame's own address and its place in the chain play
 * no part, and every frame of the chain is still read on every event.
 * Between two allocations a frame may have returned and another taken its
 * place (frames are reused memory), a parent may have moved on to another
 * call, recursion may be deeper: whatever the frame now holds is looked
 * up afresh.
 *
 * What the key cannot see is a code object freed and another made at the
 * same address. So a hit also requires the object to still be a code
 * object with the same name and file objects and the same first line,
 * the identity python-names.c checks before reusing an entry: a memo hit
 * is exactly as sound as a hit in that table, without its hashing, its
 * shared slots and its line look-up.
 *
 * Two ways per set, the last used first. The memo is the thread's own:
 * the hook does not reenter on a thread, so no atomics. */

#define MEMO_SETS_LOG2 6
#define MEMO_SETS (1u << MEMO_SETS_LOG2)
/* Bits of where that are neither pointer bits nor lasti bits: */
#define MEMO_KEY (1ull << 55) /* in every key, so that an empty entry matches none */
#define MEMO_OWNER_SHIFT 56 /* 3.11+: the frame's owner (whether a generator's) */

struct memo_entry {
	uintptr_t code;
	/* The instruction pointer (3.11+) or lasti, the owner, MEMO_KEY; 0:
	 * an empty entry. */
	uintptr_t where;
	uintptr_t name, filename; /* the code object's identity when it was made */
	uint64_t tok; /* 0: the frame has no token (not started, names unreadable) */
	int32_t firstlineno;
	uint32_t pad;
};

static MT_TLS struct memo_entry memo[MEMO_SETS][2];

/* What a walk reads on every frame, copied out of py and the layout once
 * per walk: in locals, the compiler need not load them again after each
 * store into the walk or the memo (which it could not prove apart). */
struct hot {
	uintptr_t code_type;
	int name, filename, firstlineno; /* in the code object */
	int back, code, instr, owner, is_entry; /* in the frame */
	int owner_cstack, owner_generator;
};

static inline struct hot hot_offsets(void)
{
	const struct mt_py_layout *l = py.types.layout;
	return (struct hot){
		.code_type = py.types.code_type,
		.name = py.name_off,
		.filename = l->code_filename,
		.firstlineno = l->code_firstlineno,
		.back = l->frame_back,
		.code = l->frame_code,
		.instr = l->frame_instr,
		.owner = l->frame_owner,
		.is_entry = l->frame_is_entry,
		.owner_cstack = l->owner_cstack >= 0 ? l->owner_cstack : 256, /* none: no char */
		.owner_generator = l->owner_generator,
	};
}

static inline struct memo_entry *memo_set(uintptr_t code, uintptr_t where)
{
	return memo[((uint64_t)code * 31 + (uint64_t)where) * 0x9e3779b97f4a7c15ull >>
		    (64 - MEMO_SETS_LOG2)];
}

/* The object at the address of a memo entry's code object is still the
 * one the entry was made from. The address was checked (plausible, a code
 * object) when the entry was made. */
static inline bool same_code(const struct hot *h, const struct memo_entry *e, uintptr_t code)
{
	return load_ptr(code, 8) == h->code_type && load_ptr(code, h->name) == e->name &&
	       load_ptr(code, h->filename) == e->filename &&
	       *(const int32_t *)(code + (uintptr_t)h->firstlineno) == e->firstlineno;
}

/* The remembered entry for (code, where), made the most recently used of
 * its set; NULL when there is none. Reads nothing of code unless an entry
 * was made from that address. */
static inline const struct memo_entry *memo_find(const struct hot *h, uintptr_t code,
						 uintptr_t where)
{
	struct memo_entry *set = memo_set(code, where);
	if (set[0].code == code && set[0].where == where && same_code(h, &set[0], code))
		return &set[0];
	if (set[1].code == code && set[1].where == where && same_code(h, &set[1], code)) {
		struct memo_entry hit = set[1];
		set[1] = set[0];
		set[0] = hit;
		return &set[0];
	}
	return NULL;
}

/* Remembers tok for (code, where), code a plausible code object, in place
 * of its set's least recently used entry. Returns tok. */
static uint64_t memo_add(const struct hot *h, uintptr_t code, uintptr_t where, uint64_t tok)
{
	struct memo_entry *set = memo_set(code, where);
	set[1] = set[0];
	set[0] = (struct memo_entry){
		.code = code,
		.where = where,
		.name = load_ptr(code, h->name),
		.filename = load_ptr(code, h->filename),
		.firstlineno = *(const int32_t *)(code + (uintptr_t)h->firstlineno),
		.tok = tok,
	};
	return tok;
}

static inline void add(struct pywalk *w, uint64_t tok)
{
	if (tok && w->ntok < MT_PY_MAX_FRAMES)
		w->tok[w->ntok++] = tok;
}

static inline void close_segment(struct pywalk *w)
{
	if (w->ones == w->nseg && w->ntok == w->nseg + 1)
		w->ones++;
	w->end[w->nseg++] = (uint16_t)w->ntok;
}

/* 3.8-3.10: PyFrameObject, one per C call of the evaluation loop. */
static void walk_frame_objects(uintptr_t f, struct pywalk *w)
{
	const struct hot h = hot_offsets();
	const int scale = py.types.layout->lasti_scale;
	for (unsigned i = 0; i < MT_PY_MAX_FRAMES && plausible(f); i++) {
		uintptr_t code = load_ptr(f, h.code);
		int lasti = *(const int *)(f + (uintptr_t)h.instr);
		uintptr_t where = (uint32_t)lasti | MEMO_KEY;
		const struct memo_entry *e = memo_find(&h, code, where);
		if (e)
			add(w, e->tok);
		else if (is_code(code))
			add(w, memo_add(&h, code, where, token(code, lasti * scale)));
		w->end[w->nseg++] = (uint16_t)w->ntok; /* a segment a frame */
		f = load_ptr(f, h.back);
	}
	/* Each segment has one token or none: the ones up to the first empty
	 * one have one. */
	if (w->ntok == w->nseg)
		w->ones = w->nseg;
	else
		while (w->end[w->ones] == w->ones + 1)
			w->ones++;
}

/* A frame not in the memo (3.11+): its token, 0 if it has not started. */
static uint64_t interpreter_frame_token(uintptr_t code, uintptr_t instr, bool generator)
{
	const struct mt_py_layout *l = py.types.layout;
	intptr_t off = (intptr_t)(instr - (code + (uintptr_t)l->code_adaptive));
	int first = *(const int *)(code + (uintptr_t)l->code_firsttraceable);
	bool started = generator || off >= (intptr_t)first * l->lasti_scale;
	return started ? token(code, (int)off) : 0;
}

/* 3.11+: _PyInterpreterFrame. A C call of the evaluation loop runs the
 * frames up to its entry frame: 3.11 marks that frame is_entry, 3.12+
 * puts a frame owned by the C stack after it (marked_entry: which of the
 * two, a constant in each copy). Frames that have not started yet (before
 * _co_firsttraceable, like 3.13's __init__ shim) are left out, as
 * CPython's own tracebacks do. */
static inline __attribute__((always_inline)) void
walk_interpreter_frames_as(uintptr_t f, struct pywalk *w, const bool marked_entry)
{
	const struct hot h = hot_offsets();
	bool open = false;
	for (unsigned i = 0; i < MT_PY_MAX_VISITS && plausible(f); i++) {
		int owner = *(const signed char *)(f + (uintptr_t)h.owner);
		if (!marked_entry && owner == h.owner_cstack) {
			close_segment(w);
			open = false;
			f = load_ptr(f, h.back);
			continue;
		}
		uintptr_t code = load_ptr(f, h.code);
		uintptr_t instr = load_ptr(f, h.instr);
		uintptr_t where = instr | MEMO_KEY | (uint64_t)(uint8_t)owner << MEMO_OWNER_SHIFT;
		const struct memo_entry *e = memo_find(&h, code, where);
		if (e) {
			add(w, e->tok);
			open = true;
		} else if (is_code(code)) {
			bool generator = owner == h.owner_generator;
			add(w, memo_add(&h, code, where,
					interpreter_frame_token(code, instr, generator)));
			open = true;
		}
		if (marked_entry && *(const uint8_t *)(f + (uintptr_t)h.is_entry)) {
			close_segment(w);
			open = false;
		}
		f = load_ptr(f, h.back);
	}
	if (open)
		close_segment(w);
}

static void walk_interpreter_frames(uintptr_t f, struct pywalk *w)
{
	if (py.types.layout->frame_is_entry >= 0) /* 3.11 */
		walk_interpreter_frames_as(f, w, true);
	else /* 3.12+: owner_cstack */
		walk_interpreter_frames_as(f, w, false);
}

static uintptr_t innermost_frame(uintptr_t tstate)
{
	const struct mt_py_layout *l = py.types.layout;
	uintptr_t p = load_ptr(tstate, l->tstate_frame);
	if (l->cframe_frame >= 0) /* 3.11, 3.12: through tstate->cframe */
		p = plausible(p) ? load_ptr(p, l->cframe_frame) : 0;
	return p;
}

/* ---- splicing ---- */

/* ip is a return address; lo, size: the loop's range (py.eval_lo, and
 * py.eval_hi - py.eval_lo, read once by the caller). */
static inline bool in_eval_loop(uintptr_t ip, uintptr_t lo, uintptr_t size)
{
	return ip - 1 - lo < size;
}

static inline unsigned seg_from(const struct pywalk *w, unsigned seg)
{
	return seg ? w->end[seg - 1] : 0;
}

/* ips[dst .. dst + cnt) = from[0 .. cnt), cut at max; from may overlap ips
 * at or before dst (memmove). Often a run is already in place (on
 * 3.8-3.10 each loop frame becomes one Python frame: nothing moves) or is
 * one frame. */
static inline void place(uintptr_t *ips, unsigned dst, unsigned max, const uintptr_t *from,
			 unsigned cnt)
{
	if (dst >= max || from == ips + dst)
		return;
	if (cnt > max - dst)
		cnt = max - dst;
	if (cnt == 1)
		ips[dst] = from[0];
	else if (cnt)
		memmove(ips + dst, from, sizeof(*ips) * cnt);
}

/* The i-th frame of the evaluation loop (innermost first) becomes the i-th
 * segment. Segments left over (the native stack was cut at its depth, or
 * the unwinder stopped early) go after the last native frame, in order;
 * loop frames left over (or whose segment is empty) stay as they are.
 *
 * In place, without scratch: the first pass finds the loop frames that
 * get a segment and the length, the second fills from the end, a run of
 * native frames or a segment at a time. Every frame lands at or after its
 * old index (a segment takes at least the one slot it replaces), on slots
 * already read. */
static unsigned merge(uintptr_t *ips, unsigned n, unsigned max, const struct pywalk *w)
{
	_Static_assert(sizeof(uintptr_t) == sizeof(w->tok[0]), "tokens are stack entries");
	const uintptr_t lo = py.eval_lo, size = py.eval_hi - py.eval_lo;
	/* The innermost segments of one token each (all of them on 3.8-3.10,
	 * and on 3.11+ when the calls went through C, as with f(*args)) move
	 * nothing: each token takes its loop frame's place at once. */
	uint16_t at_loop[MT_PY_MAX_VISITS + 1]; /* where the other matched loop frames are */
	unsigned matched = 0;
	for (unsigned i = 0; i < n && matched < w->nseg; i++) {
		if (in_eval_loop(ips[i], lo, size)) {
			if (matched < w->ones)
				ips[i] = (uintptr_t)w->tok[matched];
			at_loop[matched++] = (uint16_t)i;
		}
	}
	unsigned inner = w->ones < matched ? w->ones : matched, len = n;
	for (unsigned s = inner; s < matched; s++) {
		unsigned k = w->end[s] - seg_from(w, s);
		len += k ? k - 1 : 0;
	}
	unsigned left = w->ntok - seg_from(w, matched);
	len += left;
	unsigned at = len - left, src_end = n;
	place(ips, at, max, (const uintptr_t *)&w->tok[seg_from(w, matched)], left);
	for (unsigned s = matched; s-- > inner;) {
		unsigned loop = at_loop[s], run = src_end - (loop + 1);
		at -= run;
		place(ips, at, max, ips + loop + 1, run);
		unsigned from = seg_from(w, s), k = w->end[s] - from;
		if (k) {
			at -= k;
			place(ips, at, max, (const uintptr_t *)&w->tok[from], k);
		} else {
			at -= 1;
			place(ips, at, max, ips + loop, 1);
		}
		src_end = loop;
	}
	/* ips[0 .. src_end) stay where they are (at == src_end) */
	return len < max ? len : max;
}

/* The walk, out of line: its frame (the walk's 4 KiB of tokens) is not
 * set up for a process without Python. */
static __attribute__((noinline)) unsigned splice_ready(uintptr_t *ips, unsigned n, unsigned max)
{
	uintptr_t tstate = (uintptr_t)py.this_thread_state();
	if (!tstate || !plausible(tstate))
		return n; /* a thread Python does not know */
	if (py.finalizing && py.finalizing())
		return n; /* other threads' states may be freed under them */
	struct pywalk w;
	w.ntok = w.nseg = 0;
	w.ones = 0;
	uintptr_t f = innermost_frame(tstate);
	if (py.types.layout->frame_kind == MT_PY_FRAME_OBJECT)
		walk_frame_objects(f, &w);
	else
		walk_interpreter_frames(f, &w);
	return w.ntok ? merge(ips, n, max, &w) : n;
}

/* ---- frames borrowed from a thread that launched the work ----
 *
 * (python-launch.c) The launching thread's frame chain, from the frame it
 * was running when it entered the framework, cannot change while it is
 * inside that call: every frame from there down is a caller that waits
 * for the call to return, and python-launch.c keeps the thread from
 * returning while another thread reads them. Frames it may push above
 * that one (a callback into Python) are never read. */

uintptr_t mt_python_this_frame(void)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY)
		return 0;
	uintptr_t tstate = (uintptr_t)py.this_thread_state();
	if (!tstate || !plausible(tstate) || (py.finalizing && py.finalizing()))
		return 0;
	uintptr_t f = innermost_frame(tstate);
	return plausible(f) ? f : 0;
}

static __attribute__((noinline)) unsigned splice_borrowed(uintptr_t *ips, unsigned n,
							  unsigned max, uintptr_t marker,
							  uintptr_t frame)
{
	if (py.finalizing && py.finalizing())
		return n;
	struct pywalk w;
	w.ntok = w.nseg = 0;
	w.ones = 0;
	if (py.types.layout->frame_kind == MT_PY_FRAME_OBJECT)
		walk_frame_objects(frame, &w);
	else
		walk_interpreter_frames(frame, &w);
	if (!w.ntok || n >= max)
		return n;
	/* the marker is no loop frame: the segments all go after it */
	ips[n++] = marker;
	return merge(ips, n, max, &w);
}

unsigned mt_python_splice_borrowed(uintptr_t *ips, unsigned n, unsigned max, uintptr_t marker,
				   uintptr_t frame)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY || !plausible(frame))
		return n;
	return splice_borrowed(ips, n, max, marker, frame);
}

unsigned mt_python_splice(uintptr_t *ips, unsigned n, unsigned max)
{
	if (MT_LIKELY(atomic_load_explicit(&py_state, memory_order_acquire) == PY_READY))
		return splice_ready(ips, n, max);
	/* Python may come later (an embedding program loads it): look again
	 * now and then, never more than an increment per call. */
	if (++calls_without_python % RESCAN_EVERY == 0 &&
	    atomic_load_explicit(&py_state, memory_order_relaxed) == PY_ABSENT)
		try_discover();
	return n;
}

/* Py_TPFLAGS_BASE_EXC_SUBCLASS: the type is an exception's */
#define PY_EXC_SUBCLASS (1ul << 30)
/* Py_TPFLAGS_TYPE_SUBCLASS: the object is a type (its type is type's) */
#define PY_TYPE_SUBCLASS (1ul << 31)

int mt_python_str(const void *obj, char *out, unsigned cap)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY || !obj)
		return -1;
	uintptr_t o = (uintptr_t)obj;
	uintptr_t type = *(const uintptr_t *)(o + 8); /* ob_type, after ob_refcnt */
	if (type == py.types.str_type)
		return mt_py_str_utf8(&py.types, o, out, cap);
	/* An exception made already: its args[0]. BaseException is
	 * PyObject_HEAD, dict, args in 3.8 to 3.13 (the versions read here);
	 * a tuple is PyObject_VAR_HEAD, then its items. */
	if (!py.type_flags || !py.tuple_type || !(py.type_flags((void *)type) & PY_EXC_SUBCLASS))
		return -1;
	uintptr_t args = *(const uintptr_t *)(o + 24);
	if (!args || *(const uintptr_t *)(args + 8) != py.tuple_type ||
	    *(const intptr_t *)(args + 16) < 1)
		return -1;
	return mt_py_str_utf8(&py.types, *(const uintptr_t *)(args + 24), out, cap);
}

/* A tuple's first str among its first four items: TensorFlow's
 * exception values, (None, None, message, payloads) from its pybind11
 * status, (message, code, payloads) from its eager C API. */
int mt_python_tuple_str(const void *obj, char *out, unsigned cap)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY || !obj ||
	    !py.tuple_type)
		return -1;
	uintptr_t o = (uintptr_t)obj;
	if (*(const uintptr_t *)(o + 8) != py.tuple_type)
		return -1;
	intptr_t n = *(const intptr_t *)(o + 16);
	for (intptr_t i = 0; i < n && i < 4; i++) {
		uintptr_t item = *(const uintptr_t *)(o + 24 + 8 * (uintptr_t)i);
		if (item && *(const uintptr_t *)(item + 8) == py.types.str_type)
			return mt_py_str_utf8(&py.types, item, out, cap);
	}
	return -1;
}

bool mt_python_type_named(const void *type, const char *name)
{
	if (atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY || !type)
		return false;
	/* a type is PyObject_VAR_HEAD, then tp_name, in 3.8 to 3.13; a
	 * class made in Python has its bare name there */
	uintptr_t meta = *(const uintptr_t *)((uintptr_t)type + 8);
	if (!py.type_flags || !(py.type_flags((void *)meta) & PY_TYPE_SUBCLASS))
		return false; /* not a type: no tp_name to read */
	const char *tp_name = *(const char *const *)((uintptr_t)type + 24);
	return tp_name && !strcmp(tp_name, name);
}

/* ---- writer side ---- */

bool mt_python_frame(uintptr_t token, const char **function, const char **file,
		     unsigned *line)
{
	*function = *file = NULL;
	*line = 0;
	if (!MT_IS_PYFRAME(token))
		return false;
	uint64_t id = ((uint64_t)token & ~MT_PYFRAME_BIT) >> MT_PYFRAME_LINE_BITS;
	if (!mt_py_names_get(id, function, file))
		return false;
	*line = (unsigned)(token & LINE_MASK);
	return true;
}
