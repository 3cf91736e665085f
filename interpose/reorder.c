/* The writer's reorder buffer. Events leave the queue in the order their
 * threads pushed them, which is not the order the device served them: an
 * allocation takes its ticket before its call and unwinds its stack after
 * it, so a free pushed meanwhile by another thread comes out first. The
 * writer puts each event back at its ticket (ev->order) before anything
 * counts it: a min-heap by ticket, and `next`, the ticket due.
 *
 * Every ticket taken is pushed sooner or later; a gap is a thread still
 * inside its call. The writer gives up on a gap it has waited too long
 * for (mt_reorder_skip); the event that fills it later is written where
 * it arrives, and counted late. docs/trace-format.md says what seq means. */
#include "internal.h"
#include "trace-schema.h"

#include <stdlib.h>
#include <string.h>

void mt_reorder_init(struct mt_reorder *r)
{
	memset(r, 0, sizeof(*r));
}

void mt_reorder_fini(struct mt_reorder *r)
{
	free(r->heap);
	free(r->done);
	memset(r, 0, sizeof(*r));
}

static void swap(struct mt_event *a, struct mt_event *b)
{
	struct mt_event t = *a;
	*a = *b;
	*b = t;
}

static void sift_up(struct mt_reorder *r, size_t i)
{
	while (i && r->heap[(i - 1) / 2].order > r->heap[i].order) {
		swap(&r->heap[(i - 1) / 2], &r->heap[i]);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct mt_reorder *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < r->n && r->heap[l].order < r->heap[m].order)
			m = l;
		if (l + 1 < r->n && r->heap[l + 1].order < r->heap[m].order)
			m = l + 1;
		if (m == i)
			return;
		swap(&r->heap[m], &r->heap[i]);
		i = m;
	}
}

bool mt_reorder_put(struct mt_reorder *r, const struct mt_event *ev)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct mt_event *p = realloc(r->heap, cap * sizeof(*p));
		if (!p)
			return false;
		r->heap = p;
		r->cap = cap;
	}
	r->heap[r->n] = *ev;
	sift_up(r, r->n++);
	return true;
}

static void remove_at(struct mt_reorder *r, size_t i, struct mt_event *ev)
{
	*ev = r->heap[i];
	r->heap[i] = r->heap[--r->n];
	if (i < r->n) {
		sift_up(r, i);
		sift_down(r, i);
	}
}

/* Steps next past the tickets written early: they come no more. */
static void pass_done(struct mt_reorder *r)
{
	for (size_t i = 0; i < r->n_done;) {
		if (r->done[i] < r->next) {
			r->done[i] = r->done[--r->n_done];
		} else if (r->done[i] == r->next) {
			r->done[i] = r->done[--r->n_done];
			r->next++;
			i = 0;
		} else {
			i++;
		}
	}
}

/* The event due, or one whose place was given up on (late). */
bool mt_reorder_take(struct mt_reorder *r, struct mt_event *ev)
{
	if (r->n_done)
		pass_done(r);
	if (!r->n || r->heap[0].order > r->next)
		return false;
	if (r->heap[0].order < r->next)
		r->late++;
	else
		r->next++;
	remove_at(r, 0, ev);
	return true;
}

void mt_reorder_skip(struct mt_reorder *r)
{
	if (r->n && r->heap[0].order > r->next) {
		r->skipped += r->heap[0].order - r->next;
		r->next = r->heap[0].order;
	}
	pass_done(r);
}

/* An event of this kind at this address waiting for its ticket, taken out
 * of its place to go first. Rare (an address reused while its free was
 * still returning): a scan. */
bool mt_reorder_take_early(struct mt_reorder *r, unsigned kind, uint64_t address,
			   struct mt_event *ev)
{
	size_t best = r->n;
	for (size_t i = 0; i < r->n; i++) {
		const struct mt_event *e = &r->heap[i];
		if (e->kind == kind && e->address == address && e->source == MT_SOURCE_HOOK &&
		    (best == r->n || e->order < r->heap[best].order))
			best = i;
	}
	if (best == r->n)
		return false;
	if (r->n_done == r->cap_done) {
		size_t cap = r->cap_done ? r->cap_done * 2 : 16;
		uint64_t *p = realloc(r->done, cap * sizeof(*p));
		if (!p)
			return false; /* written in its place after all */
		r->done = p;
		r->cap_done = cap;
	}
	remove_at(r, best, ev);
	r->done[r->n_done++] = ev->order;
	r->early++;
	return true;
}
