"""An out-of-memory error with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (the test
sets it): torch's allocator keeps nothing, each tensor is one cudaMalloc
of its own size and each free one cudaFree. Weights made in a function,
a model's parameters, a batch and an activation, each made on its own
line (the LINES markers, found by the test), then a request too big for
what is left of the 1 GiB device. With no caching torch raises
torch.AcceleratorError ("CUDA error: out of memory"), not
OutOfMemoryError; the program catches it and carries on. Prints what it
holds, by line: each live tensor's untyped_storage().nbytes(), and the
size it asked for, and the size of a tensor made after the error."""
import json
import sys

import torch

MiB = 1 << 20
held = {}


def keep(label, *tensors):
    held.setdefault(label, []).extend(tensors)
    return tensors[0] if len(tensors) == 1 else tensors


def build_weights():
    return [torch.empty(96 * MiB + 4000, dtype=torch.uint8, device="cuda") for _ in range(3)]  # LINE weights


keep("weights", *build_weights())
model = torch.nn.Linear(2048, 4096).to("cuda")  # LINE model
keep("model", *model.parameters())
x = keep("batch", torch.empty(512, 2048, device="cuda"))  # LINE batch
h = keep("activation", torch.empty(512 * 4096 * 60, device="cuda"))  # LINE activation
torch.cuda.synchronize()
request = 700 * MiB + 3
try:
    big = torch.empty(request, dtype=torch.uint8, device="cuda")  # LINE big
    raised = None
except RuntimeError as e:
    raised = type(e).__name__
torch.cuda.synchronize()
after = torch.empty(1000, device="cuda")  # the device works on
after_bytes = after.untyped_storage().nbytes()
del after
json.dump({
    "held": {label: sorted(t.untyped_storage().nbytes() for t in ts) for label, ts in held.items()},
    "request_bytes": request,
    "raised": raised,
    "after_bytes": after_bytes,
    "memory_allocated": torch.cuda.memory_allocated(),
    "memory_reserved": torch.cuda.memory_reserved(),
}, sys.stdout, sort_keys=True)
print()
