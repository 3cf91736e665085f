/* Where CPython keeps what memtrace reads without the GIL: one row per
 * minor version, the offsets taken from that version's headers. See
 * python-layout.c and docs/python.md. */
#pragma once

#include <stdint.h>

enum mt_py_frame_kind {
	MT_PY_FRAME_OBJECT = 1, /* 3.8-3.10: PyFrameObject, one per C eval call */
	MT_PY_FRAME_INTERP = 2, /* 3.11+: _PyInterpreterFrame, several per C eval call */
};

/* Offsets in bytes; -1 where the version has no such field. */
struct mt_py_layout {
	uint8_t minor; /* of 3.minor */
	uint8_t frame_kind; /* enum mt_py_frame_kind */
	/* The thread's innermost frame: tstate->frame (3.8-3.10),
	 * tstate->cframe->current_frame (3.11, 3.12: cframe_frame is the
	 * offset in the _PyCFrame), tstate->current_frame (3.13). */
	int16_t tstate_frame;
	int16_t cframe_frame;
	/* The frame: its caller, its code object, where it is in its code
	 * (f_lasti, an int, for PyFrameObject; prev_instr or instr_ptr, a
	 * pointer into the code, for _PyInterpreterFrame), multiplied by
	 * lasti_scale to get bytes. */
	int16_t frame_back;
	int16_t frame_code;
	int16_t frame_instr;
	int16_t lasti_scale;
	/* _PyInterpreterFrame only: owner (a char), is_entry (a bool, 3.11),
	 * and the owner values that matter. */
	int16_t frame_owner;
	int16_t frame_is_entry;
	int8_t owner_cstack; /* 3.12+: the C eval call's entry frame */
	int8_t owner_generator;
	/* PyCodeObject. code_adaptive: the bytecode (3.11+), where the frame's
	 * instruction pointer points; code_firsttraceable: an int, the index
	 * of the first instruction of the function proper. */
	int16_t code_filename;
	int16_t code_name;
	int16_t code_qualname;
	int16_t code_firstlineno;
	int16_t code_adaptive;
	int16_t code_firsttraceable;
	/* str (PEP 393): length, the state bit-field word, and where the
	 * characters of a compact ASCII and a compact non-ASCII string start. */
	int16_t str_length;
	int16_t str_state;
	int16_t str_ascii_size;
	int16_t str_compact_size;
	uint8_t str_kind_shift;
	uint8_t str_kind_mask;
	uint8_t str_compact_bit;
	uint8_t str_ascii_bit;
};

/* The row for CPython 3.minor, or NULL when that version is not supported. */
const struct mt_py_layout *mt_py_layout_find(unsigned major, unsigned minor);
