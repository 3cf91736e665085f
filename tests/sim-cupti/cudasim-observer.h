/* What the simulated driver tells an observer: every allocation and
 * release it performs, and every graph and graph exec it creates and
 * destroys, whichever route the program took to it. The simulated CUPTI
 * (sim-cupti.c) turns these into activity records and resource callbacks,
 * as the real CUPTI learns them from inside the real driver.
 *
 * The observed driver (observe.c, linked with the objects of tests/sim's
 * driver) exports cudasim_set_observer; the simulated CUPTI finds it with
 * dlsym on libcuda.so.1. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cudasim_op {
	CUDASIM_ALLOC = 1,
	CUDASIM_FREE,
	CUDASIM_GRAPH_CREATE, /* graph */
	CUDASIM_GRAPH_CLONE, /* graph: the clone; original */
	CUDASIM_GRAPH_DESTROY, /* graph, before it goes */
	CUDASIM_EXEC_CREATE, /* exec, graph */
	CUDASIM_EXEC_DESTROY, /* exec, before it goes */
};

enum cudasim_mem {
	CUDASIM_MEM_DEVICE = 1,
	CUDASIM_MEM_MANAGED,
	CUDASIM_MEM_PINNED,
	CUDASIM_MEM_ARRAY,
};

struct cudasim_event {
	enum cudasim_op op;
	enum cudasim_mem mem;
	int device; /* ordinal; 0 for pinned host memory */
	uint32_t context; /* id of the owning context; 0: none */
	uintptr_t address;
	size_t bytes; /* as the program asked, not as the arena rounded */
	bool from_pool; /* a stream-ordered block carved from a pool */
	uintptr_t pool_base; /* from_pool: the pool's chunk, its size and use */
	size_t pool_size, pool_used;
	void *graph, *original, *exec;
};

/* Called with the driver lock held, on the thread of the driver call:
 * the observer must not call back into the driver. */
typedef void (*cudasim_observer_fn)(const struct cudasim_event *ev);

/* Installs the observer (NULL: none). */
void cudasim_set_observer(cudasim_observer_fn fn);
