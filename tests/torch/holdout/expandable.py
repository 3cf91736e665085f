"""Held out (tensor view): expandable_segments:True, set by the program
before torch starts. Tensors of several sizes, some freed, one batch of
them on one line; the segment grows by mapping pages at its end. Prints
torch's figures at the end: memory_allocated(), memory_reserved(), every
block of memory_snapshot(), the blocks each line's tensors hold, the
largest free block."""
import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

import torch  # noqa: E402

from common import blocks_by_tag, emit, figures, largest_inactive  # noqa: E402

MiB = 1 << 20
first = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")  # @first
temp = [torch.empty((5 + k) * MiB, dtype=torch.uint8, device="cuda") for k in range(4)]  # @temp
later = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")  # @later
del temp[1], temp[2]
bits = [torch.empty(200 * 1024, dtype=torch.uint8, device="cuda") for _ in range(6)]  # @bits
torch.cuda.synchronize()
snapshot = torch.cuda.memory_snapshot()
blocks = sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                for s in snapshot for b in s["blocks"])
emit(figures(blocks=blocks, expandable=all(s["is_expandable"] for s in snapshot),
             by_tag=blocks_by_tag(snapshot, {"first": [first], "temp": temp, "later": [later],
                                             "bits": bits}),
             largest_free=largest_inactive(snapshot),
             allocations=torch.cuda.memory_stats()["allocation.all.current"]))
