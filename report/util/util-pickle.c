/* See util-pickle.h. The opcodes and their encodings are those of
 * Python's pickle protocol 4 (Lib/pickletools.py documents each). */
#include "util-pickle.h"

#include <string.h>

#include "util-str.h"

enum {
	OP_MARK = '(',
	OP_STOP = '.',
	OP_BININT = 'J',
	OP_BININT1 = 'K',
	OP_BININT2 = 'M',
	OP_NONE = 'N',
	OP_BINUNICODE = 'X',
	OP_APPENDS = 'e',
	OP_BINGET = 'h',
	OP_LONG_BINGET = 'j',
	OP_SETITEMS = 'u',
	OP_EMPTY_LIST = ']',
	OP_EMPTY_DICT = '}',
	OP_PROTO = 0x80,
	OP_TUPLE2 = 0x86,
	OP_NEWTRUE = 0x88,
	OP_NEWFALSE = 0x89,
	OP_LONG1 = 0x8a,
	OP_SHORT_BINUNICODE = 0x8c,
	OP_MEMOIZE = 0x94,
};

static void op(struct pickle *p, int code)
{
	fputc(code, p->f);
}

static void le32(struct pickle *p, uint32_t v)
{
	unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	fwrite(b, 1, sizeof(b), p->f);
}

void pickle_begin(struct pickle *p, FILE *f)
{
	*p = (struct pickle){ .f = f };
	op(p, OP_PROTO);
	fputc(4, f);
}

void pickle_end(struct pickle *p)
{
	op(p, OP_STOP);
}

void pickle_dict(struct pickle *p)
{
	op(p, OP_EMPTY_DICT);
	op(p, OP_MARK);
}

void pickle_list(struct pickle *p)
{
	op(p, OP_EMPTY_LIST);
	op(p, OP_MARK);
}

void pickle_close_dict(struct pickle *p)
{
	op(p, OP_SETITEMS);
}

void pickle_close_list(struct pickle *p)
{
	op(p, OP_APPENDS);
}

/* s as valid UTF-8: invalid bytes replaced by U+FFFD. Bytes counted
 * first (the length goes before the string), then written. */
static size_t clean_len(const unsigned char *s, size_t n)
{
	size_t out = 0;

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(s, n, &cp);

		out += cp == 0xFFFD && len == 1 ? 3 : len;
		s += len;
		n -= len;
	}
	return out;
}

static void clean_write(struct pickle *p, const unsigned char *s, size_t n)
{
	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(s, n, &cp);

		if (cp == 0xFFFD && len == 1)
			fputs("\xef\xbf\xbd", p->f);
		else
			fwrite(s, 1, len, p->f);
		s += len;
		n -= len;
	}
}

void pickle_str(struct pickle *p, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), len = clean_len(u, n);

	if (len < 256) {
		op(p, OP_SHORT_BINUNICODE);
		fputc((int)len, p->f);
	} else {
		op(p, OP_BINUNICODE);
		le32(p, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len);
	}
	clean_write(p, u, n);
}

uint32_t pickle_memoize(struct pickle *p)
{
	op(p, OP_MEMOIZE); /* MEMOIZE takes the next index, from 0 */
	return p->n_memo++;
}

void pickle_get(struct pickle *p, uint32_t memo)
{
	if (memo < 256) {
		op(p, OP_BINGET);
		fputc((int)memo, p->f);
	} else {
		op(p, OP_LONG_BINGET);
		le32(p, memo);
	}
}

void pickle_key(struct pickle *p, const char *key)
{
	for (uint32_t i = 0; i < p->n_keys; i++) {
		if (p->memo_key[i] == key) {
			pickle_get(p, p->key_memo[i]);
			return;
		}
	}
	pickle_str(p, key);
	if (p->n_keys < PICKLE_MEMO_KEYS) {
		p->memo_key[p->n_keys] = key;
		p->key_memo[p->n_keys++] = pickle_memoize(p);
	}
}

/* LONG1: the shortest two's complement little-endian bytes of v. */
static void long1(struct pickle *p, int64_t v, bool is_unsigned, uint64_t u)
{
	unsigned char b[9];
	size_t n = 0;

	if (is_unsigned) {
		do {
			b[n++] = u & 0xff;
			u >>= 8;
		} while (u || (b[n - 1] & 0x80));
	} else {
		for (;;) {
			b[n++] = (unsigned char)(v & 0xff);
			v >>= 8; /* arithmetic: gcc and clang keep the sign */
			if ((v == 0 && !(b[n - 1] & 0x80)) || (v == -1 && (b[n - 1] & 0x80)))
				break;
		}
	}
	op(p, OP_LONG1);
	fputc((int)n, p->f);
	fwrite(b, 1, n, p->f);
}

void pickle_int(struct pickle *p, int64_t v)
{
	if (v >= 0 && v < 256) {
		op(p, OP_BININT1);
		fputc((int)v, p->f);
	} else if (v >= 0 && v < 65536) {
		op(p, OP_BININT2);
		fputc((int)(v & 0xff), p->f);
		fputc((int)(v >> 8), p->f);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		op(p, OP_BININT);
		le32(p, (uint32_t)(int32_t)v);
	} else {
		long1(p, v, false, 0);
	}
}

void pickle_uint(struct pickle *p, uint64_t v)
{
	if (v <= INT32_MAX) {
		pickle_int(p, (int64_t)v);
		return;
	}
	long1(p, 0, true, v);
}

void pickle_bool(struct pickle *p, bool v)
{
	op(p, v ? OP_NEWTRUE : OP_NEWFALSE);
}

void pickle_none(struct pickle *p)
{
	op(p, OP_NONE);
}

void pickle_int_pair(struct pickle *p, int64_t a, int64_t b)
{
	pickle_int(p, a);
	pickle_int(p, b);
	op(p, OP_TUPLE2);
}
