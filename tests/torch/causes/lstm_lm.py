"""A word-level LSTM language model as in pytorch/examples' word_language_model,
random tokens for the corpus, cuDNN disabled (torch.backends.cudnn.enabled
= False: the LSTM runs as its own cells). The mistake: evaluate() runs
without torch.no_grad() and returns its total loss as a tensor, which the
loop keeps in a history list each epoch, graph and all. Prints torch's
figures: memory_allocated() before and after each epoch."""
import math

import torch
import torch.nn as nn

from common import emit, figures

torch.backends.cudnn.enabled = False
torch.manual_seed(1)
NTOKENS, EMSIZE, NHID, NLAYERS, BPTT, BATCH = 2000, 200, 200, 2, 35, 20


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(NTOKENS, EMSIZE)
        self.rnn = nn.LSTM(EMSIZE, NHID, NLAYERS, dropout=0.2)
        self.decoder = nn.Linear(NHID, NTOKENS)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return self.decoder(output).view(-1, NTOKENS), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(NLAYERS, bsz, NHID), weight.new_zeros(NLAYERS, bsz, NHID))


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


train_data = torch.randint(0, NTOKENS, (BPTT * 6 + 1, BATCH), device="cuda")
val_data = torch.randint(0, NTOKENS, (BPTT * 3 + 1, BATCH), device="cuda")
model = RNNModel().cuda()
criterion = nn.NLLLoss()
lr = 20.0


def train():
    model.train()
    hidden = model.init_hidden(BATCH)
    for i in range(0, train_data.size(0) - 1, BPTT):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(torch.log_softmax(output, dim=-1), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)


def evaluate(source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(BATCH)
    for i in range(0, source.size(0) - 1, BPTT):
        data, targets = get_batch(source, i)
        output, hidden = model(data, hidden)
        total_loss += len(data) * criterion(torch.log_softmax(output, dim=-1), targets)
    return total_loss / (len(source) - 1)


history, before, after = [], [], []
for epoch in range(6):
    before.append(torch.cuda.memory_allocated())
    train()
    val_loss = evaluate(val_data)  # @eval
    history.append(val_loss)
    after.append(torch.cuda.memory_allocated())
    print(f"epoch {epoch} valid ppl {math.exp(min(val_loss.item(), 20)):.2f}")
emit(figures(before=before, after=after, error=None))
