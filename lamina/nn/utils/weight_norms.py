"""PyTorch's weight reparametrisations by hook, `nn.utils.weight_norm` and
`nn.utils.spectral_norm` (and their `remove_*`): the module's weight becomes a tensor
computed before each forward from new parameters (weight_g and weight_v; weight_orig with
the power iteration's vectors weight_u and weight_v as buffers), with PyTorch's names, so
their state dicts load across."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, Parameter


def _norm_except_dim(v: Tensor, dim: int | None) -> Tensor:
    """The 2-norm of v over every dim but `dim` (kept as size 1), or of all of v."""
    if dim is None or dim == -1:
        return v.norm()
    dim %= v.ndim
    return v.norm(2, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


class _WeightNorm:
    def __init__(self, name: str, dim: int | None) -> None:
        self.name, self.dim = name, dim

    def compute(self, module: Layer) -> Tensor:
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module: Layer, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute(module))


def weight_norm(module: Layer, name: str = "weight", dim: int | None = 0) -> Layer:
    """Split `module.<name>` into a magnitude `<name>_g` (its norm over every dim but
    `dim`; over all of it where dim is None) and a direction `<name>_v`, and make the
    weight `v * g / |v|` before each forward, as PyTorch's.

    Examples:
        >>> layer = nn.utils.weight_norm(nn.Linear(3, 2))
        >>> sorted(layer.state_dict())
        ['bias', 'weight_g', 'weight_v']
    """
    weight = _take(module, name, _WeightNorm, "weight_norm")
    fn = _WeightNorm(name, dim)
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    fn(module, ())
    fn.handle = module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Layer, name: str = "weight") -> Layer:
    """Undo weight_norm: `<name>` is a plain parameter again, of the current value.

    Examples:
        >>> layer = nn.utils.remove_weight_norm(nn.utils.weight_norm(nn.Linear(3, 2)))
        >>> sorted(layer.state_dict())
        ['bias', 'weight']
    """
    fn = _find(module, _WeightNorm, name, "weight_norm")
    return _restore(module, name, fn, fn.compute(module), [name + "_g", name + "_v"], [])


class _SpectralNorm:
    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name, self.n, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight: Tensor) -> Tensor:
        w = weight.movedim(self.dim, 0) if self.dim else weight
        return w.reshape(w.shape[0], -1)

    def compute(self, module: Layer, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.matrix(weight)
        if do_power_iteration:
            with no_grad():
                m = mat.detach().numpy()
                a, b = u.numpy(), v.numpy()  # written in place, as PyTorch's buffers are
                for _ in range(self.n):
                    b[...] = _normalize(m.T @ a, self.eps)
                    a[...] = _normalize(m @ b, self.eps)
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def __call__(self, module: Layer, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute(module, module.training))


def _normalize(x: np.ndarray, eps: float) -> np.ndarray:
    return x / max(float(np.linalg.norm(x)), eps)


def spectral_norm(module: Layer, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Layer:
    """Divide `module.<name>` by its largest singular value, estimated by
    `n_power_iterations` of power iteration at each forward in training, as PyTorch's:
    the parameter is `<name>_orig`, the iteration's vectors the buffers `<name>_u` and
    `<name>_v`. `dim` (0, or 1 for transposed convolutions) is the output dim.

    Examples:
        >>> layer = nn.utils.spectral_norm(nn.Linear(3, 2))
        >>> sorted(layer.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    weight = _take(module, name, _SpectralNorm, "spectral_norm")
    fn = _SpectralNorm(name, n_power_iterations, dim, eps)
    h, w = fn.matrix(weight).shape
    from lamina.random import numpy_rng

    rng = numpy_rng(None)
    u = _normalize(rng.standard_normal(h), eps).astype(weight.dtype)
    v = _normalize(rng.standard_normal(w), eps).astype(weight.dtype)
    module.register_parameter(name + "_orig", weight)
    object.__setattr__(module, name, weight.detach())
    module.register_buffer(name + "_u", Tensor(u))
    module.register_buffer(name + "_v", Tensor(v))
    fn.handle = module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Layer, name: str = "weight") -> Layer:
    """Undo spectral_norm: `<name>` is a plain parameter again, the normalised weight.

    Examples:
        >>> layer = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(3, 2)))
        >>> sorted(layer.state_dict())
        ['bias', 'weight']
    """
    fn = _find(module, _SpectralNorm, name, "spectral_norm")
    return _restore(module, name, fn, fn.compute(module, False), [name + "_orig"],
                    [name + "_u", name + "_v"])


def _take(module: Layer, name: str, kind: type, what: str) -> Parameter:
    """The parameter `name`, taken off the module for a reparametrisation of `kind`."""
    if any(isinstance(h, kind) and h.name == name for h in _pre_hooks(module)):
        raise RuntimeError(f"{what}: {name} of {type(module).__name__} already has one")
    weight = module._params.pop(name)
    object.__delattr__(module, name)
    return weight


def _restore(module: Layer, name: str, fn: Any, weight: Tensor, params: list[str],
             buffers: list[str]) -> Layer:
    """`name` a plain parameter of value `weight` again; the hook and what it read gone."""
    fn.handle.remove()
    for table, names in ((module._params, params), (module._buffers, buffers)):
        for n in names:
            del table[n]
            object.__delattr__(module, n)
    object.__delattr__(module, name)
    module.register_parameter(name, Parameter(weight.detach()))
    return module


def _pre_hooks(module: Layer) -> list[Any]:
    hooks = module.__dict__.get("_forward_pre_hooks", ())
    return list(hooks.values()) if isinstance(hooks, dict) else list(hooks)


def _find(module: Layer, kind: type, name: str, what: str) -> Any:
    for hook in _pre_hooks(module):
        if isinstance(hook, kind) and hook.name == name:
            return hook
    raise ValueError(f"{what} of '{name}' not found in {type(module).__name__}")
