/* A framework's cache from its own actions (PyTorch's caching allocator:
 * docs/trace-format.md, "Tensors inside a framework's cache"): its
 * segments and the blocks its tensors hold in them (trace/trace-cache.c,
 * the library's model too), and from those, at each OOM, at the peak of
 * its reserved bytes and at the end, what torch's own figures say
 * (memory_allocated(), memory_reserved()), the largest free range and who
 * holds the blocks. */
#include "model-internal.h"

#include <stdlib.h>
#include <string.h>

#include "trace-cache.h"
#include "trace-schema.h"
#include "util-mem.h"

#define HOLDERS_KEPT 256 /* per moment, the largest */

/* The tensors kept in the log at most (each 40 bytes): past that, the
 * repetitions are not judged (diagnose.c). */
#define TENSORS_KEPT (8u << 20)

struct model_torch {
	struct trace_cache cache;
	uint64_t peak_reserved;
	bool peak_due; /* a new peak: its moment is taken after the tensor's block */
	size_t oom_from; /* the first OOM the allocator's next OOM names */
	/* every tensor in the order made, and the live ones by address: the
	 * repetitions found from the program (trace/trace-reps.h) */
	struct model_tensor *log;
	size_t n_log, cap_log;
	bool log_cut;
	struct map log_at;
	uint64_t peak_allocated;
	int64_t peak_allocated_seq;
	/* TensorFlow's BFC arena (its regions' blocks are exact): its peak is
	 * the tensors' bytes at their highest (get_memory_info's `peak`), not
	 * the arena's, which is taken whole at the first tensor */
	bool bfc;
	/* the process's device memory outside the cache, in time: each
	 * device or managed allocation once the tensors began, those that
	 * became the cache's segments marked (what would fit replays the
	 * others beside the tensors: render-fits.c) */
	struct model_outside *outside;
	size_t n_outside, cap_outside;
	struct map outside_at; /* address -> index, while live */
	/* right after the last tensor made (model_framework's last_*) */
	struct {
		int64_t seq, time_ns, stack;
		uint64_t allocated, reserved, tensors;
	} last;
};

static int cmp_by_stack(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_by_bytes(const void *a, const void *b)
{
	const struct model_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The blocks tensors hold, grouped by the stack that made each. */
static void holders(const struct trace_cache *t, struct model_framework *f)
{
	struct model_group *g = xcalloc(t->tensors ? t->tensors : 1, sizeof(*g));
	size_t n = 0, out = 0;

	for (size_t i = 0; i < t->n_segs; i++)
		for (size_t k = 0; k < t->segs[i].n_blocks; k++) {
			const struct trace_cache_block *b = &t->segs[i].blocks[k];

			if (b->allocated && n < t->tensors)
				g[n++] = (struct model_group){ .stack = b->stack, .bytes = b->size,
							       .count = 1 };
		}
	qsort(g, n, sizeof(*g), cmp_by_stack);
	for (size_t i = 0; i < n; i++) {
		if (out && g[out - 1].stack == g[i].stack) {
			g[out - 1].bytes += g[i].bytes;
			g[out - 1].count++;
		} else {
			g[out++] = g[i];
		}
	}
	qsort(g, out, sizeof(*g), cmp_by_bytes);
	f->holders = g;
	f->n_holders = out < HOLDERS_KEPT ? out : HOLDERS_KEPT;
	f->n_groups = out;
}

static void fw_block(struct model_framework *f, size_t *cap, struct model_fw_block b)
{
	grow_array(&f->blocks, cap, f->n_blocks + 1, sizeof(*f->blocks));
	f->blocks[f->n_blocks++] = b;
}

/* A segment's blocks end to end, the free ranges between them included. */
static void seg_blocks(const struct trace_cache_segment *s, struct model_framework *f, size_t *cap)
{
	uint64_t from = s->address, end = s->address + s->size;

	for (size_t k = 0; k <= s->n_blocks; k++) {
		uint64_t to = k < s->n_blocks ? s->blocks[k].address : end;

		if (to > from)
			fw_block(f, cap, (struct model_fw_block){ .address = from, .size = to - from,
								  .state = MODEL_FW_FREE });
		if (k == s->n_blocks)
			break;
		const struct trace_cache_block *b = &s->blocks[k];
		fw_block(f, cap, (struct model_fw_block){
			.address = b->address, .size = b->size, .requested = b->requested,
			.stack = b->stack,
			.state = b->allocated ? MODEL_FW_ALLOCATED : MODEL_FW_PENDING });
		from = b->address + b->size;
	}
}

static void segments(const struct trace_cache *t, struct model_framework *f)
{
	size_t cap = 0;

	f->segments = xcalloc(t->n_segs ? t->n_segs : 1, sizeof(*f->segments));
	f->n_segments = t->n_segs;
	for (size_t i = 0; i < t->n_segs; i++) {
		const struct trace_cache_segment *s = &t->segs[i];
		struct model_fw_segment *o = &f->segments[i];

		*o = (struct model_fw_segment){ .address = s->address, .size = s->size,
						.stream = s->stream, .stack = s->stack,
						.device = s->device, .expandable = s->expandable,
						.first = f->n_blocks };
		if (f->n_blocks + 2 * s->n_blocks + 1 > MODEL_FW_BLOCKS_KEPT)
			f->blocks_cut = true;
		else
			seg_blocks(s, f, &cap);
		o->n = f->n_blocks - o->first;
	}
}

void model_framework_free(struct model_framework *f)
{
	free(f->holders);
	free(f->segments);
	free(f->blocks);
	*f = (struct model_framework){ 0 };
}

static void moment(const struct model_torch *mt, struct model_framework *f)
{
	model_framework_free(f);
	const struct trace_cache *t = &mt->cache;

	*f = (struct model_framework){ .has = true, .bfc = mt->bfc, .allocated = t->allocated,
				       .peak_allocated = mt->peak_allocated,
				       .reserved = t->reserved,
				       .largest_free = trace_cache_largest_free(t),
				       .tensors = t->tensors };
	holders(t, f);
	segments(t, f);
}

void model_torch_moment(const struct model *m, struct model_framework *f)
{
	if (m->torch)
		moment(m->torch, f);
}

/* The allocator's OOM names the tensor of the CUDA OOMs since its last. */
static void tensor_oom(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;

	for (size_t i = t->oom_from; i < m->n_ooms; i++) {
		m->ooms[i].framework.has_request = true;
		m->ooms[i].framework.requested = ev->bytes;
	}
	t->oom_from = m->n_ooms;
}

/* The CUDA OOMs so far were recovered from: a later OOM of the
 * allocator's is not theirs. */
void model_torch_oom_recovered(struct model *m)
{
	if (m->torch)
		m->torch->oom_from = m->n_ooms;
}

bool model_torch_oom_alone(const struct model *m)
{
	return !m->torch || m->torch->oom_from == m->n_ooms;
}

/* A tensor made or released, in the log. */
static void log_tensor(struct model_torch *t, const struct trace_event *ev)
{
	uint64_t *at;

	/* torch asks for a free (then completes it: by then the tensor is
	 * gone from the map); a BFC arena's free is one event */
	if (ev->kind == MT_EV_TENSOR_FREE_REQUESTED || ev->kind == MT_EV_TENSOR_FREE) {
		if ((at = map_get_u64(&t->log_at, ev->address))) {
			t->log[*at].gone = ev->seq;
			map_remove(&t->log_at, ev->address, NULL);
		}
		return;
	}
	if (ev->kind != MT_EV_TENSOR_ALLOC || t->log_cut)
		return;
	if (t->n_log == TENSORS_KEPT) {
		t->log_cut = true;
		return;
	}
	grow_array(&t->log, &t->cap_log, t->n_log + 1, sizeof(*t->log));
	t->log[t->n_log] = (struct model_tensor){
		.stack = ev->stack, .made = ev->seq, .gone = INT64_MAX,
		.bytes = trace_cache_block_size(&t->cache, ev->address),
		.requested = ev->bytes,
	};
	*(uint64_t *)xmap_put(&t->log_at, ev->address, NULL) = t->n_log++;
}

const struct model_tensor *model_torch_tensors(const struct model *m, size_t *n,
					       int64_t *peak_seq)
{
	const struct model_torch *t = m->torch;

	*n = t && !t->log_cut ? t->n_log : 0;
	*peak_seq = t ? t->peak_allocated_seq : 0;
	return t ? t->log : NULL;
}

void model_torch_event(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;

	m->tensor_events++;
	if (!t) {
		t = m->torch = xcalloc(1, sizeof(*t));
		map_init(&t->log_at, sizeof(uint64_t));
		map_init(&t->outside_at, sizeof(uint64_t));
	}
	if (ev->kind == MT_EV_CACHE_SEGMENT_ALLOC && ev->stream == MT_CACHE_EXACT_BLOCKS)
		t->bfc = true;
	if (ev->kind == MT_EV_CACHE_SEGMENT_ALLOC) {
		uint64_t *at = map_get_u64(&t->outside_at, ev->address);

		if (at)
			t->outside[*at].cache = true;
	}
	/* a BFC peak's moment: before the first release after it */
	if (t->bfc && t->peak_due &&
	    (ev->kind == MT_EV_TENSOR_FREE || ev->kind == MT_EV_TENSOR_FREE_REQUESTED ||
	     ev->kind == MT_EV_CACHE_SEGMENT_FREE || ev->kind == MT_EV_CACHE_SEGMENT_UNMAP)) {
		moment(t, &m->framework_peak);
		t->peak_due = false;
	}
	if (ev->kind == MT_EV_TENSOR_OOM)
		tensor_oom(m, ev);
	else if (!trace_cache_event(&t->cache, ev->kind, ev->address, ev->bytes, ev->stream,
				    ev->stack, ev->device))
		out_of_memory(sizeof(struct trace_cache_block));
	log_tensor(t, ev);
	if (ev->kind == MT_EV_TENSOR_ALLOC) {
		t->last.seq = ev->seq;
		t->last.time_ns = ev->time_ns;
		t->last.stack = ev->stack;
		t->last.allocated = t->cache.allocated;
		t->last.reserved = t->cache.reserved;
		t->last.tensors = t->cache.tensors;
	}
	if (t->cache.allocated > t->peak_allocated) {
		t->peak_allocated = t->cache.allocated;
		t->peak_allocated_seq = ev->seq;
	}
	if (t->bfc) {
		if (t->cache.allocated == t->peak_allocated && ev->kind == MT_EV_TENSOR_ALLOC)
			t->peak_due = true;
		return;
	}
	if (t->cache.reserved > t->peak_reserved) {
		t->peak_reserved = t->cache.reserved;
		t->peak_due = true;
	}
	if (t->peak_due && ev->kind != MT_EV_CACHE_SEGMENT_ALLOC &&
	    ev->kind != MT_EV_CACHE_SEGMENT_MAP) {
		moment(t, &m->framework_peak);
		t->peak_due = false;
	}
}

bool model_torch_holds(const struct model *m, uint64_t address)
{
	const struct trace_cache *c = m->torch ? &m->torch->cache : NULL;
	size_t lo = 0, hi = c ? c->n_segs : 0;

	while (lo < hi) { /* the segments are by address */
		size_t mid = lo + (hi - lo) / 2;

		if (c->segs[mid].address == address)
			return !c->segs[mid].expandable;
		if (c->segs[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void model_torch_at_oom(struct model *m, struct model_oom *o)
{
	if (m->torch)
		moment(m->torch, &o->framework);
}

void model_torch_finish(struct model *m)
{
	if (!m->torch)
		return;
	if (m->torch->peak_due)
		moment(m->torch, &m->framework_peak);
	const struct model_torch *t = m->torch;
	struct model_framework *f = &m->framework_end;

	moment(t, f);
	if (t->last.seq && t->last.tensors > f->tensors) {
		f->has_last = true;
		f->last_seq = t->last.seq;
		f->last_time_ns = t->last.time_ns;
		f->last_stack = t->last.stack;
		f->last_allocated = t->last.allocated;
		f->last_reserved = t->last.reserved;
		f->last_tensors = t->last.tensors;
	}
}

/* The tensors are being traced: the process's device allocations, for
 * what would fit. */
void model_torch_device_alloc(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;

	if (!t || t->log_cut || t->bfc)
		return;
	grow_array(&t->outside, &t->cap_outside, t->n_outside + 1, sizeof(*t->outside));
	t->outside[t->n_outside] = (struct model_outside){ .seq = ev->seq, .gone = INT64_MAX,
							   .bytes = ev->bytes };
	*(uint64_t *)xmap_put(&t->outside_at, ev->address, NULL) = t->n_outside++;
}

void model_torch_device_free(struct model *m, const struct trace_event *ev)
{
	struct model_torch *t = m->torch;
	uint64_t at;

	if (t && map_remove(&t->outside_at, ev->address, &at))
		t->outside[at].gone = ev->seq;
}

const struct model_outside *model_torch_outside(const struct model *m, size_t *n)
{
	const struct model_torch *t = m->torch;

	*n = t ? t->n_outside : 0;
	return t ? t->outside : NULL;
}

void model_torch_fini(struct model *m)
{
	struct model_torch *t = m->torch;

	model_framework_free(&m->framework_peak);
	model_framework_free(&m->framework_end);
	if (!t)
		return;
	trace_cache_fini(&t->cache);
	map_fini(&t->log_at);
	map_fini(&t->outside_at);
	free(t->log);
	free(t->outside);
	free(t);
	m->torch = NULL;
}
