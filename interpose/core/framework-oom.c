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
 * it. This file reads it; hook-log.c sees it go by. */
#include "core.h"

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
