"""What fits, the transformer family: a small causal language model
(token and position embeddings, nn.TransformerEncoder with a causal mask,
a linear head), AdamW, sequences of 128 random tokens."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from fitrun import run

VOCAB, D, HEADS, LAYERS, SEQ = 4096, 256, 4, 4, 128


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(SEQ, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, 4 * D, dropout=0.1, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, idx):
        t = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        return self.head(self.blocks(x, mask=mask, is_causal=True))


def build(batch):
    model = LM().cuda()
    return {"model": model, "opt": torch.optim.AdamW(model.parameters(), lr=3e-4),
            "batch": batch}


def step(s):
    idx = torch.randint(0, VOCAB, (s["batch"], SEQ + 1), device="cuda")
    with s["amp"]():
        logits = s["model"](idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), idx[:, 1:].reshape(-1))
    s["opt"].zero_grad(set_to_none=True)
    loss.backward()
    s["opt"].step()


if __name__ == "__main__":
    run(build, step)
