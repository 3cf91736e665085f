/* Diagnosis: the cause of an out-of-memory failure (or, in a run without
 * one, of what it leaked), judged from the events, each with the evidence
 * for it and what to try. A function over the model, so the text, HTML
 * and JSON reports say the same thing. The strings hold names from the
 * trace (sites): untrusted, renderers escape them as any other trace
 * string. docs/report.md, "The cause", states the rules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "trace-cause.h"
#include "trace.h"

/* The causes (trace/trace-cause.h), by the name the JSON report gives
 * them (diagnose_cause_name). */
enum diag_kind {
	DIAG_GROWTH = TRACE_CAUSE_GROWTH,
	DIAG_TOO_BIG = TRACE_CAUSE_TOO_BIG,
	DIAG_FRAGMENTATION = TRACE_CAUSE_FRAGMENTATION,
	DIAG_ORPHANED_GRAPHS = TRACE_CAUSE_ORPHANED_GRAPHS,
	DIAG_NOT_OURS = TRACE_CAUSE_NOT_OURS,
	DIAG_PREALLOCATED = TRACE_CAUSE_PREALLOCATED,
	DIAG_ALLOCATOR_LIMIT = TRACE_CAUSE_ALLOCATOR_LIMIT,
};

struct diagnosis {
	enum diag_kind kind;
	const char *title; /* a static string: "Fragmentation" */
	char *evidence;	   /* what in the trace shows it, one sentence */
	char *remedy;	   /* what to do, one or two sentences */
	int64_t stack;	   /* the stack the evidence names first; 0: none */
	/* growth: bytes kept per repetition over `rounds` repetitions;
	 * too_big: what the step needed (bytes) and what was left for it
	 * (room); fragmentation: the free bytes; orphaned_graphs: the graph
	 * memory pinned or never freed; not_ours: the bytes in use the
	 * process did not allocate; preallocated: the arena's bytes;
	 * allocator_limit: the cap (0: not known) and what was left under
	 * it (room) */
	uint64_t bytes, rounds, room;
	/* a reading the events cannot tell from the lead's: listed after it
	 * (growth from allocations repeated until the failure, which a model
	 * of equal parts loaded until it fails also shows) */
	bool weak;
};

struct diagnoses {
	struct diagnosis *items; /* the cause first, then what else applies */
	size_t n;
};

/* "growth", "too_big", ... */
const char *diagnose_cause_name(enum diag_kind kind);

/* Fill d (zeroed by the call) from a finished model: for the headline
 * OOM (render_headline_oom) when there is one, else for the run's leaks
 * and growth (then possibly none). */
void diagnose(const struct trace *t, const struct model *m, struct diagnoses *d);
/* The same for one OOM of m->ooms (NULL: the run without one). */
void diagnose_oom(const struct trace *t, const struct model *m, const struct model_oom *o,
		  struct diagnoses *d);
void diagnoses_fini(struct diagnoses *d);

/* Executable graphs never destroyed (as of the --at-mark mark, else the
 * end), and the graph memory they pin in *pinned. */
uint64_t diagnose_orphaned_execs(const struct model_graphs *g, uint64_t *pinned);

/* Graphs are the story when executable graphs left behind pin memory or
 * graph memory was never freed; growth is, when the first growth site
 * grows. The text and HTML reports then put them under the headline. */
bool diagnose_graphs_story(const struct model *m);
bool diagnose_growth_story(const struct model *m);
