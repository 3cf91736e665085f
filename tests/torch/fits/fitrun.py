"""The frame of the what-fits programs (issue 50): the batch size from
the command line (--batch), a few training steps; prints, as one JSON
object, whether the program ran out of memory and torch's own
max_memory_allocated() and max_memory_reserved(): the truth that
tests/torch/test_what_fits.py checks memtrace's prediction against."""
import argparse
import json
import sys

import torch


def run(build, step, steps=3):
    """build(batch) -> state; step(state) trains one step."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, required=True)
    args = ap.parse_args()
    torch.manual_seed(0)
    oom = False
    try:
        state = build(args.batch)
        for _ in range(steps):
            step(state)
        torch.cuda.synchronize()
    except torch.cuda.OutOfMemoryError:
        oom = True
    json.dump({"oom": oom, "max_memory_allocated": torch.cuda.max_memory_allocated(),
               "max_memory_reserved": torch.cuda.max_memory_reserved()}, sys.stdout)
    print()
