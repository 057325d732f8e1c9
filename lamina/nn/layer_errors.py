"""How a layer's call reports bad input: a floating input whose dtype is not the
parameters' is refused (DTypeError), and a shape error is located by the layer's dotted
path in the model, with the constructor argument that would fit where there is one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import DTypeError, ShapeError

if TYPE_CHECKING:
    from lamina.nn.layer import Layer


def check_dtypes(layer: Layer, args: tuple[Any, ...]) -> None:
    """Raise DTypeError where a floating input's dtype is not the layer's parameters'.
    NumPy would promote the step to float64 silently (twice the time and memory, and
    parameters of one dtype given gradients computed in another), and PyTorch refuses."""
    want = None
    for p in layer._params.values():  # a loop, not next() over a generator: every call
        if p.array.dtype.kind == "f":  # of a layer with parameters runs this
            want = p.array.dtype
            break
    if want is None:
        return
    for i, a in enumerate(args):
        got = a.dtype if isinstance(a, (Tensor, np.ndarray)) else None
        if got is None or got == want or got.kind != "f":
            continue
        which = f"input {i}" if len(args) > 1 else "the input"
        raise DTypeError(
            f"{type(layer).__name__}: {which} is {got} but the layer's parameters are {want}; "
            f"convert the input (lm.tensor(x, dtype='{want}'), or x.astype('{want}') for a "
            f"Tensor), or the model to the input's dtype (model.to('{got}'))")


def blame(error: ShapeError, layer: Layer, args: tuple[Any, ...]) -> None:
    """Prefix a shape error with the layer's dotted path, one segment per enclosing layer;
    the layer that raised it adds the fix where one argument would fit the input."""
    if "layer_path" not in error.__dict__:
        cls, message = type(layer).__name__, str(error)
        message = message.removeprefix(f"{cls}: ")  # a layer's own check names it already
        fit = None if isinstance(error, DTypeError) else layer._fits(*args)
        if fit:
            message += f"; if the input is right, build the layer with {fit}"
        error.layer_path = {"path": [], "layer": cls, "message": message}
    info = error.layer_path
    if layer._name is not None:
        info["path"].insert(0, layer._name)
    error.args = (located_message(error, ".".join(info["path"])),)


def located_message(error: ShapeError, where: str) -> str:
    """A layer's shape error, naming the layer at `where`: its dotted path in the model
    (as raised), or another name for the same place (the CLI gives the job's config path)."""
    info = error.layer_path
    prefix = f"{where} ({info['layer']})" if where else info["layer"]
    return f"{prefix}: {info['message']}"
