/* The writer's reorder buffer. Events leave the queue in the order their
 * threads pushed them, which is not the order the device served them: an
 * allocation takes its ticket before its call and unwinds its stack after
 * it, so a free pushed meanwhile by another thread comes out first. The
 * writer puts each event back at its ticket (ev->order) before anything
 * counts it.
 *
 * Tickets are dense, so the buffer is a ring of slots indexed by ticket:
 * put and take are one copy each, whatever is held. `next` is the ticket
 * due; a slot is empty, holds an event, or is done (its event was taken
 * early, mt_reorder_take_early: take steps past it). The ring doubles when
 * a ticket lands beyond it, up to MT_REORDER_MAX_SLOTS.
 *
 * Every ticket taken is pushed sooner or later; a gap is a thread still
 * inside its call. The writer gives up on a gap it has waited too long
 * for (mt_reorder_skip); the event that fills it later is held apart and
 * written where it arrives, counted late. docs/trace-format.md says what
 * seq means. */
#include "internal.h"
#include "trace-schema.h"

#include <stdlib.h>
#include <string.h>

enum { SLOT_EMPTY, SLOT_HELD, SLOT_DONE };

#define MT_REORDER_FIRST_SLOTS 4096

void mt_reorder_init(struct mt_reorder *r)
{
	memset(r, 0, sizeof(*r));
}

void mt_reorder_fini(struct mt_reorder *r)
{
	free(r->slots);
	free(r->state);
	free(r->late_ev);
	memset(r, 0, sizeof(*r));
}

static size_t slot(const struct mt_reorder *r, uint64_t ticket)
{
	return (size_t)(ticket & (r->cap - 1));
}

/* Room for ticket: the ring doubled until it reaches it, keeping each
 * held slot at its ticket. False past MT_REORDER_MAX_SLOTS or without
 * memory. */
static bool reach(struct mt_reorder *r, uint64_t ticket)
{
	if (r->cap && ticket - r->next < r->cap)
		return true;
	size_t cap = r->cap ? r->cap : MT_REORDER_FIRST_SLOTS;
	while (ticket - r->next >= cap)
		cap *= 2;
	if (cap > MT_REORDER_MAX_SLOTS)
		return false;
	struct mt_event *slots = malloc(cap * sizeof(*slots));
	uint8_t *state = calloc(cap, 1);
	if (!slots || !state) {
		free(slots);
		free(state);
		return false;
	}
	for (uint64_t t = r->next; r->cap && t < r->hi; t++) {
		size_t from = slot(r, t), to = (size_t)(t & (cap - 1));
		state[to] = r->state[from];
		if (state[to] == SLOT_HELD)
			slots[to] = r->slots[from];
	}
	free(r->slots);
	free(r->state);
	r->slots = slots;
	r->state = state;
	r->cap = cap;
	return true;
}

static bool put_late(struct mt_reorder *r, const struct mt_event *ev)
{
	if (r->n_late == r->cap_late) {
		size_t cap = r->cap_late ? r->cap_late * 2 : 16;
		struct mt_event *p = realloc(r->late_ev, cap * sizeof(*p));
		if (!p)
			return false;
		r->late_ev = p;
		r->cap_late = cap;
	}
	r->late_ev[r->n_late++] = *ev;
	return true;
}

bool mt_reorder_put(struct mt_reorder *r, const struct mt_event *ev)
{
	if (ev->order < r->next)
		return put_late(r, ev); /* its place was given up on */
	if (!reach(r, ev->order)) {
		if (r->n)
			return false;
		/* nothing held: the gap before it is given up at once */
		r->skipped += ev->order - r->next;
		r->next = r->hi = ev->order;
		if (!reach(r, ev->order))
			return false;
	}
	size_t i = slot(r, ev->order);
	r->slots[i] = *ev;
	r->state[i] = SLOT_HELD;
	r->n++;
	if (ev->order >= r->hi)
		r->hi = ev->order + 1;
	return true;
}

/* The event due, or one that came after its place was given up (late). */
bool mt_reorder_take(struct mt_reorder *r, struct mt_event *ev)
{
	if (r->n_late) {
		/* in the order they came: few, so a shift */
		*ev = r->late_ev[0];
		memmove(r->late_ev, r->late_ev + 1, --r->n_late * sizeof(*ev));
		r->late++;
		return true;
	}
	while (r->next < r->hi) {
		size_t i = slot(r, r->next);
		if (r->state[i] == SLOT_EMPTY)
			return false;
		r->next++;
		if (r->state[i] == SLOT_DONE) {
			r->state[i] = SLOT_EMPTY;
			continue;
		}
		r->state[i] = SLOT_EMPTY;
		*ev = r->slots[i];
		r->n--;
		return true;
	}
	return false;
}

/* Gives up on the tickets missing before the least one held. */
void mt_reorder_skip(struct mt_reorder *r)
{
	while (r->next < r->hi && r->state[slot(r, r->next)] == SLOT_EMPTY) {
		r->next++;
		r->skipped++;
	}
}

/* A release of this kind at this address waiting for its ticket, taken
 * out of its place to go first; its slot is done. Rare (an address reused
 * while its free was still returning): a scan of what is held. */
bool mt_reorder_take_early(struct mt_reorder *r, unsigned kind, uint64_t address,
			   struct mt_event *ev)
{
	for (uint64_t t = r->next; t < r->hi; t++) {
		size_t i = slot(r, t);
		const struct mt_event *e = &r->slots[i];
		if (r->state[i] != SLOT_HELD || e->kind != kind || e->address != address ||
		    e->source != MT_SOURCE_HOOK)
			continue;
		*ev = *e;
		r->state[i] = SLOT_DONE;
		r->n--;
		r->early++;
		return true;
	}
	return false;
}
