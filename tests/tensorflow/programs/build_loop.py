"""A Keras model built, trained and kept in a list each round, in
TensorFlow's default setting (its BFC arena), until the arena runs out:
the leak of a build loop that keeps its models. Prints, as one JSON
line, tf.config.experimental.get_memory_info('GPU:0')['current'] before
each build and after each fit, and the error; then leaves at once
(os._exit), so that nothing of TensorFlow's is freed after its last
figures (tests/tensorflow/test_bfc.py)."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

FEATURES, HIDDEN, CLASSES = 512, 2048, 10


def build():
    model = keras.Sequential([keras.Input((FEATURES,)),
                              keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(CLASSES)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    return model


def main():
    x, y = np.zeros((256, FEATURES), np.float32), np.zeros((256,), np.int32)
    models, before, after = [], [], []
    error = None
    try:
        for _ in range(40):
            before.append(tf.config.experimental.get_memory_info("GPU:0")["current"])
            model = build()  # @build
            model.fit(x, y, batch_size=64, epochs=1, verbose=0)
            models.append(model)
            after.append(tf.config.experimental.get_memory_info("GPU:0")["current"])
    except tf.errors.ResourceExhaustedError as e:
        error = type(e).__name__
    sys.stdout.write(json.dumps({"before": before, "after": after, "error": error}) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
