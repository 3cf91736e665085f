"""A framework's arena, then one request larger than the whole device.

One allocation of 80% of the device among the first (as TensorFlow or JAX
preallocate), a buffer beside it, then 2 GiB on the simulated 1 GiB
device. The arena is there, but no arena, pieces or memory kept explain
the failure: the request could never fit. --sleep pauses 0.05 s after
each allocation. Prints "out of memory" and exits 1.
"""
import ctypes
import sys
import time

CAUSE = "too_big"
MiB = 1 << 20
ARENA = 820 * MiB
REQUEST = 2048 * MiB

cudart = ctypes.CDLL("libcudart.so.13")


def alloc(n):
    p = ctypes.c_void_p()
    err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    if err:
        raise MemoryError(err)
    return p


def main():
    pause = "--sleep" in sys.argv
    held = []
    try:
        for size in (ARENA, 16 * MiB, REQUEST):
            held.append(alloc(size))
            if pause:
                time.sleep(0.05)
    except MemoryError:
        print("out of memory")
        return 1
    return 0


sys.exit(main())
