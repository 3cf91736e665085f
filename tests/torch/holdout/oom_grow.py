"""Held out: a batch size raised step by step until torch runs out of
memory on the 1 GiB device. Each step's tensors are dropped before the
next; the OutOfMemoryError is caught and the program stops there.
Prints torch's figures: the batches that fit, what its allocator asked
cudaMalloc for at the error (its OOM observer) and memory_reserved() then."""
import torch

from common import OomObserver, emit, figures

torch.manual_seed(3)
net = torch.nn.Sequential(torch.nn.Linear(1024, 8192), torch.nn.Tanh(),
                          torch.nn.Linear(8192, 1024)).cuda()
observer = OomObserver()
fitted, reserved_at_error = [], None
batch = 1024
while batch < 1 << 20:
    try:
        x = torch.randn(batch, 1024, device="cuda")
        net(x).sum().backward()  # @step
        fitted.append(batch)
        del x
    except torch.cuda.OutOfMemoryError:
        reserved_at_error = torch.cuda.memory_reserved()
        break
    batch *= 2
net.zero_grad(set_to_none=True)
torch.cuda.synchronize()
emit(figures(fitted=fitted, observer=observer.calls, reserved_at_error=reserved_at_error))
