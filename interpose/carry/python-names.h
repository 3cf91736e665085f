/* The names of the Python functions seen in stacks: each code object's
 * (function, file) copied once, as UTF-8, into an append-only table that
 * application threads share without locks and the writer reads by id.
 * See python-names.c. */
#pragma once

#include "python-layout.h"

#include <stdbool.h>
#include <stdint.h>

/* What the table needs to know of the interpreter. */
struct mt_py_types {
	const struct mt_py_layout *layout;
	uintptr_t code_type; /* &PyCode_Type */
	uintptr_t str_type; /* &PyUnicode_Type */
	int (*addr2line)(void *code, int byte_offset); /* PyCode_Addr2Line */
};

/* Reserves the table's memory (address space, touched as names arrive).
 * Not on the hot path; idempotent. False when the memory is not there. */
bool mt_py_names_init(void);

/* Hot path: the id (>= 1) of the names of a code object, copying them on
 * first sight. 0 when they cannot be read or the table is full. No locks,
 * no allocation, no reference counts. */
uint64_t mt_py_names_id(const struct mt_py_types *t, uintptr_t code);

/* Hot path: the line of the instruction at byte_offset in the code object
 * whose id mt_py_names_id just returned; 0 when unknown. Reads only the
 * code object's line table, and remembers the last few answers per code
 * object (most allocations come from a few call sites). */
unsigned mt_py_names_line(const struct mt_py_types *t, uint64_t id, uintptr_t code,
			  int byte_offset);

/* Writer side: the names behind an id from mt_py_names_id (any thread).
 * The strings live as long as the process. */
bool mt_py_names_get(uint64_t id, const char **function, const char **file);

/* Used by the above, exposed for the unit tests: the UTF-8 form of a str
 * object, at most cap - 1 bytes and a NUL; returns its length, or -1 when
 * obj does not look like a str. */
int mt_py_str_utf8(const struct mt_py_types *t, uintptr_t obj, char *out, unsigned cap);
