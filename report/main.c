/* memtrace-report: read a trace, build the model in one pass, render it;
 * or compare two traces (--diff), or put the ranks of one job side by side
 * (several traces). Exit status: 0 report written, 1 the trace or the
 * output file is the problem, 2 bad usage. Every failure is one line
 * prefixed "memtrace report: " that says what is wrong and what to do. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "config.h"
#include "model-site.h"
#include "model-timeline.h"
#include "model.h"
#include "render.h"
#include "symbolize.h"
#include "trace.h"
#include "util-mem.h"
#include "util-progress.h"

struct options {
	char **traces;
	size_t n_traces;
	const char *diff;   /* --diff BASE */
	const char *output; /* NULL: stdout */
	const struct renderer *format;
	bool weight_given, width_given, progress;
	bool recover; /* --recover: memtrace recover */
	size_t jobs; /* traces read at once; 0: one per CPU */
	struct render_opts render; /* --top, --weight, --width */
	struct report_options report; /* --group-by, --at-mark: read by the model */
};

/* One trace, read and modelled. */
struct loaded {
	struct trace t;
	struct model m;
	struct model_timeline tl;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: memtrace report TRACE [--format FORMAT] [-o FILE] [--top N]\n"
		"                             [--weight peak|oom|leaked] [--at-mark L]\n"
		"                             [--width N]\n"
		"         FORMAT: text|json|html|torch-snapshot|pprof|speedscope|folded|perfetto\n"
		"       memtrace report NEW --diff BASE [--format text|json]\n"
		"       memtrace report TRACE1 TRACE2... [--format text|json|html|perfetto]\n"
		"\n"
		"Report what a memtrace trace shows: the out-of-memory failure, what the\n"
		"device had free, who held the memory and what to try; the peak, the top\n"
		"allocation sites, leaks, pinned host memory, memory kinds and pools.\n"
		"\n"
		"  -f, --format FMT    text (default); json; html (one self-contained page:\n"
		"                      timeline, flame graph, tables); and for other tools:\n"
		"                      torch-snapshot (a pickle for PyTorch's memory viewer);\n"
		"                      pprof (gzipped profile.proto for go tool pprof,\n"
		"                      Pyroscope, Parca); speedscope (speedscope's JSON);\n"
		"                      folded (stacks for flamegraph.pl); perfetto (a Chrome\n"
		"                      trace for ui.perfetto.dev)\n"
		"  -o, --output FILE   write the report to FILE instead of standard output\n"
		"                      (never over a trace read: refused)\n"
		"  -n, --top N         entries per section (default %d; 0: all); JSON lists\n"
		"                      all entries unless --top is given\n"
		"  -w, --weight W      folded, pprof: bytes at the peak, at the OOM, or leaked\n"
		"                      (live at the end); default: oom when there was one,\n"
		"                      else peak (speedscope has all three)\n"
		"      --width N       text: N columns a line (%d to %d); default: $COLUMNS,\n"
		"                      else the terminal's width, else %d. Long names are\n"
		"                      shortened to fit, a file:line never\n"
		"      --full-stacks   text: every caller of each row, whole, past the width\n"
		"  -d, --diff BASE     compare TRACE with BASE: totals, and what grew by site\n"
		"      --group-by G    sites by: site (default: the user's own Python frame,\n"
		"                      else the NVTX operation, else native frame), python,\n"
		"                      op, native or stack\n"
		"      --batch N       PyTorch: the batch size of the run, so that \"what would\n"
		"                      fit\" says the largest batch in samples, not only as a\n"
		"                      fraction of N (docs/report.md, \"What would fit\")\n"
		"      --what-if batch=M  PyTorch, with --batch: the peak a batch of M would\n"
		"                      reach, against the device\n"
		"      --at-mark L     graphs and execs left behind as of the first mark L\n"
		"                      (default: the end of the trace); torch-snapshot: the\n"
		"                      live set then (default: the last OOM, else the end);\n"
		"                      a label no mark has is an error listing the marks\n"
		"      --no-progress   never draw a progress bar (drawn on a terminal when\n"
		"                      reading takes more than a second)\n"
		"  -j, --jobs N        several traces: read N at once (default: one per CPU)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Several traces (one per rank of a job) give a table of the ranks, by rank:\n"
		"peak, OOMs, leaks, the top holder at the peak; the heaviest rank against\n"
		"the median and the site that makes the difference; which rank failed\n"
		"first; a trace that cannot be read is skipped, with a warning, and listed.\n"
		"With --format perfetto, one Perfetto trace of the job, a process per rank\n"
		"on the wall clock.\n"
		"\n"
		"Native frames are symbolized from the module files named in the trace,\n"
		"when they are still on disk and their build ids match. Set\n"
		"MEMTRACE_DEBUGINFOD=1 to let elfutils fetch debug info from DEBUGINFOD_URLS.\n"
		"\n"
		"Exit status: 0 report written, 1 unreadable trace or output, 2 bad usage.\n"
		"How to read the report: docs/report.md; the JSON format: docs/report-json.md.\n",
		RENDER_DEFAULT_TOP, RENDER_TEXT_MIN_WIDTH, RENDER_TEXT_MAX_WIDTH, RENDER_TEXT_WIDTH);
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

/* A number of columns: --width's, or $COLUMNS. */
static bool parse_width(const char *s, size_t *width)
{
	return s && parse_top(s, width) && *width >= RENDER_TEXT_MIN_WIDTH &&
	       *width <= RENDER_TEXT_MAX_WIDTH;
}

/* The text report's width without --width: $COLUMNS, else the terminal's
 * when the report goes to one, else the default. A width out of range
 * from either is brought into it: it is no one's mistake. */
static size_t text_width_default(const struct options *opt)
{
	const char *columns = getenv("COLUMNS");
	struct winsize ws;
	size_t n = 0;

	if (columns && parse_top(columns, &n) && n > 0)
		; /* n */
	else if (!opt->output && isatty(STDOUT_FILENO) &&
		 ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		n = ws.ws_col;
	else
		return RENDER_TEXT_WIDTH;
	if (n < RENDER_TEXT_MIN_WIDTH)
		return RENDER_TEXT_MIN_WIDTH;
	return n > RENDER_TEXT_MAX_WIDTH ? RENDER_TEXT_MAX_WIDTH : n;
}

/* What a format must have to be named in a format_list. */
enum format_has { HAS_RENDER, HAS_DIFF, HAS_RANKS, HAS_WEIGHT };

static bool format_has(const struct renderer *r, enum format_has what)
{
	switch (what) {
	case HAS_RENDER: return true;
	case HAS_DIFF: return r->diff != NULL;
	case HAS_RANKS: return r->ranks != NULL || r->merges;
	case HAS_WEIGHT: return r->takes_weight;
	}
	return false;
}

/* The formats that have what, for a message: "text, json or html".
 * Caller frees. */
static char *format_list(enum format_has what)
{
	size_t n = 0, k = 0;
	char *list = xstrdup("");

	for (const struct renderer *r = render_formats; r->name; r++)
		n += format_has(r, what);
	for (const struct renderer *r = render_formats; r->name; r++) {
		char *longer;

		if (!format_has(r, what))
			continue;
		k++;
		longer = xasprintf("%s%s%s", list, k == 1 ? "" : k == n ? " or " : ", ", r->name);
		free(list);
		list = longer;
	}
	return list;
}

static bool parse_weight(const char *s, enum render_weight *w)
{
	if (strcmp(s, "peak") == 0)
		*w = WEIGHT_PEAK;
	else if (strcmp(s, "oom") == 0)
		*w = WEIGHT_OOM;
	else if (strcmp(s, "leaked") == 0)
		*w = WEIGHT_LEAKED;
	else
		return false;
	return true;
}

/* A usage error whose message names the formats that have what, between
 * before and after. */
static int formats_error(const char *before, enum format_has what, const char *after,
			 const char *arg)
{
	_autofree_ char *list = format_list(what);
	_autofree_ char *msg = xasprintf("%s%s%s", before, list, after);

	return usage_error(msg, arg);
}

/* Whether out is the file path names, or its -wal or -shm: the same
 * device and inode, so that another path to it is caught too. */
static bool same_file(const struct stat *out, const char *path, const char *suffix)
{
	_autofree_ char *name = xasprintf("%s%s", path, suffix);
	struct stat st;

	return stat(name, &st) == 0 && st.st_dev == out->st_dev && st.st_ino == out->st_ino;
}

/* -o naming an input trace (or its -wal or -shm) would write the report
 * over the trace: refused before anything is opened. */
static int check_output_not_input(const struct options *opt)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	struct stat out;

	if (!opt->output || stat(opt->output, &out) < 0)
		return -1;
	for (size_t i = 0; i <= opt->n_traces; i++) {
		const char *in = i < opt->n_traces ? opt->traces[i] : opt->diff;

		for (size_t k = 0; in && k < ARRAY_LENGTH(suffixes); k++) {
			if (!same_file(&out, in, suffixes[k]))
				continue;
			fprintf(stderr, "memtrace report: -o %s is the trace %s%s: the report "
					"would overwrite it; write the report to another file\n",
				opt->output, in, suffixes[k]);
			return 2;
		}
	}
	return -1;
}

/* What the options say together: -1 when they fit, else the exit status. */
static int check_args(const struct options *opt)
{
	const struct renderer *f = opt->format;

	if (opt->n_traces == 0)
		return usage_error("no trace file given", NULL);
	if (opt->recover)
		return -1;
	if (opt->diff && opt->n_traces > 1)
		return usage_error("--diff compares one trace with one base; unexpected argument",
				   opt->traces[1]);
	if (opt->diff && !f->diff)
		return formats_error("--diff writes ", HAS_DIFF, "", f->name);
	if (!opt->diff && opt->n_traces > 1 && !f->ranks && !f->merges)
		return formats_error("several traces give a table of ranks, or one Perfetto file, in ",
				     HAS_RANKS, "", f->name);
	if (opt->weight_given && !f->takes_weight)
		return formats_error("--weight applies to --format ", HAS_WEIGHT, "", NULL);
	if (opt->width_given && f->render != render_text)
		return usage_error("--width applies to --format text", f->name);
	if (opt->width_given && (opt->diff || opt->n_traces > 1))
		return usage_error("--width applies to the report of one trace, not to --diff "
				   "or several traces", NULL);
	if (f->binary && !opt->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "memtrace report: --format %s writes a binary file, not for a "
				"terminal: give -o FILE (or redirect standard output)\n",
			f->name);
		return 2;
	}
	return check_output_not_input(opt);
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *opt)
{
	enum { OPT_NO_PROGRESS = 256, OPT_GROUP_BY, OPT_AT_MARK, OPT_WIDTH, OPT_FULL_STACKS, OPT_RECOVER,
	       OPT_BATCH, OPT_WHAT_IF };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, 'n' },
		{ "weight", required_argument, NULL, 'w' },
		{ "diff", required_argument, NULL, 'd' },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "group-by", required_argument, NULL, OPT_GROUP_BY },
		{ "at-mark", required_argument, NULL, OPT_AT_MARK },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "full-stacks", no_argument, NULL, OPT_FULL_STACKS },
		{ "recover", no_argument, NULL, OPT_RECOVER },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "what-if", required_argument, NULL, OPT_WHAT_IF },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	*opt = (struct options){
		.render.top = RENDER_DEFAULT_TOP, .format = render_find("text"), .progress = true,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:n:w:d:j:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			opt->format = render_find(optarg);
			if (!opt->format)
				return formats_error("unknown format (use ", HAS_RENDER, ")", optarg);
			break;
		case 'o':
			opt->output = strcmp(optarg, "-") == 0 ? NULL : optarg;
			break;
		case 'n':
			if (!parse_top(optarg, &opt->render.top))
				return usage_error("--top needs a number of entries (0: all)", optarg);
			opt->render.top_given = true;
			break;
		case 'w':
			if (!parse_weight(optarg, &opt->render.weight))
				return usage_error("unknown weight (use peak, oom or leaked)", optarg);
			opt->weight_given = true;
			break;
		case 'd':
			opt->diff = optarg;
			break;
		case 'j':
			if (!parse_top(optarg, &opt->jobs) || opt->jobs == 0)
				return usage_error("--jobs needs a number of traces (1 or more)", optarg);
			break;
		case OPT_GROUP_BY:
			if (!report_parse_group_by(optarg, &opt->report.group_by))
				return usage_error("--group-by takes site, python, op, native or stack",
						   optarg);
			break;
		case OPT_AT_MARK:
			opt->report.at_mark = optarg;
			break;
		case OPT_FULL_STACKS:
			opt->render.full_stacks = true;
			break;
		case OPT_WIDTH:
			if (!parse_width(optarg, &opt->render.width)) {
				_autofree_ char *what = xasprintf(
					"--width needs a number of columns, %d to %d",
					RENDER_TEXT_MIN_WIDTH, RENDER_TEXT_MAX_WIDTH);

				return usage_error(what, optarg);
			}
			opt->width_given = true;
			break;
		case OPT_NO_PROGRESS:
			opt->progress = false;
			break;
		case OPT_RECOVER:
			opt->recover = true;
			break;
		case OPT_BATCH:
			if (!parse_top(optarg, &opt->render.batch) || opt->render.batch == 0)
				return usage_error("--batch needs the batch size that ran (1 or more)",
						   optarg);
			break;
		case OPT_WHAT_IF:
			if (strncmp(optarg, "batch=", 6) != 0 ||
			    !parse_top(optarg + 6, &opt->render.what_if_batch) ||
			    opt->render.what_if_batch == 0)
				return usage_error("--what-if takes batch=N (N 1 or more)", optarg);
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
	if (opt->render.what_if_batch && !opt->render.batch)
		return usage_error("--what-if batch=M needs --batch N, the batch size that ran",
				   NULL);
	opt->traces = argv + optind;
	opt->n_traces = (size_t)(argc - optind);
	if (!opt->width_given)
		opt->render.width = text_width_default(opt);
	return check_args(opt);
}

struct feed_ctx {
	struct model *m;
	struct progress *p;
};

static void feed(void *ctx, const struct trace_event *ev)
{
	struct feed_ctx *c = ctx;

	model_feed(c->m, ev);
	progress_tick(c->p);
}

static void feed_ahead(void *ctx, const struct trace_event *ev, bool near)
{
	struct feed_ctx *c = ctx;

	model_prefetch(c->m, ev, near);
}

/* A batch of events read to the model, feed and feed_ahead inlined: no
 * call through a pointer per event. */
static void feed_batch(struct trace_sink *sink)
{
	trace_drain(sink->ev, sink->n, feed, feed_ahead, sink->ctx);
	sink->n = 0;
}

/* The events read and modelled in turn on this thread, TRACE_BATCH at a
 * time (trace_read_events_batched's way): with the reading on a thread
 * of its own it took more CPU time (docs/performance.md, "One thread"). */
static int read_and_feed(struct trace *t, struct feed_ctx *ctx)
{
	_autofree_ struct trace_event *ev = xcalloc(TRACE_BATCH, sizeof(*ev));
	struct trace_sink sink = { .ev = ev, .cap = TRACE_BATCH, .full = feed_batch, .ctx = ctx };
	int rc = trace_read_events_sink(t, &sink);

	feed_batch(&sink);
	return rc;
}

/* What the model keeps of one moment (model.moment), for the formats
 * that show one: the first --at-mark mark, the event whose seq is seq
 * (>= 0), or the end. */
struct moment_request {
	bool wanted;
	int64_t seq;
};

/* One pass of the model over the trace's events. */
static int run_model(struct loaded *l, bool progress, struct moment_request moment)
{
	struct progress p;
	struct feed_ctx ctx = { .m = &l->m, .p = &p };
	int64_t duration = 0;
	int rc;

	for (size_t i = 0; i < l->t.n_devices; i++)
		model_device_info(&l->m, l->t.devices[i].id, l->t.devices[i].total_bytes,
				  l->t.devices[i].has_free, l->t.devices[i].free_bytes_at_first_use);
	for (size_t i = 0; i < l->t.n_apis; i++) {
		if (l->t.apis[i].name && strcmp(l->t.apis[i].name, "XlaPjrt") == 0)
			l->m.xla_arrays_api = l->t.apis[i].id;
	}
	render_meta_int(&l->t, "end_monotonic_ns", &duration);
	model_timeline_init(&l->tl, duration);
	l->m.timeline = &l->tl;
	if (l->t.flight.on) {
		l->m.flight = &l->t;
		l->m.timeline_from_seq = l->t.flight.ring_first_seq;
		if (l->t.flight.n_timeline)
			model_timeline_start_at(&l->tl, l->t.flight.ring_first_time_ns);
	} else {
		l->m.span_events = (int64_t)trace_count_events(&l->t);
	}
	l->m.moment.wanted = moment.wanted;
	l->m.moment.seq = moment.seq;
	l->m.moment.at_mark = moment.wanted && moment.seq < 0 && l->t.opts.at_mark;
	progress_start(&p, stderr, progress && progress_wanted(stderr), l->t.path,
		       progress ? trace_count_events(&l->t) : 0);
	rc = read_and_feed(&l->t, &ctx);
	progress_end(&p);
	if (rc < 0)
		return -1;
	model_finish(&l->m);
	model_timeline_finish(&l->tl, &l->m);
	return 0;
}

/* sym_lock: held while symbolizing, when traces are read on several
 * threads (libdw's handles are not known to be safe to use side by
 * side); NULL otherwise. */
static int load(struct loaded *l, const char *path, bool progress,
		const struct report_options *report, bool wants_moment, pthread_mutex_t *sym_lock)
{
	struct symbolizer *sym;

	if (trace_open(&l->t, path, &model_site_rules) < 0 || trace_load(&l->t) < 0)
		return -1;
	l->t.opts = *report;
	if (sym_lock)
		pthread_mutex_lock(sym_lock);
	sym = symbolizer_new();
	symbolize_trace(sym, &l->t);
	symbolizer_free(sym);
	if (sym_lock)
		pthread_mutex_unlock(sym_lock);
	if (run_model(l, progress, (struct moment_request){ wants_moment, -1 }) < 0)
		return -1;
	if (!wants_moment || report->at_mark || l->m.n_ooms == 0)
		return 0;
	/* the moment is the last OOM, known now: a second pass to stop there */
	int64_t seq = l->m.ooms[l->m.n_ooms - 1].seq;

	model_fini(&l->m);
	model_timeline_fini(&l->tl);
	model_init(&l->m);
	return run_model(l, progress, (struct moment_request){ true, seq });
}

static void unload(struct loaded *l)
{
	model_fini(&l->m);
	model_timeline_fini(&l->tl);
	trace_close(&l->t);
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

/* A trace loaded on the heap (its timeline is ~100 KiB), or NULL with
 * *error saying why (caller frees). sym_lock: see load(); no progress
 * bar then, since bars of several threads would mix. */
static struct loaded *try_load(const char *path, const struct options *opt,
			       pthread_mutex_t *sym_lock, char **error)
{
	struct loaded *l = xcalloc(1, sizeof(*l));

	model_init(&l->m);
	if (load(l, path, opt->progress && !sym_lock, &opt->report, opt->format->wants_moment,
		 sym_lock) < 0) {
		*error = xstrdup(l->t.error);
		unload(l);
		free(l);
		return NULL;
	}
	warn_incomplete(&l->t);
	return l;
}

/* try_load, saying why not */
static struct loaded *load_one(const char *path, const struct options *opt)
{
	_autofree_ char *error = NULL;
	struct loaded *l = try_load(path, opt, NULL, &error);

	if (!l)
		fprintf(stderr, "memtrace report: %s\n", error);
	return l;
}

static void free_loaded(struct loaded *l)
{
	if (l)
		unload(l);
	free(l);
}

struct output {
	FILE *f;
	const char *name;
};

static int open_output(struct output *out, const struct options *opt)
{
	out->name = opt->output ? opt->output : "standard output";
	out->f = opt->output ? fopen(opt->output, "w") : stdout;
	if (!out->f) {
		fprintf(stderr, "memtrace report: cannot write the report to %s: %s\n", out->name,
			strerror(errno));
		return 1;
	}
	return 0;
}

static int close_output(struct output *out)
{
	int failed = ferror(out->f) | fflush(out->f);

	if (out->f != stdout)
		failed |= fclose(out->f);
	if (failed) {
		fprintf(stderr, "memtrace report: error writing the report to %s: %s\n", out->name,
			strerror(errno));
		return 1;
	}
	return 0;
}

/* The labels of the trace's own marks, each once, in order, for a
 * message: "\"a\", \"b\"". Caller frees. */
static char *mark_labels(const struct loaded *l)
{
	char *list = xstrdup("");

	for (size_t i = 0; i < l->m.n_marks; i++) {
		const struct model_point *p = &l->m.points[l->m.marks[i].point];
		const struct trace_op *op = p->has_op ? trace_find_op(&l->t, p->op) : NULL;
		_autofree_ char *quoted = NULL;
		char *longer;

		if (!op || p->mark_kind != MARK_USER)
			continue;
		quoted = xasprintf("\"%s\"", op->name);
		if (strstr(list, quoted))
			continue;
		longer = xasprintf("%s%s%s", list, *list ? ", " : "", quoted);
		free(list);
		list = longer;
	}
	return list;
}

/* --at-mark naming no mark of the trace: exit 2, with the marks it has;
 * else -1. */
static int check_at_mark(const struct loaded *l, const struct options *opt)
{
	_autofree_ char *labels = NULL;

	if (!opt->report.at_mark || l->m.graphs.at_mark)
		return -1;
	labels = mark_labels(l);
	if (*labels)
		fprintf(stderr, "memtrace report: --at-mark %s: %s has no such mark; its marks: %s\n",
			opt->report.at_mark, l->t.path, labels);
	else
		fprintf(stderr, "memtrace report: --at-mark %s: %s has no marks\n",
			opt->report.at_mark, l->t.path);
	return 2;
}

static int report_one(const struct options *opt)
{
	struct loaded *l = load_one(opt->traces[0], opt);
	const char *refused;
	struct output out;
	int rc = 1;

	if (!l)
		return 1;
	rc = check_at_mark(l, opt);
	if (rc >= 0)
		goto out;
	rc = 1;
	refused = opt->format->refuse ? opt->format->refuse(&l->m, &opt->render) : NULL;
	if (refused) {
		fprintf(stderr, "memtrace report: %s %s\n", l->t.path, refused);
		goto out;
	}
	if (open_output(&out, opt))
		goto out;
	opt->format->render(out.f, &l->t, &l->m, &opt->render);
	rc = close_output(&out);
out:
	free_loaded(l);
	return rc;
}

static int report_diff(const struct options *opt)
{
	struct loaded *n = load_one(opt->traces[0], opt);
	struct loaded *b = n ? load_one(opt->diff, opt) : NULL;
	struct output out;
	int rc = 1;

	if (b && open_output(&out, opt) == 0) {
		opt->format->diff(out.f, &n->t, &n->m, &b->t, &b->m, &opt->render);
		rc = close_output(&out);
	}
	free_loaded(n);
	free_loaded(b);
	return rc;
}

/* The traces are read one at a time; only their summaries stay. */
/* Several traces into one file (perfetto): loaded one at a time, so that
 * memory does not grow with their number. */
static int report_merged(const struct options *opt)
{
	struct output out;
	struct perfetto_job *job;
	int rc = 0;

	if (open_output(&out, opt))
		return 1;
	job = render_perfetto_job_begin(out.f);
	for (size_t i = 0; i < opt->n_traces && rc == 0; i++) {
		struct loaded *l = load_one(opt->traces[i], opt);

		if (!l) {
			rc = 1;
			break;
		}
		render_perfetto_job_rank(job, &l->t, &l->m, (int64_t)i);
		free_loaded(l);
	}
	render_perfetto_job_end(job);
	return close_output(&out) | rc;
}

/* Several traces, one per rank: read by opt->jobs threads at once (each
 * trace has its reading thread besides), each keeping only the summary
 * of its rank. A trace that cannot be read is skipped, with a warning,
 * and the report says so; when none can be, the failure said is that of
 * the first trace in the arguments, one line whatever the threads did. */
struct rank_jobs {
	const struct options *opt;
	struct compare_rank *ranks;
	bool *read;
	char **errors;
	pthread_mutex_t lock; /* next */
	size_t next;
	pthread_mutex_t sym_lock;
};

static void *rank_worker(void *arg)
{
	struct rank_jobs *j = arg;

	for (;;) {
		struct loaded *l;
		size_t i;

		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->opt->n_traces)
			return NULL;
		l = try_load(j->opt->traces[i], j->opt, &j->sym_lock, &j->errors[i]);
		if (!l)
			continue;
		compare_rank_from(&j->ranks[i], &l->t, &l->m);
		j->read[i] = true;
		free_loaded(l);
	}
}

static size_t rank_threads(const struct options *opt)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = opt->jobs ? opt->jobs : cpus > 0 ? (size_t)cpus : 1;

	return n < opt->n_traces ? n : opt->n_traces;
}

/* Reads every trace; errors[i] says why trace i could not be read. */
static void read_ranks(const struct options *opt, struct compare_rank *ranks, bool *read,
		       char **errors)
{
	struct rank_jobs j = { .opt = opt, .ranks = ranks, .read = read, .errors = errors };
	size_t n = rank_threads(opt), started = 0;
	_autofree_ pthread_t *threads = xcalloc(n, sizeof(*threads));

	pthread_mutex_init(&j.lock, NULL);
	pthread_mutex_init(&j.sym_lock, NULL);
	while (started < n && pthread_create(&threads[started], NULL, rank_worker, &j) == 0)
		started++;
	if (started == 0) /* no thread to be had: read on this one */
		rank_worker(&j);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&j.lock);
	pthread_mutex_destroy(&j.sym_lock);
}

/* The traces read, moved to the front of ranks, and those skipped, each
 * said on stderr; false (the first failure said) when none was read. */
static bool sort_out_ranks(const struct options *opt, struct compare_rank *ranks, bool *read,
			   char **errors, struct compare_skipped *skipped, size_t *n_read,
			   size_t *n_skipped)
{
	*n_read = *n_skipped = 0;
	for (size_t i = 0; i < opt->n_traces; i++) {
		if (read[i]) {
			ranks[(*n_read)++] = ranks[i];
			continue;
		}
		skipped[(*n_skipped)++] = (struct compare_skipped){ opt->traces[i], errors[i] };
	}
	if (*n_read == 0) {
		fprintf(stderr, "memtrace report: %s\n", errors[0]);
		return false;
	}
	for (size_t i = 0; i < *n_skipped; i++)
		fprintf(stderr, "memtrace report: warning: skipping %s: %s\n", skipped[i].path,
			skipped[i].why);
	return true;
}

static int report_ranks(const struct options *opt)
{
	struct compare_rank *ranks = xcalloc(opt->n_traces, sizeof(*ranks));
	_autofree_ bool *read = xcalloc(opt->n_traces, sizeof(*read));
	_autofree_ char **errors = xcalloc(opt->n_traces, sizeof(*errors));
	_autofree_ struct compare_skipped *skipped = xcalloc(opt->n_traces, sizeof(*skipped));
	size_t n_read = 0, n_skipped;
	struct output out;
	int rc = 1;

	read_ranks(opt, ranks, read, errors);
	if (sort_out_ranks(opt, ranks, read, errors, skipped, &n_read, &n_skipped) &&
	    open_output(&out, opt) == 0) {
		compare_ranks_sort(ranks, n_read);
		opt->format->ranks(out.f, ranks, n_read, skipped, n_skipped);
		rc = close_output(&out);
	}
	for (size_t i = 0; i < n_read; i++)
		compare_rank_fini(&ranks[i]);
	for (size_t i = 0; i < opt->n_traces; i++)
		free(errors[i]);
	free(ranks);
	return rc;
}

/* memtrace recover TRACE...: each trace's ring file into it, and the
 * trace made one file; one line each on stdout. */
static int recover(const struct options *opt)
{
	int rc = 0;

	for (size_t i = 0; i < opt->n_traces; i++) {
		const char *path = opt->traces[i];
		struct trace_recovery r;

		if (trace_recover(path, &r) < 0) {
			fprintf(stderr, "memtrace recover: %s\n", r.error);
			rc = 1;
		} else if (r.running) {
			printf("%s: 0 events recovered: the process that writes it is running\n", path);
		} else {
			trace_settle(path);
			printf("%s: %llu events recovered%s\n", path, (unsigned long long)r.recovered,
			       r.ring ? "" : " (no ring file: the trace was closed, or recovered)");
		}
		free(r.error);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct options opt;
	int rc = parse_args(argc, argv, &opt);

	if (rc >= 0)
		return rc;
	if (opt.recover)
		return recover(&opt);
	/* a report should not reach out to the network unless asked to */
	if (!getenv("MEMTRACE_DEBUGINFOD"))
		unsetenv("DEBUGINFOD_URLS");
	if (opt.diff)
		return report_diff(&opt);
	if (opt.n_traces > 1)
		return opt.format->merges ? report_merged(&opt) : report_ranks(&opt);
	return report_one(&opt);
}
