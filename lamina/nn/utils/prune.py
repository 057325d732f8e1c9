"""`nn.utils.prune`, PyTorch's pruning: a pruned parameter `name` becomes `name_orig` (the
parameter, still trained) times a buffer `name_mask`, recomputed into a plain attribute
`name` before each forward. Pruning again prunes among the entries (or channels) still
kept; `remove` makes the product the parameter again.

    >>> from lamina.nn.utils import prune
    >>> layer = prune.l1_unstructured(nn.Linear(3, 2), "weight", amount=0.5)
    >>> sorted(n for n, _ in layer.named_parameters()), int(layer.weight_mask.sum())
    (['bias', 'weight_orig'], 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.utils.pruning_methods import (
    BasePruningMethod,
    CustomFromMask,
    Identity,
    L1Unstructured,
    LnStructured,
    RandomStructured,
    RandomUnstructured,
    _among_kept,
    _hook_for,
)

__all__ = [
    "BasePruningMethod", "Identity", "RandomUnstructured", "L1Unstructured",
    "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
    "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
    "custom_from_mask", "remove", "is_pruned",
]


def identity(module: Any, name: str) -> Any:
    """Reparametrise `module.name` as `name_orig * name_mask` with a mask of ones.

    Examples:
        >>> layer = prune.identity(nn.Linear(2, 2), "weight")
        >>> [name for name, _ in layer.named_buffers()]
        ['weight_mask']
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: Any) -> Any:
    """Zero `amount` entries of `module.name` chosen at random (an int: that many; a
    float: that fraction, rounded), among those not pruned yet.

    Examples:
        >>> layer = prune.random_unstructured(nn.Linear(5, 2), "weight", amount=0.3)
        >>> int((layer.weight == 0).sum())
        3
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: Any,
                    importance_scores: Any = None) -> Any:
    """Zero the `amount` entries of `module.name` smallest in absolute value (or in
    `importance_scores`, a tensor of its shape), among those not pruned yet.
    Pruning the same parameter again prunes among what is left.

    Examples:
        >>> layer = nn.Linear(4, 1)
        >>> with lm.no_grad():
        ...     _ = layer.weight.copy_(lm.tensor([[0.4, -0.1, 0.3, 0.2]]))
        >>> layer = prune.l1_unstructured(layer, "weight", amount=1)
        >>> layer = prune.l1_unstructured(layer, "weight", amount=1)
        >>> layer.weight_mask
        tensor([[1., 0., 1., 0.]])
    """
    L1Unstructured.apply(module, name, amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: Any, dim: int) -> Any:
    """Zero `amount` whole slices of `module.name` along `dim`, chosen at random.

    Examples:
        >>> layer = prune.random_structured(nn.Conv2d(1, 4, 3), "weight", amount=2, dim=0)
        >>> int((layer.weight_mask.sum(dim=(1, 2, 3)) == 0).sum())
        2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: Any, n: Any, dim: int,
                  importance_scores: Any = None) -> Any:
    """Zero the `amount` slices of `module.name` along `dim` with the smallest `n`-norm
    (`n` an int, inf, -inf or "fro").

    Examples:
        >>> layer = nn.Conv2d(1, 3, 1)
        >>> with lm.no_grad():
        ...     _ = layer.weight.copy_(lm.tensor([1.0, -0.2, 0.5]).view(3, 1, 1, 1))
        >>> layer = prune.ln_structured(layer, "weight", amount=1, n=1, dim=0)
        >>> layer.weight_mask.flatten()
        tensor([1., 0., 1.])
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Any, pruning_method: Any, importance_scores: Any = None,
                        **kwargs: Any) -> None:
    """Prune the `(module, name)` pairs of `parameters` as one vector: `pruning_method`
    (an unstructured method class, such as `L1Unstructured`, with its `amount=`) chooses
    among all their entries at once, so one layer may lose more than another.

    Examples:
        >>> a, b = nn.Linear(2, 1), nn.Linear(2, 1)
        >>> with lm.no_grad():
        ...     _ = a.weight.copy_(lm.tensor([[0.1, 0.2]]))
        ...     _ = b.weight.copy_(lm.tensor([[0.9, 0.3]]))
        >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
        ...                           pruning_method=prune.L1Unstructured, amount=2)
        >>> a.weight_mask, b.weight_mask
        (tensor([[0., 0.]]), tensor([[1., 1.]]))
    """
    pairs = list(parameters)
    if not isinstance(pruning_method, type) or not issubclass(pruning_method,
                                                              BasePruningMethod):
        raise TypeError("global_unstructured: pruning_method must be a pruning method "
                        f"class such as prune.L1Unstructured; got {pruning_method!r}")
    if pruning_method.PRUNING_TYPE != "unstructured":
        raise TypeError("global_unstructured: only 'unstructured' methods can prune "
                         f"globally; {pruning_method.__name__} is "
                         f"{pruning_method.PRUNING_TYPE!r}")
    scores, kept = [], []
    for module, name in pairs:
        pruned = _hook_for(module, name) is not None
        weight = getattr(module, name)
        given = (importance_scores or {}).get((module, name), weight)
        scores.append(np.asarray(given.detach().numpy() if isinstance(given, Tensor)
                                 else given).reshape(-1))
        kept.append(getattr(module, name + "_mask").numpy().reshape(-1) if pruned
                    else np.ones(weight.numel(), scores[-1].dtype))
    method = pruning_method(**kwargs)
    mask = _among_kept(method, np.concatenate(scores), np.concatenate(kept))
    start = 0
    for (module, name), flat in zip(pairs, kept):
        custom_from_mask(module, name, mask[start:start + flat.size])
        start += flat.size


def custom_from_mask(module: Any, name: str, mask: Any) -> Any:
    """Prune `module.name` by a mask of your own (ones kept, zeros pruned).

    Examples:
        >>> layer = prune.custom_from_mask(nn.Linear(2, 1), "bias", mask=lm.tensor([0.0]))
        >>> layer.bias_mask, float(layer.bias.abs())
        (tensor([0.]), 0.0)
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of `module.name` permanent: `name` becomes a parameter again,
    holding orig * mask, and `name_orig`, `name_mask` and the hook are gone.

    Examples:
        >>> layer = prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1)
        >>> layer = prune.remove(layer, "weight")
        >>> sorted(name for name, _ in layer.named_parameters()), int((layer.weight == 0).sum())
        (['bias', 'weight'], 1)
    """
    found = _hook_for(module, name)
    if found is None:
        raise ValueError(f"prune.remove: parameter {name!r} of {type(module).__name__} has "
                         "to be pruned before its pruning can be removed")
    hooks, key = found
    hooks.pop(key).remove(module)
    return module


def is_pruned(module: Any) -> bool:
    """Whether `module` or one of its submodules has a pruned parameter.

    Examples:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        >>> prune.is_pruned(model)
        False
        >>> _ = prune.identity(model[0], "weight")
        >>> prune.is_pruned(model)
        True
    """
    return any(isinstance(hook, BasePruningMethod)
               for m in module.modules()
               for hook in m.__dict__.get("_forward_pre_hooks", {}).values())
