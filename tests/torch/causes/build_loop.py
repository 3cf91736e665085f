"""A learning-rate search that keeps every model it trains: each round
builds a fresh MLP, trains it a few steps with its own optimizer and
appends it to a list of (lr, model) results, instead of keeping its
state_dict on the host or only its score. The parameters and gradients
of every model stay on the device until a build no longer fits. Prints
torch's figures: memory_allocated() before and after each round, the
round that ran out, the error."""
import torch
import torch.nn as nn

from common import emit, figures

torch.manual_seed(2)


def build_model():
    return nn.Sequential(
        nn.Linear(1024, 4096), nn.ReLU(),
        nn.Linear(4096, 4096), nn.ReLU(),
        nn.Linear(4096, 10),
    ).cuda()


def train(model, lr, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for _ in range(steps):
        x = torch.randn(256, 1024, device="cuda")
        y = torch.randint(0, 10, (256,), device="cuda")
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


results, before, after, error, round_ = [], [], [], None, 0
try:
    for round_, lr in enumerate([0.1 / 2 ** k for k in range(20)]):
        before.append(torch.cuda.memory_allocated())
        model = build_model()  # @build
        score = train(model, lr)
        results.append((lr, model, score))
        after.append(torch.cuda.memory_allocated())
except torch.OutOfMemoryError as e:
    error = str(e)
emit(figures(before=before, after=after, oom_round=round_, error=error))
