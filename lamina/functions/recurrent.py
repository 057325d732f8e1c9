"""Fused recurrent cells: one op per time step instead of a dozen.

An LSTM step as separate ops records a split, three sigmoids, two tanhs, three products
and a sum; fused, its backward is the closed form below and the step allocates a third as
much. The matrix products stay outside (F.linear), where BLAS does the work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError


def _sigmoid(x: Any) -> Any:
    return np.tanh(x * 0.5) * 0.5 + 0.5


class LSTMCell(Function):
    """gates (B, 4H) in PyTorch's order i, f, g, o and c_prev (B, H) -> h, c."""

    def forward(self, gates: Any, c_prev: Any) -> tuple[Any, Any]:
        hsize = c_prev.shape[-1]
        if gates.shape[-1] != 4 * hsize or gates.shape[:-1] != c_prev.shape[:-1]:
            raise ShapeError(
                f"lstm_cell: expected gates (B, {4 * hsize}) for a cell state {c_prev.shape}, "
                f"got {gates.shape}"
            )
        act = np.empty_like(gates)
        act[:, : 2 * hsize] = _sigmoid(gates[:, : 2 * hsize])
        act[:, 2 * hsize : 3 * hsize] = np.tanh(gates[:, 2 * hsize : 3 * hsize])
        act[:, 3 * hsize :] = _sigmoid(gates[:, 3 * hsize :])
        i, f, g, o = np.split(act, 4, axis=1)
        c = f * c_prev + i * g
        tc = np.tanh(c)
        self.save_for_backward(act, c_prev, tc)
        return o * tc, c

    def backward(self, gh: Any, gc: Any) -> tuple[Any, Any]:
        act, c_prev, tc = self.saved_tensors
        i, f, g, o = np.split(act, 4, axis=1)
        gc = gc + gh * o * (1 - tc * tc)
        ggates = np.empty_like(act)
        hsize = c_prev.shape[-1]
        ggates[:, :hsize] = gc * g * i * (1 - i)
        ggates[:, hsize : 2 * hsize] = gc * c_prev * f * (1 - f)
        ggates[:, 2 * hsize : 3 * hsize] = gc * i * (1 - g * g)
        ggates[:, 3 * hsize :] = gh * tc * o * (1 - o)
        return ggates, gc * f


class GRUCell(Function):
    """x-gates (B, 3H), h-gates (B, 3H) in PyTorch's order r, z, n, and h_prev -> h.

    r = s(xr + hr), z = s(xz + hz), n = tanh(xn + r * hn), h = (1 - z) * n + z * h_prev.
    """

    def forward(self, gx: Any, gh: Any, h_prev: Any) -> Any:
        hsize = h_prev.shape[-1]
        if gx.shape != gh.shape or gx.shape[-1] != 3 * hsize:
            raise ShapeError(
                f"gru_cell: expected x-gates and h-gates (B, {3 * hsize}) for a hidden state "
                f"{h_prev.shape}, got {gx.shape} and {gh.shape}"
            )
        xr, xz, xn = np.split(gx, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r = _sigmoid(xr + hr)
        z = _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        self.save_for_backward(r, z, n, hn, h_prev)
        return (1 - z) * n + z * h_prev

    def backward(self, gy: Any) -> tuple[Any, Any, Any]:
        r, z, n, hn, h_prev = self.saved_tensors
        gn = gy * (1 - z) * (1 - n * n)
        gz = gy * (h_prev - n) * z * (1 - z)
        gr = gn * hn * r * (1 - r)
        g_x = np.concatenate([gr, gz, gn], axis=1)
        g_h = np.concatenate([gr, gz, gn * r], axis=1)
        return g_x, g_h, gy * z


def lstm_cell(gates: Tensor, c_prev: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step from pre-activation gates.

    Args:
        gates: x @ W_ih.T + b_ih + h @ W_hh.T + b_hh, shape (B, 4H), gates i, f, g, o.
        c_prev: the previous cell state, shape (B, H).

    Returns:
        (h, c), each (B, H): c = f * c_prev + i * g, h = o * tanh(c).
    """
    return LSTMCell().apply(gates, c_prev)


def gru_cell(x_gates: Tensor, h_gates: Tensor, h_prev: Tensor) -> Tensor:
    """One GRU step from x @ W_ih.T + b_ih and h @ W_hh.T + b_hh, each (B, 3H), gates r, z, n."""
    return GRUCell().apply(x_gates, h_gates, h_prev)
