/* NVTX operations: memtrace is an NVTX injection library. The NVTX
 * loader (header-only NVTX 3 in PyTorch, TensorFlow, the CUDA libraries)
 * reads NVTX_INJECTION64_PATH, which the constructor points at this
 * library when the user has not, and calls InitializeInjectionNvtx2 once;
 * we then fill its function tables with our range and mark handlers.
 *
 * Each thread keeps its own range stack (push/pop and start/end, per
 * domain); an event carries the innermost range of its thread as its
 * operation. Names are interned once (a stack table keyed by the name's
 * bytes) and the writer turns ids back into names. Range names that embed
 * a per-call counter (PyTorch's emit_nvtx: "aten::mm, seq = 12, op_id = 7,
 * sizes = [...]") are cut at the first such field, so one operation is one
 * name. See docs/capture.md. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#define MT_NVTX_NAME_MAX 200
#define MT_NVTX_DEPTH 64
#define MT_NVTX_DOMAINS 64
#define NO_DOMAIN 0

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

/* Domains are handles we give out: a slot in this array, named by an
 * interned id. Index 0 is the default domain. */
struct nvtxDomainRegistration_st {
	uint32_t name;
	uint32_t index;
};
static struct nvtxDomainRegistration_st domains[MT_NVTX_DOMAINS];
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

static uint32_t intern_ascii(uint32_t domain, const char *s)
{
	return s ? intern(domain, s, op_length(s, MT_NVTX_NAME_MAX * 4)) : 0;
}

uint32_t mt_nvtx_intern(const char *name)
{
	return name ? intern(NO_DOMAIN, name, strnlen(name, MT_NVTX_NAME_MAX)) : 0;
}

/* wchar_t is UTF-32 on Linux. */
static uint32_t intern_wide(uint32_t domain, const wchar_t *w)
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

static uint32_t domain_index(nvtxDomainHandle_t d)
{
	return d ? d->index : NO_DOMAIN;
}

static uint32_t intern_attr(uint32_t domain, const nvtxEventAttributes_t *a)
{
	if (!a)
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return intern_ascii(domain, a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return intern_wide(domain, a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return (uint32_t)(uintptr_t)a->message.registered;
	default:
		return 0;
	}
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
	if (d != NO_DOMAIN && d < MT_NVTX_DOMAINS)
		mt_nvtx_name(domains[d].name, domain, domainsz, (char[1]){ 0 }, 1);
	return true;
}

/* ---- the range stack of this thread ---- */

static int push(uint32_t domain, uint32_t op, uint64_t id)
{
	if (tls_depth < MT_NVTX_DEPTH)
		tls_ranges[tls_depth] = (struct range){ op, domain, id };
	return (int)tls_depth++;
}

/* Pops the innermost push/pop range of the domain. */
static int pop(uint32_t domain)
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
static void end_range(uint64_t id)
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

/* ---- the NVTX entry points ---- */

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a)
{
	mt_record_mark(MT_API_nvtxMark, intern_attr(NO_DOMAIN, a));
}

static void NVTX_API mark_a(const char *m)
{
	mt_record_mark(MT_API_nvtxMark, intern_ascii(NO_DOMAIN, m));
}

static void NVTX_API mark_w(const wchar_t *m)
{
	mt_record_mark(MT_API_nvtxMark, intern_wide(NO_DOMAIN, m));
}

static uint64_t start(uint32_t domain, uint32_t op)
{
	uint64_t id = atomic_fetch_add(&next_range_id, 1);
	push(domain, op, id);
	return id;
}

static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a)
{
	return start(NO_DOMAIN, intern_attr(NO_DOMAIN, a));
}

static nvtxRangeId_t NVTX_API start_a(const char *m)
{
	return start(NO_DOMAIN, intern_ascii(NO_DOMAIN, m));
}

static nvtxRangeId_t NVTX_API start_w(const wchar_t *m)
{
	return start(NO_DOMAIN, intern_wide(NO_DOMAIN, m));
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
	end_range(id);
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
	return push(NO_DOMAIN, intern_attr(NO_DOMAIN, a), 0);
}

static int NVTX_API push_a(const char *m)
{
	return push(NO_DOMAIN, intern_ascii(NO_DOMAIN, m), 0);
}

static int NVTX_API push_w(const wchar_t *m)
{
	return push(NO_DOMAIN, intern_wide(NO_DOMAIN, m), 0);
}

static int NVTX_API range_pop(void)
{
	return pop(NO_DOMAIN);
}

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mt_record_mark(MT_API_nvtxMark, intern_attr(domain_index(d), a));
}

static nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start(domain_index(d), intern_attr(domain_index(d), a));
}

static void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end_range(id);
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(domain_index(d), intern_attr(domain_index(d), a), 0);
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d)
{
	return pop(domain_index(d));
}

static nvtxStringHandle_t NVTX_API register_a(nvtxDomainHandle_t d, const char *s)
{
	return (nvtxStringHandle_t)(uintptr_t)intern_ascii(domain_index(d), s);
}

static nvtxStringHandle_t NVTX_API register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	return (nvtxStringHandle_t)(uintptr_t)intern_wide(domain_index(d), s);
}

/* Domains live as long as the process; creating the same name twice gives
 * the same handle. */
static nvtxDomainHandle_t make_domain(uint32_t name)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	unsigned n = atomic_load(&ndomains);
	unsigned i = 1;
	while (i < n && domains[i].name != name)
		i++;
	if (i == n && n < MT_NVTX_DOMAINS) {
		domains[n] = (struct nvtxDomainRegistration_st){ name, n };
		atomic_store(&ndomains, n + 1);
	}
	pthread_mutex_unlock(&lock);
	return i < MT_NVTX_DOMAINS ? &domains[i] : &domains[0];
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
	return make_domain(intern(NO_DOMAIN, name ? name : "", name ? strlen(name) : 0));
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
	return make_domain(intern_wide(NO_DOMAIN, name));
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d)
{
}

static void NVTX_API initialize(const void *reserved)
{
}

/* ---- injection ---- */

#define SET(table, size, cbid, fn)                                 \
	do {                                                        \
		if ((unsigned)(cbid) < (size) && (table)[cbid])     \
			*(table)[cbid] = (NvtxFunctionPointer)(fn); \
	} while (0)

static bool fill_core(const NvtxExportTableCallbacks *cb)
{
	NvtxFunctionTable t = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size) || !t)
		return false;
	SET(t, size, NVTX_CBID_CORE_MarkEx, mark_ex);
	SET(t, size, NVTX_CBID_CORE_MarkA, mark_a);
	SET(t, size, NVTX_CBID_CORE_MarkW, mark_w);
	SET(t, size, NVTX_CBID_CORE_RangeStartEx, start_ex);
	SET(t, size, NVTX_CBID_CORE_RangeStartA, start_a);
	SET(t, size, NVTX_CBID_CORE_RangeStartW, start_w);
	SET(t, size, NVTX_CBID_CORE_RangeEnd, range_end);
	SET(t, size, NVTX_CBID_CORE_RangePushEx, push_ex);
	SET(t, size, NVTX_CBID_CORE_RangePushA, push_a);
	SET(t, size, NVTX_CBID_CORE_RangePushW, push_w);
	SET(t, size, NVTX_CBID_CORE_RangePop, range_pop);
	return true;
}

static void fill_core2(const NvtxExportTableCallbacks *cb)
{
	NvtxFunctionTable t = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size) || !t)
		return;
	SET(t, size, NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex);
	SET(t, size, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start_ex);
	SET(t, size, NVTX_CBID_CORE2_DomainRangeEnd, domain_end);
	SET(t, size, NVTX_CBID_CORE2_DomainRangePushEx, domain_push_ex);
	SET(t, size, NVTX_CBID_CORE2_DomainRangePop, domain_pop);
	SET(t, size, NVTX_CBID_CORE2_DomainRegisterStringA, register_a);
	SET(t, size, NVTX_CBID_CORE2_DomainRegisterStringW, register_w);
	SET(t, size, NVTX_CBID_CORE2_DomainCreateA, domain_create_a);
	SET(t, size, NVTX_CBID_CORE2_DomainCreateW, domain_create_w);
	SET(t, size, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
	SET(t, size, NVTX_CBID_CORE2_Initialize, initialize);
}

MT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
MT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *cb =
		get_export_table ? get_export_table(NVTX_ETID_CALLBACKS) : NULL;
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable ||
	    !fill_core(cb))
		return 0;
	fill_core2(cb);
	return 1;
}
