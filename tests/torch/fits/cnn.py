"""What fits, the CNN family: a small ResNet-style network on 3x64x64
images, cuDNN on (the simulated cuDNN's workspaces), BatchNorm, SGD
with momentum."""
import torch
import torch.nn as nn

from fitrun import run


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


def build(batch):
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
        Block(64), nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),
        Block(128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 100)).cuda()
    return {"model": model, "batch": batch, "loss": nn.CrossEntropyLoss(),
            "opt": torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)}


def step(s):
    x = torch.randn(s["batch"], 3, 64, 64, device="cuda")
    y = torch.randint(0, 100, (s["batch"],), device="cuda")
    s["opt"].zero_grad()
    with s["amp"]():
        loss = s["loss"](s["model"](x), y)
    loss.backward()
    s["opt"].step()


if __name__ == "__main__":
    run(build, step)
