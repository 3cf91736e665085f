"""JAX arrays made, deleted, stepped and donated, with JAX's own figures at
idle points (tests/jax/test_arrays.py compares memtrace's view of the
arrays inside XLA's arena with them). At each point, once every array
is ready, the garbage collected and JAX's figures settled, the program
prints jax.Device.memory_stats() and then puts a
marker on the device and deletes it: an int8 array of MARK + i elements,
which the test finds in the trace (a size no other array has) to know
where point i is. Prints one JSON line: the points' names and figures."""
import gc
import json
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

MARK = 777001  # the marker of point i: MARK + i int8 elements
KEYS = ("bytes_in_use", "peak_bytes_in_use", "num_allocs")


def main():
    device = jax.devices()[0]
    points = []

    def settled():
        """JAX's figures once they stopped moving: an array released
        gives its memory back once the work that used it is done, on
        XLA's own thread, a moment after block_until_ready."""
        stats = device.memory_stats()
        for _ in range(100):
            time.sleep(0.02)
            again = device.memory_stats()
            if again == stats:
                break
            stats = again
        return stats

    def point(name, *arrays):
        jax.block_until_ready(arrays)
        gc.collect()  # arrays kept only by a reference cycle go now, not whenever
        stats = settled()
        points.append({"name": name, **{k: stats[k] for k in KEYS}})
        marker = jax.device_put(np.zeros(MARK + len(points) - 1, np.int8))
        marker.block_until_ready()
        marker.delete()
        settled()  # its chunk back before the next array is placed

    # arrays made from the host: sizes on 256 bytes and off them
    host = [jax.device_put(np.ones(n, np.float32)) for n in (1024, 1000, 3, 262144)]  # @host
    point("from_host", *host)

    # arrays made by XLA's computations (an execution's outputs)
    a = jnp.ones((1024, 1024), jnp.float32)  # @ones
    b = jnp.arange(12345, dtype=jnp.float32)
    point("computed", a, b)

    # some deleted: one explicitly, one dropped
    host[3].delete()
    del b
    point("deleted", a)

    @jax.jit
    def step(w, x):
        h = jnp.tanh(x @ w)  # a temporary inside the execution
        return w - 0.01 * (x.T @ h), jnp.sum(h)

    w = jnp.zeros((1024, 512), jnp.float32)  # @zeros
    x = jnp.ones((256, 1024), jnp.float32)
    for _ in range(3):
        w, loss = step(w, x)  # @step
    point("stepped", w, loss)

    # the input's memory becomes the output's: no allocation in the arena
    donate = jax.jit(lambda v: v * 2, donate_argnums=0)
    v = jnp.ones((300, 1000), jnp.float32)
    jax.block_until_ready(v)
    v = donate(v)  # @donate
    point("donated", v)

    del a, w, loss, v, x
    host.clear()
    point("released")

    json.dump({"platform": device.platform, "points": points}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
