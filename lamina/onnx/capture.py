"""Tracing a model for export: the plan's tracer, with three differences.

- A layer whose type has a module exporter (a recurrent layer: ONNX has its own LSTM op,
  which no single lamina op maps to) is recorded as one node, `ModuleCall`, not traced
  into.
- A tensor made before the call that is neither an input nor a parameter is a constant
  (the graph is a snapshot; a plan refuses it because it runs again).
- Every op and every constant notes the line of the user's code that made it, for errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.outputs import flatten
from lamina.onnx.graph import ExportError
from lamina.plan.trace import Trace, TraceError, Tracer, _user_frame, tracing


class ModuleCall(Function):
    """A call of a layer exported as a whole; `kwargs` are its keyword arguments."""

    def __init__(self, layer: Layer, path: str, n_args: int, kwargs: dict[str, Any]) -> None:
        self.layer, self.path, self.n_args, self.kwargs = layer, path, n_args, kwargs

    @property
    def name(self) -> str:
        return type(self.layer).__name__


class ExportTracer(Tracer):
    def __init__(self, inputs: Sequence[Tensor], params: Sequence[Tensor]) -> None:
        super().__init__(inputs, params)
        self.lines: list[str] = []  # per node: where the user's code called it
        self.made_at: dict[int, str] = {}  # value number of a constant -> where it was made

    def _other(self, t: Tensor) -> int:
        n = self._value(t, "const")  # made before the call or during it: the graph keeps it
        self.made_at[n] = _user_frame()
        return n

    def record(self, fn: Function, xs: Sequence[Tensor], outs: Any) -> None:
        super().record(fn, xs, outs)
        self.lines.append(_user_frame())

    def shaped_by_data(self, t: Tensor, how: str) -> None:
        if self._varies(t):
            raise ExportError(f"onnx export: {how}{_user_frame()} gives a result whose shape "
                              "depends on the input's values, which the graph cannot hold; "
                              "multiply by the mask instead (x * mask)")

    def converted(self, t: Tensor, how: str) -> None:
        if self._varies(t):
            raise ExportError(f"onnx export: {how} on a traced value{_user_frame()} turns data "
                              "into Python control flow, which a graph cannot hold: it would "
                              "keep whichever branch the example took. Compute the branch "
                              "with tensor ops (torch.where, masks)")


def trace_model(model: Layer, args: Sequence[Tensor], kwargs: dict[str, Any],
                whole: Callable[[Layer], bool]) -> tuple[Trace, ExportTracer]:
    """Run model(*args, **kwargs) once under the export tracer, without gradients; layers
    for which `whole(layer)` holds are recorded as one ModuleCall each."""
    params = [*model.parameters(), *(b for _, b in model.named_buffers())]
    wrapped = [(layer, path) for path, layer in model.named_modules() if whole(layer)]
    for layer, path in wrapped:
        layer.__dict__["forward"] = _recorded(layer, path)
    try:
        with tracing(args, params, ExportTracer) as tracer, no_grad():
            result = model(*args, **kwargs)
        outputs = flatten(result)
        if not outputs or not all(isinstance(t, Tensor) for t in outputs):
            raise ExportError(f"onnx export: the model must return tensors (or tuples of "
                              f"them); got {type(result).__name__}")
        return tracer.finish(outputs), tracer
    except TraceError as e:  # nested tracing, or an output no traced op made
        raise ExportError(f"onnx export: {str(e).removeprefix('plan: ')}") from None
    finally:
        for layer, _ in wrapped:
            layer.__dict__.pop("forward", None)


def _recorded(layer: Layer, path: str) -> Callable[..., Any]:
    forward = type(layer).forward.__get__(layer)

    def call(*args: Any, **kwargs: Any) -> Any:
        tracer = state.tracer
        state.tracer = None  # the layer's own ops are not traced: its exporter writes them
        try:
            out = forward(*args, **kwargs)
        finally:
            state.tracer = tracer
        xs = [a for a in args if isinstance(a, Tensor)]
        outs = flatten(out)
        tracer.record(ModuleCall(layer, path, len(xs), kwargs), xs,
                      tuple(outs) if len(outs) > 1 else outs[0])
        return out

    return call
