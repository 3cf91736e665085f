"""A failed cudaMalloc that torch recovered from: a freed 600 MiB tensor
left in torch's cache, then a 700 MiB one that fits only once torch has
emptied its cache. Its cudaMalloc fails, torch frees its cached segments,
retries and succeeds: memory_stats() counts a retry and no OOM, the
observer is never called, and the program exits 0."""
import torch

from common import OomObserver, emit, figures

MiB = 1 << 20
observer = OomObserver()
tmp = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")
del tmp  # its segment stays in torch's cache
torch.cuda.synchronize()
reserved_before = torch.cuda.memory_reserved()
big = torch.empty(700 * MiB, dtype=torch.uint8, device="cuda")  # @big
torch.cuda.synchronize()
emit(figures(reserved_before_retry=reserved_before, observer=observer.calls,
             request_bytes=700 * MiB))
