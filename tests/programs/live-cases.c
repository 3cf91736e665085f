/* live-cases: cases A and F of the live-set contract (docs/architecture.md)
 * in one run that then runs out of memory, so that the library's answer
 * on stderr, the flight trace's report and the full trace's report can be
 * held to one answer. On the simulated 1 GiB device.
 *
 *   live-cases [PAIRS]   (PAIRS: 0 by default)
 *
 *   site_first       cudaMalloc(100) at X, cudaFree(X)
 *   site_second      cudaMalloc(200), at X again (else exit 4)
 *   capture_free     a global stream capture begun; cudaFree(X) fails
 *                    (cudaErrorStreamCaptureUnsupported: X stays live,
 *                    the 200 bytes of site_second); the capture ended
 *   site_vmm_create  cuMemCreate(2 MiB) (case F: created here...)
 *   site_vmm_map     cuMemAddressReserve(2 MiB), cuMemMap, cuMemRelease
 *                    at once, as PyTorch's expandable segments do (...and
 *                    held by the mapping, which is live to the end)
 *   churn            PAIRS times cudaMalloc(4096) and its cudaFree, so
 *                    that a flight trace's ring loses what came before
 *   huge             cudaMalloc(1 GiB): out of memory
 *   churn            PAIRS pairs again, so that the OOM leaves the ring too
 *
 * Expected numbers: at the OOM 2097352 bytes live in 2 allocations,
 * 2097152 held by site_vmm_map and 200 by site_second; the same at the
 * end; the peak 2101448 bytes (those and one 4096-byte churn allocation,
 * when PAIRS > 0). Exit status 0; 2 if a CUDA call fails otherwise. */
#include "cuda-check.h"

#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdlib.h>

#define MiB ((size_t)1 << 20)

static const CUmemAllocationProp prop = {
	.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
};

static void *by_version(const char *name)
{
	enum cudaDriverEntryPointQueryResult status;
	void *fn = NULL;

	must(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status),
	     "cudaGetDriverEntryPointByVersion");
	if (!fn || status != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point %s\n", name);
		exit(3);
	}
	return fn;
}

static __attribute__((noinline)) void *site_first(void)
{
	void *p;
	must(cudaMalloc(&p, 100), "site_first: cudaMalloc");
	must(cudaFree(p), "site_first: cudaFree");
	return p;
}

static __attribute__((noinline)) void *site_second(void)
{
	void *p;
	must(cudaMalloc(&p, 200), "site_second: cudaMalloc");
	return p;
}

static __attribute__((noinline)) void capture_free(void *p)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	must(cudaStreamCreate(&s), "capture_free: cudaStreamCreate");
	must(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal),
	     "capture_free: cudaStreamBeginCapture");
	cudaError_t rc = cudaFree(p);
	printf("capture_free: %s\n", cudaGetErrorName(rc));
	(void)cudaStreamEndCapture(s, &g);
	(void)cudaGetLastError();
	if (g)
		(void)cudaGraphDestroy(g);
	must(cudaStreamDestroy(s), "capture_free: cudaStreamDestroy");
}

static __attribute__((noinline)) CUmemGenericAllocationHandle site_vmm_create(void)
{
	PFN_cuMemCreate_v10020 create = (PFN_cuMemCreate_v10020)by_version("cuMemCreate");
	CUmemGenericAllocationHandle h;
	must_drv(create(&h, 2 * MiB, &prop, 0), "site_vmm_create: cuMemCreate");
	return h;
}

static __attribute__((noinline)) void site_vmm_map(CUmemGenericAllocationHandle h)
{
	PFN_cuMemAddressReserve_v10020 reserve =
		(PFN_cuMemAddressReserve_v10020)by_version("cuMemAddressReserve");
	PFN_cuMemMap_v10020 map = (PFN_cuMemMap_v10020)by_version("cuMemMap");
	PFN_cuMemRelease_v10020 release = (PFN_cuMemRelease_v10020)by_version("cuMemRelease");
	CUdeviceptr va;
	must_drv(reserve(&va, 2 * MiB, 0, 0, 0), "site_vmm_map: cuMemAddressReserve");
	must_drv(map(va, 2 * MiB, 0, h, 0), "site_vmm_map: cuMemMap");
	must_drv(release(h), "site_vmm_map: cuMemRelease");
}

static __attribute__((noinline)) void churn(long pairs)
{
	for (long i = 0; i < pairs; i++) {
		void *p;
		must(cudaMalloc(&p, 4096), "churn: cudaMalloc");
		must(cudaFree(p), "churn: cudaFree");
	}
}

static __attribute__((noinline)) cudaError_t huge(void)
{
	void *p;
	return cudaMalloc(&p, 1024 * MiB);
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 0;
	void *x = site_first(), *y = site_second();
	if (x != y) {
		printf("the address was not reused\n");
		return 4;
	}
	capture_free(y);
	site_vmm_map(site_vmm_create());
	churn(pairs);
	printf("huge: %s\n", cudaGetErrorName(huge()));
	churn(pairs);
	return 0;
}
