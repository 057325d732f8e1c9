"""Containers that compose layers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lamina.nn.layer import Layer
from lamina.nn.registry import ConfigError, from_config, register_layer


@register_layer("Sequential")
class Sequential(Layer):
    """Layers applied in order; each one's output is the next one's input.

    Children are named "0", "1", ... so parameters read `0.weight`, as in PyTorch.
    Config: {"type": "Sequential", "layers": [{"type": "Linear", ...}, ...]}.

    Example:
        >>> model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        >>> model[0], len(model)
    """

    def __init__(self, *layers: Layer) -> None:
        super().__init__()
        for layer in layers:
            self.append(layer)

    def append(self, layer: Layer) -> Sequential:
        """Add a layer at the end."""
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential: expected a Layer, got {type(layer).__name__}")
        setattr(self, str(len(self._children)), layer)
        return self

    def forward(self, x: Any) -> Any:
        for layer in self._children.values():
            x = layer(x)
        return x

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._children.values())

    def __getitem__(self, index: int | slice) -> Any:
        layers = list(self._children.values())
        if isinstance(index, slice):
            return Sequential(*layers[index])
        return layers[index]

    def get_config(self) -> dict[str, Any]:
        return {"layers": [layer.to_config() for layer in self]}

    def extra_repr(self) -> str:
        return ""

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> Sequential:
        unknown = set(args) - {"layers"}
        if unknown:
            raise ConfigError(f"{path}.{sorted(unknown)[0]}: unknown argument of Sequential; "
                              "allowed: ['layers']")
        layers = args.get("layers")
        if not isinstance(layers, list):
            raise ConfigError(f"{path}.layers: expected a list of layer configs, got "
                              f"{type(layers).__name__}")
        return cls(*[from_config(c, f"{path}.layers[{i}]") for i, c in enumerate(layers)])
