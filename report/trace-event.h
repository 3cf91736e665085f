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
	int kind;	/* enum site_kind */
	int64_t id;
	uint32_t depth; /* of the site's frame in the stack (python, native) */
};

/* What a mark is, from its label (trace-schema.h). */
enum mark_kind {
	MARK_USER = 0,
	MARK_INTERNAL,	/* made by memtrace itself (MT_MARK_PREFIX) */
	MARK_CUPTI_ON,	/* MT_CUPTI_ON_MARK */
	MARK_CUPTI_OFF, /* MT_CUPTI_OFF_MARK */
};

struct trace_event {
	int64_t seq;
	int64_t time_ns;
	int kind;	/* MT_EV_*; others are counted and ignored */
	int64_t api;	/* apis.id */
	int device;	/* CUDA device ordinal; -1 when NULL or not an ordinal */
	uint64_t address;
	bool has_address;
	uint64_t bytes; /* 0 when NULL or negative */
	int mem;	/* MT_MEM_*, 0 when NULL */
	int64_t stack;	/* 0: none */
	uint64_t handle; /* map: the physical allocation; pools: the pool */
	bool has_handle;
	uint64_t stream; /* 0 when NULL */
	int64_t thread;	 /* kernel thread id (threads.id); 0 when NULL */
	int64_t status;	 /* 0 when NULL */
	int source;	 /* MT_SOURCE_*; 0 when NULL */
	/* from the ooms table, for oom events */
	bool has_device_free, has_device_total;
	int64_t device_free, device_total;

	/* ---- added by the reader ---- */
	bool has_op;
	int64_t op; /* ops.id (the first of its name and domain); a mark's label */
	/* op is one of a series of ranges named per build ("build 3"): its number */
	bool has_build;
	int64_t build;
	int mark_kind;	      /* enum mark_kind, for marks */
	bool at_mark;	      /* the first mark with the label --at-mark names */
	struct site_ref site; /* where an allocation of this stack and op belongs */
	int64_t module;	      /* CUPTI records: module index of the pc, -1 unknown */
	bool no_cupti;	      /* the trace has no CUPTI record at all (no cupti row) */
};
