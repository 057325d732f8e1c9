"""`nn.utils.stateless.functional_call` (and `lamina.func.functional_call`): run a module
with other tensors in place of its parameters and buffers, the module left as it was.

    >>> from lamina.nn.utils import stateless
    >>> stateless.functional_call(nn.Linear(1, 1), {"weight": lm.ones(1, 1),
    ...                                             "bias": lm.ones(1)}, lm.ones(1, 1))
    tensor([[2.]])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lamina.autograd.tensor import Tensor


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: Mapping[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with each named parameter or buffer replaced by the tensor
    the dict (or the dicts, merged) gives it; the gradients flow to those tensors. Names
    are the module's state-dict names; with `strict`, every one must be given. A tied
    weight given under one of its names serves under all of them (`tie_weights`).

    Examples:
        >>> fc = nn.Linear(2, 1)
        >>> w = {"weight": lm.ones(1, 2), "bias": lm.zeros(1)}
        >>> nn.utils.stateless.functional_call(fc, w, (lm.tensor([[1.0, 2.0]]),))
        tensor([[3.]])
    """
    dicts = parameter_and_buffer_dicts
    given: dict[str, Tensor] = {}
    for d in (dicts if isinstance(dicts, (list, tuple)) else [dicts]):
        for name, value in d.items():
            if name in given:
                raise ValueError(f"functional_call: {name!r} is given in more than one dict")
            given[name] = value
    owners = _owners(module)
    unknown = [n for n in given if n not in owners]
    if unknown:
        raise ValueError(f"functional_call: the module has no parameter or buffer named "
                         f"{unknown}")
    if strict:
        missing = [n for n in owners if n not in given]
        if missing:
            raise RuntimeError(f"functional_call: strict: missing {missing}")
    if tie_weights:
        for name, (_, _, original) in owners.items():
            if name not in given:
                tied = [g for g, (_, _, o) in owners.items() if o is original and g in given]
                if tied:
                    given[name] = given[tied[0]]
    saved = [(layer, attr, layer.__dict__.get(attr)) for name, (layer, attr, _) in
             owners.items() if name in given]
    try:
        for name, (layer, attr, _) in owners.items():
            if name in given:
                object.__setattr__(layer, attr, given[name])
        args = args if isinstance(args, tuple) else (() if args is None else (args,))
        return module(*args, **(kwargs or {}))
    finally:
        for layer, attr, value in saved:
            object.__setattr__(layer, attr, value)


def _owners(module: Any) -> dict[str, tuple[Any, str, Any]]:
    """Every parameter's and buffer's name -> (the layer holding it, its attribute, it),
    tied ones under each of their names."""
    out = {}
    for path, layer in module.named_layers():
        for attr, value in [*layer._params.items(), *layer._buffers.items()]:
            if value is not None:
                out[f"{path}.{attr}" if path else attr] = (layer, attr, value)
    return out


__all__ = ["functional_call"]
