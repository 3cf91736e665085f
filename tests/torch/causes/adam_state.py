"""A model too big for its optimizer: five 4096-wide Linear layers
(320 MiB of float32 parameters) trained with Adam on a 1 GiB device. The
first backward fills the gradients (320 MiB more); the first
optimizer.step() then makes Adam's two moments per parameter and runs out
there, with a batch of 64: no smaller batch would fit. Prints torch's
figures at its OOM observer: the blocks memory_snapshot() gives the
parameters, their .grad and Adam's state (by storage), and the bytes of
the tensor it asked for."""
import torch

from common import emit

torch.manual_seed(0)


class Observer:
    def __init__(self, model, opt):
        self.model, self.opt, self.seen = model, opt, []
        torch._C._cuda_attach_out_of_memory_observer(self)

    def __call__(self, device, alloc, device_total, device_free):
        blocks = {b["address"]: b["size"] for s in torch.cuda.memory_snapshot()
                  for b in s["blocks"] if b["state"] == "active_allocated"}

        def held(tensors):
            return sum(blocks[p] for p in {t.untyped_storage().data_ptr() for t in tensors})

        params = list(self.model.parameters())
        self.seen.append({
            "parameters": held(params),
            "gradients": held(p.grad for p in params if p.grad is not None),
            "optimizer_state": held(v for st in self.opt.state.values() for v in st.values()
                                    if torch.is_tensor(v) and v.is_cuda),
            "alloc": alloc,
        })


def main():
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(5)]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    observer = Observer(model, opt)
    error = None
    for _ in range(3):
        x = torch.randn(64, 4096, device="cuda")
        try:
            loss = model(x).square().mean()
            loss.backward()
            opt.step()  # @step
            opt.zero_grad()
        except torch.cuda.OutOfMemoryError as e:
            error = str(e).splitlines()[0]
            break
    emit({"error": error, "at_oom": observer.seen})


if __name__ == "__main__":
    main()
