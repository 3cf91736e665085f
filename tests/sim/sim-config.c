#include "sim-config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SIM_DEFAULT_CAPACITY ((size_t)1 << 30)
#define SIM_MAX_DEVICES 64

static int
suffix_shift(char c)
{
	switch (c) {
	case 'k': case 'K': return 10;
	case 'm': case 'M': return 20;
	case 'g': case 'G': return 30;
	case 't': case 'T': return 40;
	default: return -1;
	}
}

/* "1073741824", "1024M", "1G": a decimal count with an optional binary
 * (base 1024) suffix. Rejects junk, negative numbers and overflow. */
bool
sim_config_parse_size(const char *text, size_t *bytes)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!text || *text < '0' || *text > '9')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return false;
	if (*end) {
		shift = suffix_shift(*end);
		if (shift < 0 || end[1] != '\0')
			return false;
	}
	if (v > (SIZE_MAX >> shift))
		return false;
	*bytes = (size_t)v << shift;
	return true;
}

static bool
size_from_env(const char *name, size_t fallback, size_t *out)
{
	const char *text = getenv(name);

	*out = fallback;
	if (!text || !*text)
		return true;
	if (sim_config_parse_size(text, out))
		return true;
	fprintf(stderr, "cudasim: %s=\"%s\" is not a size (bytes, optional K/M/G suffix)\n",
		name, text);
	return false;
}

static bool
count_from_env(const char *name, int fallback, int *out)
{
	size_t v;

	if (!size_from_env(name, (size_t)fallback, &v))
		return false;
	if (v > SIM_MAX_DEVICES) {
		fprintf(stderr, "cudasim: %s=%zu is more than %d devices\n",
			name, v, SIM_MAX_DEVICES);
		return false;
	}
	*out = (int)v;
	return true;
}

/* False (after one message on stderr) when a variable is malformed: a
 * misconfigured test should fail loudly, not run on a default device. */
bool
sim_config_load(struct sim_config *cfg)
{
	if (!size_from_env(SIM_ENV_DEVICE_MEMORY, SIM_DEFAULT_CAPACITY, &cfg->capacity) ||
	    !size_from_env(SIM_ENV_RESERVED_MEMORY, 0, &cfg->reserved) ||
	    !count_from_env(SIM_ENV_DEVICE_COUNT, 1, &cfg->device_count))
		return false;
	if (cfg->reserved > cfg->capacity) {
		fprintf(stderr, "cudasim: %s (%zu) exceeds %s (%zu)\n",
			SIM_ENV_RESERVED_MEMORY, cfg->reserved,
			SIM_ENV_DEVICE_MEMORY, cfg->capacity);
		return false;
	}
	return true;
}
