"""What fits, the VAE family: pytorch/examples' VAE on 28x28 images
(random pixels for MNIST), Adam, the reconstruction and KL loss."""
import torch
import torch.nn as nn
from torch.nn import functional as F

from fitrun import run


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def forward(self, x):
        h1 = F.relu(self.fc1(x.view(-1, 784)))
        mu, logvar = self.fc21(h1), self.fc22(h1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


def build(batch):
    model = VAE().cuda()
    return {"model": model, "batch": batch, "opt": torch.optim.Adam(model.parameters(), lr=1e-3)}


def step(s):
    x = torch.rand(s["batch"], 1, 28, 28, device="cuda")
    s["opt"].zero_grad()
    with s["amp"]():  # binary_cross_entropy is not allowed under autocast
        recon, mu, logvar = s["model"](x)
    bce = F.binary_cross_entropy(recon.float(), x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    (bce + kld).backward()
    s["opt"].step()


if __name__ == "__main__":
    run(build, step)
