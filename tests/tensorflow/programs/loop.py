"""Keras models built in a loop on GPU:0: with --keep each model is kept
in a list (the memory of every build stays); with --clear
keras.backend.clear_session() runs before each build and nothing is kept.
Under memtrace, a memtrace_mark after each build.
Prints TensorFlow's own figures as one JSON line
(tests/tensorflow/test_tensorflow.py): get_memory_info('GPU:0')['current']
after each build, and the bytes of one model's weights."""
import ctypes
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

BUILDS = 8
# memtrace's mark when it is there (a point of the report's growth), else
# nothing: the program is the same plain
MARK = getattr(ctypes.CDLL(None), "memtrace_mark", None)


def build_model():
    model = keras.Sequential([keras.Input((512,)),
                              keras.layers.Dense(1024, activation="relu"),
                              keras.layers.Dense(10)])
    return model


def main():
    keep = "--keep" in sys.argv
    kept, current = [], []
    for _ in range(BUILDS):
        if not keep:
            keras.backend.clear_session()
        model = build_model()
        if keep:
            kept.append(model)
        current.append(tf.config.experimental.get_memory_info("GPU:0")["current"])
        if MARK:
            MARK(b"built")
    weights = sum(int(np.prod(w.shape)) * 4 for w in model.weights)
    json.dump({"current": current, "weights": weights,
               "device": model.weights[0].value.device}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
