"""An evaluation loop under a caching allocator: outputs kept by mistake,
and no device memory ever given back.

The program keeps its own cache, as PyTorch's allocator does: a step's
16 MiB hidden buffer, once allocated, is reused by every later step and
never freed. Each step's 24 MiB output is new memory, appended to
`outputs` and never freed either. So the trace has no free at all, and no
round boundary. --steps N stops after N steps (no OOM); by default it
runs until the simulated 1 GiB device is full, prints the step that
failed and exits 1. --sleep pauses 0.05 s per step.

At the OOM the events cannot tell outputs kept call after call from the
equal parts of a model loaded until they do not fit (the failing request
is one more of the same): the cause is too_big, with growth listed after
it. Without an OOM, what grew over the run is the outputs: growth.
"""
import ctypes
import sys
import time

CAUSE = "too_big"
MiB = 1 << 20
HIDDEN = 16 * MiB
KEPT_PER_STEP = 24 * MiB  # one output kept per step

cudart = ctypes.CDLL("libcudart.so.13")
cache = {}


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def cached(n):
    if n not in cache:
        cache[n] = alloc(n)
    return cache[n]


def evaluate():
    cached(HIDDEN)
    return alloc(KEPT_PER_STEP)


def main():
    pause = "--sleep" in sys.argv
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 1000
    outputs = []
    for step in range(1, steps + 1):
        try:
            outputs.append(evaluate())
        except MemoryError:
            print(f"out of memory at step {step}")
            return 1
        if pause:
            time.sleep(0.05)
    print(f"kept {len(outputs)} outputs")
    return 0


sys.exit(main())
