"""A batch raised past the device: each step's activations scale with the
batch and are all freed at the end of the step; nothing is kept.

Weights: 4 x 64 MiB. Step with batch b: 4 layers, each an activation of
b x 4 MiB, then a backward that frees them. b doubles each step from 1;
at b = 64 (4 x 256 MiB beside 256 MiB of weights) the device (1 GiB)
cannot hold the step. --sleep pauses 0.05 s per step.
"""
import ctypes
import sys
import time

CAUSE = "too_big"
MiB = 1 << 20
WEIGHT = 64 * MiB
PER_SAMPLE = 4 * MiB

cudart = ctypes.CDLL("libcudart.so.13")


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def main():
    pause = "--sleep" in sys.argv
    weights = [alloc(WEIGHT) for _ in range(4)]
    batch = 1
    while batch < 4096:
        acts = []
        try:
            for _layer in range(4):
                acts.append(alloc(batch * PER_SAMPLE))
        except MemoryError:
            print(f"out of memory at batch {batch}")
            return 1
        for a in acts:
            cudart.cudaFree(a)
        batch *= 2
        if pause:
            time.sleep(0.05)
    del weights
    return 0


sys.exit(main())
