/* What would fit (docs/report.md, "What would fit"): from PyTorch's
 * tensors over a run whose steps ran to their end, the largest batch the
 * device holds and what each remedy would free.
 *
 * Each tensor is fixed or scales with the batch, by its role
 * (trace-role.h): parameters, their gradients, the optimizer's state and
 * workspaces are fixed; activations, temporaries and data scale, except
 * a tensor that lives through every step (made before the first
 * backward, still live after the last gradient or optimizer state was
 * made: a data set or a buffer on the device). With fixed(t) and scaled(t) the bytes live at
 * each moment t of the run, a batch r times the one that ran needs
 * max_t fixed(t) + r * scaled(t) at its peak, so the largest r that fits
 * the room C is min_t (C - fixed(t)) / scaled(t): one pass over the
 * tensors, every moment weighed, not only the peak's (a smaller batch
 * can peak elsewhere, in the optimizer's step say). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util-mem.h"

/* A batch fits when its replay fits the device and the device less this
 * much too: the replay cannot know buffers whose size is not linear in
 * the batch (a reduction's staging buffer is sized by the launch, not the
 * input), and when the cache flushes, which a few MiB either way change,
 * decides what fits near the edge; a batch that fits both ways does not
 * hang on it. */
#define MARGIN_PERCENT 5

struct fits_event {
	int64_t seq;
	size_t tensor; /* in the log, or in the outside allocations */
	bool made;
	bool outside; /* device memory beside the cache (model_outside) */
};

/* What a replay needs: the run's tensors, which of them are fixed, the
 * events in order, and the room beside them. */
struct fits_run {
	const struct model_tensor *log;
	const bool *fixed_of;
	/* a reduction's staging buffer at its cap: twice its input at the
	 * batch that ran (0: none), staging_capped's */
	const double *capped_of;
	const struct model_outside *outside;
	const struct fits_event *ev;
	size_t k, n;
	uint64_t usable; /* the device less what was in use before the process */
};

static int cmp_event(const void *a, const void *b)
{
	const struct fits_event *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (int)y->made - (int)x->made; /* a free after a make of the same seq */
}

/* ---- PyTorch's caching allocator, replayed at another batch ----
 *
 * The room a batch needs is what torch's cache reserves for it, not what
 * its tensors hold: the cache rounds, splits and keeps. So each batch
 * tried is replayed through a model of the caching allocator's default
 * rules (torch 2.x, no PYTORCH_CUDA_ALLOC_CONF): sizes rounded up to 512
 * bytes; requests of 1 MiB or less from 2 MiB segments (the small pool),
 * larger ones from 20 MiB segments below 10 MiB, else from a segment of
 * their size rounded up to 2 MiB; the smallest free block that holds the
 * request, the lowest address among equals; a block split when what is
 * left is 512 bytes or more (small pool) or more than 1 MiB (large);
 * freed blocks merged with free neighbours; when the device refuses a
 * segment, every segment wholly free given back and the request tried
 * once more. The batch fits when no request is refused then. */
#define MIB (1024ull * 1024)
#define CAP_SLACK 1.02 /* staging_capped's */

struct cblock {
	uint64_t addr, size;
	int64_t prev, next; /* neighbours in the segment, -1: none */
	bool free, small;
};

struct cpool {
	int64_t *free; /* block indices by (size, addr) */
	size_t n, cap;
};

struct csim {
	struct cblock *b;
	size_t n, cap;
	struct cpool pool[2]; /* large, small */
	uint64_t reserved, limit, next_addr, peak;
	uint64_t outside; /* the process's device memory beside the cache now */
};

static int cmp_key(const struct csim *c, int64_t i, uint64_t size, uint64_t addr)
{
	const struct cblock *x = &c->b[i];

	if (x->size != size)
		return x->size < size ? -1 : 1;
	return x->addr < addr ? -1 : x->addr > addr;
}

/* the first block of the pool not below (size, addr) */
static size_t lower(const struct csim *c, const struct cpool *p, uint64_t size, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(c, p->free[mid], size, addr) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void pool_add(struct csim *c, int64_t i)
{
	struct cpool *p = &c->pool[c->b[i].small];
	size_t at = lower(c, p, c->b[i].size, c->b[i].addr);

	grow_array(&p->free, &p->cap, p->n + 1, sizeof(*p->free));
	memmove(&p->free[at + 1], &p->free[at], (p->n - at) * sizeof(*p->free));
	p->free[at] = i;
	p->n++;
	c->b[i].free = true;
}

static void pool_remove(struct csim *c, int64_t i)
{
	struct cpool *p = &c->pool[c->b[i].small];
	size_t at = lower(c, p, c->b[i].size, c->b[i].addr);

	memmove(&p->free[at], &p->free[at + 1], (p->n - at - 1) * sizeof(*p->free));
	p->n--;
	c->b[i].free = false;
}

static int64_t new_block(struct csim *c, struct cblock b)
{
	grow_array(&c->b, &c->cap, c->n + 1, sizeof(*c->b));
	c->b[c->n] = b;
	return (int64_t)c->n++;
}

/* every segment wholly free given back (release_cached_blocks) */
static void release_cached(struct csim *c)
{
	for (int k = 0; k < 2; k++) {
		struct cpool *p = &c->pool[k];
		size_t kept = 0;

		for (size_t i = 0; i < p->n; i++) {
			struct cblock *x = &c->b[p->free[i]];

			if (x->prev < 0 && x->next < 0) {
				c->reserved -= x->size;
				x->free = false;
				x->size = 0; /* gone */
			} else {
				p->free[kept++] = p->free[i];
			}
		}
		p->n = kept;
	}
}

/* A block for a request; -1 when the device refuses it. */
static int64_t csim_alloc(struct csim *c, uint64_t requested)
{
	uint64_t size = requested < 512 ? 512 : (requested + 511) / 512 * 512;
	bool small = size <= MIB;
	struct cpool *p = &c->pool[small];
	size_t at = lower(c, p, size, 0);
	int64_t i;

	if (at < p->n) {
		i = p->free[at];
		pool_remove(c, i);
	} else {
		uint64_t seg = small ? 2 * MIB
				     : size < 10 * MIB ? 20 * MIB : (size + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);

		if (c->reserved + c->outside + seg > c->limit) {
			release_cached(c);
			if (c->reserved + c->outside + seg > c->limit)
				return -1;
		}
		c->reserved += seg;
		if (c->reserved > c->peak)
			c->peak = c->reserved;
		i = new_block(c, (struct cblock){ .addr = c->next_addr, .size = seg, .prev = -1,
						   .next = -1, .small = small });
		c->next_addr += seg;
	}
	uint64_t left = c->b[i].size - size;

	if (small ? left >= 512 : left > MIB) {
		int64_t r = new_block(c, (struct cblock){ .addr = c->b[i].addr + size, .size = left,
							   .prev = i, .next = c->b[i].next,
							   .small = small });

		if (c->b[r].next >= 0)
			c->b[c->b[r].next].prev = r;
		c->b[i].next = r;
		c->b[i].size = size;
		pool_add(c, r);
	}
	return i;
}

static void csim_free(struct csim *c, int64_t i)
{
	int64_t nb;

	/* merged with its free neighbours: into the one before, the one after into it */
	if ((nb = c->b[i].prev) >= 0 && c->b[nb].free) {
		pool_remove(c, nb);
		c->b[nb].size += c->b[i].size;
		c->b[nb].next = c->b[i].next;
		if (c->b[nb].next >= 0)
			c->b[c->b[nb].next].prev = nb;
		c->b[i].size = 0;
		i = nb;
	}
	if ((nb = c->b[i].next) >= 0 && c->b[nb].free) {
		pool_remove(c, nb);
		c->b[i].size += c->b[nb].size;
		c->b[i].next = c->b[nb].next;
		if (c->b[i].next >= 0)
			c->b[c->b[i].next].prev = i;
		c->b[nb].size = 0;
	}
	pool_add(c, i);
}

/* The run replayed at ratio r of the batch (the scaled tensors' requests
 * times r) in a cache beside the process's other device memory, on a
 * device of limit bytes: whether nothing was refused (a library's own
 * allocation refused is the program's error: the cache is not flushed
 * for it); *peak the most the cache reserved. */
static bool replay(const struct fits_run *run, double r, uint64_t limit, uint64_t *peak)
{
	struct csim c = { .limit = limit, .next_addr = 1ull << 40 };
	int64_t *at = xcalloc(run->n + 1, sizeof(*at));
	bool ok = true;

	for (size_t e = 0; e < run->k && ok; e++) {
		const struct fits_event *x = &run->ev[e];
		size_t i = x->tensor;

		if (x->outside) {
			uint64_t b = run->outside[i].bytes;

			if (!x->made) {
				c.outside -= b;
				continue;
			}
			c.outside += b;
			ok = c.reserved + c.outside <= c.limit;
			continue;
		}
		if (!x->made) {
			if (at[i] > 0)
				csim_free(&c, at[i] - 1);
			at[i] = 0;
			continue;
		}
		uint64_t req = run->fixed_of[i] ? run->log[i].requested
						: (uint64_t)ceil((double)run->log[i].requested * r);

		if (run->capped_of[i] > 0 && r < 1) { /* twice the input, up to the cap */
			uint64_t lin = (uint64_t)ceil(CAP_SLACK * r * run->capped_of[i]) + 2 * MIB;

			req = lin < run->log[i].requested ? lin : run->log[i].requested;
		}
		int64_t b = req ? csim_alloc(&c, req) : -2;

		if (b == -1)
			ok = false;
		else if (b >= 0)
			at[i] = b + 1;
	}
	*peak = c.peak;
	free(at);
	free(c.b);
	free(c.pool[0].free);
	free(c.pool[1].free);
	return ok;
}

/* The largest batch whose replay fits: by bisection, over the batch sizes
 * with --batch, else over the ratio to a thousandth, below the tensors'
 * own bound (upper: a cache reserves at least what its tensors hold).
 * The replay at the batch that ran, with no limit, is what torch's
 * max_memory_reserved() was, a check of the model. */
static void search(struct render_fits *out, const struct fits_run *run, double upper,
		   const struct render_opts *o)
{
	uint64_t peak, B = out->batch, scale = B ? B : 1000;
	uint64_t lo = 0, hi = (uint64_t)(upper * (double)scale) + 2;

	replay(run, 1, UINT64_MAX, &out->replayed_reserved);
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		double r = (double)mid / (double)scale;

		if (replay(run, r, run->usable, &peak) &&
		    replay(run, r, run->usable - run->usable / 100 * MARGIN_PERCENT, &peak))
			lo = mid;
		else
			hi = mid;
	}
	out->batch_fraction = (double)lo / (double)scale;
	if (B)
		out->largest_batch = lo;
	if (o && o->what_if_batch && B)
		out->what_if_fits =
			replay(run, (double)o->what_if_batch / (double)B, run->usable,
			       &out->what_if_reserved) &&
			replay(run, (double)o->what_if_batch / (double)B,
			       run->usable - run->usable / 100 * MARGIN_PERCENT, &peak);

}

struct stack_role_memo {
	struct map by_stack; /* stack -> role + 1 */
	const struct trace *t;
};

static enum trace_role role_memo(struct stack_role_memo *r, int64_t stack)
{
	uint64_t *v = map_get_u64(&r->by_stack, (uint64_t)stack);

	if (v)
		return (enum trace_role)(*v - 1);
	enum trace_role role = render_role_of(r->t, stack);

	*(uint64_t *)xmap_put(&r->by_stack, (uint64_t)stack, NULL) = (uint64_t)role + 1;
	return role;
}

/* Tensors of the roles that scale: activations (saved for backward),
 * temporaries, data. */
static bool scales(enum trace_role r)
{
	return r == TRACE_ROLE_ACTIVATIONS || r == TRACE_ROLE_TEMPORARIES || r == TRACE_ROLE_DATA;
}

/* The moments' totals for one pass at batch ratio r: the peak of fixed +
 * act_k * activations + rest_k * other scaled (+ extra). */
struct fits_pass {
	double act_k, rest_k;
	double peak;
};

static void pass_at(struct fits_pass *p, uint64_t fixed, uint64_t act, uint64_t rest)
{
	double v = (double)fixed + p->act_k * (double)act + p->rest_k * (double)rest;

	if (v > p->peak)
		p->peak = v;
}

/* Whether a native frame of the stack has name in its function's. */
static bool stack_has(const struct trace *t, int64_t stack, const char *name)
{
	const struct trace_stack *st = trace_find_stack(t, stack);

	for (uint32_t d = 0; st && d < st->depth; d++) {
		const struct trace_frame *f = trace_stack_frame(t, st, d);

		if (f && f->function && strstr(f->function, name))
			return true;
	}
	return false;
}

/* The staging buffers of torch's reductions at their cap. A reduction
 * over the batch (a bias's gradient: [B, N] summed to N) that spreads
 * its inputs over blocks takes a buffer from the cache for the blocks'
 * partial results (gpu_reduce_kernel, just after the reduction's output
 * is made): twice its input, B times the output, while the blocks per
 * output grow with the batch, then no more once they fill the device's
 * processors (tests/torch: 2048 outputs, 33.5 MB at batch 2048, 134 MB
 * at 8192, 138 MB from 16384 on). Such a buffer below twice B times its
 * output (less 2%) is at its cap: at a smaller batch it is twice its
 * input there, up to the cap (with CAP_SLACK and 2 MiB for the blocks
 * rounded up: at batch 18910 of the VAE, 119.5 MB where twice the input
 * is 118.6 MB); at a larger one it is taken as scaling, a safe side.
 * Without --batch, B is not known: none is taken at its cap. Returns,
 * for each tensor, twice its input at the batch that ran when it is such
 * a buffer, else 0. Caller frees. */
static double *staging_capped(const struct trace *t, const struct model_tensor *log, size_t n,
			      uint64_t batch)
{
	double *capped = xcalloc(n + 1, sizeof(*capped));
	struct map memo; /* stack -> 1 + a staging buffer's */

	if (!batch)
		return capped;
	map_init(&memo, sizeof(uint64_t));
	for (size_t i = 1; i < n; i++) {
		uint64_t *v = map_get_u64(&memo, (uint64_t)log[i].stack);

		if (!v) {
			v = xmap_put(&memo, (uint64_t)log[i].stack, NULL);
			*v = 1 + stack_has(t, log[i].stack, "gpu_reduce_kernel");
		}
		if (*v != 2)
			continue;
		double linear = 2.0 * (double)batch * (double)log[i - 1].requested;

		capped[i] = (double)log[i].requested < 0.98 * linear ? linear : 0;
	}
	map_fini(&memo);
	return capped;
}

bool render_what_fits(const struct trace *t, const struct model *m, const struct render_opts *o,
		      struct render_fits *out)
{
	size_t n;
	int64_t peak_seq;
	const struct model_tensor *log = model_torch_tensors(m, &n, &peak_seq);
	const char *what_fits = trace_meta_get(t, "what_fits");

	memset(out, 0, sizeof(*out));
	out->beyond = what_fits && strcmp(what_fits, "1") == 0;
	out->batch = o ? o->batch : 0;
	if (!m->torch)
		return false; /* no PyTorch: nothing to say */
	out->has_section = true;
	if (!n) {
		out->why_not = "PyTorch's tensors are not in the trace (recorded with --no-tensors, "
			       "or past the reporter's limit of tensors)";
		return true;
	}
	if (m->n_oom_episodes && !out->beyond) {
		out->why_not = "the step that ran out of memory did not run to its end, so its peak "
			       "is not known: run it again with memtrace run --what-fits, which lets "
			       "it go on past the device";
		return true;
	}
	if (!out->beyond && !out->batch) {
		out->why_not = "the run fitted: give --batch N (the batch size that ran) for how "
			       "large a batch would still fit";
		return true;
	}
	const struct model_device *dev = m->n_devices ? &m->devices[0] : NULL;

	if (!dev || !dev->has_total) {
		out->why_not = "the trace does not say how much memory the device has";
		return true;
	}
	/* the device, less what was in use before the process allocated
	 * (the context, other processes); the process's own device memory
	 * beside the cache (libraries' handles) is replayed in time */
	uint64_t before = dev->has_free ? sat_sub(sat_sub(dev->total, dev->free_at_first_use),
						  dev->n_early ? dev->early[0].bytes : 0)
					: 0;
	uint64_t usable = sat_sub(dev->total, before);

	size_t n_out;
	const struct model_outside *beside = model_torch_outside(m, &n_out);

	out->device_total = dev->total;

	/* the roles, and the tensors that live through every step */
	struct stack_role_memo memo = { .t = t };
	enum trace_role *role = xcalloc(n + 1, sizeof(*role));
	int64_t first_backward = INT64_MAX, last_step = INT64_MIN;
	struct map params; /* block bytes -> how many parameters */

	map_init(&memo.by_stack, sizeof(uint64_t));
	map_init(&params, sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		role[i] = role_memo(&memo, log[i].stack);
		if (role[i] == TRACE_ROLE_GRADIENTS && log[i].made < first_backward)
			first_backward = log[i].made;
		if ((role[i] == TRACE_ROLE_GRADIENTS || role[i] == TRACE_ROLE_OPTIMIZER_STATE) &&
		    log[i].made > last_step)
			last_step = log[i].made;
		if (role[i] == TRACE_ROLE_PARAMETERS)
			++*(uint64_t *)xmap_put(&params, log[i].bytes, NULL);
	}
	map_fini(&memo.by_stack);
	bool steps = first_backward != INT64_MAX;

	/* every make and release in order, and the allocations beside the
	 * cache */
	struct fits_event *ev = xcalloc(2 * (n + n_out) + 1, sizeof(*ev));
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		ev[k++] = (struct fits_event){ .seq = log[i].made, .tensor = i, .made = true };
		if (log[i].gone != INT64_MAX)
			ev[k++] = (struct fits_event){ .seq = log[i].gone, .tensor = i };
	}
	for (size_t i = 0; i < n_out; i++) {
		if (beside[i].cache)
			continue;
		ev[k++] = (struct fits_event){ .seq = beside[i].seq, .tensor = i, .made = true,
					       .outside = true };
		if (beside[i].gone != INT64_MAX)
			ev[k++] = (struct fits_event){ .seq = beside[i].gone, .tensor = i,
						       .outside = true };
	}
	qsort(ev, k, sizeof(*ev), cmp_event);

	/* fixed or scaled, decided as each is made: of backward's tensors, a
	 * parameter's size while fewer of that size are live than there are
	 * parameters are its gradients (trace_roles_add's rule, in time) */
	bool *fixed_of = xcalloc(n + 1, sizeof(*fixed_of));
	/* for each tensor of backward, when the next tensor not of backward
	 * was made: the backward it was made in had ended */
	int64_t *after_backward = xcalloc(n + 1, sizeof(*after_backward));

	for (size_t i = n, next = (size_t)-1; i-- > 0;) {
		after_backward[i] = next == (size_t)-1 ? INT64_MAX : log[next].made;
		if (role[i] != TRACE_ROLE_GRADIENTS && role[i] != TRACE_ROLE_WORKSPACES)
			next = i; /* a matmul's workspace in backward is backward's */
	}
	struct map grads; /* block bytes -> gradients live */
	uint64_t fixed = 0, act = 0, rest = 0, live[TRACE_ROLES] = { 0 };
	double best = INFINITY, ran_peak = 0;
	struct fits_pass half = { .act_k = 0.5, .rest_k = 0.5 };
	struct fits_pass bf16 = { .act_k = 0.5, .rest_k = 1 };
	struct fits_pass what_if = { .act_k = 1, .rest_k = 1 };
	uint64_t params_bytes = 0;
	bool state_too_big = false;

	if (o && o->what_if_batch && out->batch)
		what_if.act_k = what_if.rest_k = (double)o->what_if_batch / (double)out->batch;
	uint64_t outside = 0, most_outside = 0;

	map_init(&grads, sizeof(uint64_t));
	for (size_t e = 0; e < k; e++) {
		size_t i = ev[e].tensor;

		if (ev[e].outside) {
			if (ev[e].made)
				outside += beside[i].bytes;
			else
				outside -= beside[i].bytes;
			if (outside > most_outside)
				most_outside = outside;
			continue;
		}
		enum trace_role r = role[i];
		uint64_t b = log[i].bytes;
		uint64_t room = sat_sub(usable, outside);

		if (ev[e].made) {
			if (r == TRACE_ROLE_GRADIENTS) {
				uint64_t *have = map_get_u64(&params, b);
				uint64_t *g = xmap_put(&grads, b, NULL);

				/* a gradient outlives the backward that made it;
				 * an activation's of the same size is freed in it */
				if (have && *g < *have && log[i].gone > after_backward[i]) {
					++*g;
					fixed_of[i] = true;
				} else {
					role[i] = r = TRACE_ROLE_TEMPORARIES; /* backward's own */
				}
			} else {
				fixed_of[i] = !scales(r) ||
					      (steps && log[i].made < first_backward &&
					       (log[i].gone == INT64_MAX || log[i].gone > last_step));
			}
			if (r == TRACE_ROLE_PARAMETERS)
				params_bytes += b;
		} else if (r == TRACE_ROLE_GRADIENTS && fixed_of[i]) {
			--*(uint64_t *)xmap_put(&grads, b, NULL);
		}
		int64_t sign = ev[e].made ? 1 : -1;

		live[r] += (uint64_t)sign * b;
		if (fixed_of[i])
			fixed += (uint64_t)sign * b;
		else if (r == TRACE_ROLE_ACTIVATIONS)
			act += (uint64_t)sign * b;
		else
			rest += (uint64_t)sign * b;
		if (!ev[e].made)
			continue;
		/* a moment: after each tensor made */
		uint64_t scaled = act + rest;

		if (fixed >= room)
			state_too_big = true;
		if (scaled && (double)(room > fixed ? room - fixed : 0) / (double)scaled < best)
			best = (double)(room > fixed ? room - fixed : 0) / (double)scaled;
		if ((double)(fixed + scaled) > ran_peak) {
			ran_peak = (double)(fixed + scaled);
			out->peak = fixed + scaled;
			out->peak_fixed = fixed;
			out->peak_scaled = scaled;
			out->peak_activations = act;
			memcpy(out->roles, live, sizeof(live));
		}
		pass_at(&half, fixed, act, rest);
		pass_at(&bf16, fixed, act, rest);
		pass_at(&what_if, fixed, act, rest);
	}
	map_fini(&grads);
	map_fini(&params);
	out->room = sat_sub(usable, most_outside);
	if (steps && out->peak_scaled && !state_too_big) {
		double *capped_of = staging_capped(t, log, n, out->batch);
		struct fits_run run = { .log = log, .fixed_of = fixed_of, .capped_of = capped_of,
					.outside = beside, .ev = ev, .k = k, .n = n,
					.usable = usable };

		search(out, &run, best, o);
		free(capped_of);
	}
	free(fixed_of);
	free(after_backward);
	free(ev);
	free(role);

	if (!steps) {
		out->why_not = "no training step was seen (no backward()): nothing tells what "
			       "scales with the batch";
		return true;
	}
	if (!out->peak_scaled) {
		out->why_not = "nothing live at the peak scales with the batch";
		return true;
	}
	out->has = true;
	out->state_too_big = state_too_big;
	if (out->batch)
		out->bytes_per_sample = out->peak_scaled / out->batch;
	out->saving[RENDER_REMEDY_HALF_BATCH] = sat_sub(out->peak, (uint64_t)half.peak);
	/* autocast keeps a bf16 copy of the weights it casts for the forward */
	out->saving[RENDER_REMEDY_BF16] =
		sat_sub(out->peak, (uint64_t)bf16.peak + params_bytes / 2);
	out->saving[RENDER_REMEDY_CHECKPOINT] = out->peak_activations;
	if (o && o->what_if_batch && out->batch) {
		out->what_if_batch = o->what_if_batch;
		out->what_if_peak = (uint64_t)what_if.peak;
	}
	return true;
}

const char *const render_remedy_key[RENDER_REMEDIES] = {
	[RENDER_REMEDY_HALF_BATCH] = "half_batch",
	[RENDER_REMEDY_BF16] = "bf16_autocast",
	[RENDER_REMEDY_CHECKPOINT] = "activation_checkpointing",
};
