"""Unseen set: a loop that logs its outputs by keeping them on the device.

A model of 3 x 100 MiB is loaded once. Each iteration runs three layers:
each allocates an output (6, 10 and 14 MiB) and frees the previous
layer's; the last output (14 MiB) is freed, but a 5 MiB "metric" tensor
made from it is appended to `history` and never freed, with a 2 MiB
workspace allocated and freed on the way. The device fills after more
than a hundred iterations. --sleep pauses 0.02 s every 10 iterations.
"""
import ctypes
import sys
import time

CAUSE = "growth"
MiB = 1 << 20
KEPT_PER_STEP = 5 * MiB  # what grows, once per iteration

lib = ctypes.CDLL("libcudart.so.13")


class OOM(Exception):
    pass


def device_buffer(nbytes):
    ptr = ctypes.c_void_p()
    if lib.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(nbytes)) != 0:
        raise OOM(nbytes)
    return ptr


def release(ptr):
    lib.cudaFree(ptr)


class Model:
    def __init__(self):
        self.layers = [device_buffer(100 * MiB) for _ in range(3)]

    def forward(self):
        prev = None
        for size in (6, 10, 14):
            out = device_buffer(size * MiB)
            if prev is not None:
                release(prev)
            prev = out
        return prev


def main():
    pause = "--sleep" in sys.argv
    model = Model()
    history = []
    it = 0
    try:
        while it < 100000:
            it += 1
            out = model.forward()
            ws = device_buffer(2 * MiB)
            history.append(device_buffer(KEPT_PER_STEP))
            release(ws)
            release(out)
            if pause and it % 10 == 0:
                time.sleep(0.02)
    except OOM:
        print(f"iteration {it}: out of memory")
        return 1
    return 0


sys.exit(main())
