"""A long run's tensor events under flight mode (MEMTRACE_FLIGHT), then an
OOM: a model's tensors made first, then many small tensors made and
freed inside the warm cache (tensor events and no CUDA call, unless
argv[1] is "empty", when torch.cuda.empty_cache() gives the small
tensors' segment back every 2000 rounds, so CUDA calls come between),
one more tensor, and a request the 1 GiB device cannot hold. Prints
torch's figures right after the OutOfMemoryError: memory_allocated(),
memory_reserved(), the blocks each line holds, the largest free block,
the message's first line, the number of rounds."""
import sys

import torch

from common import blocks_by_tag, emit, figures, largest_inactive

MiB = 1 << 20
ROUNDS = 20000
empty = len(sys.argv) > 1 and sys.argv[1] == "empty"
weights = [torch.empty(150 * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]  # @weights
for i in range(ROUNDS):
    t = torch.empty(4096 + i % 7 * 512, dtype=torch.uint8, device="cuda")  # @churn
    del t
    if empty and i % 2000 == 1999:
        torch.cuda.empty_cache()
kept = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")  # @kept
error = None
try:
    big = torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")  # @big
except torch.cuda.OutOfMemoryError as e:
    error = str(e).splitlines()[0]
snapshot = torch.cuda.memory_snapshot()
emit(figures(error=error, rounds=ROUNDS,
             by_tag=blocks_by_tag(snapshot, {"weights": weights, "kept": [kept]}),
             largest_free=largest_inactive(snapshot)))
