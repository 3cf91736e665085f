/* One row of the trace's events table as the model consumes it
 * (docs/trace-format.md). The reader turns SQL NULLs into the has_ flags
 * and defaults below, so the model never sees a NULL. It also adds what
 * only the trace's other tables can say (the site of the stack, what an
 * operation or a mark is, the module of a CUPTI record), so that the
 * model never needs the trace itself. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Where an allocation is attributed (docs/report-json.md, "Sites"). */
enum site_kind {
	SITE_UNSET = 0, /* not resolved: the model groups by stack */
	SITE_PYTHON,	/* id: the user's Python frame (a trace frame index) */
	SITE_OP,	/* id: the NVTX operation (ops.id) */
	SITE_NATIVE,	/* id: the user's native frame (a trace frame index) */
	SITE_STACK,	/* id: the stack id */
	SITE_CUPTI,	/* id: the module of CUPTI's pc (index), -1 unknown */
	SITE_KINDS,
};

/* The site an event is attributed to. */
struct site_ref {
	int64_t id;
	int kind;	/* enum site_kind */
	uint32_t depth; /* of the site's frame in the stack (python, native) */
	/* python, native: the index + 1 of the caller's frame the site is
	 * told apart by (a helper called from several places with different
	 * sizes, model-site.c); 0: one site for all its callers */
	int64_t caller;
};

/* What a mark is, from its label (trace-schema.h). */
enum mark_kind {
	MARK_USER = 0,
	MARK_INTERNAL,	/* made by memtrace itself (MT_MARK_PREFIX) */
	MARK_CUPTI_ON,	/* MT_CUPTI_ON_MARK */
	MARK_CUPTI_OFF, /* MT_CUPTI_OFF_MARK */
};

/* The fields in the order of their size, the ones every event uses first:
 * 168 bytes, which the reader's thread hands to the model's. */
struct trace_event {
	int64_t seq;
	int64_t time_ns;
	uint64_t address;
	uint64_t bytes; /* 0 when NULL or negative */
	int kind;	/* MT_EV_*; others are counted and ignored */
	int mem;	/* MT_MEM_*, 0 when NULL */
	int device;	/* CUDA device ordinal; -1 when NULL or not an ordinal */
	int source;	/* MT_SOURCE_*; 0 when NULL */
	uint64_t stream; /* 0 when NULL */
	int64_t stack;	 /* 0: none */
	int64_t thread;	 /* kernel thread id (threads.id); 0 when NULL */
	int64_t api;	 /* apis.id */
	uint64_t handle; /* map: the physical allocation; pools: the pool */
	int64_t status;	 /* 0 when NULL */
	/* from the ooms table, for oom and tensor_oom events */
	int64_t device_free, device_total;
	/* tensor_oom: the allocator's own cap (ooms.limit_bytes), 0: none */
	uint64_t limit;

	/* ---- added by the reader ---- */
	int64_t op; /* ops.id (the first of its name and domain); a mark's label */
	/* op is one of a series of ranges named per build ("build 3"): its number */
	int64_t build;
	int64_t module;	      /* CUPTI records: module index of the pc, -1 unknown */
	struct site_ref site; /* where an allocation of this stack and op belongs */
	int mark_kind;	      /* enum mark_kind, for marks */
	/* the row of the sites table the event is of, as an index in t->sites
	 * plus one (0: none, as in a version 1 trace): every field but seq,
	 * time_ns, address and bytes is the same for all its events */
	uint32_t site_slot;

	bool has_address;
	bool has_handle;
	bool has_device_free, has_device_total; /* the ooms table's */
	bool has_op;
	bool has_build;
	bool at_mark;  /* the first mark with the label --at-mark names */
	bool no_cupti; /* the trace has no CUPTI record at all (no cupti row) */
};
