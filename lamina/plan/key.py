"""The model's part of a plan's key: each layer's mode and plain settings, and which
parameters are trained; and whether the tensors the programs bind were replaced."""

from __future__ import annotations

from typing import Any

from lamina.nn.layer import Layer, edit_count

_PLAIN = frozenset((bool, int, float, str, type(None)))


class ModelKey:
    """Called at every step. The model is walked again only when a layer attribute was
    assigned since the last call (edit_count), or a parameter's array or requires_grad,
    or a buffer's array, changed: a step's Python runs with caches cold from the GEMMs,
    where walking every layer's attributes every step would cost a visible share of a
    small model's step."""

    def __init__(self, model: Layer) -> None:
        self.model = model
        self.bound: tuple[Any, ...] = ()  # what the programs were traced on
        self.cached: tuple[Any, ...] | None = None

    def __call__(self) -> tuple[tuple[Any, ...], bool]:
        """The key, and whether the programs' tensors were replaced since the last call
        (a layer, a parameter, a buffer's array), which makes every program stale."""
        cached = self.cached
        if cached is not None and cached[0] == edit_count():
            for t, data, flag in cached[1]:
                if t.array is not data or t._requires_grad is not flag:
                    break
            else:
                return cached[2], False
        layers = _tree(self.model)
        params = [p for layer in layers for p in layer._params.values()]
        buffers = [b for layer in layers for b in layer._buffers.values() if b is not None]
        # A program reads each parameter's .array afresh, but binds the parameter itself and
        # each buffer's array (batch norm updates its statistics in place).
        bound = ([(id(p), p.array.dtype, p.array.shape) for p in params],
                 [id(b.array) for b in buffers])
        rebound = bound != self.bound
        self.bound = bound
        key = Hashed((tuple([_settings(layer) for layer in layers]),
                      tuple([p._requires_grad for p in params])))
        # Holding the arrays keeps their ids from being reused while cached.
        self.cached = (edit_count(), [(t, t.array, t._requires_grad)
                                      for t in (*params, *buffers)], key)
        return key, rebound


class Hashed:
    """A key hashed once: the plan's program cache looks its key up at every step, and
    Python hashes a tuple afresh each time, here every layer's settings (a transformer's
    hash costs as much as a small kernel)."""

    __slots__ = ("value", "hash")

    def __init__(self, value: tuple[Any, ...]) -> None:
        self.value, self.hash = value, hash(value)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Hashed) and self.hash == other.hash
                                 and self.value == other.value)


def _settings(layer: Layer) -> tuple[Any, ...]:
    """The layer's attributes that a trace bakes in as Python values: its mode and plain
    numbers, flags and names (a dropout rate, a temperature a schedule anneals)."""
    return tuple([(k, v) for k, v in vars(layer).items() if type(v) in _PLAIN])


def _tree(model: Layer) -> list[Layer]:
    """The model and every descendant, parents first: named_layers without the names,
    which a key walks at every step after an edit."""
    layers, todo = [], [model]
    while todo:
        layer = todo.pop()
        layers.append(layer)
        todo.extend(reversed(layer._children.values()))
    return layers
