"""The seed document's CNN (issue 49): a Keras Conv2D stack on 224x224x3
images trained with model.fit, Adam, Keras's defaults (TensorFlow's BFC
arena, Keras's default jit_compile: XLA's cuDNN convolutions), at the
batch given as argv[1] in one step. Catches a ResourceExhaustedError
from model.fit and prints TensorFlow's own figures as one JSON line: the
error's first line, get_memory_info('GPU:0') after the fit (or after the
error), the GPU's memory_limit (the BFC arena's size). Exits 0 either
way (leaving without TensorFlow's teardown)."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

STEPS = 1


def main():
    batch = int(sys.argv[1])
    layers = [keras.Input((224, 224, 3))]
    for filters in (64, 64, 128, 128, 256):
        layers += [keras.layers.Conv2D(filters, 3, padding="same", activation="relu"),
                   keras.layers.MaxPooling2D()]
    layers += [keras.layers.Flatten(), keras.layers.Dense(10)]
    model = keras.Sequential(layers)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.zeros((batch * STEPS, 224, 224, 3), np.float32)
    y = np.zeros((batch * STEPS,), np.int32)
    error = None
    try:
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # @fit
    except tf.errors.ResourceExhaustedError as e:
        error = f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"
        full = str(e)
    else:
        full = None
    from tensorflow.python.client import device_lib
    limit = [d.memory_limit for d in device_lib.list_local_devices() if d.device_type == "GPU"]
    out = {"gpus": len(tf.config.list_physical_devices("GPU")), "memory_limit": limit[0],
           "device": model.layers[0].kernel.value.device, "error": error, "message": full,
           "memory": tf.config.experimental.get_memory_info("GPU:0")}
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    sys.stdout.flush()
    # After the OOM, TensorFlow 2.21 aborts at interpreter exit, plain as
    # traced (bfc_allocator.cc: "Check failed: c->in_use()" freeing a
    # variable's buffer): the figures are out, so leave without teardown.
    os._exit(0)


if __name__ == "__main__":
    main()
