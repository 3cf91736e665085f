/* Operation names and the range stack of each thread: what an event
 * carries as its operation (the innermost range of its thread) and what a
 * mark carries as its label. A leaf: nvtx.c (the NVTX entry points),
 * record.c (the op of an event), cupti.c and the public API (mark labels)
 * call it; it calls only the stack table.
 *
 * Names are interned once (a stack table keyed by the name's bytes) and
 * the writer turns ids back into names. Range names that embed a
 * per-call counter (PyTorch's emit_nvtx: "aten::mm, seq = 12, op_id = 7,
 * sizes = [...]") are cut at the first such field, so one operation is
 * one name. See docs/capture.md. */
#include "core.h"
#include "carry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MT_NVTX_NAME_MAX 200
#define MT_NVTX_DEPTH 64

struct range {
	uint32_t op;
	uint32_t domain;
	uint64_t id; /* start/end ranges; 0 for push/pop */
};

static MT_TLS struct range tls_ranges[MT_NVTX_DEPTH];
static MT_TLS unsigned tls_depth; /* may exceed MT_NVTX_DEPTH: deeper ranges are not kept */

static struct mt_stack_table *names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t next_range_id = 1;

/* Domains are slots of this array, named by an interned id. Index 0 is
 * the default domain. */
static uint32_t domain_names[MT_NVTX_DOMAINS];
static _Atomic unsigned ndomains = 1;

/* ---- names ---- */

static void make_names(void)
{
	names = mt_stack_table_new(16, 1u << 20);
}

/* A name is interned as words: the domain, then the bytes (zero-padded). */
static uint32_t intern(uint32_t domain, const char *s, size_t len)
{
	pthread_once(&names_once, make_names);
	if (!names)
		return 0;
	uintptr_t words[1 + (MT_NVTX_NAME_MAX + sizeof(uintptr_t)) / sizeof(uintptr_t)];
	if (len > MT_NVTX_NAME_MAX)
		len = MT_NVTX_NAME_MAX;
	size_t nwords = 1 + (len + sizeof(uintptr_t)) / sizeof(uintptr_t);
	memset(words, 0, nwords * sizeof(uintptr_t));
	words[0] = domain;
	memcpy(&words[1], s, len);
	return mt_stack_intern(names, words, (unsigned)nwords);
}

static size_t op_length(const char *s, size_t max)
{
	static const char *const cuts[] = { ", seq = ", ", op_id = ", ", sizes = " };
	size_t len = strnlen(s, max);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		const char *c = strstr(s, cuts[i]);
		if (c && (size_t)(c - s) < len)
			len = (size_t)(c - s);
	}
	return len;
}

uint32_t mt_nvtx_intern_op(uint32_t domain, const char *s)
{
	return s ? intern(domain, s, op_length(s, MT_NVTX_NAME_MAX * 4)) : 0;
}

uint32_t mt_nvtx_intern(const char *name)
{
	return name ? intern(MT_NVTX_NO_DOMAIN, name, strnlen(name, MT_NVTX_NAME_MAX)) : 0;
}

/* wchar_t is UTF-32 on Linux. */
uint32_t mt_nvtx_intern_wide(uint32_t domain, const wchar_t *w)
{
	char buf[MT_NVTX_NAME_MAX + 4];
	size_t n = 0;
	for (; w && *w && n + 4 < sizeof(buf); w++) {
		uint32_t c = (uint32_t)*w;
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xe0 | c >> 12);
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[n++] = (char)(0xf0 | c >> 18);
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	buf[n] = '\0';
	return intern(domain, buf, op_length(buf, sizeof(buf)));
}

bool mt_nvtx_name(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz)
{
	unsigned n;
	const uintptr_t *words = names ? mt_stack_get(names, id, &n) : NULL;
	out[0] = domain[0] = '\0';
	if (!words || n < 1)
		return false;
	size_t len = strnlen((const char *)&words[1], (n - 1) * sizeof(uintptr_t));
	snprintf(out, outsz, "%.*s", (int)len, (const char *)&words[1]);
	uint32_t d = (uint32_t)words[0];
	if (d != MT_NVTX_NO_DOMAIN && d < MT_NVTX_DOMAINS)
		mt_nvtx_name(domain_names[d], domain, domainsz, (char[1]){ 0 }, 1);
	return true;
}

/* Domains live as long as the process; the same name twice is the same
 * domain. */
uint32_t mt_nvtx_domain(uint32_t name)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	unsigned n = atomic_load(&ndomains);
	unsigned i = 1;
	while (i < n && domain_names[i] != name)
		i++;
	if (i == n && n < MT_NVTX_DOMAINS) {
		domain_names[n] = name;
		atomic_store(&ndomains, n + 1);
	}
	pthread_mutex_unlock(&lock);
	return i < MT_NVTX_DOMAINS ? i : MT_NVTX_NO_DOMAIN;
}

/* ---- the range stack of this thread ---- */

int mt_nvtx_push(uint32_t domain, uint32_t op, uint64_t id)
{
	if (tls_depth < MT_NVTX_DEPTH)
		tls_ranges[tls_depth] = (struct range){ op, domain, id };
	return (int)tls_depth++;
}

uint64_t mt_nvtx_start(uint32_t domain, uint32_t op)
{
	uint64_t id = atomic_fetch_add(&next_range_id, 1);
	mt_nvtx_push(domain, op, id);
	return id;
}

int mt_nvtx_pop(uint32_t domain)
{
	for (unsigned i = tls_depth; i > 0; i--) {
		if (i > MT_NVTX_DEPTH) {
			tls_depth--; /* a range we never kept */
			return (int)tls_depth;
		}
		struct range *r = &tls_ranges[i - 1];
		if (r->domain == domain && r->id == 0) {
			memmove(r, r + 1, (tls_depth - i) * sizeof(*r));
			tls_depth--;
			return (int)tls_depth;
		}
	}
	return -2; /* NVTX: no range to pop */
}

/* A start/end range ended on the thread that started it. Ended on another
 * thread, it stays open on its starter until that one's stack unwinds past
 * it: documented. */
void mt_nvtx_end(uint64_t id)
{
	unsigned kept = tls_depth < MT_NVTX_DEPTH ? tls_depth : MT_NVTX_DEPTH;
	for (unsigned i = kept; i > 0; i--) {
		if (tls_ranges[i - 1].id == id) {
			memmove(&tls_ranges[i - 1], &tls_ranges[i], (kept - i) * sizeof(struct range));
			tls_depth--;
			return;
		}
	}
}

uint32_t mt_nvtx_current_op(void)
{
	unsigned d = tls_depth < MT_NVTX_DEPTH ? tls_depth : MT_NVTX_DEPTH;
	return d ? tls_ranges[d - 1].op : 0;
}
