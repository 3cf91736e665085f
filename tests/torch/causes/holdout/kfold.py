"""Held out: k-fold cross-validation that keeps each fold's trained model
(to ensemble them later) on the device, inside main(). Each fold builds a
fresh two-layer MLP with Adam, fits it, and appends it to fold_models.
Prints memory_allocated() before and after each fold."""
import torch
from torch import nn

from common import emit, figures

torch.manual_seed(12)
FOLDS = 8


def make_model():
    return nn.Sequential(nn.Linear(512, 2048), nn.Tanh(), nn.Linear(2048, 2048), nn.Tanh(),
                         nn.Linear(2048, 1))


def fit(model, x, y, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for i in range(0, len(x), 256):
            loss = nn.functional.mse_loss(model(x[i:i + 256]).squeeze(1), y[i:i + 256])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return loss.item()


def main():
    x = torch.randn(2048, 512, device="cuda")
    y = torch.randn(2048, device="cuda")
    fold_models, before, after = [], [], []
    for fold in range(FOLDS):
        before.append(torch.cuda.memory_allocated())
        model = make_model().to("cuda")  # @build
        lo, hi = fold * len(x) // FOLDS, (fold + 1) * len(x) // FOLDS
        score = fit(model, torch.cat([x[:lo], x[hi:]]), torch.cat([y[:lo], y[hi:]]))
        fold_models.append(model)
        after.append(torch.cuda.memory_allocated())
        print(f"fold {fold}: loss {score:.3f}")
    emit(figures(before=before, after=after, error=None))


main()
