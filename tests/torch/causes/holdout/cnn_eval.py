"""Held out: a small CNN classifier on CIFAR-sized random images, cuDNN
disabled. Each epoch trains, then evaluates collecting every batch's
logits in a list to compute accuracy at the end, without
torch.no_grad(): each evaluation batch keeps its activations. Prints
memory_allocated() before and after each epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import emit, figures

torch.backends.cudnn.enabled = False
torch.manual_seed(11)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def batches(n, size=128):
    for _ in range(n):
        yield (torch.randn(size, 3, 32, 32, device="cuda"),
               torch.randint(0, 10, (size,), device="cuda"))


def main():
    model = Net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    before, after, outputs = [], [], []
    for epoch in range(5):
        before.append(torch.cuda.memory_allocated())
        model.train()
        for x, y in batches(4):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
        model.eval()
        for x, y in batches(2):
            outputs.append((model(x), y))  # @eval
        correct = sum((o.argmax(1) == t).sum().item() for o, t in outputs)
        after.append(torch.cuda.memory_allocated())
        print(f"epoch {epoch}: accuracy {correct / (len(outputs) * 128):.3f}")
    emit(figures(before=before, after=after, error=None))


if __name__ == "__main__":
    main()
