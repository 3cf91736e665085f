"""A Keras Dense model trained with model.fit on a few batches on GPU:0;
then, with --oom BATCH, model.fit on one batch of BATCH rows, too large
for the device: TensorFlow's ResourceExhaustedError caught, the program
goes on. Prints TensorFlow's own figures as one JSON line
(tests/tensorflow/test_tensorflow.py compares memtrace's report with
them): tf.config.experimental.get_memory_info('GPU:0') after training
and after the failed fit, the GPU's memory_limit (the BFC arena's size),
where the model's kernel lives, and the error's line that names the
tensor."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

FEATURES, HIDDEN, CLASSES = 512, 1024, 10
# TensorFlow's own kernels, not an XLA cluster: the OOM is an op's tensor
# ("OOM when allocating tensor with shape..."), and no XLA compile (seconds
# of CPU); --jit compiles the step with XLA, as Keras does by default.
JIT = "--jit" in sys.argv


def build():
    model = keras.Sequential([keras.Input((FEATURES,)),
                              keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(CLASSES)])
    model.compile(optimizer="sgd",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=JIT)
    return model


def data(n):
    return np.zeros((n, FEATURES), np.float32), np.zeros((n,), np.int32)


def memory():
    return tf.config.experimental.get_memory_info("GPU:0")


def main():
    model = build()
    x, y = data(256)
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    # the BFC arena's size as TensorFlow reports it (bytes)
    from tensorflow.python.client import device_lib
    limit = [d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"]
    out = {"gpus": len(tf.config.list_physical_devices("GPU")), "memory_limit": limit[0],
           "device": model.layers[0].kernel.value.device,
           "trained": memory()}
    if "--oom" in sys.argv:
        xb, yb = data(int(sys.argv[sys.argv.index("--oom") + 1]))
        out["batch_bytes"] = xb.nbytes
        try:
            model.fit(xb, yb, batch_size=len(xb), epochs=1, verbose=0)  # @oom
            out["error"] = None
        except tf.errors.ResourceExhaustedError as e:
            # the line that names the tensor, without the op and device
            # details TensorFlow appends
            # (an op's output: "OOM when allocating tensor with shape...";
            # the batch copied in: "... unable to allocate output tensor.")
            line = next((l for l in str(e).splitlines()
                         if "OOM when allocating" in l or "unable to allocate" in l), str(e))
            out["error"] = (type(e).__name__ + ": "
                            + line.strip().split(" on /job:")[0].split(" Key: ")[0])
        out["after_oom"] = memory()
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
