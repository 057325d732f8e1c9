"""What a Winograd convolution's backward holds at once (lamina.functions.winograd): the
input's gradient is made first, so that its transformed kernels (16, C, O) are freed
before the weight gradient's transformed sums, as large, are made beside the weight
gradient. On a ResNet's last stage (512 channels on 4x4 maps) that is the step's peak."""

from __future__ import annotations

import importlib.util
import tracemalloc

import numpy as np
import pytest

import lamina as lm
import lamina.nn.functional as F
from lamina.functions import winograd

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


def test_the_backward_of_a_512_channel_conv_holds_one_transformed_kernel_set_at_a_time():
    rng = np.random.default_rng(0)
    x = lm.tensor(rng.standard_normal((32, 512, 4, 4)).astype(np.float32), requires_grad=True)
    w = lm.tensor((rng.standard_normal((512, 512, 3, 3)) / 48).astype(np.float32),
                  requires_grad=True)
    assert winograd.applies((1, 1), (1, 1), (1, 1), 1, x.array, w.array)
    gy = lm.tensor(rng.standard_normal((32, 512, 4, 4)).astype(np.float32))
    F.conv2d(x, w, padding=1).backward(gy)  # loads the kernels first
    x.grad = w.grad = None
    y = F.conv2d(x, w, padding=1)
    tracemalloc.start()
    try:
        y.backward(gy)
        start_to_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kernels = 16 * 512 * 512 * 4  # one transformed set, (16, C, O) float32
    # the weight gradient's transformed sums beside the two gradients: 1.75 sets (with
    # the weight's gradient first, the input's transformed kernels and tiles beside the
    # weight gradient: 2.19)
    assert start_to_peak < 2 * kernels
    assert w.grad.shape == (512, 512, 3, 3) and x.grad.shape == (32, 512, 4, 4)
