"""A jitted JAX training step (a three-layer MLP, its gradient and an SGD
update), run three times; then, with --oom BATCH, once more on a batch
too large for the device: XLA's RESOURCE_EXHAUSTED caught, the program
goes on. Prints JAX's own figures as one JSON line (tests/jax/test_jax.py
compares memtrace's report with them): jax.Device.memory_stats() after
the training steps and after the failed one, and the error's message."""
import json
import sys

import jax
import jax.numpy as jnp

SIZES = [512, 1024, 1024, 10]


@jax.jit
def step(params, x, y):
    def loss(ps):
        h = x
        for w in ps[:-1]:
            h = jnp.tanh(h @ w)
        return jnp.mean((h @ ps[-1] - y) ** 2)

    grads = jax.grad(loss)(params)
    return [w - 0.01 * g for w, g in zip(params, grads)]


def batch(n):
    return jnp.zeros((n, SIZES[0]), jnp.float32), jnp.zeros((n, SIZES[-1]), jnp.float32)


def main():
    device = jax.devices()[0]
    params = [jnp.zeros((a, b), jnp.float32) for a, b in zip(SIZES[:-1], SIZES[1:])]
    x, y = batch(256)
    for _ in range(3):
        params = step(params, x, y)
    jax.block_until_ready(params)
    out = {"platform": device.platform, "trained": device.memory_stats()}
    if "--oom" in sys.argv:
        xb, yb = batch(int(sys.argv[sys.argv.index("--oom") + 1]))
        jax.block_until_ready((xb, yb))
        out["before_oom"] = device.memory_stats()
        try:
            params = step(params, xb, yb)  # @oom
            jax.block_until_ready(params)  # @wait
            out["error"] = None
        except jax.errors.JaxRuntimeError as e:
            # the message, without the payloads XLA appends in brackets,
            # in an order that changes from run to run
            out["error"] = str(e).splitlines()[0].split(" [")[0]
        out["after_oom"] = device.memory_stats()
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
