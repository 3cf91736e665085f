"""Two of the seeds' scenarios in TensorFlow's default setting (its BFC
arena) on a 1 GiB device, one per run (tests/tensorflow/test_bfc.py):

  model  a Keras MLP whose second 8192-wide layer does not fit the arena:
         it runs out of memory in its build, the weight's initializer;
  data   the whole training set copied to the GPU with tf.constant, more
         than TensorFlow's memory limit for the GPU.

Prints, as one JSON line, the error's class, the GPU's memory_limit
(TensorFlow's, the arena's size), get_memory_info('GPU:0') after the
failure, the weight's and the data's bytes; then leaves at once
(os._exit)."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from tensorflow.python.client import device_lib  # noqa: E402

FEATURES, WIDE, ROWS = 4096, 8192, 60000


def model():
    layers = [keras.layers.Dense(WIDE, activation="relu"),
              keras.layers.Dense(WIDE, activation="relu"),
              keras.layers.Dense(10)]
    net = keras.Sequential([keras.Input((FEATURES,))] + layers)  # @model
    net.compile(optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return net


def data():
    images = np.zeros((ROWS, FEATURES), np.float32)
    labels = np.zeros((ROWS,), np.int32)
    x = tf.constant(images)  # @data
    y = tf.constant(labels)
    net = keras.Sequential([keras.Input((FEATURES,)), keras.layers.Dense(10)])
    net.compile(optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x, y, batch_size=64, epochs=1, verbose=0)


def main():
    limit = [d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"]
    out = {"memory_limit": limit[0], "error": None,
           "weight_bytes": WIDE * WIDE * 4, "data_bytes": ROWS * FEATURES * 4}
    try:
        model() if sys.argv[1] == "model" else data()
    except (tf.errors.ResourceExhaustedError, tf.errors.InternalError) as e:
        out["error"] = type(e).__name__
    out["after"] = tf.config.experimental.get_memory_info("GPU:0")
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
