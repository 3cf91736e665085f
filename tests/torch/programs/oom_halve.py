"""Out of memory, and carrying on: a training step with a batch too big for
the 1 GiB device; the program catches torch.cuda.OutOfMemoryError, halves
its batch and tries again until a step fits, then trains three more steps
and exits 0. Prints torch's figures: the batches tried, what its
allocator asked cudaMalloc for at each OOM (its OOM observer), and the
figures at the end."""
import torch

from common import OomObserver, emit, figures

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.GELU(),
    torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
observer = OomObserver()


def step(batch):
    x = torch.randn(batch, 1024, device="cuda")
    opt.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    opt.step()


batch = 65536
tried = []
while True:
    tried.append(batch)
    try:
        step(batch)
        break
    except torch.cuda.OutOfMemoryError:
        batch //= 2
for _ in range(3):
    step(batch)
torch.cuda.synchronize()
emit(figures(batches=tried, observer=observer.calls))
