"""A convolution, the eval-mode batch norm that reads it, and the ReLU that may read
that, as one kernel: what an inference plan fuses them into
(plan.rewrite.fold_batch_norm).

On its running statistics a batch norm is an affine map per channel, x * scale + shift.
Apart, it reads the convolution's output and writes a new array, and the ReLU reads that
and writes another: two more arrays, and passes that each read one array and write
another, where the map and the ReLU can run in place over the convolution's output as it
lies in the plan's buffer. Where numba is loaded (a convolution's im2col loads it), the
map and the ReLU are one kernel's pass (numba_channels.channel_affine), its scale and
shift made in it too: at batch 1 the NumPy calls they replace cost more than the passes.
Else the norm is eager mode's own (BatchNorm.forward, writing over its input). Either
way the numbers are eager's bit for bit.
"""

from __future__ import annotations

from typing import Any

from lamina.autograd.function import Function
from lamina.functions.activation import clamp
from lamina.functions.conv import Conv
from lamina.functions.normalization import BatchNorm
from lamina.plan.kernels.base import Kernel
from lamina.plan.kernels.conv import ConvKernel


def foldable(conv: Any, norm: Any) -> bool:
    """Whether norm(conv(...)) can run as ConvBatchNorm: a 2-D convolution, a batch norm
    on running statistics, and no gradient through either (an inference plan, or a frozen
    part of a training one)."""
    return (isinstance(conv, Conv) and conv.nd == 2 and type(norm) is BatchNorm
            and not norm.training and norm.running_mean is not None
            and not any(conv.needs_input_grad) and not any(norm.needs_input_grad))


class ConvBatchNorm(Kernel, Function):
    """relu(batch_norm(conv(x, W, b), gamma, beta)) in eval mode, the ReLU optional.
    Inputs: the convolution's (x, W and b where it has one), then the norm's parameters
    (gamma and beta where it is affine)."""

    writes_output = True

    def __init__(self, conv: Conv, norm: BatchNorm, conv_inputs: int, relu: bool) -> None:
        # Copies: the plan releases what the traced ops hold once they no longer run.
        self.conv = ConvKernel.lower(conv)
        self.norm = BatchNorm(norm.running_mean, norm.running_var, False, norm.momentum,
                              norm.eps)
        self.conv_inputs, self.relu = conv_inputs, relu

    def forward(self, *arrays: Any) -> Any:
        k = self.conv_inputs
        conv, norm = self.conv, self.norm
        conv.out_buffers, conv.needs_input_grad = self.out_buffers, (False,) * k
        norm.needs_input_grad = (False,) * (1 + len(arrays) - k)
        y = conv.forward(*arrays[:k])  # NCHW view of channel-major (O, N, OH, OW) memory
        mem = y.swapaxes(0, 1)
        if mem.flags.c_contiguous:  # the map and the ReLU in place, one pass
            rows = mem.reshape(len(mem), -1)  # a view
            gamma, beta = (*arrays[k:], None, None)[:2]
            if norm.in_one_pass(rows, rows, gamma, beta, self.relu):
                return y
        y = norm.forward(y, *arrays[k:], out=y)  # eager mode's eval norm, in place
        if self.relu:  # over the memory in its order: channel-major, as the conv wrote it
            clamp(mem, 0, out=mem)
        return y
