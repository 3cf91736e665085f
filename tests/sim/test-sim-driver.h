/* Shared by the files of the driver self-test: test-sim-driver.c
 * (devices, contexts, the allocator, copies), test-sim-driver-routes.c
 * (pools, virtual memory, arrays, IPC, host registration, fork, and the
 * ABIs cuGetProcAddress hands out), test-sim-driver-graph.c (stream
 * capture, graphs, graph memory), test-sim-driver-events.c (events,
 * captures across streams) and test-sim-driver-kernels.c (device code,
 * launches). The device shape, set in main before
 * cuInit: 2 devices of 64 MiB, 1 MiB of each reserved. */
#pragma once

#include <cuda.h>
#include <stdio.h>

#define MiB ((size_t)1 << 20)
#define CAPACITY (64 * MiB)
#define RESERVED (1 * MiB)

extern int failures;

#define EXPECT(cond)                                                         \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__,    \
				__LINE__, #cond);                            \
			failures++;                                          \
		}                                                            \
	} while (0)

#define EXPECT_RC(call, want)                                                \
	do {                                                                 \
		CUresult got_ = (call);                                      \
		if (got_ != (want)) {                                        \
			fprintf(stderr, "%s:%d: %s returned %d, expected %s\n", \
				__FILE__, __LINE__, #call, (int)got_, #want); \
			failures++;                                          \
		}                                                            \
	} while (0)

/* test-sim-driver.c */
size_t used_bytes(void);

/* test-sim-driver-routes.c */
void test_pools(void);
void test_vmm(void);
void test_arrays(void);
void test_host_register(void);
void test_ipc(void);
int ipc_import_child(const char *hex);
void test_fork(void);
void test_proc_routes(void);

/* test-sim-driver-graph.c */
void test_graphs(CUcontext primary);

/* test-sim-driver-events.c */
void test_events(CUcontext primary);

/* test-sim-driver-kernels.c */
void test_kernels(CUcontext primary);
