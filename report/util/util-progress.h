/* A progress bar on stderr while a trace is read: only on a terminal, and
 * only once reading has taken more than a second, so quick reports and
 * pipes (CI logs, scripts) never see it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PROGRESS_DELAY_NS 1000000000ll
/* events between two looks at the clock */
#define PROGRESS_STRIDE 65536u

struct progress {
	FILE *f;
	bool enabled, shown;
	int64_t start_ns, last_draw_ns, delay_ns;
	uint64_t total, done, next_check;
	const char *what; /* borrowed, e.g. the trace path */
};

/* enabled: whether a bar may be drawn at all (the caller checks for a
 * terminal: progress_wanted). total: events expected, 0 when unknown. */
void progress_start(struct progress *p, FILE *f, bool enabled, const char *what, uint64_t total);

/* True when f is a terminal that can take a redrawn line. */
bool progress_wanted(FILE *f);

/* Out of line: looks at the clock, draws when due. */
void progress_update(struct progress *p);

static inline void progress_tick(struct progress *p)
{
	if (++p->done >= p->next_check)
		progress_update(p);
}

/* Erase the bar, if it was drawn. */
void progress_end(struct progress *p);
