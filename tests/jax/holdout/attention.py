"""Held out (issue 32, "Done when"): written apart from programs/ and
never used to tune memtrace. A jitted self-attention block trained with
Adam's moments kept beside the weights, then the sequence doubled until
XLA runs out of memory (the attention scores grow with its square); the
error caught, the program goes on. Prints JAX's own figures as one JSON
line: jax.Device.memory_stats() after training and after the failure,
the sequence length that failed, and the error's message."""
import json
import sys
import time

import jax
import jax.numpy as jnp

WIDTH = 256
BATCH = 4


def zeros():
    return {name: jnp.zeros((WIDTH, WIDTH), jnp.float32) for name in ("q", "k", "v", "o")}


@jax.jit
def train(params, mom1, mom2, x):
    def loss(p):
        q, k, v = x @ p["q"], x @ p["k"], x @ p["v"]
        scores = jax.nn.softmax(q @ k.swapaxes(-1, -2) / WIDTH ** 0.5, axis=-1)
        return jnp.mean((scores @ v) @ p["o"])

    grads = jax.grad(loss)(params)
    mom1 = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, mom1, grads)
    mom2 = jax.tree.map(lambda m, g: 0.999 * m + 0.001 * g * g, mom2, grads)
    params = jax.tree.map(lambda p, m, s: p - 1e-3 * m / (jnp.sqrt(s) + 1e-8), params, mom1, mom2)
    return params, mom1, mom2


def settled(device):
    """memory_stats() once the failure has finished unwinding: XLA frees
    the failed execution's buffers on its own threads, so a reading right
    after the exception can still count one of them (1 run in about 25
    under memtrace's timing; one 50 ms pause was not enough on CI's
    loaded machine, 254 KiB still counted). Ten readings 50 ms apart
    agree, 10 s at most."""
    last, same = device.memory_stats(), 0
    for _ in range(200):
        time.sleep(0.05)
        now = device.memory_stats()
        same = same + 1 if now == last else 0
        if same >= 10:
            break
        last = now
    return last


def main():
    device = jax.devices()[0]
    params, mom1, mom2 = zeros(), zeros(), zeros()
    seq = 128
    x = jnp.zeros((BATCH, seq, WIDTH), jnp.float32)
    for _ in range(3):
        params, mom1, mom2 = train(params, mom1, mom2, x)
    jax.block_until_ready(params)
    out = {"platform": device.platform, "trained": device.memory_stats(), "error": None}
    while out["error"] is None and seq < 1 << 16:
        seq *= 2
        try:
            x = jnp.zeros((BATCH, seq, WIDTH), jnp.float32)
            params, mom1, mom2 = train(params, mom1, mom2, x)  # @oom
            jax.block_until_ready(params)  # @wait
        except jax.errors.JaxRuntimeError as e:
            # the message, without the payloads XLA appends in brackets
            out["error"] = str(e).splitlines()[0].split(" [")[0]
    out["seq"] = seq
    out["after_oom"] = settled(device)
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
