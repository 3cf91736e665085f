"""What fits, the LSTM family: a word-level language model as in
pytorch/examples' word_language_model (embedding, a two-layer LSTM,
dropout, a linear decoder, truncated backpropagation over 35 steps, SGD
with clipping), cuDNN off (the LSTM runs as its own cells)."""
import torch
import torch.nn as nn

from fitrun import run

torch.backends.cudnn.enabled = False
NTOKENS, EMSIZE, NHID, NLAYERS, BPTT = 10000, 256, 512, 2, 35


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(NTOKENS, EMSIZE)
        self.rnn = nn.LSTM(EMSIZE, NHID, NLAYERS, dropout=0.2)
        self.decoder = nn.Linear(NHID, NTOKENS)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(out)).view(-1, NTOKENS), hidden


def build(batch):
    model = RNNModel().cuda()
    w = next(model.parameters())
    hidden = (w.new_zeros(NLAYERS, batch, NHID), w.new_zeros(NLAYERS, batch, NHID))
    return {"model": model, "batch": batch, "hidden": hidden,
            "opt": torch.optim.SGD(model.parameters(), lr=20), "loss": nn.CrossEntropyLoss()}


def step(s):
    data = torch.randint(0, NTOKENS, (BPTT + 1, s["batch"]), device="cuda")
    s["hidden"] = tuple(h.detach() for h in s["hidden"])
    s["model"].zero_grad()
    with s["amp"]():
        out, s["hidden"] = s["model"](data[:-1], s["hidden"])
        loss = s["loss"](out, data[1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(s["model"].parameters(), 0.25)
    s["opt"].step()


if __name__ == "__main__":
    run(build, step)
