"""A training loop with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
(the test sets it): an MLP, AdamW, five steps. torch reserves address
space (cuMemAddressReserve) and maps physical memory into it a chunk at
a time (cuMemCreate, cuMemMap: 20 MiB for the large pool, 2 MiB for the
small one), reaching the driver through cudaGetDriverEntryPointByVersion.
Prints torch's figures (common.figures) at the end, with each segment's
pool from memory_snapshot()."""
import torch

from common import emit, figures

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.LayerNorm(4096),
    torch.nn.Linear(4096, 4096), torch.nn.GELU(),
    torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device="cuda")
y = torch.randint(0, 10, (256,), device="cuda")
for step in range(5):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
snapshot = torch.cuda.memory_snapshot()
emit(figures(steps=5,
             expandable=[s["is_expandable"] for s in snapshot],
             segment_pools=sorted([s["address"], s["segment_type"]] for s in snapshot)))
