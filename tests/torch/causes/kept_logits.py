"""A language-model trainer written as people write one: the model built
at the script's level, an epoch trained in a function that collects every
step's logits and targets to compute the epoch's accuracy at its end. The
logits are appended as they are, on the device: each step keeps 39 MiB
more until the 1 GiB device runs out inside a backward. Prints torch's
figures: memory_allocated() before and after each step, the error."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import emit, figures

VOCAB = 5000
torch.manual_seed(11)


class Net(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, dim)
        self.fc1 = nn.Linear(dim, 2048)
        self.fc2 = nn.Linear(2048, VOCAB)

    def forward(self, x):
        h = self.emb(x)
        h = F.relu(self.fc1(h))
        return self.fc2(h)


def train_epoch(model, opt, log, steps=60, batch=32, seq=64):
    all_logits, all_targets = [], []
    for step in range(steps):
        log["before"].append(torch.cuda.memory_allocated())
        x = torch.randint(0, VOCAB, (batch, seq), device="cuda")
        y = torch.randint(0, VOCAB, (batch, seq), device="cuda")
        logits = model(x)  # @forward
        loss = F.cross_entropy(logits.view(-1, VOCAB), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        all_logits.append(logits)
        all_targets.append(y)
        log["after"].append(torch.cuda.memory_allocated())
    acc = (torch.cat(all_logits).argmax(-1) == torch.cat(all_targets)).float().mean()
    return acc.item()


model = Net().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
log = {"before": [], "after": []}
error = None
try:
    print("accuracy", train_epoch(model, opt, log), flush=True)
except torch.OutOfMemoryError as e:
    error = str(e)
emit(figures(before=log["before"], after=log["after"], error=error))
