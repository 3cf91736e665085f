"""Unseen set: ten 40 MiB buffers loaded in one go (no staging), then an
inference burst of 3000 requests that each allocate and free a buffer of
256 KiB .. 8 MiB, keeping nothing; then a 700 MiB buffer, which does not
fit beside the 400 MiB loaded. Nothing grows; the one-time load is no
growth.
"""
import ctypes
import sys

CAUSE = "too_big"
MiB = 1 << 20

cuda = ctypes.CDLL("libcudart.so.13")


def get(n):
    p = ctypes.c_void_p()
    return p if cuda.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n)) == 0 else None


def serve(requests):
    for r in range(requests):
        buf = get((256 << 10) * (1 + r % 32))
        cuda.cudaFree(buf)


def main():
    params = [get(40 * MiB) for _ in range(10)]
    serve(3000)
    big = get(700 * MiB)
    if big is None:
        print("could not allocate the big buffer")
        return 1
    del params
    return 0


sys.exit(main())
