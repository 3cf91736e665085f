#include "util-json.h"

#include <inttypes.h>
#include <string.h>

#include "util-str.h"

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
	case '\t': fputs("\\t", f); return;
	case '<':
	case '>':
	case '&':
	case 0x2028:
	case 0x2029:
		fprintf(f, "\\u%04x", (unsigned)cp);
		return;
	}
	if (cp < 0x20 || cp == 0x7F)
		fprintf(f, "\\u%04x", (unsigned)cp);
	else
		put_utf8(f, cp);
}

void json_str(FILE *f, const char *s)
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

void json_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 : (uint64_t)ns;

	fprintf(f, "%" PRIu64 ".%03" PRIu64, a / 1000, a % 1000);
}
