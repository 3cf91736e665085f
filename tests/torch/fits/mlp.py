"""What fits, the MLP family: a classifier trained with Adam."""
import torch
import torch.nn as nn

from fitrun import run


def build(batch):
    model = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(),
                          nn.Linear(2048, 2048), nn.ReLU(),
                          nn.Linear(2048, 2048), nn.ReLU(),
                          nn.Linear(2048, 10)).cuda()
    return {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=1e-3),
            "loss": nn.CrossEntropyLoss(), "batch": batch}


def step(s):
    x = torch.randn(s["batch"], 784, device="cuda")
    y = torch.randint(0, 10, (s["batch"],), device="cuda")
    s["opt"].zero_grad()
    with s["amp"]():
        loss = s["loss"](s["model"](x), y)
    loss.backward()
    s["opt"].step()


if __name__ == "__main__":
    run(build, step)
