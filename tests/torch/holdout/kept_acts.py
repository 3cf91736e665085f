"""Held out (tensor view): a model's activations kept in a list. A stack of
linear layers run on a batch, each layer's output appended to a list that
outlives the step (as a debugging hook might), the input and weights
alive too. Prints torch's figures at the end: memory_allocated(),
memory_reserved(), every block of memory_snapshot(), the blocks the
activations and the input hold, the largest free block."""
import torch

from common import blocks_by_tag, emit, figures, largest_inactive

torch.manual_seed(4)
layers = [torch.nn.Linear(768, 768).cuda() for _ in range(6)]
acts = []


def forward(x):
    for layer in layers:
        x = torch.relu(layer(x))  # @act
        acts.append(x)
    return x


with torch.no_grad():
    batch = torch.randn(640, 768, device="cuda")  # @input
    forward(batch)
    forward(batch[:320])
torch.cuda.synchronize()
snapshot = torch.cuda.memory_snapshot()
blocks = sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                for s in snapshot for b in s["blocks"])
emit(figures(blocks=blocks, by_tag=blocks_by_tag(snapshot, {"act": acts, "input": [batch]}),
             largest_free=largest_inactive(snapshot),
             allocations=torch.cuda.memory_stats()["allocation.all.current"]))
