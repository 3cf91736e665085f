"""A one-time load, then a burst: the weights are loaded once (through a
staging buffer freed after each copy), then many short-lived buffers come
and go; then one buffer too large for what is left is asked for.

Weights: 6 x 100 MiB, each copied through an 8 MiB staging buffer. Burst:
ROUNDS x (allocate 1 MiB .. 16 MiB, free it). Then 512 MiB: with 600 MiB
of weights held, 1 GiB cannot hold it. Nothing grows per repetition.
--sleep pauses 0.05 s after the load and after the burst.
"""
import ctypes
import sys
import time

CAUSE = "too_big"
MiB = 1 << 20
ROUNDS = 2000

cudart = ctypes.CDLL("libcudart.so.13")


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def load():
    weights = []
    for _ in range(6):
        staging = alloc(8 * MiB)
        weights.append(alloc(100 * MiB))
        cudart.cudaFree(staging)
    return weights


def main():
    pause = "--sleep" in sys.argv
    weights = load()
    if pause:
        time.sleep(0.05)
    for i in range(ROUNDS):
        cudart.cudaFree(alloc((1 + i % 16) * MiB))
    if pause:
        time.sleep(0.05)
    try:
        alloc(512 * MiB)
    except MemoryError:
        print("out of memory")
        return 1
    del weights
    return 0


sys.exit(main())
