"""One allocation helper called from two places with different sizes: a
few small weights, then 64 MiB activations until the device is full.
Prints, for each caller, the addresses it was given (one JSON line), so
that a test can weigh them with the simulator's ledger. Lines the test
looks for carry a tag comment ("# @" and a name)."""
import ctypes
import json

cudart = ctypes.CDLL("libcudart.so.13")
MiB = 1 << 20
given = {"weights": [], "activations": []}


def alloc(n, who):
    p = ctypes.c_void_p()
    rc = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))  # @alloc
    if rc != 0:
        raise MemoryError("cudaMalloc of %d bytes failed (%d)" % (n, rc))
    given[who].append(p.value)


def weights():
    for _ in range(3):
        alloc(8 * MiB, "weights")  # @weights


def activations():
    while True:
        alloc(64 * MiB, "activations")  # @activations


weights()
try:
    activations()
except MemoryError as e:
    print(e)
print(json.dumps(given))
