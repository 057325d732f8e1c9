"""The state stateful layers carry from one call to the next, through a plan.

A recurrent layer with `stateful` set keeps its final state in `layer.state` (None, a
tensor, or a tuple of them: an LSTM's h and c) and starts its next call from it. A plan
passes that state into each program as inputs after the batch, and takes the new state
from the program's last outputs; its structure (`kinds`) is part of the program's key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer


def carriers(model: Layer) -> list[tuple[str, Layer]]:
    """(name, layer) of the layers that carry state from one call to the next."""
    return [(n, layer) for n, layer in model.named_layers() if getattr(layer, "stateful", False)]


def kinds(layers: Sequence[Layer]) -> tuple[Any, ...]:
    """Each layer's state's structure: None, "tensor", or a tuple's length."""
    return tuple(None if s is None else len(s) if isinstance(s, tuple) else "tensor"
                 for s in (layer.state for layer in layers))


def parts(layers: Sequence[Layer]) -> list[Tensor]:
    """The layers' state tensors, laid end to end."""
    return [t for layer in layers for t in _parts(layer.state)]


def count(structure: Sequence[Any]) -> int:
    """How many tensors a state of this structure (from `kinds`) holds."""
    return sum(0 if kind is None else 1 if kind == "tensor" else kind for kind in structure)


def hand_back(layers: Sequence[Layer], structure: Sequence[Any], tensors: Sequence[Any]
              ) -> None:
    """Set each layer's state from `tensors` laid end to end, as `structure` says."""
    rest = iter(tensors)
    for layer, kind in zip(layers, structure):
        taken = [next(rest) for _ in range(count((kind,)))]
        layer.state = None if kind is None else taken[0] if kind == "tensor" else tuple(taken)


def _parts(state: Any) -> tuple[Tensor, ...]:
    return () if state is None else tuple(state) if isinstance(state, tuple) else (state,)
