"""Held out: a small transformer encoder (embedding, two layers with
attention, dropout and layer norm, a classifier head), Adam, four steps
with token batches of two lengths. Prints torch's figures at the end."""
import torch

from common import emit, figures

torch.manual_seed(1)
vocab, width = 5000, 256
embed = torch.nn.Embedding(vocab, width)
layer = torch.nn.TransformerEncoderLayer(width, nhead=8, dim_feedforward=1024,
                                         batch_first=True)
encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
head = torch.nn.Linear(width, 7)
model = torch.nn.ModuleDict({"embed": embed, "encoder": encoder, "head": head}).cuda()
opt = torch.optim.Adam(model.parameters(), lr=3e-4)
for step, length in enumerate((64, 128, 64, 128)):
    tokens = torch.randint(0, vocab, (32, length), device="cuda")
    labels = torch.randint(0, 7, (32,), device="cuda")
    hidden = model["encoder"](model["embed"](tokens))
    loss = torch.nn.functional.cross_entropy(model["head"](hidden.mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
emit(figures(steps=4))
