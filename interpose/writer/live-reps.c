/* The latest tensors, for the answer's growth (live-reps.h). */
#include "live-reps.h"

#include <stdlib.h>

#define CHAIN_MAX 64 /* the reporter's (diagnose.c) */

void mt_reps_init(struct mt_reps *r)
{
	*r = (struct mt_reps){ 0 };
	map_init(&r->at, sizeof(uint64_t));
}

void mt_reps_fini(struct mt_reps *r)
{
	free(r->ring);
	map_fini(&r->at);
	*r = (struct mt_reps){ 0 };
}

void mt_reps_made(struct mt_reps *r, uint64_t address, uint32_t stack, uint64_t bytes)
{
	if (r->failed)
		return;
	if (!r->ring && !(r->ring = calloc(MT_REPS_KEPT, sizeof(*r->ring)))) {
		r->failed = true;
		return;
	}
	if (!map_put_u64(&r->at, address, r->made)) {
		r->failed = true;
		return;
	}
	r->ring[r->made % MT_REPS_KEPT] = (struct mt_rep){ .stack = stack, .live = true,
							   .bytes = bytes };
	r->made++;
}

void mt_reps_gone(struct mt_reps *r, uint64_t address)
{
	uint64_t n;

	if (!map_remove(&r->at, address, &n))
		return; /* torch's completed free after its request, or not ours */
	if (n + MT_REPS_KEPT >= r->made) /* still in the ring */
		r->ring[n % MT_REPS_KEPT].live = false;
}

/* The chains of the window's stacks, one per stack (CHAIN_MAX + 1 words
 * each, its length first), into a pool; each tensor pointed at its own. */
static bool chains(const struct mt_reps *r, uint64_t first, size_t n, mt_reps_chain_fn chain,
		   void *ctx, struct trace_rep_tensor *out, uint64_t **pool)
{
	struct map place;
	size_t used = 0, cap = 0;
	bool ok = true;

	map_init(&place, sizeof(uint64_t));
	*pool = NULL;
	for (size_t i = 0; ok && i < n; i++) {
		const struct mt_rep *t = &r->ring[(first + i) % MT_REPS_KEPT];
		bool inserted;
		uint64_t *at = map_put(&place, t->stack, &inserted);

		if (!at) {
			ok = false;
			break;
		}
		if (inserted) {
			if (used + CHAIN_MAX + 1 > cap) {
				size_t c = cap ? cap * 2 : 64 * (CHAIN_MAX + 1);
				uint64_t *p = realloc(*pool, c * sizeof(*p));

				if (!p) {
					ok = false;
					break;
				}
				*pool = p;
				cap = c;
			}
			*at = used;
			(*pool)[used] = chain(ctx, t->stack, *pool + used + 1, CHAIN_MAX);
			used += CHAIN_MAX + 1;
		}
		out[i] = (struct trace_rep_tensor){ .bytes = t->bytes, .live = t->live,
						    .depth = (uint32_t)*at };
	}
	/* the pool has stopped moving: point each tensor at its chain */
	for (size_t i = 0; ok && i < n; i++) {
		const uint64_t *c = *pool + out[i].depth;

		out[i].chain = c + 1;
		out[i].depth = (uint32_t)c[0];
	}
	map_fini(&place);
	return ok;
}

/* Some live tensor of the growing line was made in a forward
 * (diagnose.c's kept_in_forward, the same walk). */
static bool kept_in_forward(const struct mt_reps *r, uint64_t first,
			    const struct trace_rep_tensor *t, size_t n,
			    const struct trace_rep_growth *g, mt_reps_forward_fn forward,
			    void *ctx)
{
	uint32_t last = 0; /* a stack asked already */

	for (size_t i = 0; i < n; i++) {
		uint32_t stack = r->ring[(first + i) % MT_REPS_KEPT].stack;
		uint32_t d = g->level < t[i].depth ? g->level : t[i].depth - 1;

		if (!t[i].live || !t[i].depth || t[i].chain[d] != g->key || stack == last)
			continue;
		if (forward(ctx, stack))
			return true;
		last = stack;
	}
	return false;
}

bool mt_reps_growth(const struct mt_reps *r, mt_reps_chain_fn chain, mt_reps_forward_fn forward,
		    void *ctx, uint64_t floor, struct mt_reps_growth *out)
{
	size_t n = r->made < MT_REPS_KEPT ? (size_t)r->made : MT_REPS_KEPT;
	uint64_t first = r->made - n;
	struct trace_rep_tensor *t;
	uint64_t *pool = NULL;
	bool grew = false;

	*out = (struct mt_reps_growth){ 0 };
	if (r->failed || !n || !(t = calloc(n, sizeof(*t))))
		return false;
	if (chains(r, first, n, chain, ctx, t, &pool) &&
	    trace_reps_growth(t, n, true, floor, &out->g)) {
		out->largest_stack = r->ring[(first + out->g.largest) % MT_REPS_KEPT].stack;
		out->rep_stack = r->ring[(first + out->g.rep_tensor) % MT_REPS_KEPT].stack;
		out->graph = kept_in_forward(r, first, t, n, &out->g, forward, ctx);
		grew = true;
	}
	free(pool);
	free(t);
	return grew;
}
