"""Kernels of elementwise ops: each writes into the plan's buffer, which may be the memory
of an input no later op reads; dropout takes numbers drawn ahead for its slice of a batch."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.activation import ReLU, Sigmoid, Tanh, clamp
from lamina.functions.feature_scaling import Standardize
from lamina.functions.math import Add, Mul, Sub
from lamina.functions.noise import AlphaDropout, ChannelDropout, Dropout, FeatureAlphaDropout
from lamina.plan.kernels.base import Kernel, kernel_for


class _Elementwise(Kernel):
    writes_output = True
    writes_over_input = True


@kernel_for(Add, Sub, Mul)
class BinaryKernel(_Elementwise):
    def compute(self, a: Any, b: Any) -> Any:
        # In the memory order of the operand with the output's shape, as NumPy lays out
        # what it allocates: a residual sum of two channel-major maps stays channel-major,
        # the layout the next convolution reads without a copy.
        like = None
        if type(a) is np.ndarray and a.ndim > 1:
            other = np.shape(b)
            if other == a.shape or np.broadcast_shapes(a.shape, other) == a.shape:
                like = a
        return super().compute(a, b, out=self.out_buffer(like=like))  # type: ignore[misc]


@kernel_for(Sigmoid, Tanh)
class UnaryKernel(_Elementwise):
    def forward(self, x: Any) -> Any:
        return super().forward(x, out=self.out_buffer())  # type: ignore[misc]


@kernel_for(Standardize)
class StandardizeKernel(_Elementwise, Standardize):
    def forward(self, x: Any) -> Any:
        return super().forward(x, out=self.out_buffer(like=x))


@kernel_for(ReLU)
class ReLUKernel(_Elementwise, ReLU):
    reads_hints = frozenset({"outputs_kept"})

    def forward(self, x: Any) -> Any:
        y = clamp(x, 0, out=self.out_buffer(like=x))
        # Eager ReLU keeps y, which a later op keeps for its backward too, mostly; where
        # none does, a mask of its signs lets y's memory go to the next value.
        if not self.needs_input_grad[0]:
            self.save_for_backward(None)
        else:
            self.save_for_backward(y if 0 in self.outputs_kept else y > 0)
        return y


class DrawsAhead(Kernel):
    """A random op whose numbers a batch split over threads draws once for the whole
    batch, in eager order, and hands each slice its rows (`drawn`)."""

    drawn: Any = None

    def draw(self, shape: tuple[int, ...]) -> Any:
        if self.drawn is None:
            return super().draw(shape)  # type: ignore[misc]
        # Read once: the batch's draws are freed as soon as every slice has read its part,
        # not held through the slices' forward.
        drawn, self.drawn = self.drawn, None
        return drawn

    def draw_batch(self, shape: tuple[int, ...]) -> Any:
        """Fresh numbers for the whole batch, as the op draws them."""
        return super().draw(shape)  # type: ignore[misc]

    def backward(self, gy: Any) -> Any:
        gx = super().backward(gy)  # type: ignore[misc]
        self.keep = None  # read once: not kept to the step's end (the op outlives it)
        return gx


@kernel_for(Dropout, ChannelDropout)
class DropoutKernel(DrawsAhead):
    writes_output = True

    def forward(self, x: Any) -> Any:
        return super().forward(x, out=self.out_buffer())  # type: ignore[misc]


kernel_for(AlphaDropout, FeatureAlphaDropout)(DrawsAhead)
