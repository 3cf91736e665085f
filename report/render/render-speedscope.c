/* speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * the frames every profile shares, then one "sampled" profile per weight
 * (bytes held at the peak, live at the last OOM when the trace has one,
 * still live at the end: render-stacks.c), unit bytes, each sample a
 * stack from its outermost frame to its innermost, weighted by its bytes.
 * The profile the report leads with (the OOM, else the peak) is the one
 * speedscope opens on. */
#include <inttypes.h>

#include "config.h"
#include "render.h"
#include "util-json.h"
#include "util-map.h"
#include "util-math.h"
#include "util-mem.h"

struct sample {
	uint32_t *frames; /* outermost first */
	uint32_t n;
	uint64_t bytes;
};

struct profile {
	enum render_weight weight;
	struct sample *samples;
	size_t n, cap;
	uint64_t total;
};

struct speedscope {
	const struct trace *t;
	struct map ids; /* frame key -> index in shared.frames */
	uint64_t *keys; /* shared.frames -> its key */
	size_t n_frames, cap_frames;
	struct profile *cur;
};

/* A frame of the trace is keyed by its index + 1; a stack with no frame
 * to show by (1 << 63) | its id: it is one frame, its label. */
#define LABEL_KEY (1ull << 63)

static uint32_t frame_id(struct speedscope *s, uint64_t key)
{
	bool added;
	uint32_t *id = xmap_put(&s->ids, key, &added);

	if (added) {
		*id = (uint32_t)s->n_frames;
		grow_array(&s->keys, &s->cap_frames, s->n_frames + 1, sizeof(*s->keys));
		s->keys[s->n_frames++] = key;
	}
	return *id;
}

static void add_sample(void *ctx, const struct model_group *g)
{
	struct speedscope *s = ctx;
	struct profile *p = s->cur;
	const struct trace_stack *st = trace_find_stack(s->t, g->stack);
	struct sample *sm;

	grow_array(&p->samples, &p->cap, p->n + 1, sizeof(*p->samples));
	sm = &p->samples[p->n++];
	*sm = (struct sample){ .bytes = g->bytes };
	p->total = sat_add(p->total, g->bytes);
	if (!st || st->depth == 0) {
		sm->frames = xcalloc(1, sizeof(*sm->frames));
		sm->frames[sm->n++] = frame_id(s, LABEL_KEY | (uint64_t)g->stack);
		return;
	}
	sm->frames = xcalloc(st->depth, sizeof(*sm->frames));
	for (uint32_t i = st->depth; i-- > 0;) {
		const struct trace_frame *f = trace_stack_frame(s->t, st, i);

		sm->frames[sm->n++] = f ? frame_id(s, (uint64_t)(f - s->t->frames) + 1)
					: frame_id(s, LABEL_KEY | (uint64_t)g->stack);
	}
}

static void write_frame(FILE *f, const struct trace *t, uint64_t key)
{
	const struct trace_frame *fr = key & LABEL_KEY ? NULL : &t->frames[key - 1];
	const struct trace_module *mod = fr ? trace_frame_module(t, fr) : NULL;
	_autofree_ char *name = fr ? render_frame_name(t, fr)
				   : render_stack_label(t, (int64_t)(key & ~LABEL_KEY), true);

	fputs("{\"name\":", f);
	json_str(f, name);
	if (fr && (fr->file || mod)) {
		fputs(",\"file\":", f);
		json_str(f, fr->file ? fr->file : mod->path);
	}
	if (fr && fr->line > 0)
		fprintf(f, ",\"line\":%" PRId64, fr->line);
	fputc('}', f);
}

static const char *profile_name(enum render_weight w)
{
	switch (w) {
	case WEIGHT_OOM: return "device memory live at the last OOM, by stack";
	case WEIGHT_LEAKED: return "device memory still live at the end, by stack";
	case WEIGHT_PEAK:
	case WEIGHT_DEFAULT: break;
	}
	return "device memory held at the peak, by site";
}

static void write_profile(FILE *f, const struct profile *p)
{
	fputs("{\"type\":\"sampled\",\"name\":", f);
	json_str(f, profile_name(p->weight));
	fprintf(f, ",\"unit\":\"bytes\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		p->total);
	for (size_t i = 0; i < p->n; i++) {
		fputs(i ? ",[" : "[", f);
		for (uint32_t j = 0; j < p->samples[i].n; j++)
			fprintf(f, "%s%" PRIu32, j ? "," : "", p->samples[i].frames[j]);
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", p->samples[i].bytes);
	fputs("]}", f);
}

void render_speedscope(FILE *f, const struct trace *t, const struct model *m,
		       const struct render_opts *o)
{
	static const enum render_weight weights[] = { WEIGHT_PEAK, WEIGHT_OOM, WEIGHT_LEAKED };
	struct profile profiles[3];
	size_t n = 0, active = 0;
	enum render_weight lead = render_weight_resolve(m, o->weight);
	struct speedscope s = { .t = t };

	map_init(&s.ids, sizeof(uint32_t));
	for (size_t i = 0; i < 3; i++) {
		if (!render_weight_possible(m, weights[i]))
			continue;
		if (weights[i] == lead)
			active = n;
		profiles[n] = (struct profile){ .weight = weights[i] };
		s.cur = &profiles[n++];
		render_weighted_stacks(m, weights[i], add_sample, &s);
	}
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"memtrace " MEMTRACE_VERSION "\",\"name\":",
	      f);
	json_str(f, trace_meta_get(t, "cmdline"));
	fprintf(f, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[", active);
	for (size_t i = 0; i < s.n_frames; i++) {
		if (i)
			fputc(',', f);
		write_frame(f, t, s.keys[i]);
	}
	fputs("]},\"profiles\":[", f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		write_profile(f, &profiles[i]);
		for (size_t j = 0; j < profiles[i].n; j++)
			free(profiles[i].samples[j].frames);
		free(profiles[i].samples);
	}
	fputs("]}\n", f);
	free(s.keys);
	map_fini(&s.ids);
}
