#include "util-progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util-str.h"

#define BAR 30
#define REDRAW_NS 100000000ll

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

bool progress_wanted(FILE *f)
{
	const char *term = getenv("TERM");

	return isatty(fileno(f)) && !(term && strcmp(term, "dumb") == 0);
}

void progress_start(struct progress *p, FILE *f, bool enabled, const char *what, uint64_t total)
{
	*p = (struct progress){
		.f = f, .enabled = enabled, .what = what, .total = total,
		.delay_ns = PROGRESS_DELAY_NS, .next_check = PROGRESS_STRIDE,
	};
	if (enabled)
		p->start_ns = now_ns();
}

static void draw(struct progress *p)
{
	char done[32];
	size_t fill = 0;

	snprintf(done, sizeof(done), "%.1fM", (double)p->done / 1e6);
	fputs("\r\033[Kmemtrace report: reading ", p->f);
	escape_text(p->f, p->what, 40);
	if (p->total) {
		uint64_t d = p->done < p->total ? p->done : p->total;

		fill = (size_t)(BAR * d / p->total);
		fputs(" [", p->f);
		for (size_t i = 0; i < BAR; i++)
			fputc(i < fill ? '#' : '.', p->f);
		fprintf(p->f, "] %3d%% of %.1fM events", (int)(100 * d / p->total),
			(double)p->total / 1e6);
	} else {
		fprintf(p->f, ": %s events", done);
	}
	fflush(p->f);
	p->shown = true;
}

void progress_update(struct progress *p)
{
	int64_t now;

	p->next_check = p->done + PROGRESS_STRIDE;
	if (!p->enabled)
		return;
	now = now_ns();
	if (now - p->start_ns < p->delay_ns || now - p->last_draw_ns < REDRAW_NS)
		return;
	p->last_draw_ns = now;
	draw(p);
}

void progress_end(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", p->f);
		fflush(p->f);
	}
	p->shown = false;
}
