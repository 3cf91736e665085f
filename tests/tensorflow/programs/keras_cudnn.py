"""Keras layers that TensorFlow runs on cuDNN (issue 49), trained with
model.fit on GPU:0 with the defaults: a CNN (Conv2D, BatchNormalization,
MaxPooling2D, Dense; TensorFlow's own kernels, jit_compile=False, so its
Conv2D op calls cuDNN's graph API itself) and an LSTM (Keras's default
jit_compile; TensorFlow's CudnnRNNV3 op, cuDNN's RNN v8 API). Prints
TensorFlow's own figures as one JSON line: the GPU's memory_limit (the
BFC arena's size), get_memory_info('GPU:0') after each fit, where the
conv kernel lives."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def memory():
    return tf.config.experimental.get_memory_info("GPU:0")


def main():
    cnn = keras.Sequential([keras.Input((16, 16, 3)),
                            keras.layers.Conv2D(8, 3, padding="same"),
                            keras.layers.BatchNormalization(), keras.layers.ReLU(),
                            keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                            keras.layers.Dense(10)])
    cnn.compile(optimizer="sgd",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                jit_compile=False)
    x = np.zeros((32, 16, 16, 3), np.float32)
    y = np.zeros((32,), np.int32)
    cnn.fit(x, y, batch_size=16, epochs=1, verbose=0)  # @cnn
    after_cnn = memory()
    lstm = keras.Sequential([keras.Input((10, 8)), keras.layers.LSTM(16), keras.layers.Dense(1)])
    lstm.compile(optimizer="adam", loss="mse")
    lstm.fit(np.zeros((32, 10, 8), np.float32), np.zeros((32, 1), np.float32),
             batch_size=16, epochs=1, verbose=0)  # @lstm
    from tensorflow.python.client import device_lib
    limit = [d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"]
    out = {"gpus": len(tf.config.list_physical_devices("GPU")), "memory_limit": limit[0],
           "device": cnn.layers[0].kernel.value.device, "after_cnn": after_cnn,
           "after_lstm": memory()}
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
