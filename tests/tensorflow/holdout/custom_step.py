"""Held out (issue 32, "Done when"): written apart from programs/ and
never used to tune memtrace. A custom training loop: a tf.function step
with a GradientTape over a two-layer Keras model and an SGD update, run
on small batches, then on one batch too large for the device; the
ResourceExhaustedError caught. Prints TensorFlow's own figures as one
JSON line: get_memory_info('GPU:0') after training and after the
failure, the BFC arena's size, and the error's line."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

net = keras.Sequential([keras.Input((1024,)),
                        keras.layers.Dense(4096, activation="tanh"),
                        keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))
    return loss


def main():
    from tensorflow.python.client import device_lib
    with tf.device("/GPU:0"):
        for _ in range(3):
            train_step(tf.zeros((64, 1024)), tf.zeros((64, 1)))
        out = {"trained": tf.config.experimental.get_memory_info("GPU:0"),
               "memory_limit": [d.memory_limit for d in device_lib.list_local_devices()
                                if d.device_type == "GPU"][0],
               "error": None}
        big = 60000
        try:
            x, y = tf.zeros((big, 1024)), tf.zeros((big, 1))
            train_step(x, y)  # @oom
        except tf.errors.ResourceExhaustedError as e:
            line = next((l for l in str(e).splitlines() if "OOM when allocating" in l), str(e))
            out["error"] = (type(e).__name__ + ": "
                            + line.strip().split(" on /job:")[0].split(" Key: ")[0])
    out["after_oom"] = tf.config.experimental.get_memory_info("GPU:0")
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
