/* What the framework adapters share: the callbacks preload.c gave at load
 * (struct mt_frameworks_options), and tsl's BFC allocator, which XLA and
 * TensorFlow both use: its OOM recorded, the count of those not yet
 * matched by an exception. Below the adapters (frameworks.c is above
 * them). */
#include "frameworks.h"
#include "trace-schema.h"

#include <errno.h>

static struct mt_frameworks_options options;

void mt_framework_base_init(const struct mt_frameworks_options *opt)
{
	options = *opt;
}

void *mt_framework_loaded(const char *name, void *self)
{
	return options.loaded ? options.loaded(name, self) : NULL;
}

bool mt_framework_mem_info(unsigned api, uint64_t *free_b, uint64_t *total_b)
{
	return options.mem_info && options.mem_info(api, free_b, total_b);
}

_Atomic unsigned mt_bfc_unmatched;

void mt_bfc_oom(uint64_t bytes)
{
	int saved_errno = errno;
	struct mt_order at = mt_record_order();
	mt_record_alloc(&(struct mt_rec){ .api = MT_API_BFCAllocator,
					  .status = 2, /* CUDA_ERROR_OUT_OF_MEMORY */
					  .oom = true,
					  .bytes = bytes,
					  .mem = MT_MEM_DEVICE },
			at);
	mt_leave();
	errno = saved_errno;
}
