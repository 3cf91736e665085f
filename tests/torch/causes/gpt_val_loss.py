"""A small GPT trained on random tokens, the way minGPT-style trainers are
written, with one mistake: the validation loss is computed without
torch.no_grad() and appended to a list with its graph, so each step keeps
the validation forward's activations until the device runs out. Prints
torch's figures: memory_allocated() before and after each step, the step
that ran out, the error."""
import sys

import torch
import torch.nn as nn
from torch.nn import functional as F

from common import emit, figures

torch.manual_seed(0)
VOCAB, CTX, WIDTH, HEADS, LAYERS, BATCH = 512, 64, 128, 4, 4, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, HEADS, batch_first=True)
        self.ln2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(),
                                 nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(torch.zeros(1, CTX, WIDTH))
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, idx, targets):
        x = self.blocks(self.tok(idx) + self.pos[:, :idx.shape[1]])
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def get_batch():
    x = torch.randint(0, VOCAB, (BATCH, CTX), device="cuda")
    return x, torch.roll(x, -1, dims=1)


model = GPT().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
val_losses, before, after, error, step = [], [], [], None, 0
try:
    for step in range(200):
        before.append(torch.cuda.memory_allocated())
        x, y = get_batch()
        loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        vx, vy = get_batch()
        val_loss = model(vx, vy)  # @val
        val_losses.append(val_loss)
        after.append(torch.cuda.memory_allocated())
except torch.OutOfMemoryError as e:
    error = str(e)
print(f"ran out of memory at step {step}", file=sys.stderr)
emit(figures(before=before, after=after, oom_step=step, error=error))
