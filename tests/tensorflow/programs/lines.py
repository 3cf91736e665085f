"""Tensors kept by the lines of a program under
TF_GPU_ALLOCATOR=cuda_malloc_async (each tensor a CUDA allocation): a
variable made eagerly, on this thread; the outputs of two tf.functions,
whose ops TensorFlow runs on its executor threads while this thread
waits in the call; and model.fit, whose step runs there too. Around
each tagged line, TensorFlow's own figure: the change of
get_memory_info('GPU:0')['current'] over the line, what the line left
allocated. Under memtrace, a memtrace_mark after each (found with
ctypes; nothing plain). Prints {tag: [line, bytes]} as one JSON line
(tests/tensorflow/test_tensorflow.py, test_holders_by_line)."""
import ctypes
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

MARK = getattr(ctypes.CDLL(None), "memtrace_mark", None)
TAGS = ("variable", "encode", "gram", "fit")


def current():
    return tf.config.experimental.get_memory_info("GPU:0")["current"]


def line_of(tag):
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag))


def main():
    model = keras.Sequential([keras.Input((512,)),
                              keras.layers.Dense(1024, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)

    @tf.function
    def encode(x):
        return model.layers[0](x) * 2.0

    @tf.function
    def gram(h):
        return tf.matmul(h, h, transpose_a=True)

    x = tf.zeros((256, 512))
    xs, ys = np.zeros((256, 512), np.float32), np.zeros((256,), np.int32)
    # traced once, and cuBLAS's handle made, before anything is measured
    gram(encode(x))
    figures, kept = {}, []
    if MARK:
        MARK(b"start")

    before = current()
    kept.append(tf.Variable(tf.ones((512, 2048))))  # @variable
    figures["variable"] = current() - before
    if MARK:
        MARK(b"variable")

    before = current()
    kept.append(encode(x))  # @encode
    figures["encode"] = current() - before
    if MARK:
        MARK(b"encode")

    before = current()
    kept.append(gram(kept[-1]))  # @gram
    figures["gram"] = current() - before
    if MARK:
        MARK(b"gram")

    before = current()
    model.fit(xs, ys, batch_size=64, epochs=1, verbose=0)  # @fit
    figures["fit"] = current() - before
    if MARK:
        MARK(b"fit")

    json.dump({tag: [line_of(tag), figures[tag]] for tag in TAGS}, sys.stdout,
              sort_keys=True)
    print()


if __name__ == "__main__":
    main()
