"""A training loop that keeps one activation per step by mistake.

Weights: 4 x 64 MiB, loaded once. Each step allocates a 16 MiB scratch
buffer and frees it, and a 32 MiB activation that it appends to `kept`
and never frees: on the simulated 1 GiB device it runs out of memory
after about 23 steps. --sleep pauses 0.05 s per step (the cause must not
depend on the timing). Prints the step that failed and exits 1.
"""
import ctypes
import sys
import time

CAUSE = "growth"
MiB = 1 << 20
WEIGHT = 64 * MiB
KEPT_PER_STEP = 32 * MiB  # an activation kept, one per step: what grows
SCRATCH = 16 * MiB

cudart = ctypes.CDLL("libcudart.so.13")


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def free(p):
    cudart.cudaFree(p)


def main():
    pause = "--sleep" in sys.argv
    weights = [alloc(WEIGHT) for _ in range(4)]
    kept = []
    for step in range(1, 1000):
        try:
            scratch = alloc(SCRATCH)
            kept.append(alloc(KEPT_PER_STEP))
            free(scratch)
        except MemoryError:
            print(f"out of memory at step {step}")
            return 1
        if pause:
            time.sleep(0.05)
    del weights
    return 0


sys.exit(main())
