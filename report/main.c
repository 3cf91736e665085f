/* memtrace-report: read a trace, build the model in one pass, render it.
 * Exit status: 0 report written, 1 the trace or the output file is the
 * problem, 2 bad usage. Every failure is one line prefixed
 * "memtrace report: " that says what is wrong and what to do. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "model.h"
#include "render.h"
#include "symbolize.h"
#include "trace.h"
#include "util-mem.h"

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML };

struct options {
	const char *trace;
	const char *output; /* NULL: stdout */
	enum format format;
	struct render_opts render;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: memtrace report TRACE [--format text|json|html] [-o FILE] [--top N]\n"
		"\n"
		"Report what a memtrace trace shows: the out-of-memory failure and who held\n"
		"the memory, the peak, the top allocation sites, leaks, pinned host memory,\n"
		"and memory kinds and pools beyond plain device memory.\n"
		"\n"
		"  -f, --format FMT  text (default), json or html (one self-contained file)\n"
		"  -o, --output FILE write the report to FILE instead of standard output\n"
		"  -n, --top N       entries per section (default %d; 0: all); JSON lists\n"
		"                    all entries unless --top is given\n"
		"  -h, --help        show this help\n"
		"  -V, --version     show the version\n"
		"\n"
		"Native frames are symbolized from the module files named in the trace,\n"
		"when they are still on disk and their build ids match. Set\n"
		"MEMTRACE_DEBUGINFOD=1 to let elfutils fetch debug info from DEBUGINFOD_URLS.\n"
		"\n"
		"Exit status: 0 report written, 1 unreadable trace or output, 2 bad usage.\n"
		"The JSON format is described in docs/report-json.md.\n",
		RENDER_DEFAULT_TOP);
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "memtrace report: %s%s%s; see 'memtrace report --help'\n", what,
		arg ? ": " : "", arg ? arg : "");
	return 2;
}

static bool parse_top(const char *s, size_t *top)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > SIZE_MAX)
		return false;
	*top = (size_t)v;
	return true;
}

static bool parse_format(const char *s, enum format *f)
{
	static const char *const names[] = { "text", "json", "html" };

	for (size_t i = 0; i < ARRAY_LENGTH(names); i++) {
		if (strcmp(s, names[i]) == 0) {
			*f = (enum format)i;
			return true;
		}
	}
	return false;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	*opt = (struct options){ .render.top = RENDER_DEFAULT_TOP };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:n:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!parse_format(optarg, &opt->format))
				return usage_error("unknown format (use text, json or html)", optarg);
			break;
		case 'o':
			opt->output = strcmp(optarg, "-") == 0 ? NULL : optarg;
			break;
		case 'n':
			if (!parse_top(optarg, &opt->render.top))
				return usage_error("--top needs a number of entries (0: all)", optarg);
			opt->render.top_given = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("memtrace report %s\n", MEMTRACE_VERSION);
			return 0;
		case ':':
			return usage_error("option needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no trace file given", NULL);
	if (optind + 1 < argc)
		return usage_error("one trace at a time; unexpected argument", argv[optind + 1]);
	opt->trace = argv[optind];
	return -1;
}

static void feed(void *ctx, const struct mt_event *ev)
{
	model_feed(ctx, ev);
}

static int build(struct trace *t, struct model *m, const char *path)
{
	struct symbolizer *sym;

	if (trace_open(t, path) < 0 || trace_load(t) < 0)
		return -1;
	sym = symbolizer_new();
	symbolize_trace(sym, t);
	symbolizer_free(sym);
	for (size_t i = 0; i < t->n_devices; i++)
		model_device_info(m, t->devices[i].id, t->devices[i].total_bytes,
				  t->devices[i].has_free, t->devices[i].free_bytes_at_first_use);
	if (trace_read_events(t, feed, m) < 0)
		return -1;
	model_finish(m);
	return 0;
}

static void render(FILE *f, const struct trace *t, const struct model *m,
		   const struct options *opt)
{
	switch (opt->format) {
	case FORMAT_TEXT: render_text(f, t, m, &opt->render); break;
	case FORMAT_JSON: render_json(f, t, m, &opt->render); break;
	case FORMAT_HTML: render_html(f, t, m, &opt->render); break;
	}
}

static int write_report(const struct trace *t, const struct model *m,
			const struct options *opt)
{
	const char *name = opt->output ? opt->output : "standard output";
	FILE *f = opt->output ? fopen(opt->output, "w") : stdout;
	int failed;

	if (!f) {
		fprintf(stderr, "memtrace report: cannot write the report to %s: %s\n", name,
			strerror(errno));
		return 1;
	}
	render(f, t, m, opt);
	failed = ferror(f) | fflush(f);
	if (f != stdout)
		failed |= fclose(f);
	if (failed) {
		fprintf(stderr, "memtrace report: error writing the report to %s: %s\n", name,
			strerror(errno));
		return 1;
	}
	return 0;
}

static void warn_incomplete(const struct trace *t)
{
	if (t->wal_ignored)
		fprintf(stderr, "memtrace report: warning: cannot create %s-shm (read-only "
				"directory?), so its -wal file was ignored: events after the last "
				"checkpoint may be missing; copy the trace with its -wal to a "
				"writable directory for a complete report\n",
			t->path);
	if (!t->missing_stacks && !t->missing_frames && !t->missing_modules)
		return;
	fprintf(stderr, "memtrace report: warning: %s is incomplete: %" PRIu64
			" events name missing stacks, %" PRIu64 " stack rows missing frames, %" PRIu64
			" frames missing modules; the report shows them as ??\n",
		t->path, t->missing_stacks, t->missing_frames, t->missing_modules);
}

int main(int argc, char **argv)
{
	struct options opt;
	struct trace t = { 0 };
	struct model m;
	int rc = parse_args(argc, argv, &opt);

	if (rc >= 0)
		return rc;
	/* a report should not reach out to the network unless asked to */
	if (!getenv("MEMTRACE_DEBUGINFOD"))
		unsetenv("DEBUGINFOD_URLS");
	model_init(&m);
	if (build(&t, &m, opt.trace) < 0) {
		fprintf(stderr, "memtrace report: %s\n", t.error);
		rc = 1;
		goto out;
	}
	warn_incomplete(&t);
	rc = write_report(&t, &m, &opt);
out:
	model_fini(&m);
	trace_close(&t);
	return rc;
}
