"""One rank of a data-parallel job under torchrun (gloo): each rank trains
its own copy of an MLP on the one CUDA device and averages the gradients
with all_reduce on the host. Rank r's model is wider by r, so the ranks'
figures differ. Writes torch's figures (common.figures, with the rank) as
one JSON line to stdout and to figures-RANK.json in the working
directory."""
import json
import os

import torch
import torch.distributed as dist

from common import emit, figures


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    hidden = 4096 * (rank + 1)
    model = torch.nn.Sequential(torch.nn.Linear(512, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for step in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        norm = torch.zeros(1)
        dist.all_reduce(norm)  # the ranks meet at every step
        opt.step()
    torch.cuda.synchronize()
    dist.barrier()
    fig = figures(rank=rank, world=world)
    with open(f"figures-{rank}.json", "w") as f:
        json.dump(fig, f, sort_keys=True)
    emit(fig)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
