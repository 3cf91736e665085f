"""Unseen set: a CUDA graph captured per input shape and cached in a dict
that is never cleared; each graph's capture allocates a workspace that it
frees inside the graph and a 48 MiB output that it does not. Each exec
is kept (never destroyed), so its output stays pinned; the shapes keep
coming until a launch no longer fits the device.
"""
import ctypes
import sys

CAUSE = "orphaned_graphs"
MiB = 1 << 20

cu = ctypes.CDLL("libcudart.so.13")
cu.cudaGraphInstantiate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong]


def capture(stream, shape):
    ws = ctypes.c_void_p()
    out = ctypes.c_void_p()
    g = ctypes.c_void_p()
    e = ctypes.c_void_p()
    assert cu.cudaStreamBeginCapture(stream, 0) == 0
    assert cu.cudaMallocAsync(ctypes.byref(ws), ctypes.c_size_t(shape * MiB), stream) == 0
    assert cu.cudaMallocAsync(ctypes.byref(out), ctypes.c_size_t(48 * MiB), stream) == 0
    assert cu.cudaFreeAsync(ws, stream) == 0
    assert cu.cudaStreamEndCapture(stream, ctypes.byref(g)) == 0
    assert cu.cudaGraphInstantiate(ctypes.byref(e), g, 0) == 0
    return e


def main():
    s = ctypes.c_void_p()
    assert cu.cudaStreamCreateWithFlags(ctypes.byref(s), 1) == 0
    cache = {}
    for shape in range(1, 200):
        cache[shape] = capture(s, shape)
        rc = cu.cudaGraphLaunch(cache[shape], s) or cu.cudaStreamSynchronize(s)
        if rc:
            print(f"shape {shape}: launch failed ({rc})")
            return 1
    return 0


sys.exit(main())
