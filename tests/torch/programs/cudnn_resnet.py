"""A small ResNet-style CNN trained with cuDNN on (torch's defaults:
torch.backends.cudnn.enabled, its v8 graph API for convolutions): Conv2d,
BatchNorm2d, ReLU, MaxPool2d, a residual block, a Linear head, SGD, three
steps on 8 images of 3x32x32. Prints torch's figures (common.figures), what the device lost while it
ran (cudaMemGetInfo, the simulator's counter),
with what the simulated cuDNN's rule (tests/sim/README.md, "cuDNN") makes
the first convolution's forward workspace: the largest of its x, w and y
in bytes, rounded up to 256."""
import torch
import torch.nn as nn

from common import emit, figures

assert torch.backends.cudnn.enabled and torch.backends.cudnn.is_available()
free, total = torch.cuda.mem_get_info()  # the device's, before the program allocates
used_before = total - free


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


torch.manual_seed(0)
N, C, HW = 8, 16, 32
model = nn.Sequential(
    nn.Conv2d(3, C, 3, padding=1, bias=False), nn.BatchNorm2d(C), nn.ReLU(),
    Block(C), nn.MaxPool2d(2), Block(C), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Linear(C, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(N, 3, HW, HW, device="cuda")
y = torch.randint(0, 10, (N,), device="cuda")
for step in range(3):
    opt.zero_grad(set_to_none=True)
    out = model(x)  # @forward
    loss = nn.functional.cross_entropy(out, y)
    loss.backward()  # @backward
    opt.step()
torch.cuda.synchronize()
first = max(N * 3 * HW * HW, C * 3 * 3 * 3, N * C * HW * HW) * 4
free, total = torch.cuda.mem_get_info()
emit(figures(steps=3, device_used=total - free - used_before, max_memory_allocated=torch.cuda.max_memory_allocated(),
             conv1_workspace=(first + 255) // 256 * 256))
