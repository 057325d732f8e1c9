"""Containers that compose layers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import lamina.functions as F
from lamina.errors import ShapeError
from lamina.nn.layer import Layer
from lamina.nn.registry import ConfigError, from_config, register_layer


class _Ordered(Layer):
    """Children named "0", "1", ... in order, so parameters read `0.weight` as in PyTorch;
    a list's access to them."""

    def append(self, layer: Layer) -> _Ordered:
        """Add a layer at the end."""
        _adopt(self, (layer,))
        return self

    def extend(self, layers: Iterable[Layer]) -> _Ordered:
        """Add layers at the end, in order."""
        _adopt(self, layers)
        return self

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._children.values())

    def __getitem__(self, index: int | slice) -> Any:
        layers = list(self._children.values())
        return self._of(layers[index]) if isinstance(index, slice) else layers[index]

    @classmethod
    def _of(cls, layers: list[Layer]) -> _Ordered:
        """A new container of the class's kind holding `layers` (what a slice gives)."""
        raise NotImplementedError


class ModuleList(_Ordered):
    """Layers kept in a list and registered, so their parameters train, save and load
    (PyTorch's ModuleList). It has no forward of its own: a layer's forward calls them.
    A plain Python list of layers is refused on assignment, as it would hide them.

    Examples:
        >>> self.blocks = nn.ModuleList(nn.Linear(64, 64) for _ in range(4))
        >>> for block in self.blocks:
        ...     x = block(x).relu()
    """

    def __init__(self, layers: Iterable[Layer] = ()) -> None:
        super().__init__()
        self.extend(layers)

    @classmethod
    def _of(cls, layers: list[Layer]) -> ModuleList:
        return ModuleList(layers)

    def forward(self, *args: Any) -> Any:
        raise TypeError("ModuleList: it holds layers but has no forward; call them from the "
                        "forward of the layer that holds it (nn.Sequential applies layers "
                        "in order)")

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        """PyTorch's: runs of identical layers as one line, `(0-2): 3 x Linear(...)`."""
        if not self._children:
            return f"{type(self).__name__}()"
        runs: list[list[Any]] = []
        for name, child in self._children.items():
            text = repr(child)
            if runs and runs[-1][2] == text:
                runs[-1][1], runs[-1][3] = name, runs[-1][3] + 1
            else:
                runs.append([name, name, text, 1])
        lines = [f"({first}): {body}" if count == 1 else f"({first}-{last}): {count} x {body}"
                 for first, last, body, count in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(line.replace("\n", "\n  ")
                                                        for line in lines) + "\n)"


LayerList = ModuleList  # lamina's earlier name


@register_layer("Sequential")
class Sequential(_Ordered):
    """Layers applied in order; each one's output is the next one's input.

    Children are named "0", "1", ... so parameters read `0.weight`, as in PyTorch; built
    from an OrderedDict, they take its names (`fc.weight`).
    Config: {"type": "Sequential", "layers": [{"type": "Linear", ...}, ...]}, plus
    "names": [...] where the children are named.

    Examples:
        >>> model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        >>> model[0], len(model)
    """

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], Mapping):
            for name, layer in layers[0].items():
                if not isinstance(layer, Layer):
                    raise TypeError(f"Sequential: expected a Layer for {name!r}, got "
                                    f"{type(layer).__name__}")
                setattr(self, name, layer)
        else:
            self.extend(layers)

    @classmethod
    def _of(cls, layers: list[Layer]) -> Sequential:
        return Sequential(*layers)

    def forward(self, x: Any) -> Any:
        for layer in self._children.values():
            x = layer(x)
        return x

    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"layers": [layer.to_config() for layer in self]}
        names = list(self._children)
        if names != [str(i) for i in range(len(names))]:
            config["names"] = names
        return config

    def extra_repr(self) -> str:
        return ""

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> Sequential:
        _only(args, {"layers", "names"}, path, "Sequential")
        layers = _layers(args, "layers", path)
        names = args.get("names")
        if names is None:
            return cls(*layers)
        if not isinstance(names, list) or len(names) != len(layers):
            raise ConfigError(f"{path}.names: expected one name per layer ({len(layers)}); "
                              f"got {names!r}")
        return cls(dict(zip(names, layers)))


def _only(args: Mapping[str, Any], allowed: set[str], path: str, name: str) -> None:
    unknown = set(args) - allowed
    if unknown:
        raise ConfigError(f"{path}.{sorted(unknown)[0]}: unknown argument of {name}; "
                          f"allowed: {sorted(allowed)}")


def _layers(args: Mapping[str, Any], key: str, path: str) -> list[Layer]:
    """The layers of a container's config list `key`, each built at its own path."""
    configs = args.get(key)
    if not isinstance(configs, list):
        raise ConfigError(f"{path}.{key}: expected a list of layer configs, got "
                          f"{type(configs).__name__}")
    return [from_config(c, f"{path}.{key}[{i}]") for i, c in enumerate(configs)]


def _adopt(container: Layer, layers: Iterable[Layer]) -> None:
    """Register layers as the container's next children, named "0", "1", ... in order."""
    for layer in layers:
        if not isinstance(layer, Layer):
            raise TypeError(f"{type(container).__name__}: expected a Layer, got "
                            f"{type(layer).__name__}")
        setattr(container, str(len(container._children)), layer)


def _one_tensor(container: Layer, outputs: list[Any]) -> None:
    """Refuse a child's tuple output (an RNN's (output, state)), which cannot be added or
    joined, naming the fix."""
    if any(isinstance(y, tuple) for y in outputs):
        raise TypeError(f"{type(container).__name__}: a layer inside returns a tuple, which "
                        "cannot be combined; build a recurrent layer with output='sequence' "
                        "or 'last'")


@register_layer("Identity")
class Identity(Layer):
    """Returns its input: a placeholder, or a Residual's plain shortcut written out."""

    def forward(self, x: Any) -> Any:
        return x


@register_layer("Residual")
class Residual(Layer):
    """y = layers(x) + shortcut(x): a block of layers in order, plus its own input (He et
    al., 2016). The shortcut is the input itself unless a `shortcut` layer is given (a 1x1
    convolution, say, where the block changes the shape).

    Children are named "0", "1", ... and "shortcut", so parameters read `0.weight`.
    Config: {"type": "Residual", "layers": [...], "shortcut": {"type": ...}}.

    Examples:
        >>> block = nn.Residual(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64))
    """

    def __init__(self, *layers: Layer, shortcut: Layer | None = None) -> None:
        super().__init__()
        if not layers:
            raise ValueError("Residual: needs at least one layer")
        _adopt(self, layers)
        if shortcut is not None:
            self.shortcut = shortcut

    def forward(self, x: Any) -> Any:
        y = x
        for name, layer in self._children.items():
            if name != "shortcut":
                y = layer(y)
        skip = self.shortcut(x) if "shortcut" in self._children else x
        _one_tensor(self, [y, skip])
        if y.shape != skip.shape:
            fix = ("make its 'shortcut' layer map the input" if "shortcut" in self._children
                   else "give the block a 'shortcut' layer that maps its input")
            raise ShapeError(
                f"Residual: the layers give {tuple(y.shape)} but the shortcut gives "
                f"{tuple(skip.shape)}; "
                f"they are added, so {fix} to {tuple(y.shape)} (a Linear, or a Conv with "
                "kernel_size 1)")
        return y + skip

    def get_config(self) -> dict[str, Any]:
        children = dict(self._children)
        shortcut = children.pop("shortcut", None)
        config: dict[str, Any] = {"layers": [layer.to_config() for layer in children.values()]}
        if shortcut is not None:
            config["shortcut"] = shortcut.to_config()
        return config

    def extra_repr(self) -> str:
        return ""

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> Residual:
        _only(args, {"layers", "shortcut"}, path, "Residual")
        layers = _layers(args, "layers", path)
        if not layers:
            raise ConfigError(f"{path}.layers: a Residual needs at least one layer")
        shortcut = args.get("shortcut")
        return cls(*layers, shortcut=None if shortcut is None
                   else from_config(shortcut, f"{path}.shortcut"))


@register_layer("Concat")
class Concat(Layer):
    """Every branch applied to the same input, their outputs joined along `axis` (an
    Inception block's branches, or features of two kinds side by side).

    Children are named "0", "1", ..., one per branch; a branch of several layers is a
    Sequential. Config: {"type": "Concat", "branches": [...], "axis": 1}.

    Examples:
        >>> both = nn.Concat(nn.Linear(8, 4), nn.Linear(8, 2))   # (N, 8) -> (N, 6)
    """

    def __init__(self, *branches: Layer, axis: int = 1) -> None:
        super().__init__()
        if len(branches) < 2:
            raise ValueError(f"Concat: needs at least two branches; got {len(branches)}")
        _adopt(self, branches)
        self.axis = axis

    def forward(self, x: Any) -> Any:
        outs = [branch(x) for branch in self._children.values()]
        _one_tensor(self, outs)
        ndim = {y.ndim for y in outs}
        rest = {y.shape[:self.axis % y.ndim] + y.shape[self.axis % y.ndim + 1:]
                for y in outs if -y.ndim <= self.axis < y.ndim}
        if len(ndim) != 1 or len(rest) != 1:
            shapes = [tuple(y.shape) for y in outs]
            raise ShapeError(f"Concat: branches give {shapes}, which cannot "
                             f"be joined along axis {self.axis}: every other axis must match")
        return F.concat(outs, axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        return {"branches": [b.to_config() for b in self._children.values()], "axis": self.axis}

    def extra_repr(self) -> str:
        return f"axis={self.axis}"

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> Concat:
        _only(args, {"branches", "axis"}, path, "Concat")
        axis = args.get("axis", 1)
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise ConfigError(f"{path}.axis: expected int, got {type(axis).__name__} {axis!r}")
        branches = _layers(args, "branches", path)
        if len(branches) < 2:
            raise ConfigError(f"{path}.branches: a Concat needs at least two branches; "
                              f"got {len(branches)}")
        return cls(*branches, axis=axis)
