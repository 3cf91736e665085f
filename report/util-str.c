#include "util-str.h"

#include <inttypes.h>
#include <string.h>

#define REPLACEMENT 0xFFFDu

static size_t utf8_expected_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0; /* continuation byte, C0/C1 (overlong) or F5..FF */
}

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len = utf8_expected_len(s[0]);
	uint32_t v;

	*cp = REPLACEMENT;
	if (len == 0 || len > n)
		return 1;
	if (len == 1) {
		*cp = s[0];
		return 1;
	}
	v = s[0] & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 1;
		v = (v << 6) | (s[i] & 0x3F);
	}
	/* overlong 3- and 4-byte forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
		return 1;
	*cp = v;
	return len;
}

static void put_utf8(FILE *f, uint32_t cp)
{
	if (cp < 0x80) {
		fputc((int)cp, f);
	} else if (cp < 0x800) {
		fputc((int)(0xC0 | (cp >> 6)), f);
		fputc((int)(0x80 | (cp & 0x3F)), f);
	} else if (cp < 0x10000) {
		fputc((int)(0xE0 | (cp >> 12)), f);
		fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
		fputc((int)(0x80 | (cp & 0x3F)), f);
	} else {
		fputc((int)(0xF0 | (cp >> 18)), f);
		fputc((int)(0x80 | ((cp >> 12) & 0x3F)), f);
		fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
		fputc((int)(0x80 | (cp & 0x3F)), f);
	}
}

static void json_char(FILE *f, uint32_t cp)
{
	switch (cp) {
	case '"': fputs("\\\"", f); return;
	case '\\': fputs("\\\\", f); return;
	case '\n': fputs("\\n", f); return;
	case '\r': fputs("\\r", f); return;
	case '\t': fputs("\\t", f); return;
	case '\b': fputs("\\b", f); return;
	case '\f': fputs("\\f", f); return;
	}
	if (cp < 0x20 || cp == 0x7F)
		fprintf(f, "\\u%04x", (unsigned)cp);
	else
		put_utf8(f, cp);
}

void escape_json(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	n = strlen(s);
	fputc('"', f);
	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		json_char(f, cp);
		p += len;
		n -= len;
	}
	fputc('"', f);
}

static void html_char(FILE *f, uint32_t cp)
{
	switch (cp) {
	case '<': fputs("&lt;", f); return;
	case '>': fputs("&gt;", f); return;
	case '&': fputs("&amp;", f); return;
	case '"': fputs("&quot;", f); return;
	case '\'': fputs("&#39;", f); return;
	}
	/* control characters other than tab/newline are not valid HTML text */
	if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F)
		cp = REPLACEMENT;
	put_utf8(f, cp);
}

void escape_html(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		html_char(f, cp);
		p += len;
		n -= len;
	}
}

size_t text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, w = 0;

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		p += len;
		n -= len;
		w++;
	}
	return w;
}

size_t escape_text(FILE *f, const char *s, size_t width)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, w = 0;
	bool cut = width > 0 && text_width(s) > width;

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		if (cut && w + 3 >= width)
			break;
		/* a trace must not be able to drive the terminal */
		if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			cp = '?';
		put_utf8(f, cp);
		p += len;
		n -= len;
		w++;
	}
	if (cut) {
		for (; w < width; w++)
			fputc('.', f);
	}
	return w;
}

void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	v /= 1024.0;
	/* 1023.95 and up would print as "1024.0": use the next unit */
	while (v >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

void fmt_seconds(char *buf, size_t len, int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64 " s", sign, a / 1000000000u,
		 (a % 1000000000u) / 1000000u);
}

const char *path_basename(const char *path)
{
	const char *slash;

	if (!path)
		return NULL;
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}
