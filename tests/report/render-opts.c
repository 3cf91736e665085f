/* render-opts TRACE --format text|json [--group-by HOW] [--at-mark LABEL] [--top N]:
 * the report as memtrace-report writes it, with the reader's options set
 * directly (golden.sh's second reporter). It keeps the golden tests of
 * --group-by and --at-mark independent of the command line's wiring. */
#include <stdlib.h>
#include <string.h>

#include "model-site.h"
#include "model.h"
#include "render.h"
#include "symbolize.h"
#include "trace.h"

static void feed(void *ctx, const struct trace_event *ev)
{
	model_feed(ctx, ev);
}

static int parse(int argc, char **argv, struct report_options *ro, struct render_opts *o,
		 const char **format)
{
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--format") == 0) {
			*format = argv[i + 1];
			continue;
		}
		if (strcmp(argv[i], "--group-by") == 0 && report_parse_group_by(argv[i + 1], &ro->group_by))
			continue;
		if (strcmp(argv[i], "--at-mark") == 0) {
			ro->at_mark = argv[i + 1];
			continue;
		}
		if (strcmp(argv[i], "--top") == 0) {
			o->top = strtoul(argv[i + 1], NULL, 10);
			o->top_given = true;
			continue;
		}
		fprintf(stderr, "render-opts: bad option %s\n", argv[i]);
		return -1;
	}
	return argc % 2 == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct report_options ro = { 0 };
	struct render_opts o = { .top = RENDER_DEFAULT_TOP };
	struct trace t = { 0 };
	struct symbolizer *sym;
	const char *format = "text";
	struct model m;
	int rc = 1;

	if (argc < 2 || parse(argc, argv, &ro, &o, &format) < 0) {
		fprintf(stderr, "usage: render-opts TRACE [--format text|json] [--group-by HOW] "
				"[--at-mark LABEL] [--top N]\n");
		return 2;
	}
	model_init(&m);
	if (trace_open(&t, argv[1], &model_site_rules) < 0 || trace_load(&t) < 0) {
		fprintf(stderr, "render-opts: %s\n", t.error);
		goto out;
	}
	sym = symbolizer_new();
	symbolize_trace(sym, &t);
	symbolizer_free(sym);
	for (size_t i = 0; i < t.n_devices; i++)
		model_device_info(&m, t.devices[i].id, t.devices[i].total_bytes, t.devices[i].has_free,
				  t.devices[i].free_bytes_at_first_use);
	t.opts = ro;
	if (trace_read_events(&t, feed, &m) < 0) {
		fprintf(stderr, "render-opts: %s\n", t.error);
		goto out;
	}
	model_finish(&m);
	render_find(strcmp(format, "json") == 0 ? "json" : "text")->render(stdout, &t, &m, &o);
	rc = 0;
out:
	model_fini(&m);
	trace_close(&t);
	return rc;
}
