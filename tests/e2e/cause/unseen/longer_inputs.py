"""Unseen set: inputs that get longer, an attention-like buffer of
length^2 per step; everything a step allocates is freed at its end.

Embeddings: 2 x 128 MiB, loaded once. Step with length L: a 1 MiB
index buffer, a score matrix of L*L*4 bytes and an output of L*64 KiB,
then all three freed. L grows by 1024 from 1024: at L = 8192 the step
(256 MiB of scores, a 512 MiB output) no longer fits beside the 256 MiB of
embeddings on the 1 GiB device.
"""
import ctypes
import sys

CAUSE = "too_big"
KiB = 1 << 10
MiB = 1 << 20

rt = ctypes.CDLL("libcudart.so.13")


def malloc(n):
    p = ctypes.c_void_p()
    rc = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    return p if rc == 0 else None


def step(length):
    idx = malloc(1 * MiB)
    scores = malloc(length * length * 4)
    if scores is None:
        return False
    out = malloc(length * 64 * KiB)
    if out is None:
        return False
    for p in (out, scores, idx):
        rt.cudaFree(p)
    return True


def main():
    emb = [malloc(128 * MiB), malloc(128 * MiB)]
    assert all(emb)
    length = 1024
    while length < 65536:
        if not step(length):
            print(f"out of memory at length {length}")
            return 1
        length += 1024
    return 0


sys.exit(main())
