/* The HTML report: one self-contained page, no network, no external
 * fonts or scripts, so it opens on an offline cluster from a file.
 *
 * What must be read first is written here as static markup: the headline
 * (the OOM, else the peak), what the device had, what to try and why, the
 * failing call path and who held the memory. The interactive views (the
 * timeline, the flame graph of the live set at a chosen moment, the
 * operations table) are drawn by one script, render-html.js, from a JSON
 * data block.
 *
 * Trace strings are untrusted. In markup they go through escape_html; in
 * the data block through json_str, which also escapes <, >, & and
 * U+2028/9, so "</script>" cannot end the block; the script puts them on
 * the page with textContent only. On top of that, the Content-Security-
 * Policy names the exact script and stylesheet by their SHA-256 (computed
 * at build time by embed-asset.py): nothing else runs, no inline handler
 * (onerror=...), no other style, no fetch, image or font. A hash rather
 * than 'unsafe-inline', because 'unsafe-inline' would also run any script
 * an escaping bug let through.
 *
 * Bounded size, whatever the trace: the timeline has at most
 * TIMELINE_BUCKETS points (each bucket's lowest and highest value, so the
 * peak is drawn as it was; every OOM is a marker), a moment at most
 * MOMENT_STACKS stacks (a sampled one SAMPLE_STACKS), the table at most
 * SITE_ROWS sites by each of its orderings, the page at most PAGE_STACKS
 * distinct stacks of at most STACK_FRAMES frames and PAGE_FRAME_BYTES of
 * frame labels, a label FRAME_CHARS; the rest is summed as "(other)".
 * What the page leaves out is said on it. 10M events give about 1.2 MB. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "model-timeline.h"
#include "render-html-assets.h"
#include "render.h"
#include "trace-schema.h"
#include "trace-user-frame.h"
#include "util-json.h"
#include "util-math.h"
#include "util-mem.h"
#include "util-str.h"

#define MOMENT_STACKS 1000 /* an OOM's, the peak's, the end's */
#define SAMPLE_STACKS 250  /* a sampled moment's */
#define MOMENT_OOMS 16	  /* OOM moments: the first half and the last half */
#define SITE_ROWS 250	  /* per ordering: peak, OOM, total, leaked */
#define PAGE_STACKS 2000  /* distinct stacks in the data block */
#define PAGE_FRAME_BYTES (1 << 20) /* of frame labels in the data block */
#define STACK_FRAMES 64	  /* a longer stack keeps its outermost and innermost */
#define STACK_OUTER 16	  /* ... this many outermost, the rest innermost */
#define FRAME_CHARS 200	  /* a frame's or a site's label in the data block */
#define MARKUP_CHARS 1000 /* a string in the markup */
#define PATH_FRAMES 12	  /* frames of the failing path shown before "more" */
#define HEADLINE_HOLDERS 6
#define GRAPH_ROWS 50	  /* orphans, never-freed groups: the first, by the model's order */
#define GROWTH_ROWS 20	  /* growth sites with a sparkline */
#define SPARK_POINTS 128  /* points a sparkline draws; more are sampled evenly */
#define POINT_LABELS 24	  /* growth points named: the first half and the last half */
#define LABEL_CHARS 120	  /* a mark's label on the timeline, cut beyond */
#define CUPTI_MODULES 8
#define MOMENT_BLOCKS 2000 /* a moment's blocks inside the cache's segments */

/* keys of the frame map besides trace frame indices */
#define FRAME_MORE (1ull << 61)	   /* | n: "(n more frames)" in a long stack */
#define FRAME_MISSING (1ull << 62)
#define FRAME_PSEUDO (1ull << 63) /* | stack id: a stack the trace lacks */

#define STACK_LEFT_OUT UINT32_MAX /* in stack_index: past the page's budget */

/* A stack of the data block: its frames' indices in frames, outermost
 * first, from first in stack_frames. */
struct page_stack {
	size_t first, n;
};

struct html {
	FILE *f;
	const struct trace *t;
	const struct model *m;
	const struct render_opts *o;
	struct map stack_index; /* stack id -> index in stacks, or STACK_LEFT_OUT */
	struct page_stack *stacks;
	size_t n_stacks, cap_stacks;
	uint32_t *stack_frames;
	size_t n_stack_frames, cap_stack_frames;
	size_t stacks_left_out; /* distinct stacks past the budget */
	struct map frame_index; /* frame key -> index in frames */
	char **frame_labels;	/* the frames' labels, cut to FRAME_CHARS */
	const char **frame_kinds;
	size_t n_frames, cap_frames, frame_bytes;
};

/* s cut to at most max bytes, on a character boundary, "..." marking it */
static void cut_label(char *s, size_t max)
{
	size_t n = strlen(s), i = 0;

	if (n <= max)
		return;
	while (i < n) {
		uint32_t cp;
		size_t l = utf8_decode((const unsigned char *)s + i, n - i, &cp);

		if (i + l > max - 3)
			break;
		i += l;
	}
	memcpy(s + i, "...", 4);
}

/* Trace strings in the markup: escaped, and cut at MARKUP_CHARS (a
 * function name of a megabyte is a hostile trace's, not a report's). */
static void esc(const struct html *h, const char *s)
{
	_autofree_ char *cut = NULL;

	if (s && strlen(s) > MARKUP_CHARS) {
		cut = xstrdup(s);
		cut_label(cut, MARKUP_CHARS);
		s = cut;
	}
	escape_html(h->f, s);
}

/* ---- frames: labels and kinds ---- */

static bool has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool name_in(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		if (strstr(s, list[i]))
			return true;
	}
	return false;
}

/* The colour class of a frame: "py" (the program's Python), "fw" (a
 * framework: PyTorch, TensorFlow, JAX/XLA, in Python or native), "cuda"
 * (CUDA's libraries), "native", or "none" (missing). */
static const char *frame_kind(const struct trace *t, const struct trace_frame *f)
{
	static const char *const cuda[] = { "libcuda.", "libcudart", "libcublas", "libcudnn",
					    "libnccl", "libcufft", "libcurand", "libcusparse",
					    "libcusolver", "libnvrtc", "libnvJitLink", "libcupti" };
	static const char *const fw_lib[] = { "libtorch", "libc10", "torch/_C", "_C.cpython",
					      "libtensorflow", "_pywrap_tensorflow", "xla_extension",
					      "libxla", "jaxlib", "libjax" };
	static const char *const fw_fn[] = { "c10::", "at::", "torch::", "tensorflow::", "xla::",
					     "jax::", "caffe2::", "tsl::" };
	static const char *const fw_py[] = { "/torch/", "/tensorflow/", "/keras/", "/jax/",
					     "/jaxlib/", "/flax/", "/transformers/" };
	const struct trace_module *mod;

	if (!f)
		return "none";
	if (f->kind == MT_FRAME_PYTHON)
		return name_in(f->file, fw_py, ARRAY_LENGTH(fw_py)) ? "fw" : "py";
	mod = trace_frame_module(t, f);
	if (mod && name_in(path_basename(mod->path), cuda, ARRAY_LENGTH(cuda)))
		return "cuda";
	if (has_prefix(f->function, "cuda") || has_prefix(f->function, "cuMem"))
		return "cuda";
	if ((mod && name_in(mod->path, fw_lib, ARRAY_LENGTH(fw_lib))))
		return "fw";
	for (size_t i = 0; f->function && i < ARRAY_LENGTH(fw_fn); i++) {
		if (has_prefix(f->function, fw_fn[i]))
			return "fw";
	}
	return "native";
}

/* The label of a frame key: a trace frame, a missing one, a stack the
 * trace lacks, or the frames left out of a long stack. Caller frees. */
static char *key_label(const struct html *h, uint64_t key)
{
	if (key & FRAME_PSEUDO)
		return render_stack_label(h->t, (int64_t)(key & ~FRAME_PSEUDO), true);
	if (key & FRAME_MORE)
		return xasprintf("(%" PRIu64 " more frames)", (uint64_t)(key & ~FRAME_MORE));
	return render_frame_label(h->t, key & FRAME_MISSING ? NULL : &h->t->frames[key], true);
}

static uint32_t frame_ref(struct html *h, uint64_t key)
{
	bool inserted;
	uint32_t *idx = xmap_put(&h->frame_index, key, &inserted);
	char *label;

	if (inserted) {
		const struct trace_frame *fr =
			key & (FRAME_PSEUDO | FRAME_MISSING | FRAME_MORE) ? NULL : &h->t->frames[key];

		grow_array(&h->frame_labels, &h->cap_frames, h->n_frames + 1,
			   sizeof(*h->frame_labels));
		h->frame_kinds = xrealloc(h->frame_kinds, h->cap_frames, sizeof(*h->frame_kinds));
		label = key_label(h, key);
		cut_label(label, FRAME_CHARS);
		h->frame_bytes += strlen(label) + 12; /* the label, its kind, the JSON around */
		h->frame_labels[h->n_frames] = label;
		h->frame_kinds[h->n_frames] = key & FRAME_MORE ? "none" : frame_kind(h->t, fr);
		*idx = (uint32_t)h->n_frames++;
	}
	return *idx;
}

static void stack_frame(struct html *h, uint64_t key)
{
	grow_array(&h->stack_frames, &h->cap_stack_frames, h->n_stack_frames + 1,
		   sizeof(*h->stack_frames));
	h->stack_frames[h->n_stack_frames++] = frame_ref(h, key);
}

static uint64_t frame_key(const struct html *h, const struct trace_stack *s, uint32_t d)
{
	const struct trace_frame *fr = trace_stack_frame(h->t, s, d);

	return fr ? (uint64_t)(fr - h->t->frames) : FRAME_MISSING;
}

/* Its frames, outermost first; a stack longer than STACK_FRAMES keeps
 * its STACK_OUTER outermost and the innermost (who allocated). */
static void stack_frames(struct html *h, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(h->t, stack);
	uint32_t depth = s ? s->depth : 0, inner = STACK_FRAMES - STACK_OUTER - 1;

	if (depth == 0) {
		stack_frame(h, FRAME_PSEUDO | (uint64_t)stack);
		return;
	}
	for (uint32_t d = depth; d-- > 0;) {
		if (depth > STACK_FRAMES && d == depth - STACK_OUTER - 1) {
			stack_frame(h, FRAME_MORE | (depth - STACK_OUTER - inner));
			d = inner;
			continue;
		}
		stack_frame(h, frame_key(h, s, d));
	}
}

/* The index of stack id in the data's stacks, added when first used, or
 * STACK_LEFT_OUT once the page holds PAGE_STACKS stacks or
 * PAGE_FRAME_BYTES of labels: data_block asks for the stacks that matter
 * most first. */
static uint32_t stack_ref(struct html *h, int64_t stack)
{
	bool inserted;
	uint32_t *idx = xmap_put(&h->stack_index, (uint64_t)stack, &inserted);
	size_t first = h->n_stack_frames;

	if (!inserted)
		return *idx;
	if (h->n_stacks >= PAGE_STACKS || h->frame_bytes >= PAGE_FRAME_BYTES) {
		h->stacks_left_out++;
		return *idx = STACK_LEFT_OUT;
	}
	*idx = (uint32_t)h->n_stacks;
	stack_frames(h, stack); /* idx is stale after this: the frame map is another */
	grow_array(&h->stacks, &h->cap_stacks, h->n_stacks + 1, sizeof(*h->stacks));
	h->stacks[h->n_stacks] = (struct page_stack){ first, h->n_stack_frames - first };
	return (uint32_t)h->n_stacks++;
}

/* ---- the data block ---- */

/* v in decimal, as PRIu64 prints it: the data block writes about a
 * hundred thousand numbers, and fprintf cost more than the rest. */
static void put_u64(FILE *f, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), f);
}

/* "stacks": each the list of its frames' indices, outermost first. */
static void data_stacks(struct html *h)
{
	fputs(",\n\"stacks\":[", h->f);
	for (size_t i = 0; i < h->n_stacks; i++) {
		const struct page_stack *s = &h->stacks[i];

		fputs(i ? ",[" : "[", h->f);
		for (size_t k = 0; k < s->n; k++) {
			if (k)
				putc_unlocked(',', h->f);
			put_u64(h->f, h->stack_frames[s->first + k]);
		}
		fputc(']', h->f);
	}
	fprintf(h->f, "],\n\"stacks_left_out\":%zu", h->stacks_left_out);
}

/* "frames": [label, kind]. */
static void data_frames(struct html *h)
{
	fputs(",\n\"frames\":[", h->f);
	for (size_t i = 0; i < h->n_frames; i++) {
		fputs(i ? ",[" : "[", h->f);
		json_str(h->f, h->frame_labels[i]);
		fputs_unlocked(",\"", h->f);
		fputs_unlocked(h->frame_kinds[i], h->f);
		fputs_unlocked("\"]", h->f);
	}
	fputc(']', h->f);
}

/* A moment: the live set at one time, as [stack, bytes, count] groups. */
struct group {
	int64_t stack;
	uint64_t bytes, count;
};

struct moment {
	int64_t time_ns;
	const char *kind; /* oom, peak, sample, end */
	char name[48];
	uint64_t live, count;
	struct group *groups;
	size_t n_groups;
	uint64_t other_bytes, other_count;
	bool is_default;
	const struct model_framework *fw; /* the cache's segments then; NULL: none */
};

struct moments {
	struct moment *v;
	size_t n, cap;
};

static struct moment *moment_add(struct moments *ms, int64_t t, const char *kind)
{
	struct moment *mo;

	grow_array(&ms->v, &ms->cap, ms->n + 1, sizeof(*ms->v));
	mo = &ms->v[ms->n++];
	*mo = (struct moment){ .time_ns = t < 0 ? 0 : t, .kind = kind };
	return mo;
}

static void moment_group(struct moment *mo, int64_t stack, uint64_t bytes, uint64_t count)
{
	if (bytes == 0 && count == 0)
		return;
	if (mo->n_groups >= (strcmp(mo->kind, "sample") == 0 ? SAMPLE_STACKS : MOMENT_STACKS)) {
		mo->other_bytes += bytes;
		mo->other_count += count;
		return;
	}
	mo->groups = xrealloc(mo->groups, mo->n_groups + 1, sizeof(*mo->groups));
	mo->groups[mo->n_groups++] = (struct group){ stack, bytes, count };
}

static void moments_samples(const struct model_timeline *tl, struct moments *ms)
{
	struct model_stack_live *sorted = NULL;
	size_t cap = 0;

	for (size_t i = 0; tl && i < tl->n_snaps; i++) {
		const struct timeline_snapshot *s = &tl->snaps[i];
		struct moment *mo = moment_add(ms, s->time_ns, "sample");

		snprintf(mo->name, sizeof(mo->name), "%s", fmt_seconds(s->time_ns).s);
		mo->live = s->live_bytes;
		mo->count = s->live_count;
		/* the largest first: those past SAMPLE_STACKS go to "other" */
		grow_array(&sorted, &cap, s->n_stacks, sizeof(*sorted));
		if (s->n_stacks)
			memcpy(sorted, s->stacks, s->n_stacks * sizeof(*sorted));
		model_timeline_sort_stacks(sorted, s->n_stacks);
		for (size_t g = 0; g < s->n_stacks; g++)
			moment_group(mo, sorted[g].stack, sorted[g].bytes, sorted[g].count);
		mo->other_bytes += s->other_bytes;
		mo->other_count += s->other_count;
	}
	free(sorted);
}

static void moments_ooms(const struct model *m, struct moments *ms)
{
	for (size_t i = 0; i < m->n_ooms; i++) {
		const struct model_oom *o = &m->ooms[i];
		struct moment *mo;

		if (!o->has_holders)
			continue;
		if (i >= MOMENT_OOMS / 2 && i + MOMENT_OOMS / 2 < m->n_ooms)
			continue;
		mo = moment_add(ms, o->time_ns, "oom");
		snprintf(mo->name, sizeof(mo->name), "OOM %zu", i + 1);
		mo->live = o->live_bytes;
		mo->count = o->live_count;
		mo->is_default = o == render_headline_oom(m);
		mo->fw = o->framework.has ? &o->framework : NULL;
		for (size_t g = 0; g < o->n_holders; g++)
			moment_group(mo, o->holders[g].stack, o->holders[g].bytes, o->holders[g].count);
	}
}

/* The peak, from what each site held then; the end, from what is live. */
static void moments_peak_end(const struct model *m, int64_t end, struct moments *ms)
{
	struct moment *mo;

	if (m->device.allocations) {
		mo = moment_add(ms, m->device.peak_time_ns, "peak");
		snprintf(mo->name, sizeof(mo->name), "peak");
		mo->live = m->device.peak_bytes;
		mo->is_default = !render_headline_oom(m) || !render_headline_oom(m)->has_holders;
		mo->fw = m->framework_peak.has ? &m->framework_peak : NULL;
		for (size_t i = 0; i < m->n_sites; i++)
			moment_group(mo, m->sites[i].stack, m->sites[i].at_peak, 0);
	}
	mo = moment_add(ms, end, "end");
	snprintf(mo->name, sizeof(mo->name), "end");
	mo->live = m->device.live_bytes;
	mo->count = m->device.live_count;
	mo->fw = m->framework_end.has ? &m->framework_end : NULL;
	for (size_t i = 0; i < m->n_leaks; i++) {
		if (model_mem_is_device(m->leaks[i].mem))
			moment_group(mo, m->leaks[i].stack, m->leaks[i].bytes, m->leaks[i].count);
	}
}

static int cmp_moment(const void *a, const void *b)
{
	const struct moment *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return strcmp(x->kind, y->kind);
}

/* Every moment the page offers, in time order; *def: the one shown first. */
static void moments_build(const struct html *h, struct moments *ms, size_t *def)
{
	moments_samples(h->m->timeline, ms);
	moments_ooms(h->m, ms);
	moments_peak_end(h->m, render_duration_ns(h->t, h->m), ms);
	qsort(ms->v, ms->n, sizeof(*ms->v), cmp_moment);
	*def = 0;
	for (size_t i = 0; i < ms->n; i++) {
		if (ms->v[i].is_default)
			*def = i;
	}
}

/* The stacks of the moments other than the one shown first, the k-th
 * largest group of each before the (k+1)-th of any, so that the budget
 * leaves each moment its largest stacks. */
static void moments_admit(struct html *h, const struct moments *ms, size_t def)
{
	for (size_t k = 0;; k++) {
		bool more = false;

		for (size_t i = 0; i < ms->n; i++) {
			if (i == def || k >= ms->v[i].n_groups)
				continue;
			stack_ref(h, ms->v[i].groups[k].stack);
			more = true;
		}
		if (!more || h->n_stacks >= PAGE_STACKS)
			return;
	}
}

/* The groups whose stack is past the page's budget go to the moment's
 * "other". */
static void fold_left_out(struct html *h, struct moment *mo)
{
	size_t n = 0;

	for (size_t g = 0; g < mo->n_groups; g++) {
		if (stack_ref(h, mo->groups[g].stack) == STACK_LEFT_OUT) {
			mo->other_bytes += mo->groups[g].bytes;
			mo->other_count += mo->groups[g].count;
		} else {
			mo->groups[n++] = mo->groups[g];
		}
	}
	mo->n_groups = n;
}

static void data_groups(struct html *h, const struct moment *mo)
{
	for (size_t g = 0; g < mo->n_groups; g++) {
		fputs_unlocked(g ? ",[" : "[", h->f);
		put_u64(h->f, stack_ref(h, mo->groups[g].stack));
		putc_unlocked(',', h->f);
		put_u64(h->f, mo->groups[g].bytes);
		putc_unlocked(',', h->f);
		put_u64(h->f, mo->groups[g].count);
		putc_unlocked(']', h->f);
	}
}

/* The cache's segments at the moment, with their blocks end to end:
 * "segments":[[address, size, expandable, [[size, state, stack, requested],
 * ...] or null past MOMENT_BLOCKS], ...]; state 0 a tensor's, 1 its free
 * pending, 2 free; stack -1: none or past the page's budget. */
static void data_segments(struct html *h, const struct model_framework *fw)
{
	size_t shown = 0;

	fputs(",\"segments\":[", h->f);
	for (size_t i = 0; i < fw->n_segments; i++) {
		const struct model_fw_segment *s = &fw->segments[i];
		bool all = shown + s->n <= MOMENT_BLOCKS && (s->n || !fw->blocks_cut);

		fprintf(h->f, "%s[%" PRIu64 ",%" PRIu64 ",%d,", i ? "," : "", s->address, s->size,
			s->expandable);
		if (!all) {
			fputs("null]", h->f);
			continue;
		}
		putc_unlocked('[', h->f);
		for (size_t k = s->first; k < s->first + s->n; k++) {
			const struct model_fw_block *b = &fw->blocks[k];
			uint32_t ref = b->stack ? stack_ref(h, b->stack) : STACK_LEFT_OUT;

			fprintf(h->f, "%s[%" PRIu64 ",%d,%" PRId64 ",%" PRIu64 "]", k > s->first ? "," : "",
				b->size, b->state, ref == STACK_LEFT_OUT ? -1 : (int64_t)ref, b->requested);
		}
		fputs("]]", h->f);
		shown += s->n;
	}
	fprintf(h->f, "],\"allocated\":%" PRIu64 ",\"reserved\":%" PRIu64 ",\"bfc\":%d",
		fw->allocated, fw->reserved, fw->bfc);
}

static void data_moments(struct html *h, struct moments *ms, size_t def)
{
	fputs(",\n\"moments\":[", h->f);
	for (size_t i = 0; i < ms->n; i++) {
		struct moment *mo = &ms->v[i];

		fold_left_out(h, mo);
		fprintf(h->f, "%s\n{\"t\":%" PRId64 ",\"kind\":\"%s\",\"name\":", i ? "," : "",
			mo->time_ns, mo->kind);
		json_str(h->f, mo->name);
		fprintf(h->f, ",\"live\":%" PRIu64 ",\"count\":%" PRIu64 ",\"other\":[%" PRIu64
			      ",%" PRIu64 "],\"groups\":[",
			mo->live, mo->count, mo->other_bytes, mo->other_count);
		data_groups(h, mo);
		putc_unlocked(']', h->f);
		if (mo->fw)
			data_segments(h, mo->fw);
		putc_unlocked('}', h->f);
		free(mo->groups);
	}
	fprintf(h->f, "],\n\"selected\":%zu", def);
	free(ms->v);
}

static uint64_t device_total(const struct model *m)
{
	const struct model_oom *o = render_headline_oom(m);

	if (o && o->has_device_total && o->device_total > 0)
		return (uint64_t)o->device_total;
	if (m->n_devices == 1 && m->devices[0].has_total)
		return m->devices[0].total;
	return 0;
}

/* The mark point of seq (points are in seq order), else NULL. */
static const struct model_point *mark_point(const struct model *m, int64_t seq)
{
	size_t lo = 0, hi = m->n_points;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->points[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n_points && m->points[lo].seq == seq && m->points[lo].kind == MODEL_POINT_MARK)
		return &m->points[lo];
	return NULL;
}

/* ",label" after a mark marker: its name from the ops table, cut short. */
static void marker_label(struct html *h, int64_t seq)
{
	const struct model_point *p = mark_point(h->m, seq);
	_autofree_ char *label = p ? render_point_label(h->t, p) : NULL;

	if (!label)
		return;
	cut_label(label, LABEL_CHARS);
	fputc(',', h->f);
	json_str(h->f, label);
}

static void data_timeline(struct html *h)
{
	const struct model_timeline *tl = h->m->timeline;
	bool first = true;

	fprintf(h->f, ",\n\"timeline\":{\"first\":%" PRId64 ",\"width\":%" PRId64 ",\"end\":%" PRId64 ",\"total\":%" PRIu64
		      ",\"peak\":[%" PRId64 ",%" PRIu64 "],\"buckets\":[",
		tl ? tl->first_ns : 0, tl ? tl->width : 1, render_duration_ns(h->t, h->m), device_total(h->m),
		h->m->device.peak_time_ns, h->m->device.peak_bytes);
	for (size_t i = 0; tl && i < tl->n_buckets; i++) {
		const struct trace_bucket *b = &tl->buckets[i];

		if (!b->used)
			continue;
		fprintf(h->f, "%s[%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", i,
			b->min, b->max, b->last);
		first = false;
	}
	fputs("],\"markers\":[", h->f);
	for (size_t i = 0; tl && i < tl->n_markers; i++) {
		fprintf(h->f, "%s[%" PRId64 ",%d,%" PRIu64, i ? "," : "", tl->markers[i].time_ns,
			tl->markers[i].kind, tl->markers[i].bytes);
		if (tl->markers[i].kind == MT_EV_MARK)
			marker_label(h, tl->markers[i].seq);
		fputc(']', h->f);
	}
	fprintf(h->f, "],\"markers_dropped\":%" PRIu64 "}", tl ? tl->markers_dropped : 0);
}

/* ---- the operations table: sites ---- */

struct site_row {
	const struct model_site *s;
	uint64_t at_oom;
	bool keep;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a == b ? 0 : a > b ? -1 : 1;
}

static int by_oom(const void *a, const void *b)
{
	return cmp_u64_desc(((const struct site_row *)a)->at_oom, ((const struct site_row *)b)->at_oom);
}

static int by_total(const void *a, const void *b)
{
	return cmp_u64_desc(((const struct site_row *)a)->s->total_bytes,
			    ((const struct site_row *)b)->s->total_bytes);
}

static int by_live(const void *a, const void *b)
{
	return cmp_u64_desc(((const struct site_row *)a)->s->live,
			    ((const struct site_row *)b)->s->live);
}

static int by_peak(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s; /* the model's order: by peak */
}

/* Bytes each site held at the headline OOM: its holders, by site key. */
static void site_rows_oom(const struct model *m, struct site_row *rows)
{
	const struct model_oom *o = render_headline_oom(m);
	struct map idx;

	if (!o || !o->has_holders)
		return;
	map_init(&idx, sizeof(uint32_t));
	for (size_t i = 0; i < m->n_sites; i++) {
		bool ins;

		*(uint32_t *)xmap_put(&idx, m->sites[i].key, &ins) = (uint32_t)i;
	}
	for (size_t i = 0; i < o->n_holders; i++) {
		uint32_t *s = map_get(&idx, model_site_key(m, o->holders[i].stack));

		if (s)
			rows[*s].at_oom += o->holders[i].bytes;
	}
	map_fini(&idx);
}

static void keep_top(struct site_row *rows, size_t n, int (*cmp)(const void *, const void *))
{
	qsort(rows, n, sizeof(*rows), cmp);
	for (size_t i = 0; i < n && i < SITE_ROWS; i++)
		rows[i].keep = true;
}

/* The sites the table lists: those among the SITE_ROWS largest by some
 * column, in the model's order. */
static struct site_row *sites_build(const struct html *h)
{
	const struct model *m = h->m;
	struct site_row *rows = xcalloc(m->n_sites ? m->n_sites : 1, sizeof(*rows));

	for (size_t i = 0; i < m->n_sites; i++)
		rows[i].s = &m->sites[i];
	site_rows_oom(m, rows);
	keep_top(rows, m->n_sites, by_oom);
	keep_top(rows, m->n_sites, by_total);
	keep_top(rows, m->n_sites, by_live);
	keep_top(rows, m->n_sites, by_peak);
	return rows;
}

static void sites_admit(struct html *h, const struct site_row *rows)
{
	for (size_t i = 0; i < h->m->n_sites; i++) {
		if (rows[i].keep)
			stack_ref(h, rows[i].s->stack);
	}
}

/* "sites": [stack, label, at peak, at the OOM, total, count, live]; the
 * stack is -1 when the page left it out. */
static void data_sites(struct html *h, struct site_row *rows)
{
	const struct model *m = h->m;
	uint64_t other[5] = { 0 };
	size_t n_other = 0;
	bool first = true;

	fputs(",\n\"sites\":[", h->f);
	for (size_t i = 0; i < m->n_sites; i++) {
		const struct model_site *s = rows[i].s;
		_autofree_ char *label = NULL;
		uint32_t stack;

		if (!rows[i].keep) {
			uint64_t v[5] = { s->at_peak, rows[i].at_oom, s->total_bytes, s->count, s->live };

			for (int k = 0; k < 5; k++)
				other[k] += v[k];
			n_other++;
			continue;
		}
		label = render_model_site_label(h->t, s, true);
		cut_label(label, FRAME_CHARS);
		stack = stack_ref(h, s->stack);
		fputs(first ? "\n[" : ",\n[", h->f);
		if (stack == STACK_LEFT_OUT)
			fputs("-1,", h->f);
		else
			fprintf(h->f, "%" PRIu32 ",", stack);
		json_str(h->f, label);
		fprintf(h->f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
			s->at_peak, rows[i].at_oom, s->total_bytes, s->count, s->live);
		first = false;
	}
	fprintf(h->f, "],\n\"sites_other\":[%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		      ",%" PRIu64 "]",
		n_other, other[0], other[1], other[2], other[3], other[4]);
	free(rows);
}

/* Device bytes live at the peak by thread (model-timeline.c), for the
 * script to draw: [tid, name, bytes, allocations], tid null for the
 * threads past the 32nd; rest: the peak's bytes in no row. Names are
 * trace strings: through json_str here, textContent there. */
static void data_threads(struct html *h)
{
	const struct model_timeline *tl = h->m->timeline;
	struct timeline_thread rows[TIMELINE_THREADS];
	size_t n = render_peak_threads(h->m, rows);
	uint64_t sum = 0;
	bool first = true;

	fputs(",\n\"threads\":[", h->f);
	for (size_t i = 0; i < n; i++) {
		_autofree_ char *name = NULL;

		sum = sat_add(sum, rows[i].bytes);
		if (!rows[i].bytes)
			continue;
		name = trace_thread_name(h->t, rows[i].thread);
		fprintf(h->f, "%s[%" PRId64 ",", first ? "" : ",", rows[i].thread);
		json_str(h->f, name);
		fprintf(h->f, ",%" PRIu64 ",%" PRIu64 "]", rows[i].bytes, rows[i].count);
		first = false;
	}
	if (tl && tl->thread_at_peak_other.bytes) {
		fprintf(h->f, "%s[null,null,%" PRIu64 ",%" PRIu64 "]", first ? "" : ",",
			tl->thread_at_peak_other.bytes, tl->thread_at_peak_other.count);
		sum = sat_add(sum, tl->thread_at_peak_other.bytes);
	}
	fprintf(h->f, "],\"threads_rest\":%" PRIu64,
		h->m->device.peak_bytes > sum ? h->m->device.peak_bytes - sum : 0);
}

/* The stacks go in by what they matter to: the moment shown first, the
 * table's sites, then the other moments' largest; past the budget a
 * moment's stack is summed in its "other" and a site shows no stack. */
static void data_block(struct html *h)
{
	const struct model_oom *o = render_headline_oom(h->m);
	struct moments ms = { 0 };
	struct site_row *rows;
	size_t def;

	moments_build(h, &ms, &def);
	rows = sites_build(h);
	for (size_t g = 0; ms.n && g < ms.v[def].n_groups; g++)
		stack_ref(h, ms.v[def].groups[g].stack);
	sites_admit(h, rows);
	moments_admit(h, &ms, def);
	fputs("<script type=\"application/json\" id=\"memtrace-data\">{\"version\":1", h->f);
	fprintf(h->f, ",\"has_oom\":%s,\"headline_oom\":%" PRId64, o ? "true" : "false",
		o ? o->time_ns : -1);
	data_moments(h, &ms, def);
	data_timeline(h);
	data_sites(h, rows);
	data_stacks(h);
	data_frames(h);
	data_threads(h);
	fputs("}</script>\n", h->f);
}

/* ---- static markup ---- */

static void size_cell(const struct html *h, uint64_t bytes)
{
	fprintf(h->f, "<td class=\"n\" title=\"%" PRIu64 " bytes\">%s</td>", bytes,
		fmt_size(bytes).s);
}

static void count_cell(const struct html *h, uint64_t n)
{
	fprintf(h->f, "<td class=\"n\">%" PRIu64 "</td>", n);
}

/* The site frame as the summary, the whole stack inside. */
static void stack_cell(const struct html *h, int64_t stack)
{
	const struct trace_stack *s = trace_find_stack(h->t, stack);
	_autofree_ char *label = render_stack_label(h->t, stack, true);

	fputs("<td><details><summary>", h->f);
	esc(h, label);
	fputs("</summary><ol start=\"0\">", h->f);
	for (uint32_t i = 0; s && i < s->depth; i++) {
		_autofree_ char *frame = render_frame_label(h->t, trace_stack_frame(h->t, s, i), false);

		fputs("<li><code>", h->f);
		esc(h, frame);
		fputs("</code></li>", h->f);
	}
	fputs("</ol></details></td>", h->f);
}

void render_html_head(FILE *f, const char *title, bool script)
{
	_autofree_ char *cut = strlen(title) > MARKUP_CHARS ? xstrdup(title) : NULL;

	if (cut)
		cut_label(cut, MARKUP_CHARS);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ",
	      f);
	if (script)
		fprintf(f, "script-src 'sha256-%s'; ", render_html_js_sha256);
	fprintf(f,
		"style-src 'sha256-%s'; base-uri 'none'; form-action 'none'\">"
		"<meta name=\"viewport\" content=\"width=device-width\"><title>memtrace: ",
		render_html_css_sha256);
	escape_html(f, cut ? cut : title);
	fprintf(f, "</title><style>%s</style></head><body>\n", render_html_css);
}

static void print_head(const struct html *h)
{
	const char *cmd = trace_meta_get(h->t, "cmdline");

	render_html_head(h->f, cmd && *cmd ? cmd : h->t->path, true);
}

static void print_topbar(const struct html *h)
{
	const char *cmd = trace_meta_get(h->t, "cmdline");
	const char *host = trace_meta_get(h->t, "host");
	const char *pid = trace_meta_get(h->t, "pid");
	const char *rank = trace_meta_get(h->t, "rank");
	char story[64];
	const char *end = render_end_story(h->t, story, sizeof(story));

	fputs("<header class=\"top\"><b>memtrace</b> <code class=\"cmd\">", h->f);
	esc(h, cmd && *cmd ? cmd : "(command line not recorded)");
	fputs("</code><span class=\"meta\">pid ", h->f);
	esc(h, pid ? pid : "?");
	fputs(" on ", h->f);
	esc(h, host ? host : "?");
	if (rank && *rank) {
		fputs(", rank ", h->f);
		esc(h, rank);
	}
	fprintf(h->f, " · ran %s · ", fmt_seconds(render_duration_ns(h->t, h->m)).s);
	esc(h, end);
	fputs(" · ", h->f);
	esc(h, h->t->path);
	fputs("</span></header>\n<main>\n", h->f);
}

static void stat_box(const struct html *h, const char *cls, const char *what, const char *value,
		 const char *sub)
{
	fprintf(h->f, "<div class=\"stat %s\"><div class=\"k\">%s</div><div class=\"v\">%s</div>",
		cls, what, value);
	if (sub)
		fprintf(h->f, "<div class=\"s\">%s</div>", sub);
	fputs("</div>", h->f);
}

/* One bar of the whole device: the process's allocations, what the device
 * used beyond them, what was free, and the request drawn against the free
 * part. SVG attributes, not style: the policy allows no inline style. */
static void device_bar(const struct html *h, const struct model_oom *o)
{
	double total = (double)o->device_total;
	double live = (double)o->live_bytes, unex = (double)o->unexplained_bytes;
	double fr = o->device_free > 0 ? (double)o->device_free : 0;
	double req = (double)o->requested;
	double x1, x2, x3;

	if (!o->has_device_total || o->device_total <= 0)
		return;
	x1 = 1000 * (live < total ? live : total) / total;
	x2 = x1 + 1000 * (o->has_unexplained ? unex : 0) / total;
	x2 = x2 > 1000 ? 1000 : x2;
	x3 = 1000 - 1000 * fr / total;
	x3 = x3 < x2 ? x2 : x3;
	fputs("<svg class=\"devbar\" viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" "
	      "role=\"img\" aria-label=\"device memory at the failure\">", h->f);
	fprintf(h->f, "<rect class=\"b-live\" x=\"0\" y=\"0\" width=\"%.1f\" height=\"20\"/>", x1);
	fprintf(h->f, "<rect class=\"b-unex\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\"/>", x1,
		x2 - x1);
	fprintf(h->f, "<rect class=\"b-other\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\"/>", x2,
		x3 - x2);
	fprintf(h->f, "<rect class=\"b-free\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\"/>", x3,
		1000 - x3);
	fprintf(h->f, "<rect class=\"b-req\" x=\"%.1f\" y=\"12\" width=\"%.1f\" height=\"8\"/>",
		x3, 1000 * req / total);
	fputs("</svg><div class=\"legend\"><span class=\"k-live\">this process's allocations</span>"
	      "<span class=\"k-unex\">not explained by them</span><span class=\"k-free\">free"
	      "</span><span class=\"k-req\">the request</span></div>\n",
	      h->f);
}

/* Memory by role at the failure (render_roles), on the device's scale:
 * the text report's bar. */
static void role_bar(const struct html *h, const struct model_oom *o)
{
	uint64_t roles[TRACE_ROLES], sum = 0;
	double x = 0;

	if (!render_roles(h->t, &o->framework, o, roles))
		return;
	for (int i = 0; i < TRACE_ROLES; i++)
		sum += roles[i];
	double total = o->has_device_total && (double)o->device_total > (double)sum
			       ? (double)o->device_total : (double)sum;
	if (total <= 0)
		return;
	fputs("<svg class=\"devbar roles\" viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" "
	      "role=\"img\" aria-label=\"memory by role at the failure\">", h->f);
	for (int i = 0; i < TRACE_ROLES; i++) {
		double w = 1000 * (double)roles[i] / total;

		if (roles[i])
			fprintf(h->f, "<rect class=\"r-%s\" x=\"%.1f\" y=\"0\" width=\"%.1f\" "
				      "height=\"20\"/>", render_role_key[i], x, w);
		x += w;
	}
	fputs("</svg><div class=\"legend roles\">", h->f);
	for (int i = 0; i < TRACE_ROLES; i++)
		if (roles[i])
			fprintf(h->f, "<span class=\"k-%s\" data-bytes=\"%" PRIu64 "\">%s %s</span>",
				render_role_key[i], roles[i], render_role_words[i],
				fmt_size(roles[i]).s);
	fputs("</div>\n", h->f);
}

static void oom_stats(const struct html *h, const struct model_oom *o)
{
	char sub[96];

	fputs("<div class=\"stats\">", h->f);
	stat_box(h, "req", "requested", fmt_size(o->requested).s, NULL);
	if (o->has_device_free && o->has_device_total) {
		snprintf(sub, sizeof(sub), "of %s on the device",
			 fmt_size(o->device_total < 0 ? 0 : (uint64_t)o->device_total).s);
		stat_box(h, "free", "free",
			 fmt_size(o->device_free < 0 ? 0 : (uint64_t)o->device_free).s, sub);
	}
	snprintf(sub, sizeof(sub), "in %" PRIu64 " allocations", o->live_count);
	stat_box(h, "live", "live (this process)", fmt_size(o->live_bytes).s, sub);
	if (o->has_unexplained)
		stat_box(h, "unex", "not explained", fmt_size(o->unexplained_bytes).s,
		     "contexts, other processes, caches");
	snprintf(sub, sizeof(sub), "at %s", fmt_seconds(h->m->device.peak_time_ns).s);
	stat_box(h, "peak", "peak", fmt_size(h->m->device.peak_bytes).s, sub);
	if (h->m->n_oom_episodes > 1) {
		char n[64];

		snprintf(n, sizeof(n), "%zu", h->m->n_oom_episodes);
		snprintf(sub, sizeof(sub), "%zu failures; this is the last", h->m->n_ooms);
		stat_box(h, "n", "OOM episodes", n, sub);
	} else if (o->retry_of) {
		snprintf(sub, sizeof(sub), "%s freed before it", fmt_size(o->released_bytes).s);
		stat_box(h, "n", "a retry", "1 episode", sub);
	} else if (h->m->n_ooms > 1) {
		snprintf(sub, sizeof(sub), "%zu", h->m->n_ooms);
		stat_box(h, "n", "OOMs", sub, "this is the last");
	}
	fputs("</div>\n", h->f);
}

static void print_diagnosis(const struct html *h)
{
	struct diagnoses d;

	diagnose(h->t, h->m, &d);
	if (d.n) {
		fputs("<div class=\"try\"><h3>The cause, and what to try</h3><ul>", h->f);
		for (size_t i = 0; i < d.n; i++) {
			fprintf(h->f, "<li data-cause=\"%s\"><b>%s ",
				diagnose_cause_name(d.items[i].kind), i == 0 ? "Cause" : "Also");
			fprintf(h->f, "(%s): ", diagnose_cause_name(d.items[i].kind));
			esc(h, d.items[i].title);
			fputs(".</b> <span class=\"why\">Evidence: ", h->f);
			esc(h, d.items[i].evidence);
			fputs(".</span> Try: ", h->f);
			esc(h, d.items[i].remedy);
			fputs(".</li>", h->f);
		}
		fputs("</ul></div>\n", h->f);
	}
	diagnoses_fini(&d);
}

/* A frame of the language runtime (trace_module_is_runtime): folded out
 * of the path unless asked for. */
static bool runtime_frame(const struct trace *t, const struct trace_frame *f)
{
	const struct trace_module *mod = f && f->kind != MT_FRAME_PYTHON ? trace_frame_module(t, f)
									 : NULL;

	return mod && trace_module_is_runtime(mod->path);
}

static void path_frame(const struct html *h, const struct trace_frame *fr)
{
	_autofree_ char *label = render_frame_label(h->t, fr, true);

	fprintf(h->f, "<span class=\"fr k-%s\">", frame_kind(h->t, fr));
	esc(h, label);
	fputs("</span>", h->f);
}

/* The frames [from, to) of s, outermost first, each followed by a
 * separator but the last when last: a run of the runtime's frames is a
 * "⋯" and, hidden until the path's one toggle shows them (print_path),
 * the frames themselves. */
static void path_frames(const struct html *h, const struct trace_stack *s, uint32_t from,
			uint32_t to, bool last)
{
	uint32_t d = to;

	while (d > from) {
		uint32_t run = 0;

		while (d - run > from && runtime_frame(h->t, trace_stack_frame(h->t, s, d - run - 1)))
			run++;
		if (run) {
			fprintf(h->f, "<span class=\"rt-fold\" title=\"%u frame%s of the runtime\">⋯</span>"
				      "<span class=\"rt\">",
				run, run == 1 ? "" : "s");
			for (uint32_t k = 0; k < run; k++) {
				if (k)
					fputs("<span class=\"sep\">›</span>", h->f);
				path_frame(h, trace_stack_frame(h->t, s, d - k - 1));
			}
			fputs("</span>", h->f);
			d -= run;
		} else {
			path_frame(h, trace_stack_frame(h->t, s, --d));
		}
		if (d > from || !last)
			fputs("<span class=\"sep\">›</span>", h->f);
	}
}

/* How many frames of s are the runtime's (the interpreter, libffi, the C
 * runtime), and where the innermost PATH_FRAMES of the others begin
 * (*split: the frames from it outwards go behind "outer frames"). */
static uint32_t runtime_frames(const struct html *h, const struct trace_stack *s,
			       uint32_t *split)
{
	uint32_t n = 0, shown = 0;

	*split = s->depth;
	for (uint32_t d = 0; d < s->depth; d++) {
		if (runtime_frame(h->t, trace_stack_frame(h->t, s, d)))
			n++;
		else if (++shown == PATH_FRAMES + 1 && *split == s->depth)
			*split = d;
	}
	return n;
}

/* The failing call, outermost first, ending in the call that failed: the
 * user's frames (and others not the runtime's) in view, the innermost
 * PATH_FRAMES of them outside "outer frames"; all the runtime's frames
 * (the interpreter, libffi, the C runtime) folded behind one toggle. */
static void print_path(const struct html *h, int64_t stack, const char *api)
{
	const struct trace_stack *s = trace_find_stack(h->t, stack);
	uint32_t n = s ? s->depth : 0, split = 0, rt;

	fputs("<div class=\"path\"><h3>The path that led there</h3>", h->f);
	if (!n) {
		_autofree_ char *label = render_stack_label(h->t, stack, true);

		esc(h, label);
		fputs("</div>\n", h->f);
		return;
	}
	rt = runtime_frames(h, s, &split);
	if (rt) /* one path a page: the headline's */
		fprintf(h->f, "<input type=\"checkbox\" class=\"rt-show\" id=\"rt-show\"><label "
			      "for=\"rt-show\" class=\"rt-label\">show the %u frame%s of the runtime "
			      "(⋯: the interpreter, libffi, the C runtime)</label>",
			rt, rt == 1 ? "" : "s");
	fputs("<div class=\"frames\">", h->f);
	if (split < n) {
		fprintf(h->f, "<details><summary>%u outer frames</summary>", n - split);
		path_frames(h, s, split, n, false);
		fputs("</details>", h->f);
	}
	path_frames(h, s, 0, split, !api);
	if (api) {
		fputs("<span class=\"fr k-cuda\">", h->f);
		esc(h, api);
		fputs("</span>", h->f);
	}
	fputs("</div></div>\n", h->f);
}

/* Who held the memory at the failure (or the peak): the largest holders. */
static void print_holders(const struct html *h, const struct model_group *g, size_t n,
			  uint64_t live, const char *when)
{
	fprintf(h->f, "<div class=\"holders\"><h3>Who held it %s</h3><table>", when);
	for (size_t i = 0; i < n && i < HEADLINE_HOLDERS; i++) {
		_autofree_ char *label = render_stack_label(h->t, g[i].stack, true);
		double w = live ? 100.0 * (double)g[i].bytes / (double)live : 0;

		fprintf(h->f, "<tr><td class=\"n\">%s</td><td class=\"bar\"><svg viewBox=\"0 0 100 8\" "
			      "preserveAspectRatio=\"none\"><rect x=\"0\" y=\"0\" width=\"%.1f\" "
			      "height=\"8\"/></svg></td><td class=\"lbl\">",
			fmt_size(g[i].bytes).s, w);
		esc(h, label);
		fprintf(h->f, " <span class=\"cnt\">×%" PRIu64 "</span></td></tr>", g[i].count);
	}
	if (n > HEADLINE_HOLDERS)
		fprintf(h->f, "<tr><td></td><td></td><td class=\"lbl more\">and %zu more stacks "
			      "(table below)</td></tr>",
			n - HEADLINE_HOLDERS);
	fputs("</table></div>\n", h->f);
}

/* Inside PyTorch's cache or TensorFlow's BFC arena, its free memory in
 * pieces: the text report's "Fragmentation" and the stderr answer's, by
 * the same rule. */
static void print_cache_fragmentation(const struct html *h, const struct model_oom *o)
{
	const struct model_framework *f = &o->framework;
	uint64_t requested = 0;

	if (!render_cache_fragmentation(h->t, o) || !render_cache_request(h->t, o, &requested))
		return;
	fprintf(h->f, "<div class=\"try\" data-cause=\"cache-fragmentation\"><b>Inside %s: "
		      "fragmentation.</b> <span class=\"why\">%s free in %s, its "
		      "largest free block %s, ",
		f->bfc ? "TensorFlow's BFC arena" : "PyTorch's cache",
		fmt_size(f->reserved > f->allocated ? f->reserved - f->allocated : 0).s,
		f->bfc ? "the arena" : "the cache", fmt_size(f->largest_free).s);
	if (f->bfc)
		fprintf(h->f, "the tensor asked for was %s.</span> Try: fewer distinct tensor "
			      "sizes (a fixed batch and input shape: drop_remainder=True in "
			      "tf.data), or the same work in smaller pieces.</div>\n",
			fmt_size(requested).s);
	else
		fprintf(h->f, "the device's free %s; the tensor asked for was %s.</span> Try: "
			      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
			      "torch.cuda.empty_cache() between phases, or fewer distinct tensor "
			      "sizes.</div>\n",
			fmt_size(render_cache_device_free(h->t, o)).s, fmt_size(requested).s);
}

static void print_oom_headline(const struct html *h, const struct model_oom *o)
{
	_autofree_ char *where = render_stack_label(h->t, o->stack, true);
	const char *api = trace_api_name(h->t, o->api);

	fputs("<section class=\"headline oom\" id=\"headline\"><div class=\"story\">"
	      "<h1><span class=\"tag\">OUT OF MEMORY</span> ", h->f);
	esc(h, api ? api : "allocation");
	fprintf(h->f, " of <b>%s</b> failed at %s in <code>", fmt_size(o->requested).s,
		fmt_seconds(o->time_ns).s);
	esc(h, where);
	fputs("</code></h1>\n", h->f);
	oom_stats(h, o);
	device_bar(h, o);
	role_bar(h, o);
	print_diagnosis(h);
	print_cache_fragmentation(h, o);
	print_path(h, o->stack, api);
	fputs("</div>", h->f);
	/* with a framework's view, its tensors: the lines users know, not
	 * the segments or the arena that hold them */
	if (o->framework.has && o->framework.n_holders)
		print_holders(h, o->framework.holders, o->framework.n_holders,
			      o->framework.allocated,
			      o->framework.bfc ? "at the failure (tensors in TensorFlow's BFC arena)"
					       : "at the failure (tensors in PyTorch's cache)");
	else if (o->has_holders)
		print_holders(h, o->holders, o->n_holders, o->live_bytes, "at the failure");
	fputs("</section>\n", h->f);
}

/* No OOM: the peak leads; the holders are the sites at the peak. */
static void print_peak_headline(const struct html *h)
{
	const struct model *m = h->m;
	size_t n = m->n_sites < HEADLINE_HOLDERS ? m->n_sites : HEADLINE_HOLDERS;
	struct model_group g[HEADLINE_HOLDERS];
	char sub[64];

	fputs("<section class=\"headline\" id=\"headline\"><div class=\"story\"><h1>"
	      "<span class=\"tag ok\">NO OUT-OF-MEMORY FAILURE</span> ", h->f);
	if (m->device.allocations)
		fprintf(h->f, "peak device memory <b>%s</b> at %s",
			fmt_size(m->device.peak_bytes).s, fmt_seconds(m->device.peak_time_ns).s);
	else
		fputs("no device memory was allocated", h->f);
	fputs("</h1>\n<div class=\"stats\">", h->f);
	snprintf(sub, sizeof(sub), "%" PRIu64 " allocations", m->device.allocations);
	stat_box(h, "live", "allocated", fmt_size(m->device.bytes_allocated).s, sub);
	snprintf(sub, sizeof(sub), "in %" PRIu64 " allocations", m->device.live_count);
	stat_box(h, "unex", "live at the end", fmt_size(m->device.live_bytes).s, sub);
	if (device_total(m)) {
		snprintf(sub, sizeof(sub), "%.0f%% at the peak",
			 100.0 * (double)m->device.peak_bytes / (double)device_total(m));
		stat_box(h, "free", "device", fmt_size(device_total(m)).s, sub);
	}
	if (m->n_recovered_episodes) { /* failed, then served: no OOM */
		snprintf(sub, sizeof(sub), "%zu", render_recovered_failures(m));
		stat_box(h, "n", "failed allocations", sub, "cache flushed and retried; no OOM");
	}
	fputs("</div>\n", h->f);
	print_diagnosis(h);
	fputs("</div>", h->f);
	for (size_t i = 0; i < n; i++)
		g[i] = (struct model_group){ .stack = m->sites[i].stack,
					     .bytes = m->sites[i].at_peak,
					     .count = m->sites[i].count };
	if (n)
		print_holders(h, g, n, m->device.peak_bytes, "at the peak");
	fputs("</section>\n", h->f);
}

/* Containers the script fills; their text says what is missing without it. */
static void print_views(const struct html *h)
{
	fputs("<section id=\"timeline\" class=\"view\"><h2>Device memory over time</h2>"
	      "<noscript>The timeline, the flame graph and the operations table need "
	      "JavaScript.</noscript></section>\n"
	      "<section id=\"moment\" class=\"view\"><h2 id=\"moment-title\">Live at the selected "
	      "moment</h2><div id=\"flame\"></div><div id=\"segments\"></div></section>\n"
	      "<section id=\"ops\" class=\"view\"><h2>Operations</h2></section>\n",
	      h->f);
}

static void print_kinds(const struct html *h)
{
	const struct model *m = h->m;

	fputs("<h2>Memory kinds</h2>\n<table class=\"grid\"><tr><th>kind</th><th>allocations</th>"
	      "<th>total</th><th>peak</th><th>live at end</th><th>counted as device memory</th>"
	      "<th>what it is</th></tr>\n",
	      h->f);
	for (int mem = 1; mem < MODEL_MEM_KINDS; mem++) {
		const struct model_mem *k = &m->kinds[mem];
		const char *meaning = render_mem_meaning(mem);

		if (!render_mem_seen(m, mem))
			continue;
		fprintf(h->f, "<tr><td>%s</td>", render_mem_name(mem));
		count_cell(h, k->allocations);
		size_cell(h, k->bytes_allocated);
		size_cell(h, k->peak_bytes);
		size_cell(h, k->live_bytes);
		fprintf(h->f, "<td>%s</td><td>", model_mem_is_device(mem) ? "yes" : "no");
		esc(h, meaning ? meaning : "");
		fputs("</td></tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_pools(const struct html *h)
{
	const struct model *m = h->m;

	if (m->n_pools == 0)
		return;
	fputs("<h2>Memory pools</h2>\n<table class=\"grid\"><tr><th>pool</th><th>allocations</th>"
	      "<th>total</th><th>live at end</th><th>trims</th><th>destroyed</th><th>created at"
	      "</th></tr>\n",
	      h->f);
	for (size_t i = 0; i < m->n_pools; i++) {
		const struct model_pool *p = &m->pools[i];

		fprintf(h->f, "<tr><td><code>0x%" PRIx64 "</code></td>", p->handle);
		count_cell(h, p->allocations);
		size_cell(h, p->bytes_allocated);
		size_cell(h, p->live_bytes);
		count_cell(h, p->trims);
		fprintf(h->f, "<td>%s</td>", p->destroyed ? "yes" : "no");
		if (p->created)
			stack_cell(h, p->created_stack);
		else
			fputs("<td>(not seen)</td>", h->f);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_leaks(const struct html *h)
{
	const char *end = trace_meta_get(h->t, "end");
	size_t n = render_limit(h->o, h->m->n_leaks);

	fprintf(h->f, "<h2>%s (%zu of %zu stacks)</h2>\n",
		end && strcmp(end, "exit") == 0 ? "Leaks: live at exit"
						: "Live at the end of the trace (the program did not exit)",
		n, h->m->n_leaks);
	if (!h->m->n_leaks) {
		fputs("<p>None: everything memtrace saw allocated was freed.</p>\n", h->f);
		return;
	}
	fputs("<table class=\"grid\"><tr><th>bytes</th><th>allocations</th><th>memory</th>"
	      "<th>allocated at</th></tr>\n",
	      h->f);
	for (size_t i = 0; i < n; i++) {
		const struct model_group *g = &h->m->leaks[i];

		fputs("<tr>", h->f);
		size_cell(h, g->bytes);
		count_cell(h, g->count);
		if (g->cache) /* the framework's cache, not the program's leak */
			fprintf(h->f, "<td>%s (%s)</td>", render_mem_name(g->mem),
				h->m->framework_end.bfc ? "TensorFlow's BFC arena"
							: "PyTorch's cache");
		else if (render_library_handle(h->t, g->stack)) /* a handle's workspace */
			fprintf(h->f, "<td>%s (%s handle)</td>", render_mem_name(g->mem),
				render_library_handle(h->t, g->stack));
		else
			fprintf(h->f, "<td>%s</td>", render_mem_name(g->mem));
		stack_cell(h, g->stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_totals(const struct html *h)
{
	const struct model *m = h->m;

	fputs("<h2>Totals</h2>\n<table class=\"grid\"><tr><th></th><th>device memory</th>"
	      "<th>pinned host</th></tr>\n",
	      h->f);
	fputs("<tr><th>allocations</th>", h->f);
	count_cell(h, m->device.allocations);
	count_cell(h, m->host.allocations);
	fputs("</tr><tr><th>frees</th>", h->f);
	count_cell(h, m->device.frees);
	count_cell(h, m->host.frees);
	fputs("</tr><tr><th>bytes allocated</th>", h->f);
	size_cell(h, m->device.bytes_allocated);
	size_cell(h, m->host.bytes_allocated);
	fputs("</tr><tr><th>peak</th>", h->f);
	size_cell(h, m->device.peak_bytes);
	size_cell(h, m->host.peak_bytes);
	fputs("</tr><tr><th>live at end</th>", h->f);
	size_cell(h, m->device.live_bytes);
	size_cell(h, m->host.live_bytes);
	fprintf(h->f, "</tr></table>\n<p>%" PRIu64 " events; %zu out-of-memory failures; %" PRIu64
		      " other failed allocations; %" PRIu64 " frees of unknown addresses; %" PRIu64
		      " events of unknown kinds.</p>\n",
		m->events, m->n_ooms, m->alloc_errors, m->unmatched_frees, m->unknown_events);
	if (h->t->flight.on && h->t->flight.trimmed)
		fprintf(h->f, "<p class=\"note\">A flight trace (MEMTRACE_FLIGHT=%s): the %" PRIu64
			      " events before %s left its ring. The totals, the peak, OOMs, marks and "
			      "leaks still count them; before it, the timeline is the writer's (its live "
			      "sets by site), and the peak by thread and stream, pools, graph memory and CUPTI's records are the "
			      "ring's alone.</p>\n",
			fmt_size(h->t->flight.bound).s, h->t->flight.trimmed,
			fmt_seconds(h->t->flight.ring_first_time_ns).s);
	if (h->t->missing_stacks || h->t->missing_frames || h->t->missing_modules)
		fprintf(h->f, "<p class=\"note\">The trace is incomplete: %" PRIu64
			      " events name missing stacks, %" PRIu64 " stack rows missing frames, %"
			      PRIu64 " frames missing modules (shown as ?\?).</p>\n",
			h->t->missing_stacks, h->t->missing_frames, h->t->missing_modules);
}

/* ---- graphs, growth, CUPTI: static markup ---- */

static void print_orphans(const struct html *h)
{
	const struct model_graphs *g = &h->m->graphs;
	size_t n = g->n_orphans < GRAPH_ROWS ? g->n_orphans : GRAPH_ROWS;

	if (!g->n_orphans)
		return;
	fprintf(h->f, "<h3>Never destroyed %s(%zu of %zu)</h3>", g->at_mark ? "at the mark " : "",
		n, g->n_orphans);
	if (g->at_mark) {
		fputs("<p class=\"sub\">at mark \"", h->f);
		esc(h, h->t->opts.at_mark);
		fprintf(h->f, "\" (%s)</p>", fmt_seconds(g->at_time_ns).s);
	}
	fprintf(h->f, "<p class=\"sub\">Together they pin %s: each graph once, and graphs that do "
		      "not run at once share their memory in the pool.</p>",
		fmt_size(g->orphans_pinned).s);
	fputs("<table class=\"grid orphans\"><tr><th>what</th><th>pins</th><th>launches</th>"
	      "<th>created at</th></tr>\n", h->f);
	for (size_t i = 0; i < n; i++) {
		const struct model_orphan *o = &g->orphans[i];

		fprintf(h->f, "<tr><td>%s <code>0x%" PRIx64 "</code></td>",
			o->kind == MODEL_ORPHAN_EXEC ? "exec" : "graph", o->handle);
		if (o->pinned_by_exec)
			fputs("<td class=\"n\">its exec</td>", h->f);
		else
			size_cell(h, o->pinned_bytes);
		count_cell(h, o->launches);
		stack_cell(h, o->stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_never_freed(const struct html *h)
{
	const struct model_graphs *g = &h->m->graphs;
	size_t n = g->n_never_freed < GRAPH_ROWS ? g->n_never_freed : GRAPH_ROWS;

	if (!g->n_never_freed)
		return;
	fprintf(h->f, "<h3>Graph memory never freed (%zu of %zu)</h3><table class=\"grid\"><tr>"
		      "<th>bytes</th><th>allocations</th><th>graph</th><th>allocated at</th></tr>\n",
		n, g->n_never_freed);
	for (size_t i = 0; i < n; i++) {
		const struct model_graph_leak *l = &g->never_freed[i];

		fputs("<tr>", h->f);
		size_cell(h, l->bytes);
		count_cell(h, l->count);
		fprintf(h->f, "<td><code>0x%" PRIx64 "</code></td>", l->graph);
		stack_cell(h, l->stack);
		fputs("</tr>\n", h->f);
	}
	fputs("</table>\n", h->f);
}

static void print_graphs(const struct html *h, bool story)
{
	const struct model_graphs *g = &h->m->graphs;
	uint64_t pinned, execs = diagnose_orphaned_execs(g, &pinned);

	if (!g->n_orphans && !g->n_never_freed)
		return;
	fprintf(h->f, "<section class=\"graphs%s\" id=\"graphs\"><h2>%s</h2>", story ? " story" : "",
		g->n_orphans ? "Orphaned CUDA graphs" : "Graph memory never freed");
	fprintf(h->f,
		"<p>%" PRIu64 " executable graphs never destroyed, pinning <b>%s</b>; "
		"%s of graph memory never freed. %" PRIu64 " graphs created (%" PRIu64
		" destroyed), %" PRIu64 " execs (%" PRIu64 " destroyed), %" PRIu64
		" launches; the graph pools hold %s (at most %s).</p>\n",
		execs, fmt_size(pinned).s, fmt_size(render_graph_never_freed_bytes(g)).s,
		g->created, g->destroyed, g->execs_created, g->execs_destroyed, g->launches,
		fmt_size(g->pool_bytes).s, fmt_size(g->pool_peak).s);
	print_orphans(h);
	print_never_freed(h);
	fputs("</section>\n", h->f);
}

/* A point's name: marks and ranges by their labels, instantiations by time. */
static char *point_name(const struct html *h, size_t k)
{
	const struct model_point *p = &h->m->points[h->m->growth.points[k]];
	char *label = p->kind == MODEL_POINT_INSTANTIATION || p->kind == MODEL_POINT_SPAN ? xstrdup(fmt_seconds(p->time_ns).s)
							 : render_point_label(h->t, p);

	cut_label(label, LABEL_CHARS);
	return label;
}

/* Live bytes at each growth point as a polyline; SPARK_POINTS at most. */
static void sparkline(const struct html *h, const struct model_growth_site *gs)
{
	size_t n = h->m->growth.n_points, k = n < SPARK_POINTS ? n : SPARK_POINTS;
	uint64_t hi = 1;

	for (size_t i = 0; i < n; i++)
		hi = gs->live[i] > hi ? gs->live[i] : hi;
	fputs("<svg class=\"spark\" viewBox=\"0 0 200 24\" preserveAspectRatio=\"none\" "
	      "role=\"img\" aria-label=\"live bytes at each point\"><polyline points=\"", h->f);
	for (size_t j = 0; j < k; j++) {
		size_t i = k > 1 ? j * (n - 1) / (k - 1) : 0;

		fprintf(h->f, "%s%.1f,%.1f", j ? " " : "", k > 1 ? 200.0 * (double)j / (double)(k - 1) : 100,
			23 - 22.0 * (double)gs->live[i] / (double)hi);
	}
	fputs("\"/></svg>", h->f);
}

static void growth_points(const struct html *h)
{
	const struct model_growth *g = &h->m->growth;

	fprintf(h->f, "<p class=\"sub\">%zu %s", g->n_points, render_growth_basis(g->basis));
	if (g->thinned_from)
		fprintf(h->f, " (of %zu)", g->thinned_from);
	fputs(": ", h->f);
	for (size_t k = 0; k < g->n_points; k++) {
		_autofree_ char *name = NULL;

		if (k == POINT_LABELS / 2 && g->n_points > POINT_LABELS) {
			fprintf(h->f, " … (%zu more) …", g->n_points - POINT_LABELS);
			k = g->n_points - POINT_LABELS / 2 - 1;
			continue;
		}
		name = point_name(h, k);
		fputs(k ? ", <code>" : "<code>", h->f);
		esc(h, name);
		fputs("</code>", h->f);
	}
	fputs("</p>\n", h->f);
}

static void print_growth(const struct html *h, bool story)
{
	const struct model *m = h->m;
	const struct model_growth *g = &m->growth;
	size_t n = 0;

	if (!g->basis || !g->n_sites || !g->n_points || !g->n_moving)
		return;
	fprintf(h->f, "<section class=\"growth%s\" id=\"growth\"><h2>Growth across builds</h2>",
		story ? " story" : "");
	growth_points(h);
	fputs("<table class=\"grid\"><tr><th>per point</th><th>live at each point</th>"
	      "<th>first</th><th>last</th><th></th><th>site</th></tr>\n", h->f);
	for (size_t i = 0; i < g->n_sites && n < GROWTH_ROWS; i++, n++) {
		const struct model_growth_site *gs = &g->sites[i];
		_autofree_ char *label = render_model_site_label(h->t, &m->sites[gs->site], true);
		uint64_t step = gs->per_point < 0 ? (uint64_t)-(gs->per_point + 1) + 1
						  : (uint64_t)gs->per_point;

		fprintf(h->f, "<tr%s><td class=\"n\">%s%s</td><td>", gs->growing ? " class=\"grows\"" : "",
			gs->per_point < 0 ? "-" : "+", fmt_size(step).s);
		sparkline(h, gs);
		fputs("</td>", h->f);
		size_cell(h, gs->live[0]);
		size_cell(h, gs->live[g->n_points - 1]);
		fprintf(h->f, "<td>%s</td><td class=\"site\">", gs->growing ? "<b>grows</b>" : "");
		esc(h, label);
		fputs("</td></tr>\n", h->f);
	}
	if (g->n_sites > n)
		fprintf(h->f, "<tr><td></td><td class=\"sub\" colspan=\"5\">and %zu more sites</td></tr>",
			g->n_sites - n);
	fputs("</table></section>\n", h->f);
}

static void print_cupti(const struct html *h)
{
	const struct model_cupti *c = &h->m->cupti;
	size_t n = c->n_by_module < CUPTI_MODULES ? c->n_by_module : CUPTI_MODULES;

	if (!c->on)
		return;
	fputs("<section class=\"cupti\" id=\"cupti\"><h2>Second witness (CUPTI)</h2><div class=\"stats\">",
	      h->f);
	{
		char v[48], sub[96];

		snprintf(v, sizeof(v), "%" PRIu64, c->matched);
		snprintf(sub, sizeof(sub), "of its %" PRIu64 " allocations (%s)", c->allocs,
			 fmt_size(c->matched_bytes).s);
		stat_box(h, "live", "matched the hooks", v, sub);
		snprintf(sub, sizeof(sub), "in %" PRIu64 " allocations; %s live at the end",
			 c->alone_count, fmt_size(c->alone_live_bytes).s);
		stat_box(h, "unex", "seen by CUPTI alone", fmt_size(c->alone_bytes).s, sub);
		snprintf(sub, sizeof(sub), "in %" PRIu64 " hooked allocations", c->unconfirmed);
		stat_box(h, "free", "not confirmed by CUPTI", fmt_size(c->unconfirmed_bytes).s,
			 sub);
	}
	fputs("</div>\n", h->f);
	if (n) {
		fputs("<table class=\"grid\"><tr><th>seen by CUPTI alone, made by</th><th>bytes</th>"
		      "<th>allocations</th></tr>\n", h->f);
		for (size_t i = 0; i < n; i++) {
			fputs("<tr><td>", h->f);
			esc(h, render_module_name(h->t, c->by_module[i].module));
			fputs("</td>", h->f);
			size_cell(h, c->by_module[i].bytes);
			count_cell(h, c->by_module[i].count);
			fputs("</tr>\n", h->f);
		}
		fputs("</table>\n", h->f);
	}
	fputs("</section>\n", h->f);
}

static int by_stream_bytes(const void *a, const void *b)
{
	return cmp_u64_desc(((const struct timeline_stream *)a)->bytes,
			    ((const struct timeline_stream *)b)->bytes);
}

static void stream_row(const struct html *h, const struct timeline_stream *st, const char *name)
{
	fputs("<tr><td>", h->f);
	if (name)
		fputs(name, h->f);
	else if (st->stream)
		fprintf(h->f, "<code>0x%" PRIx64 "</code>", st->stream);
	else
		fputs("the default stream (or none)", h->f);
	fputs("</td>", h->f);
	size_cell(h, st->bytes);
	if (st->count)
		count_cell(h, st->count);
	else
		fputs("<td></td>", h->f);
	fputs("</tr>\n", h->f);
}

/* Device bytes live at the peak by the stream they were allocated on
 * (model-timeline.c); worth a table when more than the default stream. */
static void print_streams(const struct html *h)
{
	const struct model_timeline *tl = h->m->timeline;
	struct timeline_stream rows[TIMELINE_STREAMS], rest;
	uint64_t sum = 0;

	if (!tl || !tl->n_at_peak || (tl->n_at_peak == 1 && tl->at_peak[0].stream == 0))
		return;
	memcpy(rows, tl->at_peak, tl->n_at_peak * sizeof(*rows));
	qsort(rows, tl->n_at_peak, sizeof(*rows), by_stream_bytes);
	fputs("<h2>Live at the peak, by stream</h2>\n<table class=\"grid\"><tr><th>stream "
	      "allocated on</th><th>bytes</th><th>allocations</th></tr>\n", h->f);
	for (size_t i = 0; i < tl->n_at_peak; i++) {
		if (rows[i].bytes)
			stream_row(h, &rows[i], NULL);
		sum = sat_add(sum, rows[i].bytes);
	}
	if (tl->at_peak_other.bytes)
		stream_row(h, &tl->at_peak_other, "(other streams)");
	sum = sat_add(sum, tl->at_peak_other.bytes);
	if (h->m->device.peak_bytes > sum) {
		rest = (struct timeline_stream){ .bytes = h->m->device.peak_bytes - sum };
		stream_row(h, &rest, "not by stream (graph memory, VMM mappings, seen by CUPTI alone)");
	}
	fputs("</table>\n", h->f);
}

/* The same by the thread that allocated (model-timeline.c), when more
 * than one thread allocated: the script fills the table from the data
 * block, thread names being trace strings. */
static void print_threads(const struct html *h)
{
	const struct model_timeline *tl = h->m->timeline;

	if (!tl || tl->n_thread_at_peak < 2)
		return;
	fputs("<div id=\"threads\"><h2>Live at the peak, by thread</h2></div>\n", h->f);
}

/* What would fit (render_what_fits): the text report's sentences. */
static void print_what_fits(const struct html *h, bool oom)
{
	struct render_fits x;

	if (!render_what_fits(h->t, h->m, h->o, &x) || !x.has_section ||
	    (!x.beyond && !oom && !x.batch))
		return;
	fputs("<section class=\"fits\" id=\"what-fits\"><h2>What would fit</h2>", h->f);
	if (!x.has) {
		fputs("<p>Not known from this run: ", h->f);
		esc(h, x.why_not);
		fputs(".</p></section>\n", h->f);
		return;
	}
	if (x.beyond)
		fprintf(h->f, "<p>This run went on past the device's %s on managed memory "
			      "(<code>memtrace run --what-fits</code>): what it needed is below, not "
			      "an out-of-memory failure.</p>", fmt_size(x.device_total).s);
	fprintf(h->f, "<p>%s for PyTorch's cache on the device's %s. The tensors peaked at %s: "
		      "%s fixed, %s that scales with the batch.</p>",
		fmt_size(x.room).s, fmt_size(x.device_total).s, fmt_size(x.peak).s,
		fmt_size(x.peak_fixed).s, fmt_size(x.peak_scaled).s);
	if (x.state_too_big)
		fputs("<p class=\"fit\">No batch fits: the fixed part alone is more than the "
		      "room.</p>", h->f);
	else if (x.batch)
		fprintf(h->f, "<p class=\"fit\" data-largest-batch=\"%llu\">The largest batch that "
			      "fits: <b>%llu</b> (%.3f of the %llu that ran).</p>",
			(unsigned long long)x.largest_batch, (unsigned long long)x.largest_batch,
			floor(x.batch_fraction * 1000) / 1000, (unsigned long long)x.batch);
	else
		fprintf(h->f, "<p class=\"fit\">The largest batch that fits: <b>%.3f</b> of the "
			      "batch that ran.</p>", floor(x.batch_fraction * 1000) / 1000);
	fprintf(h->f, "<ul><li>the batch halved frees %s</li><li>bf16 autocast about %s</li>"
		      "<li>activation checkpointing at most %s</li></ul></section>\n",
		fmt_size(x.saving[RENDER_REMEDY_HALF_BATCH]).s,
		fmt_size(x.saving[RENDER_REMEDY_BF16]).s,
		fmt_size(x.saving[RENDER_REMEDY_CHECKPOINT]).s);
}

void render_html(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o)
{
	struct html h = { .f = f, .t = t, .m = m, .o = o };
	const struct model_oom *oom = render_headline_oom(m);
	bool graphs_first = diagnose_graphs_story(m), growth_first = diagnose_growth_story(m);

	map_init(&h.stack_index, sizeof(uint32_t));
	map_init(&h.frame_index, sizeof(uint32_t));
	print_head(&h);
	print_topbar(&h);
	if (oom)
		print_oom_headline(&h, oom);
	else
		print_peak_headline(&h);
	print_what_fits(&h, oom != NULL);
	/* the story of a run that rebuilds: right under the headline */
	if (graphs_first)
		print_graphs(&h, true);
	if (growth_first)
		print_growth(&h, true);
	print_views(&h);
	fputs("<section class=\"more\">", f);
	if (!graphs_first)
		print_graphs(&h, false);
	if (!growth_first)
		print_growth(&h, false);
	print_leaks(&h);
	if (render_unusual_kinds(m))
		print_kinds(&h);
	print_pools(&h);
	print_streams(&h);
	print_threads(&h);
	print_cupti(&h);
	print_totals(&h);
	fputs("</section></main>\n", f);
	data_block(&h);
	fprintf(f, "<script>%s</script>\n</body></html>\n", render_html_js);
	map_fini(&h.stack_index);
	map_fini(&h.frame_index);
	free(h.stacks);
	free(h.stack_frames);
	for (size_t i = 0; i < h.n_frames; i++)
		free(h.frame_labels[i]);
	free(h.frame_labels);
	free(h.frame_kinds);
}
