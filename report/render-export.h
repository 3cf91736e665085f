/* Exports for other tools: folded stacks (flamegraph.pl, speedscope) and
 * a Chrome trace / Perfetto JSON file. See docs/report.md. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "model.h"
#include "trace.h"

enum render_weight {
	WEIGHT_DEFAULT, /* at the OOM when there was one, else at the peak */
	WEIGHT_PEAK,	/* device bytes each site held at the peak */
	WEIGHT_OOM,	/* device bytes live at the (last) OOM, by stack */
	WEIGHT_LEAKED,	/* device bytes still live at the end, by stack */
};

/* The weight WEIGHT_DEFAULT stands for in this model. */
enum render_weight render_weight_resolve(const struct model *m, enum render_weight w);

/* One line per stack, "outermost;...;innermost BYTES", stacks of zero
 * bytes left out. False (nothing written) when the weight asks for an OOM
 * the trace does not have, or whose live set was not kept. */
bool render_folded(FILE *f, const struct trace *t, const struct model *m, enum render_weight w);

/* Chrome trace event JSON: a counter of device bytes live (from
 * m->timeline), instant events for the peak, every OOM, marks and graph
 * events. */
void render_perfetto(FILE *f, const struct trace *t, const struct model *m);
