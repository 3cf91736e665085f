/* NVTX operations: memtrace is an NVTX injection library. The NVTX
 * loader (header-only NVTX 3 in PyTorch, TensorFlow, the CUDA libraries)
 * reads NVTX_INJECTION64_PATH, which the constructor points at this
 * library when the user has not, and calls InitializeInjectionNvtx2 once;
 * we then fill its function tables with our range and mark handlers.
 *
 * The handlers turn NVTX's arguments into names and domains and hand them
 * to nvtx-names.c (the names and each thread's range stack, per domain);
 * a mark is recorded by record.c. See docs/capture.md. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "core.h"
#include "writer.h"
#include "carry.h"
#include "record.h"
#include "hooks.h"

#include <stdint.h>

/* Domains are handles we give out: a slot of this array, at the index
 * nvtx-names.c gives the domain's name. Index 0 is the default domain. */
struct nvtxDomainRegistration_st {
	uint8_t unused;
};
static struct nvtxDomainRegistration_st domains[MT_NVTX_DOMAINS];

static uint32_t domain_index(nvtxDomainHandle_t d)
{
	return d ? (uint32_t)(((uintptr_t)d - (uintptr_t)domains) / sizeof(domains[0]))
		 : MT_NVTX_NO_DOMAIN;
}

static uint32_t intern_attr(uint32_t domain, const nvtxEventAttributes_t *a)
{
	if (!a)
		return 0;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return mt_nvtx_intern_op(domain, a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return mt_nvtx_intern_wide(domain, a->message.unicode);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return (uint32_t)(uintptr_t)a->message.registered;
	default:
		return 0;
	}
}

/* ---- the NVTX entry points ---- */

static void NVTX_API mark_ex(const nvtxEventAttributes_t *a)
{
	mt_record_mark(MT_API_nvtxMark, intern_attr(MT_NVTX_NO_DOMAIN, a));
}

static void NVTX_API mark_a(const char *m)
{
	mt_record_mark(MT_API_nvtxMark, mt_nvtx_intern_op(MT_NVTX_NO_DOMAIN, m));
}

static void NVTX_API mark_w(const wchar_t *m)
{
	mt_record_mark(MT_API_nvtxMark, mt_nvtx_intern_wide(MT_NVTX_NO_DOMAIN, m));
}

static nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t *a)
{
	return mt_nvtx_start(MT_NVTX_NO_DOMAIN, intern_attr(MT_NVTX_NO_DOMAIN, a));
}

static nvtxRangeId_t NVTX_API start_a(const char *m)
{
	return mt_nvtx_start(MT_NVTX_NO_DOMAIN, mt_nvtx_intern_op(MT_NVTX_NO_DOMAIN, m));
}

static nvtxRangeId_t NVTX_API start_w(const wchar_t *m)
{
	return mt_nvtx_start(MT_NVTX_NO_DOMAIN, mt_nvtx_intern_wide(MT_NVTX_NO_DOMAIN, m));
}

static void NVTX_API range_end(nvtxRangeId_t id)
{
	mt_nvtx_end(id);
}

static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
	return mt_nvtx_push(MT_NVTX_NO_DOMAIN, intern_attr(MT_NVTX_NO_DOMAIN, a), 0);
}

static int NVTX_API push_a(const char *m)
{
	return mt_nvtx_push(MT_NVTX_NO_DOMAIN, mt_nvtx_intern_op(MT_NVTX_NO_DOMAIN, m), 0);
}

static int NVTX_API push_w(const wchar_t *m)
{
	return mt_nvtx_push(MT_NVTX_NO_DOMAIN, mt_nvtx_intern_wide(MT_NVTX_NO_DOMAIN, m), 0);
}

static int NVTX_API range_pop(void)
{
	return mt_nvtx_pop(MT_NVTX_NO_DOMAIN);
}

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mt_record_mark(MT_API_nvtxMark, intern_attr(domain_index(d), a));
}

static nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return mt_nvtx_start(domain_index(d), intern_attr(domain_index(d), a));
}

static void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	mt_nvtx_end(id);
}

static int NVTX_API domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return mt_nvtx_push(domain_index(d), intern_attr(domain_index(d), a), 0);
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d)
{
	return mt_nvtx_pop(domain_index(d));
}

static nvtxStringHandle_t NVTX_API register_a(nvtxDomainHandle_t d, const char *s)
{
	return (nvtxStringHandle_t)(uintptr_t)mt_nvtx_intern_op(domain_index(d), s);
}

static nvtxStringHandle_t NVTX_API register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	return (nvtxStringHandle_t)(uintptr_t)mt_nvtx_intern_wide(domain_index(d), s);
}

static nvtxDomainHandle_t make_domain(uint32_t name)
{
	return &domains[mt_nvtx_domain(name)];
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
	return make_domain(mt_nvtx_intern(name ? name : ""));
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
	return make_domain(mt_nvtx_intern_wide(MT_NVTX_NO_DOMAIN, name));
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
