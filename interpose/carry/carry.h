/* What an event carries (layer 3, interpose/carry/): native stacks and
 * operation names; Python frames are python.h. Calls the core only. See
 * core/core.h. */
#pragma once

#include "core.h"

/* ---- unwind.c: native stacks ---- */
void mt_unwind_init(void);
/* Up to max return addresses, the caller of the hooked function first,
 * from ips[*skip] on (before them: the unwind's own frames, inside
 * memtrace; *skip <= MT_UNWIND_SLACK). ips must have room for max +
 * MT_UNWIND_SLACK entries. */
#define MT_UNWIND_SLACK 8
unsigned mt_unwind(uintptr_t *ips, unsigned max, unsigned *skip);

/* ---- nvtx-names.c: operation names and each thread's range stack ---- */
#define MT_NVTX_DOMAINS 64
#define MT_NVTX_NO_DOMAIN 0 /* the default domain */
/* Interns a mark label or range name given by the program. */
uint32_t mt_nvtx_intern(const char *name);
/* A range name in a domain, cut before a per-call field (", seq = ");
 * the same from UTF-32. 0 for NULL. */
uint32_t mt_nvtx_intern_op(uint32_t domain, const char *s);
uint32_t mt_nvtx_intern_wide(uint32_t domain, const wchar_t *w);
/* The index of the domain named by an interned name (MT_NVTX_NO_DOMAIN
 * when there are too many). */
uint32_t mt_nvtx_domain(uint32_t name);
/* This thread's range stack, as NVTX's calls return. id: 0 for a
 * push/pop range; mt_nvtx_start gives a start/end range its id. */
int mt_nvtx_push(uint32_t domain, uint32_t op, uint64_t id);
uint64_t mt_nvtx_start(uint32_t domain, uint32_t op);
int mt_nvtx_pop(uint32_t domain);
void mt_nvtx_end(uint64_t id);
/* The innermost range of this thread (0: none). */
uint32_t mt_nvtx_current_op(void);
/* Writer side: the name (and domain, "" for the default) of an id. */
bool mt_nvtx_name(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
