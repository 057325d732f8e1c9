"""One registry for everything lamina builds by name: layer types, optimizers, schedules,
losses, metrics, training algorithms, datasets and ONNX exporters.

A Registry is a dict from name to object with three things more: `register` (a
decorator, refusing a name already taken by another object), `lookup` (an unknown name
is a ConfigError that suggests the closest known one and lists them all), and a `kind`
that the messages use.

Examples:
    >>> from lamina.registry import Registry
    >>> colours = Registry("colour")
    >>> @colours.register("red")
    ... def red(): return "#f00"
    >>> colours.lookup("red")()
    '#f00'
    >>> colours.lookup("rde")
    Traceback (most recent call last):
    ...
    lamina.schema.ConfigError: unknown colour 'rde' (did you mean 'red'?); one of ['red']
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, TypeVar

from lamina.schema import ConfigError

T = TypeVar("T")


class Registry(dict):
    """Names to objects of one kind (see the module's docstring)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def register(self, name: str | None = None) -> Callable[[T], T]:
        """A decorator adding its object under `name` (default: the object's __name__)."""
        def decorate(obj: T) -> T:
            self.add(name or obj.__name__, obj)  # type: ignore[attr-defined]
            return obj

        return decorate

    def add(self, name: str, obj: Any) -> None:
        """Add `obj` under `name`; the same object again is a no-op, another one refused."""
        existing = self.get(name)
        if existing is not None and existing is not obj:
            raise ValueError(f"{self.kind} {name!r} is already registered to {existing!r}")
        self[name] = obj

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self)

    def lookup(self, name: Any, path: str = "") -> Any:
        """The object registered as `name`; a ConfigError naming `path` (a job's key)
        otherwise, with the closest name."""
        if isinstance(name, str) and name in self:
            return self[name]
        close = difflib.get_close_matches(str(name), list(self), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = f"{path}: " if path else ""
        raise ConfigError(f"{where}unknown {self.kind} {name!r}{hint}; one of {self.names()}")
