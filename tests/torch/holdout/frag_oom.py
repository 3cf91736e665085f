"""Held out (tensor view): fragmentation. Tensors of many sizes fill the
cache's segments; every other one is freed, so the cache holds much free
memory in ranges between live tensors; then a tensor larger than any of
those ranges and than what the device has left is asked for, and torch
raises OutOfMemoryError. Prints torch's figures right after the error:
memory_allocated(), memory_reserved(), every block of memory_snapshot(),
the blocks each line's tensors hold and the largest free block."""
import torch

from common import blocks_by_tag, emit, figures, largest_inactive

MiB = 1 << 20
sizes = [3, 5, 7, 9, 4, 6, 8, 12, 2, 10, 14, 11]
kept, dropped = [], []
for i in range(6):
    for k, mib in enumerate(sizes):
        t = torch.empty(mib * MiB + 4096 * k, dtype=torch.uint8, device="cuda")  # @fill
        (kept if k % 2 == 0 else dropped).append(t)
del t
dropped.clear()
small = [torch.empty(300 * 1024 + 64 * k, dtype=torch.uint8, device="cuda") for k in range(5)]  # @small
error = None
try:
    wide = torch.empty(700 * MiB, dtype=torch.uint8, device="cuda")  # @wide
except torch.cuda.OutOfMemoryError as e:
    error = str(e).splitlines()[0]
snapshot = torch.cuda.memory_snapshot()
blocks = sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                for s in snapshot for b in s["blocks"])
emit(figures(blocks=blocks, error=error, allocations=len(kept) + len(small),
             by_tag=blocks_by_tag(snapshot, {"fill": kept, "small": small}),
             largest_free=largest_inactive(snapshot)))
