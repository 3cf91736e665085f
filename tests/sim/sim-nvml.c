/* Simulated NVML (libnvidia-ml.so.1): a TEST FIXTURE. NVML comes with the
 * driver, not with any wheel, and PyTorch calls it through pointers it
 * looks up with dlsym, without checking that the library was found
 * (c10::cuda::get_fabric_access, on the path of expandable segments; the
 * device-to-device access checks): on a machine without a driver those
 * pointers are NULL. This library answers what torch asks, for the
 * devices the simulated driver has (CUDASIM_DEVICE_COUNT, read the same
 * way, sim-config.c): their handles by index, PCI bus id (the driver's
 * cuDeviceGetPCIBusId) or UUID, peer access between any two, no NVLink,
 * no fabric, and no process list (none is known here, as on platforms
 * with partial NVML support). nvml.h is not part of the toolkit: the few
 * types are declared here, with NVML's values. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim-config.h"

typedef int nvmlReturn_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
};
#define NVML_P2P_STATUS_OK 0
#define SIM_NVML_MAX_DEVICES 64

typedef struct nvmlDevice_st *nvmlDevice_t;
struct nvmlDevice_st {
	unsigned int index;
};

/* The exported entry points, as nvml.h declares them (no header here). */
#define NVML_API __attribute__((visibility("default")))
NVML_API nvmlReturn_t nvmlInit_v2(void);
NVML_API nvmlReturn_t nvmlInit(void);
NVML_API nvmlReturn_t nvmlShutdown(void);
NVML_API const char *nvmlErrorString(nvmlReturn_t result);
NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
						       nvmlDevice_t *device);
NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
NVML_API nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
					     int p2pIndex, int *p2pStatus);
NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device,
							  unsigned int link, int *pNvLinkDeviceType);
NVML_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
							  unsigned int link, void *pci);
NVML_API nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, void *gpuFabricInfo);
NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
							   unsigned int *infoCount, void *infos);

static struct nvmlDevice_st sim_nvml_devices[SIM_NVML_MAX_DEVICES];
static unsigned int sim_nvml_count;
static int sim_nvml_ready;

nvmlReturn_t
nvmlInit_v2(void)
{
	struct sim_config cfg;

	if (!sim_config_load(&cfg))
		return NVML_ERROR_INVALID_ARGUMENT;
	sim_nvml_count = cfg.device_count < SIM_NVML_MAX_DEVICES ? (unsigned)cfg.device_count :
								      SIM_NVML_MAX_DEVICES;
	for (unsigned int i = 0; i < sim_nvml_count; i++)
		sim_nvml_devices[i].index = i;
	__atomic_store_n(&sim_nvml_ready, 1, __ATOMIC_RELEASE);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlInit(void)
{
	return nvmlInit_v2();
}

nvmlReturn_t
nvmlShutdown(void)
{
	return sim_nvml_ready ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

const char *
nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	default: return "Unknown Error";
	}
}

/* The simulated driver's version (SIM_DRIVER_VERSION, sim-driver.h). */
nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cudaDriverVersion = 13000;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}

static nvmlReturn_t
ready(void)
{
	return __atomic_load_n(&sim_nvml_ready, __ATOMIC_ACQUIRE) ? NVML_SUCCESS :
								     NVML_ERROR_UNINITIALIZED;
}

/* The index of a handle this library gave, or -1. */
static int
index_of(nvmlDevice_t device)
{
	if (ready() != NVML_SUCCESS || device < sim_nvml_devices ||
	    device >= sim_nvml_devices + sim_nvml_count)
		return -1;
	return (int)device->index;
}

nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	if (ready() != NVML_SUCCESS)
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = sim_nvml_count;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (ready() != NVML_SUCCESS)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= sim_nvml_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &sim_nvml_devices[index];
	return NVML_SUCCESS;
}

/* "domain:bus:device.function", hexadecimal, as the driver writes it
 * (bus = ordinal + 1) or in NVML's shorter forms. */
nvmlReturn_t
nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	unsigned int domain = 0, bus = 0, dev = 0, fn = 0;

	if (ready() != NVML_SUCCESS)
		return NVML_ERROR_UNINITIALIZED;
	if (!pciBusId || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
		domain = 0;
		if (sscanf(pciBusId, "%x:%x.%x", &bus, &dev, &fn) != 3)
			return NVML_ERROR_INVALID_ARGUMENT;
	}
	if (domain != 0 || dev != 0 || fn != 0 || bus == 0 || bus > sim_nvml_count)
		return NVML_ERROR_NOT_FOUND;
	*device = &sim_nvml_devices[bus - 1];
	return NVML_SUCCESS;
}

#define SIM_NVML_UUID "GPU-00000000-0000-4000-8000-%012x"

nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	int i = index_of(device);

	if (i < 0 || !uuid)
		return i < 0 && ready() != NVML_SUCCESS ? NVML_ERROR_UNINITIALIZED :
							  NVML_ERROR_INVALID_ARGUMENT;
	if ((unsigned int)snprintf(uuid, length, SIM_NVML_UUID, (unsigned)i) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	char want[64];

	if (ready() != NVML_SUCCESS)
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < sim_nvml_count; i++) {
		snprintf(want, sizeof(want), SIM_NVML_UUID, i);
		if (strcmp(uuid, want) == 0) {
			*device = &sim_nvml_devices[i];
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/* Every simulated device reaches every other (cuDeviceCanAccessPeer). */
nvmlReturn_t
nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, int p2pIndex, int *p2pStatus)
{
	if (index_of(device1) < 0 || index_of(device2) < 0 || !p2pStatus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*p2pStatus = NVML_P2P_STATUS_OK;
	return NVML_SUCCESS;
}

/* No NVLink, no fabric. */
nvmlReturn_t
nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
				    int *pNvLinkDeviceType)
{
	return index_of(device) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t
nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, void *pci)
{
	return index_of(device) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t
nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, void *gpuFabricInfo)
{
	return index_of(device) < 0 ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
}

/* No process is known to use the device: an empty list. */
nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount, void *infos)
{
	if (index_of(device) < 0 || !infoCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*infoCount = 0;
	return NVML_SUCCESS;
}
