"""Keras 3 on the torch backend (KERAS_BACKEND=torch, set by the test):
model.fit of a small dense model on the simulated device, three epochs.
Prints torch's figures (common.figures) with the backend's name, the
device of the model's weights and the epochs fit ran."""
import gc
import os

import keras
import numpy as np
import torch

from common import emit, figures

assert os.environ.get("KERAS_BACKEND") == "torch"
keras.utils.set_random_seed(0)
model = keras.Sequential([
    keras.Input((256,)),
    keras.layers.Dense(1024, activation="relu"),
    keras.layers.Dense(1024, activation="relu"),
    keras.layers.Dense(10),
])
model.compile(optimizer="adam",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
x = np.random.default_rng(0).standard_normal((512, 256)).astype("float32")
y = np.arange(512) % 10
history = model.fit(x, y, batch_size=64, epochs=3, verbose=0)
# fit leaves the last batch's activation (256 KiB) in reference cycles;
# whether the collector has run by now depends on how many objects were
# made, which varies from run to run: collect, so that the figures are the
# same every run, traced or not.
gc.collect()
emit(figures(backend=keras.backend.backend(), epochs=len(history.history["loss"]),
             weights_device=str(model.weights[0].value.device)))
