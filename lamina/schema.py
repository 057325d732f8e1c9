"""Checking plain config values against a constructor's signature and type hints.

Used for layer configs, and for the dataset, optimizer, scheduler and algorithm sections
of a job: every error starts with the path in the config (`model.layers[3].kernel_size`).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union


class ConfigError(ValueError):
    """A config value is missing, unknown or of the wrong type; the message starts with its path."""


def check_args(target: type | Callable[..., Any], args: Mapping[str, Any], path: str,
               skip: tuple[str, ...] = ()) -> None:
    """Check config arguments against a class's `__init__` (or a function's) signature.

    Args:
        target: the class or function the arguments will be passed to as keywords.
        args: the config values.
        path: the config path of `args`, for messages.
        skip: parameters filled by the caller, not by the config (an optimizer's params).

    Raises:
        ConfigError: an unknown or missing argument, or a value of the wrong type.
    """
    fn = target.__init__ if isinstance(target, type) else target
    name = getattr(target, "__name__", str(target))
    hints = typing.get_type_hints(fn)
    params = {n: p for n, p in inspect.signature(fn).parameters.items()
              if n != "self" and n not in skip
              and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    for key in args:
        if key not in params:
            raise ConfigError(f"{path}.{key}: unknown argument of {name}; "
                              f"allowed: {sorted(params)}")
    for key, p in params.items():
        if key not in args:
            if p.default is p.empty:
                raise ConfigError(f"{path}.{key}: missing, required by {name}")
            continue
        hint = hints.get(key, Any)
        if not _matches(args[key], hint):
            raise ConfigError(f"{path}.{key}: expected {_describe(hint)}, got "
                              f"{type(args[key]).__name__} {args[key]!r}")


def _matches(value: Any, hint: Any) -> bool:
    origin, targs = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(_matches(value, h) for h in targs)
    if origin is Literal:
        return value in targs
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin in (tuple, list):  # YAML gives lists for both
        if not isinstance(value, (list, tuple)):
            return False
        if origin is tuple and targs and targs[-1] is not Ellipsis:
            return len(value) == len(targs) and all(map(_matches, value, targs))
        return all(_matches(v, targs[0]) for v in value) if targs else True
    if origin is dict or hint is dict:
        return isinstance(value, Mapping)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _describe(hint: Any) -> str:
    origin, targs = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(h) for h in targs)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in targs)
    if hint is type(None):
        return "None"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_describe(a) for a in targs if a is not ...)}]"
    return getattr(hint, "__name__", str(hint))
