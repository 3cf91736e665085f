/* trace_read_events with the reading on a thread of its own (trace.h):
 * the reader fills batches of events while the caller's thread hands the
 * previous ones to fn, so on two cores the model's pass and the reading
 * overlap. A ring of PIPE_BATCHES batches bounds the memory; a batch
 * changes hands under one mutex, so the cost of passing is per batch,
 * not per event. */
#include <pthread.h>

#include "trace.h"
#include "util-mem.h"

#define PIPE_BATCH 512
#define PIPE_BATCHES 8

struct batch {
	size_t n;
	struct trace_event ev[PIPE_BATCH];
};

struct pipe {
	struct trace *t;
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a batch was filled or emptied, or the reading ended */
	struct batch *ring;
	size_t filled, emptied; /* batches, counted from the start */
	bool done;		/* the reader filled its last batch */
	int rc;			/* trace_read_events' */
};

/* The reader's batch is full (or the reading ended): hand it over, and
 * wait for room for the next one. */
static void hand_over(struct pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->filled++;
	pthread_cond_signal(&p->changed);
	while (p->filled - p->emptied == PIPE_BATCHES)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
	p->ring[p->filled % PIPE_BATCHES].n = 0;
}

/* The reader writes each event in place in the batch it fills. */
static struct trace_event *slot(void *ctx)
{
	struct pipe *p = ctx;
	struct batch *b = &p->ring[p->filled % PIPE_BATCHES];

	return &b->ev[b->n];
}

static void push(void *ctx)
{
	struct pipe *p = ctx;
	struct batch *b = &p->ring[p->filled % PIPE_BATCHES];

	if (++b->n == PIPE_BATCH)
		hand_over(p);
}

static void *reader(void *arg)
{
	struct pipe *p = arg;
	int rc = trace_read_events_sink(p->t, &(struct trace_sink){ .slot = slot, .done = push,
								     .ctx = p });

	pthread_mutex_lock(&p->lock);
	if (p->ring[p->filled % PIPE_BATCHES].n)
		p->filled++;
	p->rc = rc;
	p->done = true;
	pthread_cond_signal(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The next filled batch, or NULL once the reader is done. */
static struct batch *next_batch(struct pipe *p)
{
	struct batch *b = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->emptied == p->filled && !p->done)
		pthread_cond_wait(&p->changed, &p->lock);
	if (p->emptied < p->filled)
		b = &p->ring[p->emptied % PIPE_BATCHES];
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void emptied(struct pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->emptied++;
	pthread_cond_signal(&p->changed);
	pthread_mutex_unlock(&p->lock);
}

int trace_read_events_pipe(struct trace *t, trace_event_fn fn, trace_ahead_fn ahead, void *ctx)
{
	struct pipe p = { .t = t };
	struct batch *b;
	pthread_t thread;

	p.ring = xcalloc(PIPE_BATCHES, sizeof(*p.ring));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	if (pthread_create(&thread, NULL, reader, &p) != 0) {
		/* no thread to be had: read on this one */
		free(p.ring);
		pthread_mutex_destroy(&p.lock);
		pthread_cond_destroy(&p.changed);
		return trace_read_events(t, fn, ctx);
	}
	while ((b = next_batch(&p))) {
		for (size_t i = 0; i < b->n; i++) {
			if (ahead && i + TRACE_AHEAD_FAR < b->n)
				ahead(ctx, &b->ev[i + TRACE_AHEAD_FAR], false);
			if (ahead && i + TRACE_AHEAD_NEAR < b->n)
				ahead(ctx, &b->ev[i + TRACE_AHEAD_NEAR], true);
			fn(ctx, &b->ev[i]);
		}
		emptied(&p);
	}
	pthread_join(thread, NULL);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.changed);
	free(p.ring);
	return p.rc;
}
