/* Diagnosis: the remedies that fit what the trace shows, each with the
 * evidence for it. A function over the model, so the text and HTML
 * reports say the same thing. The strings hold names from the trace
 * (sites): untrusted, renderers escape them as any other trace string. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "trace.h"

enum diag_kind {
	DIAG_PREALLOCATION = 1, /* one early allocation of most of the device */
	DIAG_FRAGMENTATION,	/* more free at the failure than the request */
	DIAG_WORKING_SET,	/* needs more at once than the device has, no leak */
	DIAG_GROWTH,		/* memory that is never given back: the floor rises */
	DIAG_UNEXPLAINED,	/* device memory in use the process did not allocate */
	DIAG_BUILDS,		/* a site grows build after build, or graph execs left behind */
};

struct diagnosis {
	enum diag_kind kind;
	const char *title; /* a static string: "Fragmentation" */
	char *evidence;	   /* what in the trace shows it, one sentence */
	char *remedy;	   /* what to do, one or two sentences */
};

struct diagnoses {
	struct diagnosis *items; /* most useful first */
	size_t n;
};

/* Fill d (zeroed by the call) from a finished model; m->timeline, when
 * set, lets it see growth over the run. */
void diagnose(const struct trace *t, const struct model *m, struct diagnoses *d);
void diagnoses_fini(struct diagnoses *d);

/* Executable graphs never destroyed (as of the --at-mark mark, else the
 * end), and the graph memory they pin in *pinned. */
uint64_t diagnose_orphaned_execs(const struct model_graphs *g, uint64_t *pinned);

/* Graphs are the story when executable graphs left behind pin memory or
 * graph memory was never freed; growth is, when the first growth site
 * grows. The text and HTML reports then put them under the headline. */
bool diagnose_graphs_story(const struct model *m);
bool diagnose_growth_story(const struct model *m);
