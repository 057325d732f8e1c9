"""One step of a recurrent layer as a module: RNNCell, LSTMCell, GRUCell, with PyTorch's
parameters (`weight_ih` (G*H, I), `weight_hh` (G*H, H), `bias_ih`, `bias_hh`), its
initialisation U(-1/sqrt(H), 1/sqrt(H)) and its call: `cell(x, hx=None)` on (B, I) or
an unbatched (I,) input."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


class _Cell(Layer):
    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self.gates * hidden_size
        self.weight_ih = Parameter(np.empty((g, input_size), np.float32))
        self.weight_hh = Parameter(np.empty((g, hidden_size), np.float32))
        self.bias_ih = Parameter(np.empty(g, np.float32)) if bias else None
        self.bias_hh = Parameter(np.empty(g, np.float32)) if bias else None
        bound = 1 / math.sqrt(hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _batch(self, x: Tensor) -> tuple[Tensor, bool]:
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ShapeError(f"{type(self).__name__}: expected input (B, {self.input_size}) or "
                             f"({self.input_size},); got {tuple(x.shape)}")
        return (x.unsqueeze(0), True) if x.ndim == 1 else (x, False)

    def _zeros(self, x: Tensor) -> Tensor:
        return Tensor(np.zeros((x.shape[0], self.hidden_size), x.dtype))

    def _state(self, h: Any, x: Tensor, unbatched: bool) -> Tensor:
        if h is None:
            return self._zeros(x)
        return h.unsqueeze(0) if unbatched else h

    def get_config(self) -> dict[str, Any]:
        return {"input_size": self.input_size, "hidden_size": self.hidden_size,
                "bias": self.bias}

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


@register_layer("RNNCell")
class RNNCell(_Cell):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    Examples:
        >>> cell = nn.RNNCell(3, 4)
        >>> cell(lm.ones(2, 3)).shape
        lamina.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh") -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, bias)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state, (B, H) (or (H,) for an unbatched input)."""
        x, unbatched = self._batch(x)
        h = self._state(hx, x, unbatched)
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh,
                                                                   self.bias_hh)
        out = F.tanh(pre) if self.nonlinearity == "tanh" else F.relu(pre)
        return out.squeeze(0) if unbatched else out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "nonlinearity": self.nonlinearity}


@register_layer("LSTMCell")
class LSTMCell(_Cell):
    """One LSTM step (gates i, f, g, o, PyTorch's order): returns (h', c').

    Examples:
        >>> cell = nn.LSTMCell(3, 4)
        >>> h, c = cell(lm.ones(2, 3))
        >>> h.shape, c.shape
        (lamina.Size([2, 4]), lamina.Size([2, 4]))
    """

    gates = 4

    def forward(self, x: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        """(h', c'), each (B, H); hx is (h, c) or None (zeros)."""
        x, unbatched = self._batch(x)
        h, c = (None, None) if hx is None else hx
        h, c = self._state(h, x, unbatched), self._state(c, x, unbatched)
        gates = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh,
                                                                     self.bias_hh)
        h, c = F.lstm_cell(gates, c)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


@register_layer("GRUCell")
class GRUCell(_Cell):
    """One GRU step (gates r, z, n, PyTorch's order and formula): returns h'.

    Examples:
        >>> cell = nn.GRUCell(3, 4)
        >>> cell(lm.ones(3)).shape
        lamina.Size([4])
    """

    gates = 3

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        """The next hidden state, (B, H) (or (H,) for an unbatched input)."""
        x, unbatched = self._batch(x)
        h = self._state(hx, x, unbatched)
        out = F.gru_cell(F.linear(x, self.weight_ih, self.bias_ih),
                         F.linear(h, self.weight_hh, self.bias_hh), h)
        return out.squeeze(0) if unbatched else out
