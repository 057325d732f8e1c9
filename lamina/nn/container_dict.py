"""PyTorch's keyed and parameter containers: ModuleDict, ParameterList, ParameterDict.

Like ModuleList they have no forward: a module's forward reads them. What they hold is
registered under its key (or position), so it trains, saves and loads under the names
PyTorch gives it (`heads.cls.weight`, `scales.0`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from lamina import legacy_tensors
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, Parameter


class _Keyed(Layer):
    """The dict protocol over one of a module's tables (`_children` or `_params`)."""

    _table = "_children"

    def _entries(self) -> dict[str, Any]:
        return self.__dict__[self._table]

    def __getitem__(self, key: str) -> Any:
        return self._entries()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, self._wrap(key, value))

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __contains__(self, key: object) -> bool:
        return key in self._entries()

    def keys(self) -> Iterable[str]:
        """The names, in insertion order."""
        return self._entries().keys()

    def values(self) -> Iterable[Any]:
        """The entries, in insertion order."""
        return self._entries().values()

    def items(self) -> Iterable[tuple[str, Any]]:
        """(name, entry) pairs, in insertion order."""
        return self._entries().items()

    def update(self, entries: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add or replace entries from a mapping or (name, entry) pairs."""
        pairs = entries.items() if isinstance(entries, Mapping) else entries
        for key, value in pairs:
            self[key] = value

    def pop(self, key: str) -> Any:
        """Remove and return the entry under `key`."""
        value = self._entries()[key]
        del self[key]
        return value

    def forward(self, *args: Any) -> Any:
        """Refused: a container has no forward; the module that owns it reads it."""
        raise TypeError(f"{type(self).__name__}: it holds modules or parameters but has no "
                        "forward; use them from the forward of the module that holds it")


class ModuleDict(_Keyed):
    """Modules by name, registered.

    Examples:
        >>> heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 2)})
        >>> sorted(heads), heads["box"].out_features
        (['box', 'cls'], 2)
    """

    def __init__(self, modules: Mapping[str, Layer] | Iterable[tuple[str, Layer]] | None = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _wrap(self, key: str, module: Any) -> Layer:
        if not isinstance(module, Layer):
            raise TypeError(f"ModuleDict: {key!r} must be a Module, got {type(module).__name__}")
        return module


def _parameter(value: Any) -> Parameter:
    """A Parameter as PyTorch's containers make one: tensors and arrays are wrapped."""
    if isinstance(value, Parameter):
        return value
    return Parameter(value.array if isinstance(value, Tensor) else np.asarray(value))


def _size(p: Tensor) -> str:
    return "x".join(map(str, p.shape))


def _legacy_name(p: Tensor) -> str:
    """PyTorch's legacy type name of a tensor's dtype (FloatTensor), as its ParameterDict
    prints."""
    return next((name for name in legacy_tensors.__all__
                 if getattr(getattr(legacy_tensors, name), "dtype", None) == p.dtype),
                str(p.dtype))


class ParameterList(Layer):
    """Parameters in a list, registered as "0", "1", ...

    Examples:
        >>> scales = nn.ParameterList([nn.Parameter(lm.ones(2)) for _ in range(3)])
        >>> len(scales), [n for n, _ in scales.named_parameters()]
        (3, ['0', '1', '2'])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value: Any) -> ParameterList:
        """Add a parameter at the end (a tensor is made a Parameter)."""
        setattr(self, str(len(self._params)), _parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add parameters at the end, in order."""
        for v in values:
            self.append(v)
        return self

    def __getitem__(self, index: int) -> Parameter:
        return list(self._params.values())[index]

    def __setitem__(self, index: int, value: Any) -> None:
        setattr(self, str(index % len(self)), _parameter(value))

    def __len__(self) -> int:
        return len(self._params)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._params.values())

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): Parameter containing: [lamina.{p.dtype} of size "
                         f"{_size(p)}]" for k, p in enumerate(self))

    def forward(self, *args: Any) -> Any:
        """Refused: a ParameterList holds parameters for another module's forward."""
        raise TypeError("ParameterList: it holds parameters but has no forward")


class ParameterDict(_Keyed):
    """Parameters by name, registered.

    Examples:
        >>> p = nn.ParameterDict({"scale": nn.Parameter(lm.ones(2))})
        >>> p["scale"].shape, "scale" in p
        (lamina.Size([2]), True)
    """

    _table = "_params"

    def __init__(self, parameters: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def _wrap(self, key: str, value: Any) -> Parameter:
        return _parameter(value)

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): Parameter containing: [lamina.{_legacy_name(p)} of size "
                         f"{_size(p)}]" for k, p in self._params.items())


class Container(Layer):
    """PyTorch's deprecated container: keyword arguments become children. Warns, as
    PyTorch's does; subclass nn.Module instead.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     nn.Container(act=nn.ReLU())
        Container(
          (act): ReLU()
        )
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
