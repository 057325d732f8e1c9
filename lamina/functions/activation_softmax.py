"""The softmax family: softmax and log-softmax over a dim, stable for large inputs, by
numba's row kernels where they run; attention builds its masked, scaled softmax on
Softmax."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor


class Softmax(Function):
    """softmax over `axis`; a subclass may normalise scores made from x instead (`_scores`,
    `scale`, `causal` and `offset`: attention's, in lamina/functions/attention.py)."""

    # The compiled kernels apply these; _scores, in NumPy. offset: the query of the first
    # row, where the rows are a block of the queries (a plan's causal attention by blocks).
    scale, causal, offset = 1.0, False, 0
    keeps_inputs = False  # backward, and its derivative rule, read the output it saves

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def _compiled(self, *arrays: Any) -> Any:
        """The numba kernels where they take this softmax: over the last axis of
        C-contiguous float32 arrays; else None."""
        compiled = fused.compiled()
        x = arrays[0]
        if (compiled is None or x.ndim == 0 or x.size == 0 or self.axis not in (-1, x.ndim - 1)
                or not fused.fits(*arrays)):
            return None
        return compiled

    def _scores(self, x: Any) -> Any:
        """What the NumPy path normalises: x itself."""
        return x

    def forward(self, x: Any) -> Any:
        y = self.probabilities(x)
        self.save_for_backward(y)
        return y

    def probabilities(self, x: Any) -> Any:
        """The softmax of x, kept by nothing (forward keeps it for backward)."""
        if x.size == 0:  # nothing to normalise (max has no identity): as PyTorch, empty
            return x.copy()
        compiled = self._compiled(x)
        if compiled is not None:
            return fused.softmax(compiled, x, self.scale, self.causal, self.offset)
        z = self._scores(x)
        # Subtracting the max keeps exp from overflowing; softmax is shift-invariant. A
        # row of -inf gives NaN (-inf - -inf), as PyTorch's does, without a warning.
        with np.errstate(invalid="ignore"):
            y = np.exp(z - z.max(axis=self.axis, keepdims=True))
            y /= y.sum(axis=self.axis, keepdims=True)
        return y

    def backward(self, gy: Any) -> Any:
        return self.gradient(*self.saved_tensors, gy)

    def gradient(self, y: Any, gy: Any) -> Any:
        """The gradient from gy and the softmax y that `probabilities` gave."""
        if gy.dtype == y.dtype and gy.shape == y.shape:
            compiled = self._compiled(y)
            if compiled is not None:
                return fused.softmax_backward(compiled, y, np.ascontiguousarray(gy),
                                              self.scale)
        gx = y * gy
        gx -= y * gx.sum(axis=self.axis, keepdims=True)
        if self.scale != 1.0:
            gx *= y.dtype.type(self.scale)
        return gx


class LogSoftmax(Function):
    keeps_inputs = False  # as Softmax: the saved output is all its backward reads

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        y = log_softmax_array(x, self.axis)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        (y,) = self.saved_tensors
        return gy - np.exp(y) * gy.sum(axis=self.axis, keepdims=True)


def log_softmax_array(x: Any, axis: int, out: Any = None) -> Any:
    """log(softmax(x)) on a plain array, computed as x - max - log(sum(exp(x - max)));
    written into `out` (which may be x itself) when given. One compiled pass a row where
    numba runs (loaded by another op: fused.loaded) and x is a float32 C-contiguous array
    normalised over its last axis."""
    if x.size == 0:  # nothing to normalise (max has no identity): as PyTorch, empty
        return np.empty_like(x) if out is None else out
    compiled = fused.loaded()
    if (compiled is not None and x.ndim and axis in (-1, x.ndim - 1)
            and fused.fits(x, *(() if out is None else (out,)))):
        rows = x.reshape(-1, x.shape[-1])
        into = None if out is None else out.reshape(rows.shape)
        return fused.log_softmax(compiled, rows, into).reshape(x.shape)
    with np.errstate(invalid="ignore"):  # an infinite row gives NaN, as in PyTorch, unwarned
        shifted = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)
        shifted -= np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted


def softmax(x: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None, *,
            axis: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (NumPy's `axis` accepted), stable for large inputs.

    Examples:
        >>> F.softmax(lm.zeros(2, 4), dim=-1)[0, 0].item()
        0.25
    """
    return Softmax(_softmax_dim(x, dim, axis)).apply(_floats(x, dtype, "softmax"))


def _softmax_dim(x: Tensor, dim: int | None, axis: int | None) -> int:
    """dim, else axis, else PyTorch's old implicit choice: 0 for 0-, 1- and 3-d input."""
    if dim is None:
        dim = axis
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return dim


def log_softmax(x: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None,
                *, axis: int | None = None) -> Tensor:
    """log(softmax(x)) along `dim` (NumPy's `axis` accepted), computed stably in one op."""
    return LogSoftmax(_softmax_dim(x, dim, axis)).apply(_floats(x, dtype, "log_softmax"))


def _floats(x: Tensor, dtype: Any, name: str) -> Tensor:
    """x in `dtype` if given; an integer x without one is refused, as PyTorch refuses it."""
    if dtype is not None:
        return x.to(dtype)
    if x.array.dtype.kind not in "fc":
        raise NotImplementedError(f"{name}: not implemented for {x.dtype} tensors; pass "
                                  f"dtype=lamina.float32, or call x.float() first")
    return x
