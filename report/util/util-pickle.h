/* A streaming writer of Python pickles, protocol 4, for the PyTorch memory
 * snapshot export (render-torch.c). It writes only the opcodes PyTorch's
 * memory viewer (memory_viz) unpickles itself: PROTO, EMPTY_DICT,
 * EMPTY_LIST, MARK, SETITEMS, APPENDS, SHORT_BINUNICODE, BINUNICODE,
 * BININT1, BININT2, BININT, LONG1, NONE, NEWTRUE, NEWFALSE, TUPLE2,
 * MEMOIZE, BINGET, LONG_BINGET, STOP. Strings are written as valid UTF-8
 * (invalid bytes become U+FFFD), as Python's unpickler requires.
 *
 * Containers nest: pickle_dict() / pickle_list() open one,
 * pickle_close_dict() / pickle_close_list() close the innermost; a dict
 * takes key, value, key, value... */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PICKLE_MEMO_KEYS 64

struct pickle {
	FILE *f;
	uint32_t n_memo; /* objects memoized so far: the next memo index */
	/* keys memoized once and referred to after: by the pointer given
	 * (string literals), so a lookup is a pointer compare */
	const char *memo_key[PICKLE_MEMO_KEYS];
	uint32_t key_memo[PICKLE_MEMO_KEYS];
	uint32_t n_keys;
};

void pickle_begin(struct pickle *p, FILE *f);
/* STOP: the stream is complete. */
void pickle_end(struct pickle *p);

void pickle_dict(struct pickle *p);
void pickle_list(struct pickle *p);
void pickle_close_dict(struct pickle *p);
void pickle_close_list(struct pickle *p);

void pickle_str(struct pickle *p, const char *s);
/* A string that recurs (a dict key): written once, then by memo index.
 * key must stay valid and be the same pointer each time. */
void pickle_key(struct pickle *p, const char *key);
void pickle_int(struct pickle *p, int64_t v);
void pickle_uint(struct pickle *p, uint64_t v);
void pickle_bool(struct pickle *p, bool v);
void pickle_none(struct pickle *p);
/* A tuple of two integers, (a, b). */
void pickle_int_pair(struct pickle *p, int64_t a, int64_t b);

/* Memoize the object just written (a container after it is closed) and
 * return its memo index; pickle_get() writes it again by that index, as
 * one shared object (Python's pickler does so for repeated objects). */
uint32_t pickle_memoize(struct pickle *p);
void pickle_get(struct pickle *p, uint32_t memo);
