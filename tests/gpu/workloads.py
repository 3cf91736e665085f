"""Short GPU workloads for tests/gpu/run.sh, one per argument. Each is a
few seconds at most; each prints one line and exits 0, or exits 77 when
its framework is not installed. The allocator settings
(PYTORCH_CUDA_ALLOC_CONF, XLA_PYTHON_CLIENT_*, TF_*) come from run.sh."""
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


def keras_conv():
    """A Keras Conv2D model's training steps (cuDNN's graph API: what the
    simulated device cannot run, docs/frameworks.md)."""
    tf = need("tensorflow")
    import keras
    import numpy as np
    model = keras.Sequential([keras.Input((32, 32, 3)),
                              keras.layers.Conv2D(32, 3, activation="relu"),
                              keras.layers.Flatten(),
                              keras.layers.Dense(10)])
    model.compile(optimizer="sgd",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(np.zeros((256, 32, 32, 3), np.float32), np.zeros((256,), np.int32),
              batch_size=64, epochs=1, verbose=0)
    print(f"keras conv2d: trained on {model.layers[0].kernel.value.device}, "
          f"{tf.config.experimental.get_memory_info('GPU:0')['peak']} bytes at peak")


def tf_oom():
    """Keras model.fit with a batch whose first layer's output is twice
    TensorFlow's arena: ResourceExhaustedError, caught."""
    tf = need("tensorflow")
    import keras
    import numpy as np
    from tensorflow.python.client import device_lib
    limit = [d.memory_limit for d in device_lib.list_local_devices()
             if d.device_type == "GPU"][0]
    rows = 2 * limit // (8192 * 4)
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(8192), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", jit_compile=False)
    try:
        model.fit(np.zeros((rows, 16), np.float32), np.zeros((rows, 1), np.float32),
                  batch_size=rows, epochs=1, verbose=0)
        print("tensorflow: no OOM?")
        sys.exit(1)
    except tf.errors.ResourceExhaustedError:
        print(f"tensorflow: out of memory, as asked ({rows} rows)")


MODES = {
    "torch-alloc": torch_alloc,
    "torch-graph": torch_graph,
    "torch-oom": torch_oom,
    "cupy": cupy_alloc,
    "jax": jax_alloc,
    "keras-conv": keras_conv,
    "tf-oom": tf_oom,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(MODES)}")
    MODES[sys.argv[1]]()
