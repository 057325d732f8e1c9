"""The layer registry: config dicts to layers and back, with errors that name the config path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lamina.nn.layer import Layer
from lamina.registry import Registry
from lamina.schema import ConfigError, check_args

_REGISTRY = Registry("layer type")


def register_layer(name: str | type[Layer]) -> Any:
    """Register a Layer class under a type name, for `from_config`.

    Use as `@register_layer("MyBlock")`, or bare `@register_layer` to register it under
    the class name. The class's `__init__` type hints are checked against config values.

    Examples:
        >>> @nn.register_layer("Scale")
        ... class Scale(nn.Layer):
        ...     def __init__(self, factor: float = 2.0):
        ...         super().__init__()
        ...         self.factor = factor
        ...     def forward(self, x):
        ...         return x * self.factor
        ...     def get_config(self):
        ...         return {"factor": self.factor}
        >>> nn.from_config({"type": "Scale", "factor": 3.0})
    """
    if isinstance(name, type):
        return _register(name.__name__)(name)
    return _register(name)


def _register(name: str) -> Callable[[type[Layer]], type[Layer]]:
    def decorate(cls: type[Layer]) -> type[Layer]:
        if not (isinstance(cls, type) and issubclass(cls, Layer)):
            raise TypeError(f"register_layer({name!r}): {cls!r} is not a Layer subclass")
        _REGISTRY.add(name, cls)
        return cls

    return decorate


def registered_name(cls: type[Layer]) -> str:
    """The name `cls` is registered under."""
    for name, registered in _REGISTRY.items():
        if registered is cls:
            return name
    raise ConfigError(f"{cls.__name__} is not registered; decorate it with @nn.register_layer")


def config_value(v: Any) -> Any:
    """A layer argument as get_config writes it: a tuple as a list, which YAML and JSON
    keep (a kernel size (3, 3) comes back as [3, 3], which the layer takes as well)."""
    return list(v) if isinstance(v, tuple) else v


def layer_types() -> list[str]:
    """Every registered type name, sorted."""
    return _REGISTRY.names()


def from_config(config: Any, path: str = "model") -> Layer:
    """Build a layer (and its children) from a config dict.

    Args:
        config: {"type": name, **constructor arguments}; containers hold "layers": [...].
        path: where this config sits, for error messages (`model.layers[3]`).

    Raises:
        ConfigError: an unknown type, a missing or unknown argument, or a wrong value type.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"{path}: expected a mapping with a 'type' key; got {config!r}")
    if "type" not in config:
        raise ConfigError(f"{path}: missing 'type'; one of {layer_types()}")
    name = config["type"]
    cls = _REGISTRY.lookup(name, f"{path}.type")
    args = {k: v for k, v in config.items() if k != "type"}
    build = getattr(cls, "from_config_args", None)
    if build is not None:
        return build(args, path)
    check_args(cls, args, path)
    try:
        return cls(**args)
    except (ValueError, TypeError) as e:
        said = str(e).removeprefix(f"{name}: ")  # a layer's own check names it already
        raise ConfigError(f"{path}: {name}: {said}") from e
    except MemoryError as e:  # NumPy refuses before allocating, and says how much
        raise ConfigError(f"{path}: {name}: its weights do not fit in memory ({e}); make "
                          "the layer smaller") from None
