"""Ops that draw random numbers: dropout."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor


def raw_uint32(shape: tuple[int, ...]) -> Any:
    """Uniform 32-bit integers of `shape` from lamina's generator (state.rng)."""
    n = math.prod(shape)
    raw = state.rng().bit_generator.random_raw((n + 1) // 2)
    return raw.view(np.uint32)[:n].reshape(shape)


class Dropout(Function):
    # Its mask comes from `draw(shape)`: an op that draws random numbers says so, as a
    # batch split over threads must draw them once for the whole batch.
    draws_random = True
    keeps_inputs = False  # backward, and its derivative rule, read the mask alone

    def __init__(self, p: float) -> None:
        self.p = p

    @staticmethod
    def draw(shape: tuple[int, ...]) -> Any:
        """A uniform 32-bit integer per element, whatever x's dtype (one seed gives one
        mask in every precision). The generator's raw output, two numbers to each 64-bit
        draw: half the generator's work of uniform floats, and no conversion."""
        return raw_uint32(shape)

    def _keep(self, x: Any) -> Any:
        """Which units stay: a boolean array that broadcasts against x. A unit stays
        where its number is at least p * 2**32: with probability 1 - p, to 2**-32."""
        bits = self.draw(x.shape)
        if self.p == 1.0:
            return np.zeros(bits.shape, bool)
        return bits >= np.uint32(min(math.ceil(self.p * 2.0**32), 2**32 - 1))

    def forward(self, x: Any, *, out: Any = None) -> Any:
        """out: an array of x's shape to write the result into (NumPy's out=)."""
        # Inverted dropout: scale the kept units at training time so eval is the identity.
        # Backward keeps the boolean `keep`, a quarter of a float mask's bytes.
        self.keep = self._keep(x)
        self.scale = x.dtype.type(0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p))
        y = np.multiply(x, self.scale, out=out)
        return np.multiply(y, self.keep, out=y)

    def backward(self, gy: Any) -> Any:
        gx = np.multiply(gy, self.keep)
        gx *= self.scale
        return gx

    @property
    def mask(self) -> Any:
        """What forward multiplied x by: the scale where a unit stayed, else 0."""
        return np.multiply(self.keep, self.scale)


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p).

    Draws from lamina's generator, so `lm.manual_seed` makes the mask repeat.

    Args:
        x: input of any shape.
        p: drop probability in [0, 1].
        training: when False, returns x unchanged.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1]; got {p}")
    if not training or p == 0.0:
        return x
    return Dropout(p).apply(x)


class ChannelDropout(Dropout):
    """Dropout of whole channels: one draw per (sample, channel), on axes 0 and 1."""

    @staticmethod
    def draw(shape: tuple[int, ...]) -> Any:
        return raw_uint32(shape[:2])

    def _keep(self, x: Any) -> Any:
        keep = super()._keep(x)
        return keep.reshape(keep.shape + (1,) * (x.ndim - 2))


def _feature_dropout(x: Tensor, p: float, training: bool, ndim: int, name: str) -> Tensor:
    """Channel dropout of a batched (N, C, *) input of `ndim` dims, or an unbatched one of
    ndim - 1 (one sample)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")
    if x.ndim not in (ndim - 1, ndim):
        raise ValueError(f"{name}: expected a {ndim - 1}-D (unbatched) or {ndim}-D (batched) "
                         f"input; got shape {tuple(x.shape)}")
    if not training or p == 0.0:
        return x
    if x.ndim == ndim - 1:
        return ChannelDropout(p).apply(x.unsqueeze(0)).squeeze(0)
    return ChannelDropout(p).apply(x)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, L) (or (C, L)) with probability p, scaling the rest
    by 1 / (1 - p)."""
    return _feature_dropout(input, p, training, 3, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, H, W) (or (C, H, W)) with probability p."""
    return _feature_dropout(input, p, training, 4, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) (or (C, D, H, W)) with probability p."""
    return _feature_dropout(input, p, training, 5, "dropout3d")


SELU_LOW = -1.7580993408473766  # -scale * alpha of SELU: the value SELU saturates to


class AlphaDropout(Dropout):
    """Dropout for SELU networks (Klambauer et al., 2017): dropped units are set to SELU's
    saturation value, and an affine correction keeps the mean and variance."""

    def forward(self, x: Any) -> Any:
        self.keep = self._keep(x)
        a = 0.0 if self.p == 1.0 else ((1 - self.p) * (1 + self.p * SELU_LOW**2)) ** -0.5
        self.scale = x.dtype.type(a)  # Dropout's backward: gy * keep * a
        keep = self.keep.astype(x.dtype)
        offset = (a * SELU_LOW * (1 - keep) - a * SELU_LOW * self.p).astype(x.dtype)
        return x * self.mask + offset


class FeatureAlphaDropout(AlphaDropout, ChannelDropout):
    """AlphaDropout of whole channels: AlphaDropout's values, ChannelDropout's draws (one per
    sample and channel)."""


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """AlphaDropout as a function; note PyTorch's default `training=False`."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"alpha_dropout: p must be in [0, 1]; got {p}")
    if not training or p == 0.0:
        return input
    return AlphaDropout(p).apply(input)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """AlphaDropout of whole channels of (N, C, *); PyTorch's default `training=False`."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"feature_alpha_dropout: p must be in [0, 1]; got {p}")
    if not training or p == 0.0:
        return input
    return FeatureAlphaDropout(p).apply(input)
