/* Repetitions found from the tensors (trace-reps.h). */
#include "trace-reps.h"

#include <stdlib.h>

#include "trace-cause.h"
#include "util-map.h"

/* One line's passes. */
struct line {
	uint64_t passes, kept, kept_bytes;
	uint64_t first_kept, last_kept; /* pass ordinals */
	size_t largest;
	size_t first; /* its first tensor */
};

static uint64_t key_at(const struct trace_rep_tensor *t, uint32_t level)
{
	return t->chain[level < t->depth ? level : t->depth - 1];
}

/* The outermost depth at which the tensors' lines differ, or the
 * deepest all share. */
static uint32_t level_of(const struct trace_rep_tensor *t, size_t n)
{
	for (uint32_t d = 0;; d++) {
		bool seen = false, differ = false, deeper = false;
		uint64_t first = 0;

		for (size_t i = 0; i < n && !differ; i++) {
			if (!t[i].depth)
				continue;
			uint64_t k = key_at(&t[i], d);

			differ = seen && k != first;
			first = seen ? first : k;
			seen = true;
			deeper |= t[i].depth > d + 1;
		}
		if (differ || !deeper)
			return d;
	}
}

/* A pass ends: what it left live counts for its line. */
static void close_pass(struct line *l, uint64_t live, size_t largest)
{
	if (live) {
		if (!l->kept)
			l->first_kept = l->passes;
		l->kept++;
		l->kept_bytes = l->kept_bytes + live < l->kept_bytes ? UINT64_MAX
								     : l->kept_bytes + live;
		l->last_kept = l->passes;
		l->largest = largest;
	}
	l->passes++;
}

/* Every line's passes into lines (key -> struct line); false when out of
 * memory. */
static bool count_passes(const struct trace_rep_tensor *t, size_t n, bool open, uint32_t level,
			 struct map *lines)
{
	struct line *cur = NULL;
	uint64_t cur_key = 0, live = 0;
	size_t largest = 0;
	bool inserted;

	for (size_t i = 0; i < n; i++) {
		if (!t[i].depth)
			continue;
		uint64_t k = key_at(&t[i], level);

		if (!cur || k != cur_key) {
			if (cur)
				close_pass(cur, live, largest);
			if (!(cur = map_put(lines, k, &inserted)))
				return false;
			if (inserted)
				*cur = (struct line){ .first = i };
			cur_key = k;
			live = 0;
			largest = i;
		}
		if (t[i].live) {
			if (!live || t[i].bytes > t[largest].bytes)
				largest = i;
			live += t[i].bytes;
		}
	}
	if (cur && !open)
		close_pass(cur, live, largest);
	return true;
}

/* Some line at this level comes round: TRACE_GROWTH_MIN_ROUNDS passes. */
static bool comes_round(const struct map *lines)
{
	size_t pos = 0;
	uint64_t k;
	void *v;

	while (map_next(lines, &pos, &k, &v))
		if (((const struct line *)v)->passes >= TRACE_GROWTH_MIN_ROUNDS)
			return true;
	return false;
}

/* The most user frames a tensor has. */
static uint32_t deepest(const struct trace_rep_tensor *t, size_t n)
{
	uint32_t d = 0;

	for (size_t i = 0; i < n; i++)
		d = t[i].depth > d ? t[i].depth : d;
	return d;
}

static bool grew(const struct line *l, uint64_t floor)
{
	if (l->kept < TRACE_GROWTH_MIN_ROUNDS || l->kept_bytes < floor)
		return false;
	return (l->last_kept - l->first_kept) * 2 >= l->passes - 1 - l->first_kept;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* What one repetition kept: the tensors live of each cycle from one pass
 * of the line to its next (all lines': a step keeps its validation
 * batch with the graph of its loss), from its first pass that kept any;
 * the median of them. */
static bool per_pass(const struct trace_rep_tensor *t, size_t n, bool open,
		     struct trace_rep_growth *g)
{
	uint64_t *cycles = calloc(g->passes + 1, sizeof(*cycles));
	uint64_t pass = 0, at = 0, k = 0;
	bool in_line = false;

	if (!cycles)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].depth)
			continue;
		bool mine = key_at(&t[i], g->level) == g->rep_key;

		if (mine && !in_line)
			at = pass++;
		in_line = mine;
		if (pass && t[i].live)
			cycles[at] += t[i].bytes;
	}
	/* the cycle in progress has not come round; at an OOM neither has
	 * the one before it ended */
	for (uint64_t c = 0; c + 1 + open < pass; c++)
		if (cycles[c] || k)
			cycles[k++] = cycles[c];
	g->cycles = k;
	for (uint64_t c = 0; c < k; c++)
		g->cycles_bytes += cycles[c];
	if (k)
		qsort(cycles, k, sizeof(*cycles), cmp_u64);
	g->per_pass = k ? cycles[(k - 1) / 2] : 0;
	free(cycles);
	return k > 0;
}

bool trace_reps_growth(const struct trace_rep_tensor *tensors, size_t n, bool open,
		       uint64_t floor, struct trace_rep_growth *out)
{
	struct map lines;
	const struct line *best = NULL;
	uint64_t key = 0, k, rounds, top;
	size_t pos = 0;
	void *v;
	bool ok;

	*out = (struct trace_rep_growth){ 0 };
	if (!n)
		return false;
	out->level = level_of(tensors, n);
	map_init(&lines, sizeof(struct line));
	ok = count_passes(tensors, n, open, out->level, &lines);
	/* no line comes round there: the loop is further in (a model built
	 * at the script's level, then trained in a function's loop) */
	while (ok && !comes_round(&lines) && out->level + 1 < deepest(tensors, n)) {
		map_fini(&lines);
		map_init(&lines, sizeof(struct line));
		ok = count_passes(tensors, n, open, ++out->level, &lines);
	}
	while (ok && map_next(&lines, &pos, &k, &v)) {
		const struct line *l = v;

		if (grew(l, floor) && (!best || l->kept_bytes > best->kept_bytes)) {
			best = l;
			key = k;
		}
	}
	/* one that came first and kept at least a third as much: a model's
	 * build before what its training adds and keeps (gradients, and an
	 * optimizer's state: Adam's two slots per weight, Keras's made in
	 * model.fit's line) */
	top = best ? best->kept_bytes : 0;
	for (pos = 0; ok && best && map_next(&lines, &pos, &k, &v);) {
		const struct line *l = v;

		if (grew(l, floor) && l->first < best->first && l->kept_bytes >= top / 3) {
			best = l;
			key = k;
		}
	}
	out->rep_key = key;
	out->rep_tensor = best ? best->first : 0;
	/* the repetition: the line that comes round least often, at least
	 * TRACE_GROWTH_MIN_ROUNDS times; the growing line's when as few */
	for (pos = 0, rounds = best ? best->passes : 0; ok && best && map_next(&lines, &pos, &k, &v);) {
		const struct line *l = v;

		if (l->passes >= TRACE_GROWTH_MIN_ROUNDS && l->passes < rounds) {
			rounds = l->passes;
			out->rep_key = k;
			out->rep_tensor = l->first;
		}
	}
	if (ok && best) {
		out->key = key;
		out->passes = best->passes;
		out->kept = best->kept;
		out->kept_bytes = best->kept_bytes;
		out->largest = best->largest;
	}
	map_fini(&lines);
	return ok && best && per_pass(tensors, n, open, out);
}
