"""A DataLoader with two forked workers and pin_memory=True feeding a
small training loop: the batches come back pinned (cudaHostAlloc of
torch's host allocator) and are copied to the device. Prints torch's
figures (common.figures) with its pinned host memory stats
(torch.cuda.host_memory_stats()) and how many batches were pinned."""
import torch
import torch.utils.data

from common import emit, figures


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((1024,), float(i)), i % 10


def main():
    torch.manual_seed(0)
    loader = torch.utils.data.DataLoader(Squares(), batch_size=16, num_workers=2,
                                         pin_memory=True, multiprocessing_context="fork")
    model = torch.nn.Linear(1024, 10).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = pinned = 0
    for epoch in range(2):
        for x, y in loader:
            pinned += x.is_pinned() and y.is_pinned()
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            batches += 1
    torch.cuda.synchronize()
    host = torch.cuda.host_memory_stats()
    emit(figures(batches=batches, pinned_batches=pinned,
                 host={k: v for k, v in host.items() if "current" in k or "peak" in k}))


if __name__ == "__main__":
    main()
