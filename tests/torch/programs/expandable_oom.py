"""An out-of-memory error with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
(the test sets it). Weights made in a function, a small tensor and
activations, each on its own line, then a request that the rest of the
1 GiB device cannot map. torch creates the physical chunks the request
needs one by one (cuMemCreate), fails at the first that does not fit,
releases those it made, warns ("memory mapping failed with OOM ... while
trying to map N bytes (free: F, total: T)"), frees its cache, tries once
more and raises OutOfMemoryError. Prints torch's figures: how much
memory_reserved() grew on each of the program's lines (the LINES
markers, found by the test), reserved before and after the OOM, its OOM
observer's calls."""
import torch

from common import OomObserver, emit, figures

MiB = 1 << 20
grew = {}


def reserved_growth(label, make):
    before = torch.cuda.memory_reserved()
    made = make()
    grew[label] = torch.cuda.memory_reserved() - before
    return made


def build_weights():
    return [torch.empty(64 * MiB, dtype=torch.uint8, device="cuda") for _ in range(4)]  # LINE weights


weights = reserved_growth("weights", build_weights)
small = reserved_growth("small", lambda: torch.empty(1000, device="cuda"))  # LINE small
acts = reserved_growth("acts", lambda: torch.empty(300 * MiB, dtype=torch.uint8, device="cuda"))  # LINE acts
torch.cuda.synchronize()

observer = OomObserver()
reserved_before = torch.cuda.memory_reserved()
try:
    big = torch.empty(600 * MiB, dtype=torch.uint8, device="cuda")  # LINE big
    raised = None
except torch.cuda.OutOfMemoryError as e:
    raised = type(e).__name__
reserved_after = torch.cuda.memory_reserved()
emit(figures(grew=grew, reserved_before_oom=reserved_before, reserved_after_oom=reserved_after,
             observer=observer.calls, raised=raised))
