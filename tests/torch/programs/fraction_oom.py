"""An OOM where no CUDA call fails: torch.cuda.set_per_process_memory_fraction
caps the caching allocator at 0.3 of the 1 GiB device, tensors fill
most of it, and a request past the cap raises OutOfMemoryError from
torch's own limit (the device has memory left; no cudaMalloc fails).
Prints torch's figures right after the error: memory_allocated(),
memory_reserved(), the blocks each line holds, the largest free block,
the message's first line, and the cap: the fraction times the device's
total memory (mem_get_info()[1], which torch's allocator multiplies, and
get_device_properties(0).total_memory), and get_per_process_memory_fraction()
read back times that total."""
import torch

from common import blocks_by_tag, emit, figures, largest_inactive

MiB = 1 << 20
FRACTION = 0.3  # a cap of 322122547 bytes, not a round number
torch.cuda.set_per_process_memory_fraction(FRACTION)
weights = [torch.empty(60 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]  # @weights
extra = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")  # @extra
error = None
try:
    big = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")  # @big
except torch.cuda.OutOfMemoryError as e:
    error = str(e).splitlines()[0]
snapshot = torch.cuda.memory_snapshot()
free, total = torch.cuda.mem_get_info()
emit(figures(error=error, by_tag=blocks_by_tag(snapshot, {"weights": weights, "extra": [extra]}),
             largest_free=largest_inactive(snapshot),
             device_free=free, device_total=total,
             total_memory=torch.cuda.get_device_properties(0).total_memory,
             cap=int(FRACTION * total),
             cap_read_back=round(torch.cuda.get_per_process_memory_fraction() * total)))
