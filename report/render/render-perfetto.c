/* Chrome trace event format (JSON object form), which Perfetto's UI and
 * chrome://tracing open: per process, a counter track "device bytes live"
 * (and "GPU N bytes live" per device when it used several) drawn from the
 * timeline's buckets (the highest and the last value of
 * each, at the times they were reached; the total line of a trace of at
 * most TIMELINE_EXACT events exactly, a point per event), and instant
 * events for the peak,
 * the OOMs, marks and graph events. Timestamps are microseconds.
 *
 * One trace: the process is the program (its pid), times from the trace's
 * start, and "distributedInfo" names its rank, as Holistic Trace Analysis
 * reads a trace per rank. Several traces (the ranks of a job: one file
 * for the job): one process per rank (pid = the rank), named by rank and
 * host, on one clock, the wall clock (each trace's start plus its times),
 * instant events scoped to their process. */
#include <inttypes.h>

#include "model-timeline.h"
#include "render.h"
#include "trace-schema.h"
#include "util-json.h"
#include "util-map.h"
#include "util-math.h"
#include "util-mem.h"
#include "util-str.h"

struct pf {
	FILE *f;
	const struct trace *t;
	const struct model *m;
	int64_t pid;
	int64_t offset_ns; /* added to every time: the wall clock when merged */
	const char *scope; /* of instant events: "g" global, "p" the process */
	bool first;
};

static void begin(struct pf *p, const char *ph, int64_t ns, int tid, const char *name)
{
	fputs(p->first ? "\n" : ",\n", p->f);
	p->first = false;
	fprintf(p->f, "{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%d,\"ts\":", ph, p->pid, tid);
	json_us(p->f, ns > 0 ? sat_add_i64(ns, p->offset_ns) : p->offset_ns);
	fputs(",\"name\":", p->f);
	json_str(p->f, name);
}

static void counter(struct pf *p, const char *name, int64_t ns, uint64_t bytes)
{
	begin(p, "C", ns, 0, name);
	fprintf(p->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", bytes);
}

/* A counter track from the timeline's buckets: each bucket's highest
 * value and, after it, its last. */
static void counter_line(struct pf *p, const char *name, const struct trace_bucket *buckets,
			 size_t n)
{
	counter(p, name, 0, 0);
	for (size_t i = 0; i < n; i++) {
		const struct trace_bucket *b = &buckets[i];

		if (!b->used)
			continue;
		counter(p, name, b->t_max, b->max);
		if (b->t_last > b->t_max)
			counter(p, name, b->t_last, b->last);
	}
}

static void thread_name(struct pf *p, int tid, const char *name)
{
	begin(p, "M", 0, tid, "thread_name");
	fputs(",\"args\":{\"name\":", p->f);
	json_str(p->f, name);
	fputs("}}", p->f);
}

/* The process's device bytes live, and each device's when it used more
 * than one. */
static void counters(struct pf *p)
{
	const struct model_timeline *tl = p->m->timeline;
	size_t used = 0;

	if (!tl) {
		counter(p, "device bytes live", 0, 0);
		return;
	}
	if (tl->n_exact <= TIMELINE_EXACT) {
		/* few events: one point each, none merged */
		counter(p, "device bytes live", 0, 0);
		for (size_t i = 0; i < tl->n_exact; i++)
			counter(p, "device bytes live", tl->exact[i].time_ns, tl->exact[i].live);
	} else {
		counter_line(p, "device bytes live", tl->buckets, tl->n_buckets);
	}
	for (size_t i = 0; i < tl->n_devices; i++)
		used += tl->devices[i].max > 0;
	for (size_t i = 0; used > 1 && i < tl->n_devices; i++) {
		_autofree_ char *name = NULL;

		if (!tl->devices[i].max)
			continue;
		name = xasprintf("GPU %d bytes live", tl->devices[i].device);
		counter_line(p, name, tl->devices[i].buckets, tl->n_buckets);
	}
}

static void oom_event(struct pf *p, const struct model_oom *o, size_t i)
{
	_autofree_ char *where = render_stack_label(p->t, o->stack, true);
	_autofree_ char *name = NULL;
	const char *api = trace_api_name(p->t, o->api);

	/* a failure the allocator recovered from reached no one: no OOM */
	name = xasprintf("%s: %s of %s", o->recovered ? "recovered (no OOM)" : "OOM",
			 api ? api : "allocation", fmt_size(o->requested).s);
	begin(p, "i", o->time_ns, 1, name);
	fprintf(p->f, ",\"s\":\"%s\",\"cat\":\"%s\",", p->scope,
		o->recovered ? "recovered" : "oom");
	fprintf(p->f, "\"args\":{\"index\":%zu,\"requested_bytes\":%" PRIu64
		      ",\"live_bytes\":%" PRIu64,
		i, o->requested, o->live_bytes);
	if (o->has_device_free && o->has_device_total)
		fprintf(p->f, ",\"device_free\":%" PRId64 ",\"device_total\":%" PRId64, o->device_free,
			o->device_total);
	fputs(",\"site\":", p->f);
	json_str(p->f, where);
	fputs("}}", p->f);
}

static const char *marker_name(int kind)
{
	switch (kind) {
	case MT_EV_MARK: return "mark";
	case MT_EV_GRAPH_CREATE: return "graph created";
	case MT_EV_GRAPH_CLONE: return "graph cloned";
	case MT_EV_GRAPH_DESTROY: return "graph destroyed";
	case MT_EV_EXEC_CREATE: return "graph exec created";
	case MT_EV_EXEC_DESTROY: return "graph exec destroyed";
	case MT_EV_CAPTURE_END: return "capture ended";
	}
	return NULL;
}

static void markers(struct pf *p)
{
	const struct model_timeline *tl = p->m->timeline;

	for (size_t i = 0; tl && i < tl->n_markers; i++) {
		const struct timeline_marker *mk = &tl->markers[i];
		const char *name = marker_name(mk->kind);

		if (!name)
			continue;
		begin(p, "i", mk->time_ns, mk->kind == MT_EV_MARK ? 1 : 2, name);
		fprintf(p->f, ",\"s\":\"t\",\"cat\":\"%s\",\"args\":{\"seq\":%" PRId64 "}}",
			mk->kind == MT_EV_MARK ? "mark" : "graph", mk->seq);
	}
}

/* Everything of one trace: its process, tracks, counters and events. */
static void process(struct pf *p, const char *pname)
{
	const struct model *m = p->m;

	begin(p, "M", 0, 0, "process_name");
	fputs(",\"args\":{\"name\":", p->f);
	json_str(p->f, pname);
	fputs("}}", p->f);
	thread_name(p, 0, "device memory");
	thread_name(p, 1, "OOMs and marks");
	thread_name(p, 2, "CUDA graphs");
	counters(p);
	if (m->device.allocations) {
		_autofree_ char *name = xasprintf("peak: %s", fmt_size(m->device.peak_bytes).s);

		begin(p, "i", m->device.peak_time_ns, 1, name);
		fprintf(p->f, ",\"s\":\"%s\",\"cat\":\"peak\",\"args\":{\"bytes\":%" PRIu64 "}}",
			p->scope, m->device.peak_bytes);
	}
	for (size_t i = 0; i < m->n_ooms; i++)
		oom_event(p, &m->ooms[i], i);
	markers(p);
}

void render_perfetto(FILE *f, const struct trace *t, const struct model *m,
		     const struct render_opts *o)
{
	struct pf p = { .f = f, .t = t, .m = m, .pid = 1, .scope = "g", .first = true };
	const char *cmd = trace_meta_get(t, "cmdline");
	_autofree_ char *pname = xasprintf("memtrace: %s", cmd && *cmd ? cmd : t->path);
	int64_t rank = 0;

	render_meta_int(t, "pid", &p.pid);
	render_meta_int(t, "rank", &rank);
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"memtrace report\"},"
		   "\"distributedInfo\":{\"rank\":%" PRId64 "},\"traceEvents\":[",
		rank);
	process(&p, pname);
	fputs("\n]}\n", f);
}

/* ---- several traces: one file for the job ---- */

struct perfetto_job {
	FILE *f;
	bool first;
	struct map pids; /* the pids given so far: each rank a process of its own */
};

struct perfetto_job *render_perfetto_job_begin(FILE *f)
{
	struct perfetto_job *j = xcalloc(1, sizeof(*j));

	j->f = f;
	j->first = true;
	map_init(&j->pids, 0);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"memtrace report\","
	      "\"clock\":\"wall clock, microseconds since the epoch\"},\"traceEvents\":[",
	      f);
	return j;
}

void render_perfetto_job_rank(struct perfetto_job *j, const struct trace *t,
			      const struct model *m, int64_t index)
{
	struct pf p = { .f = j->f, .t = t, .m = m, .pid = index, .scope = "p", .first = j->first };
	const char *host = trace_meta_get(t, "host");
	int64_t rank = index, pid = 0, start = 0;
	_autofree_ char *pname = NULL;

	bool fresh;

	if (!render_meta_int(t, "rank", &rank) || rank < 0)
		rank = index;
	/* the rank is the process's id, unless two traces say the same rank */
	xmap_put(&j->pids, (uint64_t)rank, &fresh);
	p.pid = fresh ? rank : (1 << 24) + index;
	if (!fresh)
		xmap_put(&j->pids, (uint64_t)p.pid, &fresh);
	render_meta_int(t, "pid", &pid);
	render_meta_int(t, "start_realtime_ns", &start);
	p.offset_ns = start > 0 ? start : 0;
	pname = xasprintf("rank %" PRId64 " on %s (pid %" PRId64 ")", rank, host ? host : "?", pid);
	process(&p, pname);
	j->first = p.first;
}

void render_perfetto_job_end(struct perfetto_job *j)
{
	fputs("\n]}\n", j->f);
	map_fini(&j->pids);
	free(j);
}
