#include "util-str.h"

#include "util-mem.h"

#include <ctype.h>
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

/* Write the run [from, to) as it is (one fwrite for many characters). */
static inline void put_run(FILE *f, const unsigned char *from, const unsigned char *to)
{
	if (to > from)
		fwrite_unlocked(from, 1, (size_t)(to - from), f);
}

/* One character that breaks a run. script: escape_json_script's rules,
 * where <, >, &, U+2028 and U+2029 are \u escapes too, and so are \r, \b
 * and \f (as that escaper always wrote them). */
static void json_char(FILE *f, uint32_t cp, bool script)
{
	switch (cp) {
	case '"': fputs_unlocked("\\\"", f); return;
	case '\\': fputs_unlocked("\\\\", f); return;
	case '\n': fputs_unlocked("\\n", f); return;
	case '\t': fputs_unlocked("\\t", f); return;
	}
	if (!script) {
		switch (cp) {
		case '\r': fputs_unlocked("\\r", f); return;
		case '\b': fputs_unlocked("\\b", f); return;
		case '\f': fputs_unlocked("\\f", f); return;
		}
	} else if (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029) {
		fprintf(f, "\\u%04x", (unsigned)cp);
		return;
	}
	if (cp < 0x20 || cp == 0x7F)
		fprintf(f, "\\u%04x", (unsigned)cp);
	else
		utf8_put(f, cp);
}

/* Printable ASCII that escape_json writes as it is: not '"' or '\\'. */
static const unsigned char json_plain_byte[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline bool json_plain(unsigned char c, bool script)
{
	return json_plain_byte[c] && !(script && (c == '<' || c == '>' || c == '&'));
}

/* The one JSON string escaper: escape_json's literal, or with script
 * escape_json_script's. */
static inline __attribute__((always_inline)) void json_write(FILE *f, const char *s, bool script)
{
	const unsigned char *p = (const unsigned char *)s, *run, *end;

	if (!s) {
		fputs_unlocked("null", f);
		return;
	}
	end = p + strlen(s);
	putc_unlocked('"', f);
	/* runs of characters that need no escape go out in one write: valid
	 * UTF-8 re-encodes to the same bytes, so only escapes and invalid
	 * sequences break a run (and for a script U+2028 and U+2029) */
	run = p;
	while (p < end) {
		uint32_t cp;
		size_t len;

		if (json_plain(*p, script)) {
			p++;
			continue;
		}
		len = utf8_decode(p, (size_t)(end - p), &cp);
		if (len > 1 && !(script && (cp == 0x2028 || cp == 0x2029))) {
			p += len; /* valid: written as it is */
			continue;
		}
		put_run(f, run, p);
		json_char(f, cp, script);
		p += len;
		run = p;
	}
	put_run(f, run, p);
	putc_unlocked('"', f);
}

void escape_json(FILE *f, const char *s)
{
	json_write(f, s, false);
}

void escape_json_script(FILE *f, const char *s)
{
	json_write(f, s, true);
}

static char *json_char_mem(char *out, uint32_t cp)
{
	static const char hex[] = "0123456789abcdef";
	char e = 0;

	switch (cp) {
	case '"': e = '"'; break;
	case '\\': e = '\\'; break;
	case '\n': e = 'n'; break;
	case '\r': e = 'r'; break;
	case '\t': e = 't'; break;
	case '\b': e = 'b'; break;
	case '\f': e = 'f'; break;
	}
	if (e) {
		out[0] = '\\';
		out[1] = e;
		return out + 2;
	}
	if (cp < 0x20 || cp == 0x7F) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[cp >> 4];
		out[5] = hex[cp & 0xF];
		return out + 6;
	}
	if (cp < 0x80) {
		*out = (char)cp;
		return out + 1;
	}
	/* only U+FFFD gets here (valid sequences are copied as they are) */
	out[0] = (char)(0xE0 | (cp >> 12));
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[2] = (char)(0x80 | (cp & 0x3F));
	return out + 3;
}

/* Whether any of the 8 bytes of x needs more than a copy in JSON: below
 * 0x20, '"', '\\', 0x7F, or from 0x80 (UTF-8, decoded bytewise). A zero
 * byte of v is found by (v - 1) & ~v & 0x80 in each byte, and a byte below
 * 0x20 by (x - 0x20) & ~x & 0x80 (exact as a yes or no). */
static inline bool json_plain8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones * 0x80;
	uint64_t quote = x ^ (ones * '"'), slash = x ^ (ones * '\\'), del = x ^ (ones * 0x7F);
	uint64_t bad = ((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) |
		       ((slash - ones) & ~slash) | ((del - ones) & ~del) | x;

	return !(bad & highs);
}

char *escape_json_mem(char *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	*out++ = '"';
	while (p < end) {
		uint32_t cp;
		size_t len;
		uint64_t x;

		/* most names are plain ASCII: eight bytes a step */
		if (end - p >= 8) {
			memcpy(&x, p, sizeof(x));
			if (json_plain8(x)) {
				memcpy(out, p, sizeof(x));
				out += sizeof(x);
				p += sizeof(x);
				continue;
			}
		}
		if (json_plain(*p, false)) {
			*out++ = (char)*p++;
			continue;
		}
		len = utf8_decode(p, (size_t)(end - p), &cp);
		if (len > 1) { /* valid: copied as it is */
			memcpy(out, p, len);
			out += len;
			p += len;
			continue;
		}
		out = json_char_mem(out, cp);
		p++;
	}
	*out++ = '"';
	return out;
}

static void html_char(FILE *f, uint32_t cp)
{
	switch (cp) {
	case '<': fputs_unlocked("&lt;", f); return;
	case '>': fputs_unlocked("&gt;", f); return;
	case '&': fputs_unlocked("&amp;", f); return;
	case '"': fputs_unlocked("&quot;", f); return;
	case '\'': fputs_unlocked("&#39;", f); return;
	}
	/* control characters other than tab/newline are not valid HTML text */
	if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F)
		cp = REPLACEMENT;
	utf8_put(f, cp);
}

/* ASCII that escape_html writes as it is. */
static inline bool html_plain(unsigned char c)
{
	return ((c >= 0x20 && c < 0x7F) || c == '\t' || c == '\n') && c != '<' && c != '>' &&
	       c != '&' && c != '"' && c != '\'';
}

void escape_html(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run, *end;

	if (!s)
		return;
	end = p + strlen(s);
	run = p;
	while (p < end) {
		uint32_t cp;
		size_t len;

		if (html_plain(*p)) {
			p++;
			continue;
		}
		len = utf8_decode(p, (size_t)(end - p), &cp);
		if (len > 1) { /* valid UTF-8 above U+007F: as it is */
			p += len;
			continue;
		}
		put_run(f, run, p);
		html_char(f, cp);
		p += len;
		run = p;
	}
	put_run(f, run, p);
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
		utf8_put(f, cp);
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

struct fmt_str fmt_seconds(int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	struct fmt_str r;

	snprintf(r.s, sizeof(r.s), "%s%" PRIu64 ".%03" PRIu64 " s", sign, a / 1000000000u,
		 (a % 1000000000u) / 1000000u);
	return r;
}

const char *path_basename(const char *path)
{
	const char *slash;

	if (!path)
		return NULL;
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* "cuda" or "cuda-" and a version, as the component at p (after a '/'),
 * followed by include/ or targets/ARCH/include/: a toolkit's headers. */
static bool toolkit_include(const char *p)
{
	const char *end = p + strlen("cuda");

	if (*end == '-') {
		for (end++; isdigit((unsigned char)*end) || *end == '.'; end++)
			;
	}
	if (strncmp(end, "/include/", strlen("/include/")) == 0)
		return true;
	if (strncmp(end, "/targets/", strlen("/targets/")) != 0)
		return false;
	end = strchr(end + strlen("/targets/"), '/');
	return end && strncmp(end, "/include/", strlen("/include/")) == 0;
}

/* Header files of the CUDA toolkit: one of the runtime's own headers
 * wherever it sits, anything under a toolkit's include directory
 * (/usr/local/cuda/include, cuda-13.0/targets/x86_64-linux/include), or
 * under an NVIDIA Python wheel's (nvidia/cuda_runtime/include). */
bool path_is_cuda_header(const char *path)
{
	static const char *const headers[] = {
		"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_device_runtime_api.h",
		"driver_functions.h", "host_runtime.h", "device_functions.h",
	};
	const char *base = path_basename(path);

	if (!path)
		return false;
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		if (strcmp(base, headers[i]) == 0)
			return true;
	}
	for (const char *p = strstr(path, "/cuda"); p; p = strstr(p + 1, "/cuda")) {
		if (toolkit_include(p + 1))
			return true;
	}
	return strstr(path, "/nvidia/cuda_runtime/include/") != NULL;
}

char *utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), out = 0;
	char *r = xmalloc(3 * n + 1);

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		if (cp == 0xFFFD && len == 1) {
			memcpy(r + out, "\xef\xbf\xbd", 3);
			out += 3;
		} else {
			memcpy(r + out, p, len);
			out += len;
		}
		p += len;
		n -= len;
	}
	r[out] = '\0';
	return r;
}
