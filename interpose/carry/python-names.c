/* The (function, file) of each code object seen in a stack, read once
 * without the GIL and kept for the life of the process.
 *
 * An open-addressing table maps a code object's address to an entry id;
 * the entries and their strings are append-only, so the writer can read
 * any id it gets from a stack without a lock. A code object can be freed
 * and its address reused by another: an entry is only reused when the
 * code object still has the same name and file objects and the same first
 * line, else the slot is pointed at a new entry. Two threads meeting a new
 * code object at once may both make an entry: harmless, the same names
 * under two ids. Memory is reserved up front (MAP_NORESERVE) and touched
 * as names arrive; when it is used up, frames of new code objects are left
 * out (see docs/python.md). */
#include "python-names.h"
#include "core.h"
#include "carry.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define SLOTS_LOG2 19
#define MAX_IDS (1u << 18) /* half the slots: probes stay short */
#define ARENA_BYTES (64u << 20)
#define MAX_PROBES 64
#define FUNCTION_MAX 512
#define FILE_MAX 4096
#define LINE_MEMOS 4 /* per code object */
#define LINE_MAX ((1u << 24) - 1) /* what a token holds (python.h) */

struct slot {
	_Atomic uintptr_t code;
	_Atomic uint32_t id;
	uint32_t pad;
};

struct entry {
	/* What identifies the code object the names were read from. */
	uintptr_t code, name, filename;
	int32_t firstlineno;
	uint32_t pad;
	const char *function, *file;
	/* Lines found: (byte offset + 1) << 32 | line, by offset; racing
	 * writers each store a whole, right pair. */
	_Atomic uint64_t lines[LINE_MEMOS];
};

static struct slot *slots;
static struct entry *entries; /* by id; entries[0] unused */
static char *arena;
static _Atomic uint32_t next_id = 1;
static _Atomic size_t arena_used;
static _Atomic int ready;

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

bool mt_py_names_init(void)
{
	static _Atomic int once;
	if (atomic_load_explicit(&ready, memory_order_acquire))
		return true;
	if (atomic_exchange(&once, 1))
		return atomic_load_explicit(&ready, memory_order_acquire);
	slots = reserve(sizeof(struct slot) << SLOTS_LOG2);
	entries = reserve(sizeof(struct entry) * (MAX_IDS + 1));
	arena = reserve(ARENA_BYTES);
	if (!slots || !entries || !arena)
		return false;
	atomic_store_explicit(&ready, 1, memory_order_release);
	return true;
}

/* ---- reading objects ---- */

/* A pointer that can be an object: user space, aligned. It does not prove
 * the memory is there; the frames we read are the thread's own, live while
 * it is inside the hook, so it is a guard against a wrong layout, not
 * against races. */
static inline bool plausible(uintptr_t p)
{
	return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
}

static inline uintptr_t load_ptr(uintptr_t base, int off)
{
	return *(const uintptr_t *)(base + (uintptr_t)off);
}

static inline uintptr_t type_of(uintptr_t obj)
{
	return load_ptr(obj, 8); /* ob_type, after ob_refcnt */
}

static unsigned put_utf8(char *out, unsigned room, uint32_t c)
{
	if (c >= 0xd800 && c < 0xe000)
		c = 0xfffd; /* a lone surrogate has no UTF-8 form */
	if (c < 0x80 && room >= 1) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800 && room >= 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000 && room >= 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c >= 0x10000 && c < 0x110000 && room >= 4) {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | (c >> 12 & 0x3f));
		out[2] = (char)(0x80 | (c >> 6 & 0x3f));
		out[3] = (char)(0x80 | (c & 0x3f));
		return 4;
	}
	return 0; /* no room: the string is cut here */
}

int mt_py_str_utf8(const struct mt_py_types *t, uintptr_t obj, char *out, unsigned cap)
{
	const struct mt_py_layout *l = t->layout;
	if (!cap || !plausible(obj) || type_of(obj) != t->str_type)
		return -1;
	int64_t len = *(const int64_t *)(obj + (uintptr_t)l->str_length);
	uint32_t state = *(const uint32_t *)(obj + (uintptr_t)l->str_state);
	unsigned kind = (state >> l->str_kind_shift) & l->str_kind_mask;
	uintptr_t data;
	if (!(state & l->str_compact_bit))
		data = load_ptr(obj, l->str_compact_size); /* a legacy string: data.any */
	else if (state & l->str_ascii_bit)
		data = obj + (uintptr_t)l->str_ascii_size;
	else
		data = obj + (uintptr_t)l->str_compact_size;
	if (len < 0 || (kind != 1 && kind != 2 && kind != 4) || !data)
		return -1;
	unsigned n = 0;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? ((const uint8_t *)data)[i] :
			     kind == 2 ? ((const uint16_t *)data)[i] :
					 ((const uint32_t *)data)[i];
		unsigned w = put_utf8(out + n, cap - 1 - n, c);
		if (!w)
			break;
		n += w;
	}
	out[n] = '\0';
	return (int)n;
}

/* ---- the table ---- */

struct code_ident {
	uintptr_t name, filename;
	int32_t firstlineno;
};

static bool read_ident(const struct mt_py_types *t, uintptr_t code, struct code_ident *id)
{
	const struct mt_py_layout *l = t->layout;
	if (!plausible(code) || type_of(code) != t->code_type)
		return false;
	/* The qualified name ("Model.forward") where there is one (3.11+). */
	id->name = load_ptr(code, l->code_qualname >= 0 ? l->code_qualname : l->code_name);
	id->filename = load_ptr(code, l->code_filename);
	id->firstlineno = *(const int32_t *)(code + (uintptr_t)l->code_firstlineno);
	return true;
}

static bool same(const struct entry *e, uintptr_t code, const struct code_ident *id)
{
	return e->code == code && e->name == id->name && e->filename == id->filename &&
	       e->firstlineno == id->firstlineno;
}

static const char *keep(const char *s, int len)
{
	size_t at = atomic_fetch_add_explicit(&arena_used, (size_t)len + 1, memory_order_relaxed);
	if (at + (size_t)len + 1 > ARENA_BYTES)
		return NULL;
	memcpy(arena + at, s, (size_t)len + 1);
	return arena + at;
}

/* A new entry for the code object; 0 when it cannot be read or memory is
 * used up. Its fields are written before the id is handed out, and the id
 * reaches other threads only through release stores (the slot, the stack
 * table), so readers see them whole. */
static uint32_t new_entry(const struct mt_py_types *t, uintptr_t code,
			  const struct code_ident *id)
{
	char function[FUNCTION_MAX], file[FILE_MAX];
	int nf = mt_py_str_utf8(t, id->name, function, sizeof(function));
	int nfile = mt_py_str_utf8(t, id->filename, file, sizeof(file));
	if (nf < 0 || nfile < 0)
		return 0;
	if (atomic_load_explicit(&next_id, memory_order_relaxed) > MAX_IDS)
		return 0; /* full: no more counting up */
	uint32_t eid = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
	if (eid > MAX_IDS)
		return 0;
	struct entry *e = &entries[eid];
	e->function = keep(function, nf);
	e->file = keep(file, nfile);
	if (!e->function || !e->file)
		return 0;
	e->code = code;
	e->name = id->name;
	e->filename = id->filename;
	e->firstlineno = id->firstlineno;
	return eid;
}

static inline size_t hash_code(uintptr_t code)
{
	return (size_t)(((uint64_t)code >> 4) * 0x9e3779b97f4a7c15ull >> (64 - SLOTS_LOG2));
}

uint64_t mt_py_names_id(const struct mt_py_types *t, uintptr_t code)
{
	struct code_ident ident;
	if (!atomic_load_explicit(&ready, memory_order_acquire) || !read_ident(t, code, &ident))
		return 0;
	size_t mask = ((size_t)1 << SLOTS_LOG2) - 1;
	size_t i = hash_code(code);
	for (unsigned probe = 0; probe < MAX_PROBES; probe++, i = (i + 1) & mask) {
		struct slot *s = &slots[i];
		uintptr_t k = atomic_load_explicit(&s->code, memory_order_acquire);
		if (k == 0) {
			uintptr_t expected = 0;
			if (!atomic_compare_exchange_strong(&s->code, &expected, code) &&
			    expected != code)
				continue; /* another code object took the slot */
		} else if (k != code) {
			continue;
		}
		uint32_t eid = atomic_load_explicit(&s->id, memory_order_acquire);
		if (eid && same(&entries[eid], code, &ident))
			return eid;
		/* New, being made by another thread, or a new code object at a
		 * freed one's address: a new entry takes the slot. */
		eid = new_entry(t, code, &ident);
		if (eid)
			atomic_store_explicit(&s->id, eid, memory_order_release);
		return eid;
	}
	return 0;
}

unsigned mt_py_names_line(const struct mt_py_types *t, uint64_t id, uintptr_t code,
			  int byte_offset)
{
	_Atomic uint64_t *memo = &entries[id].lines[((unsigned)byte_offset >> 1) % LINE_MEMOS];
	uint64_t key = (uint64_t)(uint32_t)(byte_offset + 1) << 32;
	if (byte_offset >= 0) {
		uint64_t v = atomic_load_explicit(memo, memory_order_relaxed);
		if ((v & ~0xffffffffull) == key)
			return (uint32_t)v;
	}
	int line = t->addr2line((void *)code, byte_offset);
	if (line < 0 || (unsigned)line > LINE_MAX)
		line = 0;
	if (byte_offset >= 0)
		atomic_store_explicit(memo, key | (unsigned)line, memory_order_relaxed);
	return (unsigned)line;
}

bool mt_py_names_get(uint64_t id, const char **function, const char **file)
{
	if (!atomic_load_explicit(&ready, memory_order_acquire) || id == 0 || id > MAX_IDS ||
	    id >= atomic_load_explicit(&next_id, memory_order_acquire))
		return false;
	*function = entries[id].function;
	*file = entries[id].file;
	return *function != NULL;
}
