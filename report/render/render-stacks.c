/* The stacks the exports weigh (folded, pprof, speedscope): device bytes
 * live at the last OOM by stack, held at the peak by site (at its first
 * stack), or still live at the end by stack (--weight; docs/report.md,
 * "Exports"). One enumeration, so the exports show the same moment with
 * the same numbers. */
#include "render.h"

enum render_weight render_weight_resolve(const struct model *m, enum render_weight w)
{
	if (w != WEIGHT_DEFAULT)
		return w;
	return render_headline_oom(m) ? WEIGHT_OOM : WEIGHT_PEAK;
}

const char *render_weight_name(enum render_weight w)
{
	switch (w) {
	case WEIGHT_OOM: return "oom";
	case WEIGHT_LEAKED: return "leaked";
	case WEIGHT_PEAK:
	case WEIGHT_DEFAULT: break;
	}
	return "peak";
}

bool render_weight_possible(const struct model *m, enum render_weight w)
{
	const struct model_oom *oom = render_headline_oom(m);

	return render_weight_resolve(m, w) != WEIGHT_OOM || (oom && oom->has_holders);
}

const char *render_weight_refuse(const struct model *m, const struct render_opts *o)
{
	if (!render_weight_possible(m, o->weight))
		return "has no out-of-memory failure to weigh stacks by; use --weight peak or "
		       "--weight leaked";
	return NULL;
}

void render_weighted_stacks(const struct model *m, enum render_weight w, render_stack_fn fn,
			    void *ctx)
{
	const struct model_oom *oom = render_headline_oom(m);

	switch (render_weight_resolve(m, w)) {
	case WEIGHT_OOM:
		for (size_t i = 0; oom && oom->has_holders && i < oom->n_holders; i++) {
			if (oom->holders[i].bytes)
				fn(ctx, &oom->holders[i]);
		}
		return;
	case WEIGHT_LEAKED:
		for (size_t i = 0; i < m->n_leaks; i++) {
			if (model_mem_is_device(m->leaks[i].mem) && m->leaks[i].bytes)
				fn(ctx, &m->leaks[i]);
		}
		return;
	case WEIGHT_PEAK:
	case WEIGHT_DEFAULT:
		break;
	}
	for (size_t i = 0; i < m->n_sites; i++) {
		const struct model_site *s = &m->sites[i];
		struct model_group g = {
			.stack = s->stack, .bytes = s->at_peak, .count = s->at_peak_count,
		};

		if (g.bytes)
			fn(ctx, &g);
	}
}
