/* Chrome trace event format (JSON object form), which Perfetto's UI and
 * chrome://tracing open: one process, a counter track "device bytes live"
 * drawn from the timeline's buckets (the highest and the last value of
 * each, at the times they were reached), and instant events for the peak,
 * the OOMs, marks and graph events. Timestamps are microseconds. */
#include <inttypes.h>

#include "model-timeline.h"
#include "render.h"
#include "trace-schema.h"
#include "util-json.h"
#include "util-mem.h"
#include "util-str.h"

struct pf {
	FILE *f;
	const struct trace *t;
	const struct model *m;
	int64_t pid;
	bool first;
};

static void begin(struct pf *p, const char *ph, int64_t ns, int tid, const char *name)
{
	fputs(p->first ? "\n" : ",\n", p->f);
	p->first = false;
	fprintf(p->f, "{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%d,\"ts\":", ph, p->pid, tid);
	json_us(p->f, ns);
	fputs(",\"name\":", p->f);
	json_str(p->f, name);
}

static void counter(struct pf *p, int64_t ns, uint64_t bytes)
{
	begin(p, "C", ns, 0, "device bytes live");
	fprintf(p->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", bytes);
}

static void thread_name(struct pf *p, int tid, const char *name)
{
	begin(p, "M", 0, tid, "thread_name");
	fputs(",\"args\":{\"name\":", p->f);
	json_str(p->f, name);
	fputs("}}", p->f);
}

static void counters(struct pf *p)
{
	const struct model_timeline *tl = p->m->timeline;

	counter(p, 0, 0);
	for (size_t i = 0; tl && i < tl->n_buckets; i++) {
		const struct timeline_bucket *b = &tl->buckets[i];

		if (!b->used)
			continue;
		counter(p, b->t_max, b->max);
		if (b->t_last > b->t_max)
			counter(p, b->t_last, b->last);
	}
}

static void oom_event(struct pf *p, const struct model_oom *o, size_t i)
{
	_autofree_ char *where = render_stack_label(p->t, o->stack, true);
	_autofree_ char *name = NULL;
	const char *api = trace_api_name(p->t, o->api);

	name = xasprintf("OOM: %s of %s", api ? api : "allocation", fmt_size(o->requested).s);
	begin(p, "i", o->time_ns, 1, name);
	fprintf(p->f, ",\"s\":\"g\",\"cat\":\"oom\",\"args\":{\"index\":%zu,\"requested_bytes\":%" PRIu64
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

void render_perfetto(FILE *f, const struct trace *t, const struct model *m,
		     const struct render_opts *o)
{
	struct pf p = { .f = f, .t = t, .m = m, .pid = 1, .first = true };
	const char *cmd = trace_meta_get(t, "cmdline");
	_autofree_ char *pname = xasprintf("memtrace: %s", cmd && *cmd ? cmd : t->path);

	render_meta_int(t, "pid", &p.pid);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"memtrace report\"},"
	      "\"traceEvents\":[",
	      f);
	begin(&p, "M", 0, 0, "process_name");
	fputs(",\"args\":{\"name\":", f);
	json_str(f, pname);
	fputs("}}", f);
	thread_name(&p, 0, "device memory");
	thread_name(&p, 1, "OOMs and marks");
	thread_name(&p, 2, "CUDA graphs");
	counters(&p);
	if (m->device.allocations) {
		_autofree_ char *name = xasprintf("peak: %s", fmt_size(m->device.peak_bytes).s);

		begin(&p, "i", m->device.peak_time_ns, 1, name);
		fprintf(f, ",\"s\":\"g\",\"cat\":\"peak\",\"args\":{\"bytes\":%" PRIu64 "}}",
			m->device.peak_bytes);
	}
	for (size_t i = 0; i < m->n_ooms; i++)
		oom_event(&p, &m->ooms[i], i);
	markers(&p);
	fputs("\n]}\n", f);
}
