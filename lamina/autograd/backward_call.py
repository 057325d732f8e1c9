"""One op's part of the backward walk: the graph edge each input stood on when the op
ran (before any later in-place write), the op's backward called (zeros for outputs no
one used, the profiler, anomaly mode), and each gradient it returns checked against its
input's shape and dtype."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import state
from lamina.autograd import complex_rules
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError

if TYPE_CHECKING:
    from lamina.autograd.function import Function


def edge(x: Tensor, f: Function) -> tuple[Any, int]:
    """(creator, output slot) of input x as f read it: where x stood in the graph before
    the first in-place write after f ran, or where it stands now."""
    for write, creator, i, _ in x._extra.get("past", ()):
        if f.seq < write:
            return creator, i
    return x.creator, x.output_index


def shape_seen(x: Tensor, f: Function) -> tuple[int, ...]:
    """x's shape when f read it: an in-place view op (unsqueeze_) may have changed it."""
    if x._extra is not None:
        for write, _, _, shape in x._extra.get("past", ()):
            if f.seq < write:
                return shape
    return x.array.shape


def empty_slots(f: Function) -> list[Any]:
    if f.released:
        raise RuntimeError(
            f"backward: {f.name} was already backpropagated and its saved arrays freed; "
            "call backward(retain_graph=True) the first time to go through a graph twice"
        )
    return [None] * f.n_outputs


def checked_backward(f: Function, gys: list[Any], call: Any) -> tuple[Any, ...]:
    """call(f, gys) under anomaly detection: a failure or a NaN shows f's forward line."""
    from lamina.autograd import anomaly

    try:
        gxs = call(f, gys)
    except Exception:
        anomaly.report(f)
        raise
    anomaly.check(f, gxs)
    return gxs


def call_backward(f: Function, gys: list[Any]) -> tuple[Any, ...]:
    for i, gy in enumerate(gys):
        if gy is None:  # an output nobody used still needs a gradient: zeros
            gys[i] = np.zeros(*f.output_meta[i])
    if f.complex_mode is not None:
        gxs = complex_rules.backward(f, gys, _array_backward)
    else:
        gxs = _array_backward(f, gys)
    if not isinstance(gxs, tuple):
        gxs = (gxs,)
    if len(gxs) != len(f.inputs):
        raise RuntimeError(
            f"{f.name}.backward returned {len(gxs)} gradients; expected {len(f.inputs)}, one "
            "per input (None where needs_input_grad is False)"
        )
    return gxs


def _array_backward(f: Function, gys: list[Any]) -> Any:
    if state.profiler is None:
        return f.backward(*gys)
    return state.profiler.run(f.name(), f.backward, gys)


def checked_grad(f: Function, x: Tensor, gx: Any) -> Any:
    """The gradient for input x, in x's dtype: an op that promoted its float inputs (float32
    with float64) computed in the wider one, and each input gets its gradient back in its
    own dtype, as PyTorch's autograd gives it."""
    if gx is None:
        raise RuntimeError(f"{f.name}.backward returned None for an input that requires grad")
    want, shape = x.array.dtype, shape_seen(x, f)
    if gx.shape == shape and gx.dtype != want and gx.dtype.kind == want.kind == "f":
        return gx.astype(want)
    if gx.shape != shape or gx.dtype != want:
        raise ShapeError(
            f"{f.name}.backward: gradient does not match its input; expected shape "
            f"{shape} dtype {want}, got shape {tuple(gx.shape)} dtype {gx.dtype}"
        )
    return gx
