/* Strings from the trace are untrusted: every renderer writes them through
 * one of the escapers here, which replace invalid UTF-8 with U+FFFD. */
#pragma once

#include "util-size.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decode one UTF-8 sequence at s (n bytes available). Returns its length
 * and sets *cp; returns 1 and sets *cp = 0xFFFD for an invalid or truncated
 * sequence, overlong forms and surrogates included. n must be > 0. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Write code point cp (at most U+10FFFF) as UTF-8; inline, as the
 * escapers write most characters through it. */
static inline void utf8_put(FILE *f, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		putc_unlocked((int)cp, f);
		return;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xC0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xE0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xF0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	fwrite_unlocked(b, 1, n, f);
}

/* Write s as a JSON string literal, quotes included; NULL writes null. */
void escape_json(FILE *f, const char *s);
/* The same, safe inside an HTML <script> element: <, >, &, U+2028 and
 * U+2029 are \u escapes too, and so are \r, \b and \f (json_str,
 * util-json.h). */
void escape_json_script(FILE *f, const char *s);

/* The same literal as escape_json, for the n bytes at s (not NULL), into
 * out, which has room for ESCAPE_JSON_MAX(n) bytes; returns its end. */
#define ESCAPE_JSON_MAX(n) (6 * (n) + 2)
char *escape_json_mem(char *out, const char *s, size_t n);

/* A copy of s that is valid UTF-8: invalid bytes become U+FFFD. Caller
 * frees. */
char *utf8_clean(const char *s);

/* Write s HTML-escaped (<>&"' as entities), invalid UTF-8 replaced. */
void escape_html(FILE *f, const char *s);

/* Write s for a terminal: control characters as '?', invalid UTF-8
 * replaced, at most width code points (0: no limit), "..." marking a cut.
 * Returns the number of code points written. */
size_t escape_text(FILE *f, const char *s, size_t width);

/* Code points escape_text would write for s without a limit. */
size_t text_width(const char *s);

/* fmt_size, fmt_bytes, fmt_size_fine: trace/util-size.h, shared with the
 * library's out-of-memory answer. */

/* Nanoseconds as seconds with milliseconds: "1.234 s". */
struct fmt_str fmt_seconds(int64_t ns);

/* The part of path after its last '/'. */
const char *path_basename(const char *path);

/* True for a header of the CUDA toolkit (cuda_runtime.h and the like, or
 * any file under a toolkit's include directory): code compiled into the
 * program from there is CUDA's, not the user's. */
bool path_is_cuda_header(const char *path);
