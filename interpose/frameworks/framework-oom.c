/* The out-of-memory failures of a framework's own allocator, which no CUDA
 * call reports: XLA's (JAX's) and TensorFlow's BFC allocator hands out
 * memory from an arena it took at start (XLA preallocates 75 % of the
 * device), and when the arena cannot serve a request it fails it without
 * asking CUDA for anything. What it does do, every time, before it
 * returns the failure (tsl/framework/bfc_allocator.cc, after its retry),
 * is log one warning on stderr:
 *
 *   W... bfc_allocator.cc:514] Allocator (GPU_0_bfc) ran out of memory
 *   trying to allocate 1.00GiB (rounded to 1073741824)requested by op ...
 *
 * That line is the evidence (docs/capture.md, "A framework's own OOM"):
 * the allocator's name, the device in it, the request as the arena rounded
 * it. This file reads it; xla.c sees it go by (handed on by hook-log.c).
 * (TensorFlow's own BFC allocator, which its library exports,
 * tensorflow.c sees fail at its call, log or no log; the line is then
 * that call's.)
 *
 * A program that silences the framework's log (TF_CPP_MIN_LOG_LEVEL=2, as
 * many do) never writes that line. What still happens is the exception
 * XLA raises into Python, a str set by PyErr_SetObject from jaxlib:
 *
 *   RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.44GiB.
 *
 * whose size is the same request written for people, to three figures
 * (tsl's HumanReadableNumBytes), or "N bytes" in older messages.
 *
 * TensorFlow raises its ResourceExhaustedError on the thread that called
 * into it (model.fit's), with the message of the op that failed on one of
 * its executor threads:
 *
 *   {{function_node __inference_multi_step_on_iterator_453}} OOM when
 *   allocating tensor with shape[200000,1024] and type float on
 *   /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
 *
 * whose tensor is the request, exactly (before the arena rounds it). */
#include "frameworks.h"

#include <string.h>

#define BFC_PHRASE ") ran out of memory trying to allocate "
#define BFC_ROUNDED "(rounded to "
/* a log line is short; a larger write is not a log line */
#define BFC_MAX_LINE 4096

static const char *find(const char *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle));
}

/* Digits at p (at most 20), as a number; false when there are none. */
static bool digits(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *start = p;
	while (p < end && p - start < 20 && *p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*out = v;
	return p > start && v;
}

bool mt_bfc_oom_parse(const char *text, size_t len, uint64_t *bytes, int *device)
{
	if (!text || len < sizeof(BFC_PHRASE) || len > BFC_MAX_LINE)
		return false;
	const char *end = text + len;
	const char *phrase = find(text, len, BFC_PHRASE);
	if (!phrase)
		return false;
	const char *rounded = find(phrase, (size_t)(end - phrase), BFC_ROUNDED);
	if (!rounded || !digits(rounded + strlen(BFC_ROUNDED), end, bytes))
		return false;
	/* "Allocator (GPU_<n>_bfc)": the device; another name says none */
	*device = -1;
	const char *name = find(text, (size_t)(phrase - text), "Allocator (GPU_");
	uint64_t n;
	if (name && digits(name + strlen("Allocator (GPU_"), phrase, &n) && n < 1024)
		*device = (int)n;
	else if (name && name[strlen("Allocator (GPU_")] == '0')
		*device = 0;
	return true;
}

#define XLA_PHRASE "RESOURCE_EXHAUSTED: Out of memory while trying to allocate "

/* A size as tsl writes it: "3.44GiB", "512B", or "3698532352 bytes". */
static bool human_size(const char *p, const char *end, uint64_t *bytes, bool *exact)
{
	static const char units[] = "KMGTPE";
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *start = p;

	while (p < end && p - start < 20 && *p >= '0' && *p <= '9')
		whole = whole * 10 + (uint64_t)(*p++ - '0');
	if (p == start)
		return false;
	if (p < end && *p == '.') {
		for (p++; p < end && scale < 1000000 && *p >= '0' && *p <= '9'; p++) {
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	}
	if (end - p >= 6 && !memcmp(p, " bytes", 6) && scale == 1) {
		*bytes = whole;
		*exact = true;
		return whole > 0;
	}
	if (p < end && *p == 'B' && scale == 1) {
		*bytes = whole;
		*exact = true;
		return whole > 0;
	}
	const char *u = p < end && *p ? strchr(units, *p) : NULL;
	if (!u || end - p < 3 || memcmp(p + 1, "iB", 2))
		return false;
	unsigned shift = 10 * (unsigned)(u - units + 1);
	if (whole >= (1ull << (64 - shift)))
		return false;
	/* whole.frac × 2^shift, to the nearest byte */
	long double v = ((long double)whole + (long double)frac / (long double)scale) *
			(long double)(1ull << shift);
	if (v + 0.5L >= 18446744073709551616.0L) /* 2^64 */
		return false;
	*bytes = (uint64_t)(v + 0.5L);
	*exact = false;
	return *bytes > 0;
}

bool mt_xla_oom_parse(const char *text, size_t len, uint64_t *bytes, bool *exact)
{
	if (!text || len < sizeof(XLA_PHRASE) || len > BFC_MAX_LINE)
		return false;
	if (memcmp(text, XLA_PHRASE, strlen(XLA_PHRASE)))
		return false;
	return human_size(text + strlen(XLA_PHRASE), text + len, bytes, exact);
}

#define TF_PHRASE "OOM when allocating tensor with shape["
#define TF_TYPE "] and type "

/* The bytes of one element of TensorFlow's type name (DataTypeString);
 * 0 for a name not known here. */
static uint64_t tf_type_bytes(const char *p, const char *end)
{
	static const struct {
		const char *name;
		uint64_t bytes;
	} types[] = {
		{ "float", 4 }, { "double", 8 },    { "half", 2 },	  { "bfloat16", 2 },
		{ "int8", 1 },	{ "uint8", 1 },	    { "int16", 2 },	  { "uint16", 2 },
		{ "int32", 4 }, { "uint32", 4 },    { "int64", 8 },	  { "uint64", 8 },
		{ "bool", 1 },	{ "complex64", 8 }, { "complex128", 16 },
	};
	size_t n = 0;
	while (p + n < end && ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
		n++;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == n && !memcmp(p, types[i].name, n))
			return types[i].bytes;
	return 0;
}

bool mt_tf_oom_parse(const char *text, size_t len, uint64_t *bytes)
{
	if (!text || len > BFC_MAX_LINE)
		return false;
	const char *end = text + len;
	const char *p = find(text, len, TF_PHRASE);
	if (!p)
		return false;
	p += strlen(TF_PHRASE);
	uint64_t elements = 1;
	/* "shape[]" is a scalar; else dimensions, comma-separated */
	while (p < end && *p != ']') {
		uint64_t d = 0;
		const char *start = p;
		while (p < end && p - start < 19 && *p >= '0' && *p <= '9')
			d = d * 10 + (uint64_t)(*p++ - '0');
		if (p == start || (p < end && *p >= '0' && *p <= '9'))
			return false; /* no number, or one of 19 digits or more */
		if (d && elements > UINT64_MAX / d)
			return false;
		elements *= d;
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p != ']')
			return false;
	}
	if ((size_t)(end - p) < strlen(TF_TYPE) || memcmp(p, TF_TYPE, strlen(TF_TYPE)))
		return false;
	uint64_t size = tf_type_bytes(p + strlen(TF_TYPE), end);
	if (!size || !elements || elements > UINT64_MAX / size)
		return false;
	*bytes = elements * size;
	return true;
}
