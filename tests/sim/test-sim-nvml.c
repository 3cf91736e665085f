/* Self-test of the simulated NVML (sim-nvml.c): what PyTorch asks of it,
 * for the devices of CUDASIM_DEVICE_COUNT (2 here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, int p2pIndex,
				    int *p2pStatus);
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, void *gpuFabricInfo);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						  void *infos);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);

static int failures;

#define EXPECT(cond)                                                                    \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                     \
		}                                                                       \
	} while (0)

int
main(void)
{
	nvmlDevice_t d0 = NULL, d1 = NULL, d = NULL;
	unsigned int count = 0;
	char uuid[96];
	int status = -1, version = 0;

	setenv("CUDASIM_DEVICE_COUNT", "2", 1);
	EXPECT(nvmlDeviceGetCount_v2(&count) == 1);      /* NVML_ERROR_UNINITIALIZED */
	EXPECT(nvmlInit_v2() == 0);
	EXPECT(nvmlDeviceGetCount_v2(&count) == 0 && count == 2);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(0, &d0) == 0);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(1, &d1) == 0 && d1 != d0);
	EXPECT(nvmlDeviceGetHandleByIndex_v2(2, &d) == 2);
	/* The bus id the driver's cuDeviceGetPCIBusId writes: ordinal + 1. */
	EXPECT(nvmlDeviceGetHandleByPciBusId_v2("00000000:02:00.0", &d) == 0 && d == d1);
	EXPECT(nvmlDeviceGetHandleByPciBusId_v2("01:00.0", &d) == 0 && d == d0);
	EXPECT(nvmlDeviceGetHandleByPciBusId_v2("00000000:03:00.0", &d) == 6);
	EXPECT(nvmlDeviceGetUUID(d1, uuid, sizeof(uuid)) == 0 && strncmp(uuid, "GPU-", 4) == 0);
	EXPECT(nvmlDeviceGetHandleByUUID(uuid, &d) == 0 && d == d1);
	EXPECT(nvmlDeviceGetUUID(d1, uuid, 8) == 7);
	EXPECT(nvmlDeviceGetP2PStatus(d0, d1, 0, &status) == 0 && status == 0);
	EXPECT(nvmlDeviceGetGpuFabricInfoV(d0, uuid) == 3);
	EXPECT(nvmlDeviceGetComputeRunningProcesses(d0, &count, NULL) == 0 && count == 0);
	EXPECT(nvmlSystemGetCudaDriverVersion_v2(&version) == 0 && version == 13000);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
