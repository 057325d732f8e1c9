"""The pruning methods of `nn.utils.prune`: each chooses a mask (`compute_mask` on NumPy
arrays) and, as a forward pre-hook, recomputes the pruned parameter as `orig * mask`;
pruning again chooses among what the mask still keeps, as PyTorch's PruningContainer."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Parameter


def _count(amount: Any, size: int) -> int:
    """How many of `size` units `amount` prunes: an int as it is, a fraction rounded."""
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real) or amount < 0 or (
            isinstance(amount, float) and amount > 1):
        raise ValueError(f"prune: amount must be an int >= 0 or a float in [0, 1]; got "
                         f"{amount!r}")
    n = int(amount) if isinstance(amount, numbers.Integral) else round(amount * size)
    if n > size:
        raise ValueError(f"prune: amount={amount} should be at most the {size} units to prune")
    return n


class BasePruningMethod:
    """A way to choose a mask; called as a forward pre-hook, it recomputes the pruned
    parameter from its `_orig` and `_mask`. A subclass sets `PRUNING_TYPE` and defines
    `compute_mask(t, default_mask)`, NumPy arrays in and out.

    Examples:
        >>> class Halves(prune.BasePruningMethod):
        ...     def compute_mask(self, t, default_mask):
        ...         return default_mask * (np.arange(t.size) % 2).reshape(t.shape)
        >>> layer = nn.Linear(2, 2)
        >>> _ = Halves.apply(layer, "weight")
        >>> layer.weight_mask
        tensor([[0., 1.],
                [0., 1.]])
    """

    PRUNING_TYPE = "unstructured"
    dim = -1

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def apply_mask(self, module: Any) -> Tensor:
        name = self._tensor_name
        return getattr(module, name + "_orig") * getattr(module, name + "_mask")

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Any = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune `module.name` by this method; again on a pruned one, among what it kept."""
        method = cls(*args, **kwargs)
        method._tensor_name = name
        old = _hook_for(module, name)
        weight = getattr(module, name, None)  # once pruned: orig * mask, as PyTorch ranks
        if old is None and not isinstance(weight, Parameter):
            raise AttributeError(f"prune: {type(module).__name__} has no parameter {name!r} "
                                 "to prune")
        kept = (np.ones(weight.shape, weight.dtype) if old is None
                else getattr(module, name + "_mask").numpy().copy())
        scores = weight if importance_scores is None else importance_scores
        scores = scores.detach().numpy() if isinstance(scores, Tensor) else np.asarray(scores)
        if scores.shape != kept.shape:
            raise ValueError(f"prune: importance_scores of shape {tuple(scores.shape)} should have "
                             f"the shape of {name}, {tuple(kept.shape)}")
        mask = _among_kept(method, scores, kept)  # first, so a bad call changes nothing
        if old is None:
            delattr(module, name)  # the same parameter, trained under its new name
            module.register_parameter(name + "_orig", weight)
        module.register_buffer(name + "_mask", mask.astype(kept.dtype))
        setattr(module, name, method.apply_mask(module))
        if old is not None:  # one hook per name: this method now recomputes it
            hooks, key = old
            hooks[key] = method
        else:
            module.register_forward_pre_hook(method)
        return method

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: `name` the parameter orig * mask again."""
        name = self._tensor_name
        weight = self.apply_mask(module).detach()
        for attr in (name, name + "_orig", name + "_mask"):
            delattr(module, attr)
        module.register_parameter(name, Parameter(weight.numpy().copy()))


def _among_kept(method: BasePruningMethod, t: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """method's mask, computed over the units `kept` still keeps (all units at first)."""
    mask = kept.copy()
    if method.PRUNING_TYPE == "global":  # the method sees every entry (a given mask)
        return method.compute_mask(t, kept)
    if method.PRUNING_TYPE == "unstructured":
        alive = kept == 1
        mask[alive] = method.compute_mask(t[alive], np.ones(int(alive.sum()), t.dtype))
        return mask
    axis = method.dim % t.ndim
    others = tuple(a for a in range(t.ndim) if a != axis)
    channels = np.flatnonzero(kept.sum(axis=others) != 0)
    part = np.take(t, channels, axis)
    sub = method.compute_mask(part, np.ones(part.shape, t.dtype))
    index = [slice(None)] * t.ndim
    index[axis] = channels
    mask[tuple(index)] = sub * np.take(kept, channels, axis)
    return mask


def _hook_for(module: Any, name: str) -> tuple[dict, Any] | None:
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for key, hook in hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            return hooks, key
    return None


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones).

    Examples:
        >>> layer = nn.Linear(2, 2)
        >>> _ = prune.Identity.apply(layer, "bias")
        >>> layer.bias_mask
        tensor([1., 1.])
    """

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        return default_mask.copy()


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries at random.

    Examples:
        >>> layer = nn.Linear(4, 1)
        >>> _ = prune.RandomUnstructured.apply(layer, "weight", amount=3)
        >>> int(layer.weight_mask.sum())
        1
    """

    def __init__(self, amount: Any) -> None:
        self.amount = amount

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        from lamina.random import numpy_rng

        mask, k = default_mask.copy(), _count(self.amount, t.size)
        mask.reshape(-1)[np.argsort(-numpy_rng().random(t.size), kind="stable")[:k]] = 0
        return mask


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries smallest in absolute value.

    Examples:
        >>> layer = nn.Linear(3, 1)
        >>> with lm.no_grad():
        ...     _ = layer.weight.copy_(lm.tensor([[0.5, -2.0, 0.1]]))
        >>> _ = prune.L1Unstructured.apply(layer, "weight", amount=2)
        >>> layer.weight
        tensor([[ 0., -2.,  0.]], grad_fn=<MulBackward0>)
    """

    def __init__(self, amount: Any) -> None:
        self.amount = amount

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        mask, k = default_mask.copy(), _count(self.amount, t.size)
        mask.reshape(-1)[np.argsort(np.abs(t).reshape(-1), kind="stable")[:k]] = 0
        return mask


class LnStructured(BasePruningMethod):
    """Prunes the `amount` slices along `dim` with the smallest `n`-norm.

    Examples:
        >>> layer = nn.Linear(2, 3)
        >>> with lm.no_grad():
        ...     _ = layer.weight.copy_(lm.tensor([[1.0, 1.0], [0.1, 0.1], [3.0, 0.0]]))
        >>> _ = prune.LnStructured.apply(layer, "weight", amount=1, n=2, dim=0)
        >>> layer.weight_mask
        tensor([[1., 1.],
                [0., 0.],
                [1., 1.]])
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, n: Any, dim: int = -1) -> None:
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        axis = self.dim % t.ndim
        rows = np.moveaxis(t, axis, 0).reshape(t.shape[axis], -1)
        order = "fro" if self.n == "fro" else self.n
        norms = np.linalg.norm(rows, ord=2 if order == "fro" else order, axis=1)
        keep = t.shape[axis] - _count(self.amount, t.shape[axis])
        channels = np.argsort(-norms, kind="stable")[:keep]
        return _channel_mask(default_mask, axis, channels)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` slices along `dim`, chosen at random.

    Examples:
        >>> layer = nn.Linear(2, 4)
        >>> _ = prune.RandomStructured.apply(layer, "weight", amount=0.5, dim=0)
        >>> layer.weight_mask.sum(dim=1)
        tensor([...])
        >>> int(layer.weight_mask.sum())
        4
    """

    PRUNING_TYPE = "structured"

    def __init__(self, amount: Any, dim: int = -1) -> None:
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        from lamina.random import numpy_rng

        axis = self.dim % t.ndim
        keep = t.shape[axis] - _count(self.amount, t.shape[axis])
        channels = numpy_rng().permutation(t.shape[axis])[:keep]
        return _channel_mask(default_mask, axis, channels)


def _channel_mask(default_mask: np.ndarray, axis: int, channels: np.ndarray) -> np.ndarray:
    mask = np.zeros_like(default_mask)
    index = [slice(None)] * mask.ndim
    index[axis] = np.sort(channels)
    mask[tuple(index)] = default_mask[tuple(index)]
    return mask


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero.

    Examples:
        >>> layer = nn.Linear(2, 1)
        >>> _ = prune.CustomFromMask.apply(layer, "weight", mask=lm.tensor([[0.0, 1.0]]))
        >>> layer.weight_mask
        tensor([[0., 1.]])
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Any) -> None:
        self.mask = np.asarray(mask.detach().numpy() if isinstance(mask, Tensor) else mask)

    def compute_mask(self, t: np.ndarray, default_mask: np.ndarray) -> np.ndarray:
        return default_mask * self.mask.reshape(default_mask.shape).astype(default_mask.dtype)
