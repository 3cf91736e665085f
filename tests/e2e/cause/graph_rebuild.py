"""A CUDA graph kept per rebuild: each rebuild captures a graph whose
cudaMallocAsync of 64 MiB is not freed inside it, instantiates it and
launches it, destroys the graph but keeps the executable graph in a list
and never destroys it. The graph memory of every build stays pinned until
a launch no longer fits the 1 GiB device. --sleep pauses 0.05 s per build.
"""
import ctypes
import sys
import time

CAUSE = "orphaned_graphs"
MiB = 1 << 20
STATE = 64 * MiB

cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaGraphInstantiate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong]


def check(err, what):
    if err:
        raise RuntimeError(f"{what}: error {err}")


def build(stream):
    p = ctypes.c_void_p()
    graph = ctypes.c_void_p()
    exe = ctypes.c_void_p()
    check(cudart.cudaStreamBeginCapture(stream, 0), "begin capture")
    check(cudart.cudaMallocAsync(ctypes.byref(p), ctypes.c_size_t(STATE), stream), "malloc async")
    check(cudart.cudaStreamEndCapture(stream, ctypes.byref(graph)), "end capture")
    check(cudart.cudaGraphInstantiate(ctypes.byref(exe), graph, 0), "instantiate")
    cudart.cudaGraphDestroy(graph)
    return exe


def main():
    pause = "--sleep" in sys.argv
    stream = ctypes.c_void_p()
    check(cudart.cudaStreamCreateWithFlags(ctypes.byref(stream), 1), "stream")
    execs = []
    for n in range(1, 100):
        exe = build(stream)
        execs.append(exe)  # kept by mistake: never cudaGraphExecDestroy'd
        err = cudart.cudaGraphLaunch(exe, stream)
        if err == 0:
            err = cudart.cudaStreamSynchronize(stream)
        if err:
            print(f"build {n}: launch failed: error {err}")
            return 1
        if pause:
            time.sleep(0.05)
    return 0


sys.exit(main())
