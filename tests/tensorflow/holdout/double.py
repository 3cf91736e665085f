"""Held out (issue 32, "Done when"): written apart from programs/ and
never used to tune memtrace. A Keras MLP for 28x28 images (784 -> 2048 ->
2048 -> 10, Adam) trained a few steps on GPU:0, then fitted again with
the batch doubled each time until TensorFlow runs out of memory; the
error caught, the program goes on. Prints TensorFlow's own figures as
one JSON line: get_memory_info('GPU:0') after training and after the
failure, the BFC arena's size, the batch that failed and its bytes, and
the error's line that names what could not be allocated."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def make_model():
    model = keras.Sequential([keras.Input((784,)),
                              keras.layers.Dense(2048, activation="relu"),
                              keras.layers.Dense(2048, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    return model


def images(n):
    return np.zeros((n, 784), np.float32), np.zeros((n,), np.int64)


def error_line(e):
    text = str(e)
    line = next((l for l in text.splitlines()
                 if "OOM when allocating" in l or "unable to allocate" in l), text)
    return type(e).__name__ + ": " + line.strip().split(" on /job:")[0].split(" Key: ")[0]


def main():
    from tensorflow.python.client import device_lib
    model = make_model()
    x, y = images(512)
    model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    out = {"trained": tf.config.experimental.get_memory_info("GPU:0"),
           "memory_limit": [d.memory_limit for d in device_lib.list_local_devices()
                            if d.device_type == "GPU"][0],
           "error": None}
    batch = 16384
    while out["error"] is None and batch <= 1 << 20:
        x, y = images(batch)
        try:
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # @oom
            batch *= 2
        except tf.errors.ResourceExhaustedError as e:
            out.update(error=error_line(e), batch=batch, batch_bytes=x.nbytes)
    out["after_oom"] = tf.config.experimental.get_memory_info("GPU:0")
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
