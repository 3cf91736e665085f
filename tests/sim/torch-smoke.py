"""Unmodified PyTorch on the simulated device: run by torch-smoke.sh under
scripts/sim-run. Checks torch's own figures against the simulator's
(cudaMemGetInfo, through torch.cuda.mem_get_info). Kernels run nothing:
only what memory holds by copies is checked, never what kernels compute.

usage: python torch-smoke.py CAPACITY_BYTES
"""
import os
import sys

import torch

capacity = int(sys.argv[1])
MiB = 1 << 20


def check(what, got, want):
    if got != want:
        sys.exit(f"torch-smoke: {what}: got {got!r}, want {want!r}")
    print(f"{what}: {got!r}")


def device_used():
    free, total = torch.cuda.mem_get_info()
    check("device total", total, capacity)
    return total - free


check("is_available", torch.cuda.is_available(), True)
check("device_count", torch.cuda.device_count(), 1)
props = torch.cuda.get_device_properties(0)
check("device name", props.name, "cudasim device 0")
check("capability", (props.major, props.minor), (9, 0))
check("used before any allocation", device_used(), 0)

# One tensor: the caching allocator takes a 20 MiB segment for a 4 MiB
# request (its large-allocation rule), and that is what the device lost.
x = torch.empty(1 << 20, device="cuda")
check("memory_allocated", torch.cuda.memory_allocated(), 4 * MiB)
reserved = torch.cuda.memory_reserved()
check("memory_reserved", reserved, 20 * MiB)
check("device used = memory_reserved", device_used(), reserved)
stats = torch.cuda.memory_stats()
check("memory_stats reserved_bytes.all.current", stats["reserved_bytes.all.current"], reserved)
check("memory_stats num_alloc_retries", stats["num_alloc_retries"], 0)
snapshot = torch.cuda.memory_snapshot()
check("memory_snapshot segments", len(snapshot), 1)
check("memory_snapshot segment size", snapshot[0]["total_size"], reserved)
check("memory_snapshot segment address", snapshot[0]["address"], x.data_ptr())

# Copies are real: what goes in comes back.
t = torch.tensor([1.0, 2.0, 3.0], device="cuda")
check("host-device round trip", t.cpu().tolist(), [1.0, 2.0, 3.0])

# Kernels launch and do nothing: elementwise ops, reductions, .item().
y = x + 1
s = y.sum()
print(f"(x + 1).sum().item() = {s.item()!r} (meaningless: kernels run nothing)")

# A kernel torch compiles at run time (NVRTC, the jiterator), loaded
# with cuModuleLoadData and launched through the driver.
torch.special.i0e(y)
print("jiterator kernel (torch.special.i0e) launched")

# Streams and events.
stream = torch.cuda.Stream()
with torch.cuda.stream(stream):
    z = torch.empty(1 << 10, device="cuda")
    z.mul_(2)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
end.record()
torch.cuda.synchronize()
stream.synchronize()
print(f"elapsed_time = {start.elapsed_time(end)!r}")
check("high priority stream", torch.cuda.Stream(priority=-1).priority, -1)

# Everything freed and the cache emptied: the device has it all back.
del x, y, s, t, z
torch.cuda.synchronize()
torch.cuda.empty_cache()
check("memory_allocated after del", torch.cuda.memory_allocated(), 0)
check("memory_reserved after empty_cache", torch.cuda.memory_reserved(), 0)
check("device used after empty_cache", device_used(), 0)

# More than the device has: torch's own error, and the device unharmed.
try:
    torch.empty(capacity // 4 + 1, dtype=torch.float32, device="cuda")
except torch.cuda.OutOfMemoryError as e:
    print(f"OutOfMemoryError: {str(e).splitlines()[0]}")
else:
    sys.exit("torch-smoke: no OutOfMemoryError for a tensor larger than the device")
check("memory_stats num_ooms", torch.cuda.memory_stats()["num_ooms"], 1)
check("device used after the OOM", device_used(), torch.cuda.memory_reserved())

# cuBLAS, when sim-run found the simulated one built (tests/sim/blas): a
# matmul and a Linear layer. Last, as the cuBLAS handles keep device
# memory of their own (their workspaces). No backward pass: one that ends
# the script races torch's autograd thread against the interpreter's
# exit (docs/frameworks.md).
if "libcublas.so.13" in os.environ.get("LD_PRELOAD", ""):
    a = torch.empty(256, 256, device="cuda")
    check("matmul shape", tuple((a @ a).shape), (256, 256))
    with torch.no_grad():
        out = torch.nn.Linear(64, 32).cuda()(torch.empty(8, 64, device="cuda"))
    check("Linear output shape", tuple(out.shape), (8, 32))
    torch.cuda.synchronize()
else:
    print("no simulated cuBLAS built: matmul not tried")
print("torch-smoke: ok")
