"""Memory by role at an OOM (issue 50): an MLP trained with Adam, its
gradients kept between steps (zero_grad(set_to_none=False)), the batch
doubled each step until the forward runs out. At torch's OOM observer
(called as it gives up), the blocks of memory_snapshot() that the
parameters, the gradients and Adam's state hold, found by their
data_ptr(): the bytes of each role as torch's own allocator cut them;
and memory_allocated(), memory_reserved() then."""
import torch

from common import emit

torch.manual_seed(7)
WIDTH = 1024


def block_sizes():
    """{block address: block size} of the allocated blocks."""
    return {b["address"]: b["size"] for s in torch.cuda.memory_snapshot()
            for b in s["blocks"] if b["state"] == "active_allocated"}


class Observer:
    def __init__(self, model, opt):
        self.model, self.opt, self.seen = model, opt, []
        torch._C._cuda_attach_out_of_memory_observer(self)

    def __call__(self, device, alloc, device_total, device_free):
        blocks = block_sizes()
        params = list(self.model.parameters())
        grads = [p.grad for p in params if p.grad is not None]
        state = [v for st in self.opt.state.values() for v in st.values()
                 if torch.is_tensor(v) and v.is_cuda]
        self.seen.append({
            "parameters": sum(blocks[t.data_ptr()] for t in params),
            "gradients": sum(blocks[t.data_ptr()] for t in grads),
            "optimizer_state": sum(blocks[t.data_ptr()] for t in state),
            "allocated": torch.cuda.memory_allocated(),
            "reserved": torch.cuda.memory_reserved(),
        })


def main():
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH),
                                                      torch.nn.ReLU()) for _ in range(6)]).cuda()
    opt = torch.optim.Adam(model.parameters())
    observer = Observer(model, opt)
    batch, error = 2048, None
    while error is None:
        x = torch.randn(batch, WIDTH, device="cuda")
        try:
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
        except torch.cuda.OutOfMemoryError as e:
            error = str(e).splitlines()[0]
            break
        del loss, x
        batch *= 2
    emit({"error": error, "batch": batch, "at_oom": observer.seen})


if __name__ == "__main__":
    main()
