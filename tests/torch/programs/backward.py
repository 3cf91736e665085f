"""A stack of Linear layers on the device, its loss's backward on its own
line (tagged "# @backward"): the gradients are made there, on autograd's
device thread, which has no Python state, while this thread waits in
backward(). Prints torch's figures with what memory_stats() counts of
the allocations made during backward (how many, their requested bytes)."""
import os

import torch

from common import emit, figures

torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(4)]).cuda()
x = torch.randn(64, 512, device="cuda")
loss = model(x).square().sum()
torch.cuda.synchronize()
before = torch.cuda.memory_stats()
loss.backward()  # @backward
torch.cuda.synchronize()
after = torch.cuda.memory_stats()


def made(key):
    return after[key + ".all.allocated"] - before[key + ".all.allocated"]


emit(figures(backward_allocations=made("allocation"),
             backward_requested_bytes=made("requested_bytes")))
# Leave without Python's finalization: a script whose last act is a
# backward pass on the simulated device sometimes aborts at exit, plain
# as under memtrace (docs/frameworks.md, "What works under sim-run").
os._exit(0)
