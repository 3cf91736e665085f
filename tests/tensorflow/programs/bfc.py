"""Keras model.fit of a few steps on GPU:0 in TensorFlow's default
setting (its BFC arena), then model.fit on one batch too large for the
arena (the ResourceExhaustedError caught). Prints, as one JSON line,
tf.config.experimental.get_memory_info('GPU:0') after training and after
the failure, and the GPU's memory_limit (the arena's size); then leaves
at once (os._exit), so that nothing of TensorFlow's is freed between its
last figures and the trace's end (tests/tensorflow/test_bfc.py)."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

FEATURES, HIDDEN, CLASSES = 512, 1024, 10


def main():
    model = keras.Sequential([keras.Input((FEATURES,)),
                              keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(CLASSES)])
    model.compile(optimizer="sgd",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    x, y = np.zeros((256, FEATURES), np.float32), np.zeros((256,), np.int32)
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    from tensorflow.python.client import device_lib
    limit = [d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"]
    out = {"memory_limit": limit[0], "trained": tf.config.experimental.get_memory_info("GPU:0")}
    n = int(sys.argv[1])
    xb, yb = np.zeros((n, FEATURES), np.float32), np.zeros((n,), np.int32)
    try:
        model.fit(xb, yb, batch_size=n, epochs=1, verbose=0)  # @oom
        out["error"] = None
    except tf.errors.ResourceExhaustedError as e:
        out["error"] = type(e).__name__
    out["after_oom"] = tf.config.experimental.get_memory_info("GPU:0")
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
