"""Held out (issue 32, "Done when"): written apart from programs/ and
never used to tune memtrace. A notebook habit: an Embedding + Dense
classifier rebuilt in a loop (a hyper-parameter sweep) with every model
appended to a list; under memtrace a memtrace_mark after each build
(found with ctypes; nothing plain). Prints TensorFlow's own figures as
one JSON line: get_memory_info('GPU:0')['current'] and ['peak'] after
each build, and the bytes of one model's weights."""
import ctypes
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

MARK = getattr(ctypes.CDLL(None), "memtrace_mark", None)


def new_classifier(width):
    return keras.Sequential([keras.Input((32,), dtype="int32"),
                             keras.layers.Embedding(20000, 64),
                             keras.layers.GlobalAveragePooling1D(),
                             keras.layers.Dense(width, activation="relu"),
                             keras.layers.Dense(5)])


def main():
    sweep, current, peak = [], [], []
    for _ in range(6):
        model = new_classifier(256)
        sweep.append(model)
        info = tf.config.experimental.get_memory_info("GPU:0")
        current.append(info["current"])
        peak.append(info["peak"])
        if MARK:
            MARK(b"model")
    weights = sum(int(np.prod(w.shape)) * 4 for w in model.weights)
    json.dump({"current": current, "peak": peak, "weights": weights,
               "device": model.weights[0].value.device}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
