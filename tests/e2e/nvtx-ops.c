/* nvtx-ops: NVTX ranges (push/pop, start/end, a domain with a registered
 * string, a PyTorch-style name with a per-call counter) and marks around
 * allocations, on two threads. Each cudaMalloc has its own size so a test
 * can tell them apart:
 *
 *   1 MiB  inside "model.build"
 *   2 MiB  inside "aten::mm, seq = 12, op_id = 3, sizes = [[2, 3]]"
 *          (nested in model.build): the operation is "aten::mm"
 *   3 MiB  inside "model.build" again, after the pop
 *   4 MiB  outside any range
 *   5 MiB  inside the registered string "step" of domain "trainer"
 *   6 MiB  on a second thread, inside its own "worker" range, while the
 *          main thread is inside "outer"
 *   7 MiB  on the main thread inside "outer", after joining the worker
 *   8 MiB  inside the start/end range "async-range"
 *
 * Marks: "start" (memtrace_mark, before the first CUDA call), "checkpoint"
 * (nvtxMarkA, after the 4 MiB allocation), "end" (memtrace_mark, last).
 * Everything is freed. memtrace_mark is looked up with dlsym so the
 * program runs unchanged without memtrace. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>

#define MiB ((size_t)1 << 20)

static void *blocks[9];

static void mark(const char *label)
{
	void (*fn)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memtrace_mark");
	if (fn)
		fn(label);
}

static __attribute__((noinline)) int alloc(int n)
{
	return cudaMalloc(&blocks[n], (size_t)n * MiB) == cudaSuccess ? 0 : 1;
}

static void *worker(void *arg)
{
	nvtxRangePushA("worker");
	*(int *)arg = alloc(6);
	nvtxRangePop();
	return NULL;
}

int main(void)
{
	int err = 0;
	mark("start");
	nvtxRangePushA("model.build");
	err |= alloc(1);
	nvtxRangePushA("aten::mm, seq = 12, op_id = 3, sizes = [[2, 3]]");
	err |= alloc(2);
	nvtxRangePop();
	err |= alloc(3);
	nvtxRangePop();
	err |= alloc(4);
	nvtxMarkA("checkpoint");

	nvtxDomainHandle_t domain = nvtxDomainCreateA("trainer");
	nvtxEventAttributes_t attr = { 0 };
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	attr.message.registered = nvtxDomainRegisterStringA(domain, "step");
	nvtxDomainRangePushEx(domain, &attr);
	err |= alloc(5);
	nvtxDomainRangePop(domain);

	nvtxRangePushA("outer");
	pthread_t th;
	int worker_err = 0;
	pthread_create(&th, NULL, worker, &worker_err);
	pthread_join(th, NULL);
	err |= worker_err;
	err |= alloc(7);
	nvtxRangePop();

	nvtxRangeId_t id = nvtxRangeStartA("async-range");
	err |= alloc(8);
	nvtxRangeEnd(id);

	for (int n = 1; n <= 8; n++)
		err |= cudaFree(blocks[n]) != cudaSuccess;
	mark("end");
	printf("nvtx-ops: %s\n", err ? "a CUDA call failed" : "8 allocations, all freed");
	return err ? 2 : 0;
}
