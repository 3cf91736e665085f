"""Short GPU workloads for tests/gpu/run.sh, one per argument. Each is a
few seconds at most; each prints one line and exits 0, or exits 77 when
its framework is not installed. The allocator settings
(PYTORCH_CUDA_ALLOC_CONF, XLA_PYTHON_CLIENT_*) come from run.sh."""
import sys

MiB = 1 << 20


def need(module):
    try:
        return __import__(module)
    except ImportError:
        print(f"{module} is not installed")
        sys.exit(77)


def torch_alloc():
    """Tensors of several sizes, some freed, a matmul, the cache emptied."""
    torch = need("torch")
    keep = [torch.empty(n, dtype=torch.uint8, device="cuda") for n in (MiB, 3 * MiB, 20 * MiB)]
    a = torch.randn(2048, 2048, device="cuda")
    b = a @ a
    del a
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    print(f"torch: {len(keep)} tensors kept, sum {float(b.sum()):.0f}")


def torch_graph():
    """A CUDA graph captured and replayed: its memory lives in a private pool."""
    torch = need("torch")
    x = torch.randn(1024, 1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            y = x @ x  # warm up outside the graph
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = (x @ x).relu()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    del g
    print(f"torch graph: replayed 3 times, {y.shape[0]} rows")


def torch_oom():
    """Asks for more than the device has; catches the error."""
    torch = need("torch")
    total = torch.cuda.get_device_properties(0).total_memory
    keep = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")
    try:
        torch.empty(2 * total, dtype=torch.uint8, device="cuda")
        print("torch: no OOM?")
        sys.exit(1)
    except torch.cuda.OutOfMemoryError:
        print(f"torch: out of memory, as asked ({keep.numel() // MiB} MiB held)")


def cupy_alloc():
    cupy = need("cupy")
    a = cupy.arange(4 * MiB, dtype=cupy.float32)
    b = cupy.ones((1024, 1024), dtype=cupy.float32)
    c = (b @ b).sum()
    del a
    cupy.get_default_memory_pool().free_all_blocks()
    print(f"cupy: sum {float(c):.0f}")


def jax_alloc():
    need("jax")
    import jax.numpy as jnp
    x = jnp.ones((2048, 2048), dtype=jnp.float32)
    y = (x @ x).block_until_ready()
    print(f"jax: {y.shape[0]} rows on {y.devices().pop().platform}")


MODES = {
    "torch-alloc": torch_alloc,
    "torch-graph": torch_graph,
    "torch-oom": torch_oom,
    "cupy": cupy_alloc,
    "jax": jax_alloc,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(MODES)}")
    MODES[sys.argv[1]]()
