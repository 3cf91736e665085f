"""A VAE on 28x28 images as in pytorch/examples' vae, random pixels for
MNIST. The mistake: to look at reconstructions later, each step appends
recon[:8] to a list; the slice is a view, so each keeps the whole batch's
reconstruction on the device (and, not detached, its grad_fn). Prints
torch's figures: memory_allocated() before and after each step."""
import torch
import torch.nn as nn
from torch.nn import functional as F

from common import emit, figures

torch.manual_seed(3)
BATCH = 512


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


model = VAE().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
samples, before, after = [], [], []
for step in range(40):
    before.append(torch.cuda.memory_allocated())
    data = torch.rand(BATCH, 1, 28, 28, device="cuda")
    optimizer.zero_grad()
    recon, mu, logvar = model(data)  # @forward
    loss = loss_function(recon, data, mu, logvar)
    loss.backward()
    optimizer.step()
    samples.append(recon[:8])
    after.append(torch.cuda.memory_allocated())
emit(figures(before=before, after=after, error=None))
