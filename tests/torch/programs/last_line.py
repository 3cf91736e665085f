"""The work in main(), as most scripts are written: the model and the
activations are main()'s locals, released as it returns, before Python
exits. Prints torch's figures after main() returned (common.figures),
with those main() read at its last line (memory_allocated(),
memory_reserved(), the tensors allocated) in last_line."""
import torch

from common import emit, figures


def main():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(1024, 1024).cuda() for _ in range(4)]
    x = torch.randn(2048, 1024, device="cuda")
    for layer in layers:
        x = torch.relu(layer(x))
    y = x * 2  # @last
    torch.cuda.synchronize()
    return {"allocated": torch.cuda.memory_allocated(),
            "reserved": torch.cuda.memory_reserved(),
            "tensors": torch.cuda.memory_stats()["allocation.all.current"],
            "kept": y.numel() * 0}


last = main()
emit(figures(last_line=last,
             allocations=torch.cuda.memory_stats()["allocation.all.current"]))
