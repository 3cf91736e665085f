"""An out-of-memory error: a model on the device (a training step run, so
both cuBLAS handles exist), a freed activation left in torch's cache, then
a tensor too big for what is left of the 1 GiB device. Catches
torch.cuda.OutOfMemoryError and prints torch's figures: memory_reserved()
before the request and after the error, what the allocator asked
cudaMalloc for (its OOM observer), the size its message names."""
import torch

from common import OomObserver, emit, figures, tried_to_allocate

MiB = 1 << 20
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(2048, 4096), torch.nn.GELU(),
    torch.nn.Linear(4096, 2048)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(512, 2048, device="cuda")
loss = model(x).square().mean()
loss.backward()
opt.step()
# A 100 MiB temporary, freed: its segment stays in torch's cache.
tmp = torch.empty(100 * MiB // 4, device="cuda")
del tmp
torch.cuda.synchronize()

observer = OomObserver()
reserved_before = torch.cuda.memory_reserved()
# 800 MiB and 1000 bytes: torch rounds what it asks cudaMalloc for.
try:
    big = torch.empty(800 * MiB + 1000, dtype=torch.uint8, device="cuda")  # @big
    message = None
except torch.cuda.OutOfMemoryError as e:
    message = str(e)
reserved_after = torch.cuda.memory_reserved()
torch.cuda.synchronize()
emit(figures(reserved_before_oom=reserved_before,
             reserved_after_oom=reserved_after,
             observer=observer.calls,
             tried_to_allocate=message and tried_to_allocate(message),
             request_bytes=800 * MiB + 1000))
