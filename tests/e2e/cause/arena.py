"""A framework's arena: one allocation of 80% of the device among the
first (as TensorFlow or JAX preallocate), then the program's own buffers
beside it until one does not fit. Nothing grows per repetition; the
arena took the device. --sleep pauses 0.05 s per buffer.
"""
import ctypes
import sys
import time

CAUSE = "preallocated"
MiB = 1 << 20
ARENA = 820 * MiB

cudart = ctypes.CDLL("libcudart.so.13")


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def main():
    pause = "--sleep" in sys.argv
    arena = alloc(ARENA)
    buffers = []
    try:
        for size in (32, 64, 128):
            buffers.append(alloc(size * MiB))
            if pause:
                time.sleep(0.05)
    except MemoryError:
        print("out of memory")
        return 1
    del arena
    return 0


sys.exit(main())
