#include "util-json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "util-str.h"

static void json_char(FILE *f, uint32_t cp)
{
	switch (cp) {
	case '"': fputs_unlocked("\\\"", f); return;
	case '\\': fputs_unlocked("\\\\", f); return;
	case '\n': fputs_unlocked("\\n", f); return;
	case '\t': fputs_unlocked("\\t", f); return;
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
		utf8_put(f, cp);
}

/* Printable ASCII that json_str writes as it is. */
static inline bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run, *end;

	if (!s) {
		fputs_unlocked("null", f);
		return;
	}
	end = p + strlen(s);
	putc_unlocked('"', f);
	/* runs that need no escape go out in one write: valid UTF-8 but
	 * U+2028 and U+2029 re-encodes to the same bytes */
	run = p;
	while (p < end) {
		uint32_t cp;
		size_t len;

		if (json_plain(*p)) {
			p++;
			continue;
		}
		len = utf8_decode(p, (size_t)(end - p), &cp);
		if (len > 1 && cp != 0x2028 && cp != 0x2029) {
			p += len;
			continue;
		}
		if (p > run)
			fwrite_unlocked(run, 1, (size_t)(p - run), f);
		json_char(f, cp);
		p += len;
		run = p;
	}
	if (p > run)
		fwrite_unlocked(run, 1, (size_t)(p - run), f);
	putc_unlocked('"', f);
}

void json_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? 0 : (uint64_t)ns;

	fprintf(f, "%" PRIu64 ".%03" PRIu64, a / 1000, a % 1000);
}
