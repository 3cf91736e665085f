/* The events in batches, with what the model will need of each asked of
 * the memory a few events before it has it (trace_ahead_fn): on the
 * caller's thread (trace_read_events_batched, the reporter's way), or
 * (trace_read_events_pipe) with the reading on a thread of its own:
 * the reader fills batches of events while the caller's thread hands the
 * previous ones to fn, so on two cores the model's pass and the reading
 * overlap. A ring of PIPE_BATCHES batches bounds the memory.
 *
 * A batch changes hands by a count (filled, emptied), each written by one
 * side and read by the other, with no lock. A side with nothing to do
 * sleeps until the other is PIPE_WAKE batches on, not the next one: on
 * two cores the faster side would otherwise sleep and be woken once a
 * batch, and a wake-up costs the waking side, the slower one, a system
 * call (on a virtual machine, more). */
#include <pthread.h>
#include <stdatomic.h>

#include "trace.h"
#include "util-mem.h"

/* 8 batches of 256 events, 344 KiB in all: the ring stays within a core's
 * L2 cache (512 KiB here). Twice that was 13% slower in median wall time
 * on 10M events (13 interleaved runs, three sets), whether as 8 batches of
 * 512 or 16 of 256; 4 of 512 was as fast. */
#define PIPE_BATCH TRACE_BATCH
#define PIPE_BATCHES 8
#define PIPE_WAKE (PIPE_BATCHES / 2)

struct batch {
	size_t n;
	struct trace_event ev[PIPE_BATCH];
};

struct pipe {
	struct trace *t;
	struct batch *ring;
	_Atomic size_t filled, emptied; /* batches, counted from the start */
	_Atomic bool done;		/* the reader filled its last batch */
	int rc;				/* trace_read_events', once done */
	/* the sleeping side's: set under lock, which the waking side takes
	 * to signal */
	_Atomic bool reader_sleeps, model_sleeps;
	pthread_mutex_t lock;
	pthread_cond_t room, more;
};

/* Whether the reader has room enough to go on after sleeping. */
static bool room_enough(struct pipe *p, size_t filled)
{
	return filled - atomic_load(&p->emptied) <= PIPE_BATCHES - PIPE_WAKE;
}

/* Whether the model has batches enough to go on after sleeping. */
static bool more_enough(struct pipe *p, size_t emptied)
{
	return atomic_load(&p->done) || atomic_load(&p->filled) - emptied >= PIPE_WAKE;
}

/* The sleeper's flag is set before it looks at the count, and the count
 * is stored before the other side looks at the flag (all sequentially
 * consistent): either the sleeper sees the new count, or the other side
 * sees the flag and signals under the lock the sleeper holds until it
 * waits. */
static void wake(struct pipe *p, pthread_cond_t *c)
{
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(c);
	pthread_mutex_unlock(&p->lock);
}

/* The reader's batch is full (or the reading ended): hand it over, and
 * wait for room for the next one. */
static void hand_over(struct pipe *p)
{
	size_t filled = atomic_load_explicit(&p->filled, memory_order_relaxed) + 1;

	atomic_store(&p->filled, filled);
	if (atomic_load(&p->model_sleeps) && more_enough(p, atomic_load(&p->emptied)))
		wake(p, &p->more);
	if (filled - atomic_load(&p->emptied) == PIPE_BATCHES) {
		pthread_mutex_lock(&p->lock);
		atomic_store(&p->reader_sleeps, true);
		while (!room_enough(p, filled))
			pthread_cond_wait(&p->room, &p->lock);
		atomic_store(&p->reader_sleeps, false);
		pthread_mutex_unlock(&p->lock);
	}
	p->ring[filled % PIPE_BATCHES].n = 0;
}

/* The reader writes each event in place in the batch it fills; a full
 * one is handed over. */
static void full(struct trace_sink *sink)
{
	struct pipe *p = sink->ctx;

	p->ring[atomic_load_explicit(&p->filled, memory_order_relaxed) % PIPE_BATCHES].n = sink->n;
	hand_over(p);
	sink->ev = p->ring[atomic_load_explicit(&p->filled, memory_order_relaxed) % PIPE_BATCHES].ev;
	sink->n = 0;
}

static void *reader(void *arg)
{
	struct pipe *p = arg;
	struct trace_sink sink = { .ev = p->ring[0].ev, .cap = PIPE_BATCH, .full = full, .ctx = p };
	int rc = trace_read_events_sink(p->t, &sink);
	size_t filled = atomic_load_explicit(&p->filled, memory_order_relaxed);

	p->rc = rc; /* before done, which publishes it */
	p->ring[filled % PIPE_BATCHES].n = sink.n;
	if (sink.n)
		atomic_store(&p->filled, filled + 1);
	atomic_store(&p->done, true);
	if (atomic_load(&p->model_sleeps))
		wake(p, &p->more);
	return NULL;
}

/* The next filled batch, or NULL once the reader is done. */
static struct batch *next_batch(struct pipe *p)
{
	size_t emptied = atomic_load_explicit(&p->emptied, memory_order_relaxed);

	if (emptied == atomic_load(&p->filled) && !atomic_load(&p->done)) {
		pthread_mutex_lock(&p->lock);
		atomic_store(&p->model_sleeps, true);
		while (!more_enough(p, emptied))
			pthread_cond_wait(&p->more, &p->lock);
		atomic_store(&p->model_sleeps, false);
		pthread_mutex_unlock(&p->lock);
	}
	/* done is stored after the last filled */
	if (emptied == atomic_load(&p->filled))
		return NULL;
	return &p->ring[emptied % PIPE_BATCHES];
}

static void emptied(struct pipe *p)
{
	size_t emptied = atomic_load_explicit(&p->emptied, memory_order_relaxed) + 1;

	atomic_store(&p->emptied, emptied);
	if (atomic_load(&p->reader_sleeps) && room_enough(p, atomic_load(&p->filled)))
		wake(p, &p->room);
}

int trace_read_events_pipe(struct trace *t, trace_event_fn fn, trace_ahead_fn ahead, void *ctx)
{
	struct pipe p = { .t = t };
	struct batch *b;
	pthread_t thread;

	p.ring = xcalloc(PIPE_BATCHES, sizeof(*p.ring));
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.room, NULL);
	pthread_cond_init(&p.more, NULL);
	if (pthread_create(&thread, NULL, reader, &p) != 0) {
		/* no thread to be had: read on this one */
		free(p.ring);
		pthread_mutex_destroy(&p.lock);
		pthread_cond_destroy(&p.room);
		pthread_cond_destroy(&p.more);
		return trace_read_events(t, fn, ctx);
	}
	while ((b = next_batch(&p))) {
		trace_drain(b->ev, b->n, fn, ahead, ctx);
		emptied(&p);
	}
	pthread_join(thread, NULL);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.room);
	pthread_cond_destroy(&p.more);
	free(p.ring);
	return p.rc;
}

/* trace_read_events_batched: one batch, filled and drained in turn on
 * the caller's thread. */
struct one {
	trace_event_fn fn;
	trace_ahead_fn ahead;
	void *ctx;
};

static void one_full(struct trace_sink *sink)
{
	const struct one *o = sink->ctx;

	trace_drain(sink->ev, sink->n, o->fn, o->ahead, o->ctx);
	sink->n = 0;
}

int trace_read_events_batched(struct trace *t, trace_event_fn fn, trace_ahead_fn ahead, void *ctx)
{
	_autofree_ struct trace_event *ev = xcalloc(TRACE_BATCH, sizeof(*ev));
	struct one o = { .fn = fn, .ahead = ahead, .ctx = ctx };
	struct trace_sink sink = { .ev = ev, .cap = TRACE_BATCH, .full = one_full, .ctx = &o };
	int rc = trace_read_events_sink(t, &sink);

	one_full(&sink); /* what was read, as the pipe hands it */
	return rc;
}
