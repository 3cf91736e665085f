"""A training loop with backend:cudaMallocAsync, as `memtrace run
--per-tensor` sets it (the test sets it for the plain run too): an MLP,
AdamW, three steps; every tensor is one cudaMallocAsync and each free
one cudaFreeAsync, from CUDA's stream-ordered pool. With this backend
torch keeps no segments (memory_snapshot() refuses) and counts only
bytes: prints memory_allocated(), max_memory_allocated(),
memory_reserved() (the pool's), mem_get_info(), and the address and
size (untyped_storage().nbytes()) of every tensor the program holds at
the end: parameters, gradients, AdamW's state, the batch."""
import json
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(),
    torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
for step in range(3):
    opt.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    opt.step()
torch.cuda.synchronize()

held = [x] + [p for p in model.parameters()] + [p.grad for p in model.parameters()]
held += [v for state in opt.state.values() for v in state.values() if v.is_cuda]
free, total = torch.cuda.mem_get_info()
json.dump({
    "memory_allocated": torch.cuda.memory_allocated(),
    "max_memory_allocated": torch.cuda.max_memory_allocated(),
    "memory_reserved": torch.cuda.memory_reserved(),
    "device_free": free, "device_total": total,
    "tensors": sorted([t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()] for t in held),
}, sys.stdout, sort_keys=True)
print()
