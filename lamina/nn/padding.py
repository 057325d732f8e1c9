"""Padding layers, PyTorch's: constant (and zero), reflection, replication and circular
padding of the last 1, 2 or 3 axes."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


class _Pad(Layer):
    """`padding` an int (every side) or 2 * nd ints (left, right, top, bottom, front,
    back), as F.pad takes them."""

    nd = 1
    mode = "constant"

    def __init__(self, padding: int | list[int] | tuple[int, ...]) -> None:
        super().__init__()
        sides = 2 * self.nd
        self.padding = ((int(padding),) * sides if isinstance(padding, int)
                        else tuple(int(p) for p in padding))
        if len(self.padding) != sides:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {sides} ints; "
                             f"got {padding!r}")

    def forward(self, input: Tensor) -> Tensor:
        value = getattr(self, "value", None) if self.mode == "constant" else None
        return F.pad(input, self.padding, self.mode, value)

    def extra_repr(self) -> str:
        return f"{self.padding}"

    def get_config(self) -> dict[str, Any]:
        return {"padding": list(self.padding)}


class _ConstantPad(_Pad):
    def __init__(self, padding: int | list[int] | tuple[int, ...], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "value": self.value}


class _ZeroPad(_Pad):
    pass


def _family(mode: str, base: type[_Pad], prefix: str) -> list[type[_Pad]]:
    classes = []
    for nd in (1, 2, 3):
        name = f"{prefix}{nd}d"
        args = "1, 0.5" if base is _ConstantPad else "1"
        doc = (f"{prefix.replace('Pad', '')} padding of the last {nd} ax{'i' if nd == 1 else 'e'}s"
               f" (PyTorch's nn.{name}).\n\n    Example:\n        >>> nn.{name}({args})(lm.zeros("
               f"{', '.join(['1'] * 2 + ['3'] * nd)})).shape\n        lamina.Size([1, 1, "
               f"{', '.join(['5'] * nd)}])\n    ")
        cls = type(name, (base,), {"nd": nd, "mode": mode, "__doc__": doc,
                                   "__module__": __name__})
        classes.append(register_layer(name)(cls))
    return classes


ConstantPad1d, ConstantPad2d, ConstantPad3d = _family("constant", _ConstantPad, "ConstantPad")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family("constant", _ZeroPad, "ZeroPad")
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family("reflect", _Pad, "ReflectionPad")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family("replicate", _Pad,
                                                               "ReplicationPad")
CircularPad1d, CircularPad2d, CircularPad3d = _family("circular", _Pad, "CircularPad")
