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
 *   3.11): those replace it, innermost first. */
#include "python.h"
#include "internal.h"
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
	dl_iterate_phdr(find_libpython, path);
	*h = path[0] ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	return *h != NULL;
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
	return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
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
};

static uint64_t token(uintptr_t code, int byte_offset)
{
	uint64_t id = mt_py_names_id(&py.types, code);
	if (!id)
		return 0;
	unsigned line = mt_py_names_line(&py.types, id, code, byte_offset);
	return MT_PYFRAME_BIT | id << MT_PYFRAME_LINE_BITS | line;
}

static inline void add(struct pywalk *w, uint64_t tok)
{
	if (tok && w->ntok < MT_PY_MAX_FRAMES)
		w->tok[w->ntok++] = tok;
}

static inline void close_segment(struct pywalk *w)
{
	w->end[w->nseg++] = (uint16_t)w->ntok;
}

/* 3.8-3.10: PyFrameObject, one per C call of the evaluation loop. */
static void walk_frame_objects(uintptr_t f, struct pywalk *w)
{
	const struct mt_py_layout *l = py.types.layout;
	for (unsigned i = 0; i < MT_PY_MAX_FRAMES && plausible(f); i++) {
		uintptr_t code = load_ptr(f, l->frame_code);
		int lasti = *(const int *)(f + (uintptr_t)l->frame_instr);
		if (is_code(code))
			add(w, token(code, lasti * l->lasti_scale));
		close_segment(w);
		f = load_ptr(f, l->frame_back);
	}
}

/* 3.11+: _PyInterpreterFrame. A C call of the evaluation loop runs the
 * frames up to its entry frame: 3.11 marks that frame is_entry, 3.12+
 * puts a frame owned by the C stack after it. Frames that have not
 * started yet (before _co_firsttraceable, like 3.13's __init__ shim) are
 * left out, as CPython's own tracebacks do. */
static void walk_interpreter_frames(uintptr_t f, struct pywalk *w)
{
	const struct mt_py_layout *l = py.types.layout;
	bool open = false;
	for (unsigned i = 0; i < MT_PY_MAX_VISITS && plausible(f); i++) {
		int owner = *(const signed char *)(f + (uintptr_t)l->frame_owner);
		if (l->owner_cstack >= 0 && owner == l->owner_cstack) {
			close_segment(w);
			open = false;
			f = load_ptr(f, l->frame_back);
			continue;
		}
		uintptr_t code = load_ptr(f, l->frame_code);
		if (is_code(code)) {
			uintptr_t instr = load_ptr(f, l->frame_instr);
			intptr_t off = (intptr_t)(instr - (code + (uintptr_t)l->code_adaptive));
			int first = *(const int *)(code + (uintptr_t)l->code_firsttraceable);
			if (owner == l->owner_generator || off >= (intptr_t)first * l->lasti_scale)
				add(w, token(code, (int)off));
			open = true;
		}
		if (l->frame_is_entry >= 0 && *(const uint8_t *)(f + (uintptr_t)l->frame_is_entry)) {
			close_segment(w);
			open = false;
		}
		f = load_ptr(f, l->frame_back);
	}
	if (open)
		close_segment(w);
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

static inline bool in_eval_loop(uintptr_t ip)
{
	return ip - 1 - py.eval_lo < py.eval_hi - py.eval_lo; /* ip is a return address */
}

static inline unsigned seg_from(const struct pywalk *w, unsigned seg)
{
	return seg ? w->end[seg - 1] : 0;
}

static inline void put(uintptr_t *ips, unsigned at, unsigned max, uintptr_t v)
{
	if (at < max)
		ips[at] = v;
}

/* The i-th frame of the evaluation loop (innermost first) becomes the i-th
 * segment. Segments left over (the native stack was cut at its depth, or
 * the unwinder stopped early) go after the last native frame, in order;
 * loop frames left over (or whose segment is empty) stay as they are.
 *
 * In place, without scratch: the first pass finds the length, the second
 * fills from the end. Every frame lands at or after its old index (a
 * segment takes at least the one slot it replaces), on slots already read. */
static unsigned merge(uintptr_t *ips, unsigned n, unsigned max, const struct pywalk *w)
{
	unsigned evals = 0, len = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned take = 1;
		if (in_eval_loop(ips[i]) && evals++ < w->nseg) {
			unsigned seg = evals - 1, k = w->end[seg] - seg_from(w, seg);
			take = k ? k : 1;
		}
		len += take;
	}
	unsigned matched = evals < w->nseg ? evals : w->nseg;
	len += w->ntok - seg_from(w, matched);
	unsigned at = len;
	for (unsigned k = w->ntok; k > seg_from(w, matched);)
		put(ips, --at, max, (uintptr_t)w->tok[--k]);
	for (unsigned i = n; i-- > 0;) {
		uintptr_t ip = ips[i];
		if (in_eval_loop(ip) && --evals < w->nseg) {
			unsigned from = seg_from(w, evals), to = w->end[evals];
			if (from < to) {
				while (to > from)
					put(ips, --at, max, (uintptr_t)w->tok[--to]);
				continue;
			}
		}
		put(ips, --at, max, ip);
	}
	return len < max ? len : max;
}

unsigned mt_python_splice(uintptr_t *ips, unsigned n, unsigned max)
{
	if (MT_UNLIKELY(atomic_load_explicit(&py_state, memory_order_acquire) != PY_READY)) {
		/* Python may come later (an embedding program loads it): look
		 * again now and then, never more than an increment per call. */
		if (++calls_without_python % RESCAN_EVERY == 0 &&
		    atomic_load_explicit(&py_state, memory_order_relaxed) == PY_ABSENT)
			try_discover();
		return n;
	}
	uintptr_t tstate = (uintptr_t)py.this_thread_state();
	if (!tstate || !plausible(tstate))
		return n; /* a thread Python does not know */
	if (py.finalizing && py.finalizing())
		return n; /* other threads' states may be freed under them */
	struct pywalk w;
	w.ntok = w.nseg = 0;
	uintptr_t f = innermost_frame(tstate);
	if (py.types.layout->frame_kind == MT_PY_FRAME_OBJECT)
		walk_frame_objects(f, &w);
	else
		walk_interpreter_frames(f, &w);
	return w.ntok ? merge(ips, n, max, &w) : n;
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
