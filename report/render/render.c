/* The formats by --format name (render.h): what main.c dispatches
 * through. A new format is a render-NAME.c and an entry here. */
#include "render.h"

#include <string.h>

#include "compare.h"

const struct renderer render_formats[] = {
	{ .name = "text",
	  .render = render_text,
	  .diff = compare_diff_text,
	  .ranks = compare_ranks_text },
	{ .name = "json",
	  .render = render_json,
	  .diff = compare_diff_json,
	  .ranks = compare_ranks_json },
	{ .name = "html", .render = render_html, .ranks = compare_ranks_html },
	{ .name = "folded",
	  .render = render_folded,
	  .refuse = render_weight_refuse,
	  .takes_weight = true },
	{ .name = "perfetto", .render = render_perfetto, .merges = true },
	{ .name = "torch-snapshot",
	  .render = render_torch_snapshot,
	  .wants_moment = true,
	  .binary = true },
	{ .name = "pprof",
	  .render = render_pprof,
	  .refuse = render_weight_refuse,
	  .takes_weight = true,
	  .binary = true },
	{ .name = "speedscope", .render = render_speedscope },
	{ .name = NULL },
};

const struct renderer *render_find(const char *name)
{
	for (const struct renderer *r = render_formats; r->name; r++) {
		if (strcmp(r->name, name) == 0)
			return r;
	}
	return NULL;
}
