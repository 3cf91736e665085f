/* Renderers: text (terminal, CI log), JSON (a contract: docs/report-json.md),
 * a single-file HTML page, folded stacks (flamegraph.pl, speedscope) and a
 * Chrome trace / Perfetto JSON file (docs/report.md). Each is a
 * render-FORMAT.c with one entry point of one signature, found by its
 * --format name in render.c's table. They only read the trace and the
 * model; render-common.c holds what they share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "trace-role.h"
#include "trace.h"

#define RENDER_DEFAULT_TOP 10

/* What the folded stacks weigh (--weight). */
enum render_weight {
	WEIGHT_DEFAULT, /* at the OOM when there was one, else at the peak */
	WEIGHT_PEAK,	/* device bytes each site held at the peak */
	WEIGHT_OOM,	/* device bytes live at the (last) OOM, by stack */
	WEIGHT_LEAKED,	/* device bytes still live at the end, by stack */
};

/* The text report's columns: its default (no --width, no COLUMNS, not on
 * a terminal), and the narrowest and widest --width takes. */
#define RENDER_TEXT_WIDTH 100
#define RENDER_TEXT_MIN_WIDTH 40
#define RENDER_TEXT_MAX_WIDTH 10000

struct render_opts {
	size_t top;	/* entries per section; 0: all */
	size_t width;	/* text: columns per line; 0: RENDER_TEXT_WIDTH */
	bool top_given; /* --top on the command line (JSON lists all otherwise) */
	bool full_stacks; /* text: every caller of a row, whole (--full-stacks) */
	enum render_weight weight; /* folded */
	uint64_t batch;		   /* --batch: the batch size that ran; 0: not given */
	uint64_t what_if_batch;	   /* --what-if batch=N; 0: none */
};

struct compare_rank;
struct compare_skipped;

/* A report of one trace. */
typedef void (*render_fn)(FILE *f, const struct trace *t, const struct model *m,
			  const struct render_opts *o);

/* One --format: an entry of render.c's table. */
struct renderer {
	const char *name;
	render_fn render;
	/* Why this model cannot be rendered so, said after the trace's path
	 * before any output is opened; NULL when it can. NULL: it always can. */
	const char *(*refuse)(const struct model *m, const struct render_opts *o);
	bool takes_weight; /* --weight applies */
	/* it shows one moment's live set (model.moment): the OOM when there
	 * was one, else the end, or the --at-mark mark */
	bool wants_moment;
	/* --diff and several traces' ranks (compare.h) in this format; NULL
	 * when the format has no such report */
	void (*diff)(FILE *f, const struct trace *tn, const struct model *mn,
		     const struct trace *tb, const struct model *mb, const struct render_opts *o);
	void (*ranks)(FILE *f, const struct compare_rank *ranks, size_t n,
		      const struct compare_skipped *skipped, size_t n_skipped);
	/* several traces merged into one file, one trace at a time */
	bool merges;
	/* a binary file: not written to a terminal */
	bool binary;
};

/* ---- render.c ---- */

/* Every format, in --help's order; the last has a NULL name. */
extern const struct renderer render_formats[];

/* The format called name, or NULL. */
const struct renderer *render_find(const char *name);

/* ---- the formats, through render_formats ---- */

void render_text(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o);
void render_json(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o);
void render_html(FILE *f, const struct trace *t, const struct model *m,
		 const struct render_opts *o);
/* The page's head, up to <body>: its Content-Security-Policy (with the
 * page's script when script), "memtrace: TITLE", the stylesheet. For the
 * other pages (the ranks: compare-ranks-html.c). */
void render_html_head(FILE *f, const char *title, bool script);
/* One line per stack, "outermost;...;innermost BYTES", stacks of zero
 * bytes left out, weighed as o->weight says. */
void render_folded(FILE *f, const struct trace *t, const struct model *m,
		   const struct render_opts *o);
/* pprof's profile.proto, gzip-compressed: samples allocations/count and
 * space/bytes by stack, weighed as o->weight says (render-pprof.c). */
void render_pprof(FILE *f, const struct trace *t, const struct model *m,
		  const struct render_opts *o);
/* speedscope's JSON file format: one sampled profile per weight. */
void render_speedscope(FILE *f, const struct trace *t, const struct model *m,
		       const struct render_opts *o);
/* A pickle of PyTorch's memory snapshot (torch.cuda.memory._snapshot()),
 * at the moment m->moment was taken (render-torch.c). */
void render_torch_snapshot(FILE *f, const struct trace *t, const struct model *m,
			   const struct render_opts *o);
/* Chrome trace event JSON: a counter of device bytes live (from
 * m->timeline), instant events for the peak, every OOM, marks and graph
 * events. */
void render_perfetto(FILE *f, const struct trace *t, const struct model *m,
		     const struct render_opts *o);
/* Several traces in one Perfetto file (a job): begin, one rank at a time
 * (index: the trace's place, the pid when it names no rank), end. */
struct perfetto_job;
struct perfetto_job *render_perfetto_job_begin(FILE *f);
void render_perfetto_job_rank(struct perfetto_job *j, const struct trace *t,
			      const struct model *m, int64_t index);
void render_perfetto_job_end(struct perfetto_job *j);

/* ---- render-stacks.c: what the exports weigh ---- */

/* The weight WEIGHT_DEFAULT stands for in this model: the OOM when there
 * was one, else the peak. */
enum render_weight render_weight_resolve(const struct model *m, enum render_weight w);
/* "peak", "oom" or "leaked". */
const char *render_weight_name(enum render_weight w);
/* False when the weight asks for an OOM the trace does not have, or whose
 * live set was not kept. */
bool render_weight_possible(const struct model *m, enum render_weight w);
/* A renderer's refuse for the weighed formats. */
const char *render_weight_refuse(const struct model *m, const struct render_opts *o);

/* Each stack of the weight with bytes, as a group (stack, bytes, count,
 * mem: 0 where kinds mix): the OOM's holders, the leaks of the
 * device-side kinds, or each site's bytes and allocations at the peak at
 * the site's first stack. */
typedef void (*render_stack_fn)(void *ctx, const struct model_group *g);
void render_weighted_stacks(const struct model *m, enum render_weight w, render_stack_fn fn,
			    void *ctx);

/* ---- render-common.c ---- */

/* How many of n entries a section shows. */
size_t render_limit(const struct render_opts *o, size_t n);

/* The memory kind's JSON name ("device", "vmm_physical"...), else "unknown". */
const char *render_mem_name(int mem);

/* What a kind beyond device, managed and pinned host is, in plain words
 * (and whether it is counted); NULL for those three. */
const char *render_mem_meaning(int mem);

/* The kind has allocations, frees or live memory in the model. */
bool render_mem_seen(const struct model *m, int mem);

/* Some kind with a render_mem_meaning is seen: the reports explain them. */
bool render_unusual_kinds(const struct model *m);

/* The device-side kinds seen, "device + managed + pool". Caller frees. */
char *render_device_kinds(const struct model *m);

/* device_total - device_free of an OOM, 0 when unknown or negative. */
uint64_t render_oom_device_used(const struct model_oom *o);

/* The OOM is TensorFlow's BFC allocator's own, inside the arena whose
 * tensors the trace holds (its api BFCAllocator, the framework's view a
 * BFC arena's): the cause is judged inside the arena
 * (trace/trace-cause.h). False when t is NULL. */
bool render_arena_oom(const struct trace *t, const struct model_oom *o);
/* That arena's limit (trace_cause_arena_limit): 0 when not known. */
uint64_t render_arena_limit(const struct model_oom *o);
/* TensorFlow's BFC allocator refused the request before its arena had a
 * region (none seen): the request is more than the memory limit
 * TensorFlow set for the GPU, below the device's free memory, whatever
 * that limit is (BFC takes its first region at its first request). */
bool render_bfc_beyond_limit(const struct trace *t, const struct model_oom *o);
/* What the stack's tensor is for, read from its Python frames: a
 * model's weight (a variable's creation: Layer.add_weight, a tf.Variable,
 * its initializer's temporaries too), an optimizer's slot (a variable
 * made under keras/optimizers: Adam's two per weight; or one that Keras's
 * fit made while tracing its step and fills when the step first runs,
 * Function._initialize_uninitialized_variables), host data copied
 * to the device whole (tf.constant, tf.convert_to_tensor of an array), or
 * none of these (a step's tensors). */
enum render_variable {
	RENDER_NOT_VARIABLE = TRACE_TF_NOT_VARIABLE,
	RENDER_WEIGHT = TRACE_TF_WEIGHT,
	RENDER_OPTIMIZER_SLOT = TRACE_TF_OPTIMIZER_SLOT,
	RENDER_DATA = TRACE_TF_DATA
};
enum render_variable render_variable_of(const struct trace *t, int64_t stack);

/* What would fit (render-fits.c; docs/report.md, "What would fit"): the
 * largest batch and what each remedy frees, from PyTorch's tensors over
 * a run whose steps ran to their end (a run that did not run out of
 * memory, or memtrace run --what-fits). */
enum render_remedy {
	RENDER_REMEDY_HALF_BATCH, /* the batch halved */
	RENDER_REMEDY_BF16,	  /* torch.autocast with bf16 */
	RENDER_REMEDY_CHECKPOINT, /* activation checkpointing: at most */
	RENDER_REMEDIES
};
extern const char *const render_remedy_key[RENDER_REMEDIES];

struct render_fits {
	bool has_section; /* PyTorch's run: what_fits is said, or why not */
	bool has;	  /* a prediction; else why_not says why */
	const char *why_not;
	bool beyond; /* a --what-fits run: it went on past the device */
	uint64_t device_total, room; /* what PyTorch's cache could reserve */
	/* the tensors' peak in the run, fixed and scaling with the batch */
	uint64_t peak, peak_fixed, peak_scaled, peak_activations;
	uint64_t roles[TRACE_ROLES]; /* at that peak (the cache not counted) */
	bool state_too_big; /* the fixed part alone does not fit */
	double batch_fraction; /* the largest batch that fits / the one that ran */
	uint64_t batch, largest_batch, bytes_per_sample; /* with --batch */
	uint64_t saving[RENDER_REMEDIES]; /* bytes off the peak */
	uint64_t what_if_batch, what_if_peak; /* --what-if batch=N: its tensors' peak */
	bool what_if_fits;		      /* its replay in the cache fits the room */
	uint64_t what_if_reserved;	      /* what the cache reserved in it */
	uint64_t replayed_reserved; /* the cache's peak replayed at the batch that ran */
};

bool render_what_fits(const struct trace *t, const struct model *m, const struct render_opts *o,
		      struct render_fits *out);

/* What a tensor is for (docs/report.md, "Memory by role"): trace-role.h's
 * rule on the trace's frames. */
extern const char *const render_role_key[TRACE_ROLES];	 /* parameters, ... */
extern const char *const render_role_words[TRACE_ROLES]; /* "optimizer state", ... */

enum trace_role render_role_of(const struct trace *t, int64_t stack);

/* Memory by role at a moment of PyTorch's cache: its tensors by the stack
 * that made each, its free bytes as cache; at an OOM (o not NULL) also
 * what was live outside the cache, libraries' handles as workspaces and
 * the rest as other, so that the roles add up to o->live_bytes; else to
 * the cache's reserved bytes. False (out untouched) without PyTorch's
 * cache at that moment. */
bool render_roles(const struct trace *t, const struct model_framework *f,
		  const struct model_oom *o, uint64_t out[TRACE_ROLES]);

/* The library whose handle's creation made stack's allocation (its
 * workspace, kept while the handle lives: trace_library_handle); NULL
 * when none. */
const char *render_library_handle(const struct trace *t, int64_t stack);
/* The tensor the framework's allocator was asked for at the OOM: torch's
 * own OOM names it, the arena's OOM is it; false when not known. */
bool render_cache_request(const struct trace *t, const struct model_oom *o, uint64_t *bytes);

/* At an OOM inside PyTorch's cache or a BFC arena: its free memory in
 * pieces (trace_cause_cache_fragmentation, the rule of the library's
 * answer on stderr), the device's free bytes counted when known (never
 * for an arena: what lies outside it is its limit at work); false at the
 * allocator's own cap (allocator_limit) or with no cache to judge. */
bool render_cache_fragmentation(const struct trace *t, const struct model_oom *o);
/* What render_cache_fragmentation counts the device had free: 0 when
 * not known or inside an arena. */
uint64_t render_cache_device_free(const struct trace *t, const struct model_oom *o);

/* A preallocation note's bytes as a fraction of its device. */
double render_note_fraction(const struct model_note *n);

/* The run's duration: the last flush, or the last event when later. */
int64_t render_duration_ns(const struct trace *t, const struct model *m);

/* The OOM a report leads with: the last one that reached the program,
 * usually the one it died of (frameworks retry after freeing caches; a
 * failure whose retry succeeded is none). NULL when none. */
const struct model_oom *render_headline_oom(const struct model *m);
/* The last failure of the first episode recovered from (its
 * recovered_bytes), NULL when none; how many failures were recovered. */
const struct model_oom *render_first_recovered(const struct model *m);
size_t render_recovered_failures(const struct model *m);
size_t render_ooms_reached(const struct model *m);

/* The frame's function, else "module+0x1a2b", else "??". Caller frees. */
char *render_frame_name(const struct trace *t, const struct trace_frame *f);

/* "function (file:line)", "function", "module+0x1a2b" or "??"; file as a
 * basename when short. Untrusted: escape it to output. Caller frees. */
char *render_frame_label(const struct trace *t, const struct trace_frame *f, bool short_file);

/* render_frame_label in room code points where it can be: a function's
 * name shortened (C++'s parameter lists as "(...)", then its template
 * arguments as "<...>", then its leading qualifiers as "...", at last its
 * start cut); its file:line, or module+offset, always whole. Untrusted.
 * Caller frees. */
char *render_frame_label_fit(const struct trace *t, const struct trace_frame *f, bool short_file,
			     size_t room);

/* Label of the frame stack id is known by (render_user_frame):
 * render_frame_label, with " <- " and its caller's where the frame is a
 * helper told apart by its callers (model-site.c); or why there is none
 * ("no stack recorded", "stack 12 not in the trace"). Caller frees. */
char *render_stack_label(const struct trace *t, int64_t stack, bool short_file);

/* The device bytes live at the peak by thread (model-timeline.c), copied
 * into rows (TIMELINE_THREADS of them) largest first, ties by thread id;
 * returns how many. */
struct timeline_thread;
size_t render_peak_threads(const struct model *m, struct timeline_thread *rows);

/* A meta value parsed as a decimal integer. */
bool render_meta_int(const struct trace *t, const char *key, int64_t *out);

/* How the program ended, from meta end and exit_status: "exited normally",
 * "exited with status 3", "trace not closed: killed, crashed or still
 * running" or "end unknown". Written into buf (64 bytes is enough). */
const char *render_end_story(const struct trace *t, char *buf, size_t size);

/* The frame a site names: the user's Python or native frame it groups
 * by, else the frame its stack is known by (render_user_frame); NULL for an op,
 * CUPTI's or a stack with no frame. */
const struct trace_frame *render_model_site_frame(const struct trace *t,
						  const struct model_site *s);

/* "python", "op", "native", "stack" or "cupti". */
const char *render_site_kind_name(int kind);

/* An op's name, with its domain when not the default: "name (domain)";
 * "?" for an op the trace does not name. Untrusted. Caller frees. */
char *render_op_label(const struct trace *t, int64_t op);

/* A site in one line: its frame's label, "[op] name", "(seen by CUPTI
 * only: libfoo.so)", or the stack's label. Untrusted. Caller frees. */
char *render_model_site_label(const struct trace *t, const struct model_site *s, bool short_file);

/* render_model_site_label in room code points where it can be: a frame's
 * label as render_frame_label_fit makes it; "[op] name" and CUPTI's as
 * they are. Untrusted. Caller frees. */
char *render_model_site_label_fit(const struct trace *t, const struct model_site *s,
				  bool short_file, size_t room);

/* The module name of a trace module index (CUPTI's), or "an unknown module". */
const char *render_module_name(const struct trace *t, int64_t module);

/* Growth basis: "marks", "ranges", "instantiations", or NULL for none. */
const char *render_growth_basis(int basis);

/* A growth point's label: the mark or range name, or "exec 0x.. of graph
 * 0x..". Untrusted. Caller frees. */
char *render_point_label(const struct trace *t, const struct model_point *p);

/* Bytes of graph memory never freed (all groups). */
uint64_t render_graph_never_freed_bytes(const struct model_graphs *g);

/* The frame a stack is known by, everywhere a report names one: the
 * user's frame (trace-user-frame.h's rule, through model-site.c: its
 * user's Python frame, else its user's native frame), else the innermost
 * frame with a name, else the innermost. *depth is set to its depth.
 * NULL when the stack has no frame to show. */
const struct trace_frame *render_user_frame(const struct trace *t, const struct trace_stack *s,
					    uint32_t *depth);
/* The thread that launched the work, when the frames of s from depth on
 * are borrowed from it (a launch frame before depth: trace-format.md,
 * frames kind 2); -1 otherwise. */
int64_t render_launch_thread(const struct trace *t, const struct trace_stack *s, uint32_t depth);
