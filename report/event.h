/* One row of the trace's events table as the model consumes it
 * (docs/trace-format.md). The reader turns SQL NULLs into the has_ flags
 * and defaults below, so the model never sees a NULL. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct mt_event {
	int64_t seq;
	int64_t time_ns;
	int kind;	/* enum mt_event_kind; others are counted and ignored */
	int64_t api;	/* apis.id */
	int device;	/* CUDA device ordinal; -1 when NULL or not an ordinal */
	uint64_t address;
	bool has_address;
	uint64_t bytes; /* 0 when NULL or negative */
	int mem;	/* enum mt_mem_kind, 0 when NULL */
	int64_t stack;	/* 0: none */
	uint64_t handle; /* map: the physical allocation; pools: the pool */
	bool has_handle;
	/* from the ooms table, for oom events */
	bool has_device_free, has_device_total;
	int64_t device_free, device_total;
};
