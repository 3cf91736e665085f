/* Graphs for the observed driver: tests/sim's driver has none yet, so
 * the five calls that make and end graph and graph-exec lifetimes are
 * here, as handles with nothing in them, each one reported to the
 * observer (CUPTI's resource callbacks are made from them).
 *
 * They are weak: if tests/sim's driver grows its own graphs, its
 * definitions win at link time and this file is dead code, to be removed
 * once that driver reports graph lifetimes itself. */
#include "observe.h"
#include "sim-driver.h"

#include <stdlib.h>

struct sim_graph_handle {
	uint32_t magic;
};

#define GRAPH_MAGIC 0x47524150u /* "GRAP" */
#define EXEC_MAGIC 0x45584543u /* "EXEC" */

static void *handle_new(uint32_t magic)
{
	struct sim_graph_handle *h = malloc(sizeof(*h));
	if (h)
		h->magic = magic;
	return h;
}

static bool handle_is(const void *p, uint32_t magic)
{
	return p && ((const struct sim_graph_handle *)p)->magic == magic;
}

static void handle_free(void *p)
{
	((struct sim_graph_handle *)p)->magic = 0;
	free(p);
}

/* Lock held on return when it returns CUDA_SUCCESS. */
static CUresult enter(void)
{
	CUcontext ctx;
	sim_lock();
	CUresult rc = sim_ctx_enter(&ctx);
	if (rc != CUDA_SUCCESS)
		sim_unlock();
	return rc;
}

static CUresult made(void *h, struct cudasim_event ev, void **out)
{
	if (!h) {
		sim_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = h;
	observe_notify(&ev);
	sim_unlock();
	return CUDA_SUCCESS;
}

__attribute__((weak)) CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	CUresult rc = enter();
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phGraph || flags) {
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	void *g = handle_new(GRAPH_MAGIC);
	return made(g, (struct cudasim_event){ .op = CUDASIM_GRAPH_CREATE, .graph = g },
		    (void **)phGraph);
}

__attribute__((weak)) CUresult CUDAAPI cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	CUresult rc = enter();
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phGraphClone || !handle_is(originalGraph, GRAPH_MAGIC)) {
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	void *g = handle_new(GRAPH_MAGIC);
	return made(g,
		    (struct cudasim_event){ .op = CUDASIM_GRAPH_CLONE, .graph = g,
					    .original = originalGraph },
		    (void **)phGraphClone);
}

__attribute__((weak)) CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
								   CUgraph hGraph,
								   unsigned long long flags)
{
	CUresult rc = enter();
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!phGraphExec || !handle_is(hGraph, GRAPH_MAGIC)) {
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	void *e = handle_new(EXEC_MAGIC);
	return made(e, (struct cudasim_event){ .op = CUDASIM_EXEC_CREATE, .exec = e, .graph = hGraph },
		    (void **)phGraphExec);
}

static CUresult destroy(void *h, uint32_t magic, struct cudasim_event ev)
{
	CUresult rc = enter();
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!handle_is(h, magic)) {
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	observe_notify(&ev); /* before it goes, as CUPTI's DESTROY_STARTING */
	handle_free(h);
	sim_unlock();
	return CUDA_SUCCESS;
}

__attribute__((weak)) CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	return destroy(hGraph, GRAPH_MAGIC,
		       (struct cudasim_event){ .op = CUDASIM_GRAPH_DESTROY, .graph = hGraph });
}

__attribute__((weak)) CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	return destroy(hGraphExec, EXEC_MAGIC,
		       (struct cudasim_event){ .op = CUDASIM_EXEC_DESTROY, .exec = hGraphExec });
}
