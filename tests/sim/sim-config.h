/* The simulated device's shape, read once from the environment at cuInit.
 * The variable names are part of the test fixture's interface: see
 * tests/sim/README.md. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SIM_ENV_DEVICE_MEMORY   "CUDASIM_DEVICE_MEMORY"
#define SIM_ENV_DEVICE_COUNT    "CUDASIM_DEVICE_COUNT"
#define SIM_ENV_RESERVED_MEMORY "CUDASIM_RESERVED_MEMORY"

struct sim_config {
	size_t capacity;   /* bytes per device */
	size_t reserved;   /* bytes per device held by "others" */
	int device_count;
};

/* sim-config.c */
bool sim_config_parse_size(const char *text, size_t *bytes);
bool sim_config_load(struct sim_config *cfg);
