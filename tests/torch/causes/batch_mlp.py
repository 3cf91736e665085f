"""A trainer that doubles its batch until the device runs out, as people
look for the largest batch that fits: an 8-block MLP with Adam, one step
per batch size. The step that fails runs out in its forward, after
torch's allocator flushed its cache and retried (the step's activations
then look "held from before" to a rule that counts from the last memory
given back). Prints torch's figures: memory_allocated() before the
failing step's forward and at the OOM (torch's OOM observer, called just
before it raises), and the bytes of the tensor it asked for."""
import torch

from common import emit

torch.manual_seed(5)
WIDTH = 1024


class OomAllocated:
    """memory_allocated() when torch gives up (its OOM observer)."""

    def __init__(self):
        self.calls = []
        torch._C._cuda_attach_out_of_memory_observer(self)

    def __call__(self, device, alloc, device_total, device_free):
        self.calls.append(torch.cuda.memory_allocated())


def main():
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH),
                                                      torch.nn.GELU()) for _ in range(8)]).cuda()
    opt = torch.optim.Adam(model.parameters())
    observer = OomAllocated()
    batch, before, error = 1024, None, None
    while error is None:
        x = torch.randn(batch, WIDTH, device="cuda")
        before = torch.cuda.memory_allocated()
        try:
            loss = model(x).square().mean()  # @forward
            loss.backward()
            opt.step()
            opt.zero_grad()
        except torch.cuda.OutOfMemoryError as e:
            error = str(e).splitlines()[0]
            break
        del loss, x
        batch *= 2
    emit({"error": error, "batch": batch, "before": before, "at_oom": observer.calls,
          "request": batch * WIDTH * 4})


if __name__ == "__main__":
    main()
