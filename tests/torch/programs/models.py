"""Models built again and again and kept alive: a list of models, one
more each round, with no mark, no NVTX range, nothing memtrace-specific.
Each build's parameters are 16 MiB tensors (above torch's 10 MiB large
block size, so each is a cudaMalloc of its own). Prints torch's figures
(common.figures) with memory_reserved() after each build, and the
line of build_model's def."""
import torch

from common import emit, figures

BUILDS = 6
reserved_after = []


def build_model():
    model = torch.nn.Sequential(
        torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 2048))
    return model.cuda()


models = []
for build in range(BUILDS):
    models.append(build_model())
    torch.cuda.synchronize()
    reserved_after.append(torch.cuda.memory_reserved())
emit(figures(builds=BUILDS, reserved_after=reserved_after,
             build_model_line=build_model.__code__.co_firstlineno))
