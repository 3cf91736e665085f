"""An OOM with the cache on, then the process killed (SIGKILL) before it
can exit: a model's tensors, a freed activation left in the cache, a
request too big for the rest of the 1 GiB device. Prints torch's figures
(memory_allocated(), memory_reserved(), the blocks of memory_snapshot(),
what the OOM observer saw) right after the OutOfMemoryError, then kills
itself: nothing of memtrace's runs at exit."""
import os
import signal

import torch

from common import OomObserver, blocks_by_tag, emit, figures, largest_inactive

MiB = 1 << 20
weights = [torch.empty(64 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]  # @weights
acts = torch.empty(150 * MiB, dtype=torch.uint8, device="cuda")  # @acts
scratch = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")  # @scratch
del scratch
observer = OomObserver()
try:
    huge = torch.empty(900 * MiB + 1000, dtype=torch.uint8, device="cuda")  # @huge
except torch.cuda.OutOfMemoryError:
    pass
snapshot = torch.cuda.memory_snapshot()
blocks = sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                for s in snapshot for b in s["blocks"])
by_tag = blocks_by_tag(snapshot, {"weights": weights, "acts": [acts]})
emit(figures(blocks=blocks, observer=observer.calls, request_bytes=900 * MiB + 1000,
             by_tag=by_tag, largest_free=largest_inactive(snapshot)))
os.kill(os.getpid(), signal.SIGKILL)
