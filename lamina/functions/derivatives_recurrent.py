"""Differentiable backward rules of the fused recurrent ops (LSTM and GRU cells and whole
sequences): each differentiates its recurrence written again step by step in lamina's
ops (lamina.functions.derivatives_layers.through), in PyTorch's gate order."""

from __future__ import annotations

from typing import Any

from lamina.autograd.function import Function
from lamina.autograd.higher_order import derivative
from lamina.autograd.tensor import Tensor
from lamina.functions import activation as act
from lamina.functions import array
from lamina.functions import product as mm
from lamina.functions.connection import Embedding
from lamina.functions.derivatives_layers import through
from lamina.functions.recurrent import LSTMCell, LSTMSequence
from lamina.functions.recurrent_gru import GRUCell, GRUSequence
from lamina.functions.recurrent_lookup import LSTMLookupSequence


def _lstm_step(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """(h, c) of one step from pre-activation gates i, f, g, o."""
    hsize = c.shape[-1]
    i, f = (act.Sigmoid().apply(gates[:, k * hsize:(k + 1) * hsize]) for k in (0, 1))
    g = act.Tanh().apply(gates[:, 2 * hsize:3 * hsize])
    o = act.Sigmoid().apply(gates[:, 3 * hsize:])
    c = f * c + i * g
    return o * act.Tanh().apply(c), c


def _gru_step(gx: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    """h of one step from x-gates and h-gates r, z, n."""
    hsize = h.shape[-1]
    r, z = (act.Sigmoid().apply(gx[:, k * hsize:(k + 1) * hsize]
                                + gh[:, k * hsize:(k + 1) * hsize]) for k in (0, 1))
    n = act.Tanh().apply(gx[:, 2 * hsize:] + r * gh[:, 2 * hsize:])
    return (1 - z) * n + z * h


def _h_gates(h: Tensor, W_hh: Tensor, b_hh: Any) -> Tensor:
    gates = mm.matmul(h, W_hh.transpose(0, 1))
    return gates if b_hh is None else gates + b_hh


@derivative(LSTMCell)
def _lstm_cell(f: Any, gh: Tensor, gc: Tensor) -> tuple[Any, ...]:
    return through(f, (gh, gc), _lstm_step)


@derivative(GRUCell)
def _gru_cell(f: Any, gy: Tensor) -> tuple[Any, ...]:
    return through(f, (gy,), _gru_step)


class _Restored(Function):
    """x with the values it had when an op overwrote its array in place: the values
    given, the gradient x's own (the identity)."""

    def __init__(self, values: Any) -> None:
        self.values = values

    def forward(self, x: Any) -> Any:
        return self.values.copy()

    def backward(self, gy: Any) -> Any:
        return gy


@derivative(_Restored)
def _restored(f: Any, gy: Tensor) -> Tensor:
    return gy


def _x_gates(f: Any) -> Tensor:
    """The sequence op's x-gates as it read them. nn.LSTM lets the op activate them in
    place (nothing else holds them), so where its saved activations are the input's own
    array, the op that made the x-gates (a Linear, without options) runs again on its
    inputs for their values."""
    xg = f.inputs[0]
    if f.saved_tensors[0] is not xg.array:
        return xg
    creator = xg.creator
    if creator is None or type(creator).__init__ is not Function.__init__:
        raise NotImplementedError(
            f"double backward through {f.name}: its x-gates were overwritten in place and "
            f"the op that made them ({getattr(creator, 'name', 'a leaf')}) cannot be run "
            "again here; call F.lstm_sequence on x-gates that something else holds")
    again = type(creator)()
    again.needs_input_grad = (False,) * len(creator.inputs)
    values = again.forward(*[x.array for x in creator.inputs])
    values = values[xg.output_index] if isinstance(values, tuple) else values
    return _Restored(values).apply(xg)


def _lstm_steps(xg: Tensor, h: Tensor, c: Tensor, W_hh: Tensor, b_hh: Any) -> Any:
    """Every step's h, and the last h and c, from the x-gates (T, B, 4H)."""
    hs = []
    for t in range(xg.shape[0]):
        h, c = _lstm_step(xg[t] + _h_gates(h, W_hh, b_hh), c)
        hs.append(h)
    return array.stack(hs), h, c


@derivative(LSTMSequence)
def _lstm_sequence(f: Any, *gys: Tensor) -> tuple[Any, ...]:
    restored = _x_gates(f)

    def build(xg: Tensor, h: Tensor, c: Tensor, W_hh: Tensor, b_hh: Any = None) -> Any:
        return _lstm_steps(restored, h, c, W_hh, b_hh)
    return through(f, gys, build)


@derivative(LSTMLookupSequence)
def _lstm_lookup_sequence(f: Any, *gys: Tensor) -> tuple[Any, ...]:
    def build(ids: Tensor, table: Tensor, h: Tensor, c: Tensor, W_hh: Tensor,
              b_hh: Any = None) -> Any:
        return _lstm_steps(Embedding().apply(ids, table), h, c, W_hh, b_hh)
    return through(f, gys, build)


@derivative(GRUSequence)
def _gru_sequence(f: Any, *gys: Tensor) -> tuple[Any, ...]:
    def build(xg: Tensor, h: Tensor, W_hh: Tensor, b_hh: Any = None) -> Any:
        hs = []
        for t in range(xg.shape[0]):
            h = _gru_step(xg[t], _h_gates(h, W_hh, b_hh), h)
            hs.append(h)
        return array.stack(hs), h
    return through(f, gys, build)
