"""`nn.utils.parametrize`, PyTorch's parametrisations: a module's tensor computed at each
access from parameters kept under `module.parametrizations.<name>` (`original`, or
`original0`, `original1`, ... where the first parametrisation's `right_inverse` splits
it), through one or more parametrisation modules, as PyTorch does: the module's class
becomes a subclass with a property of that name, so state dicts load across.

    >>> layer = nn.utils.parametrize.register_parametrization(nn.Linear(2, 2), "weight",
    ...                                                        nn.Identity())
    >>> type(layer).__name__, list(layer.state_dict())
    ('ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
"""

from __future__ import annotations

from typing import Any

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.container import ModuleList
from lamina.nn.container_dict import ModuleDict
from lamina.nn.layer import Layer, Parameter


class ParametrizationList(ModuleList):
    """The parametrisations of one tensor, in order, and the original(s) they start from.

    Examples:
        >>> layer = nn.Linear(2, 2)
        >>> _ = nn.utils.parametrize.register_parametrization(layer, "weight", nn.Identity())
        >>> type(layer.parametrizations.weight).__name__
        'ParametrizationList'
    """

    def __init__(self, modules: list[Layer], original: Tensor) -> None:
        super().__init__(modules)
        first = modules[0]
        with no_grad():
            new = first.right_inverse(original) if hasattr(first, "right_inverse") else original
        make = Parameter if isinstance(original, Parameter) else Tensor
        if isinstance(new, tuple):
            self.ntensors = len(new)
            for i, t in enumerate(new):
                self._keep(f"original{i}", make(t.detach().array.copy()), make)
        else:
            self.ntensors = 1
            self._keep("original", make(new.detach().array.copy()), make)

    def _keep(self, name: str, t: Tensor, make: Any) -> None:
        if make is Parameter:
            self.register_parameter(name, t)
        else:
            self.register_buffer(name, t)

    def originals(self) -> tuple[Tensor, ...]:
        if self.ntensors == 1:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self) -> Tensor:  # type: ignore[override]
        modules = list(self._children.values())  # each in turn, twice if chained twice
        x = modules[0](*self.originals())
        for m in modules[1:]:
            x = m(x)
        return x


def register_parametrization(module: Layer, tensor_name: str, parametrization: Layer, *,
                             unsafe: bool = False) -> Layer:
    """Make `module.<tensor_name>` the output of `parametrization` on the tensor kept in
    `module.parametrizations.<tensor_name>`; a second call on one name chains another.

    Examples:
        >>> class Symmetric(nn.Module):
        ...     def forward(self, x):
        ...         return x.triu() + x.triu(1).mT
        >>> layer = nn.utils.parametrize.register_parametrization(nn.Linear(3, 3), "weight",
        ...                                                        Symmetric())
        >>> bool((layer.weight == layer.weight.T).all())
        True
    """
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    original = getattr(module, tensor_name)
    if not isinstance(original, Tensor):
        raise ValueError(f"register_parametrization: {type(module).__name__}.{tensor_name} "
                         f"is not a parameter or buffer")
    chain = ParametrizationList([parametrization], original)
    for table in (module._params, module._buffers):
        table.pop(tensor_name, None)
    module.__dict__.pop(tensor_name, None)
    if not is_parametrized(module):
        object.__setattr__(module, "_unparametrized_class", type(module))
        module.parametrizations = ModuleDict()
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
    module.parametrizations[tensor_name] = chain
    setattr(type(module), tensor_name, property(
        lambda self, n=tensor_name: self.parametrizations[n]()))
    return module


def is_parametrized(module: Layer, tensor_name: str | None = None) -> bool:
    """Whether the module has parametrisations (of `tensor_name`, where given).

    Examples:
        >>> nn.utils.parametrize.is_parametrized(nn.Linear(2, 2))
        False
    """
    chains = module.__dict__.get("parametrizations")
    if not isinstance(chains, ModuleDict):
        return False
    return tensor_name is None or tensor_name in chains


def remove_parametrizations(module: Layer, tensor_name: str,
                            leave_parametrized: bool = True) -> Layer:
    """Make `module.<tensor_name>` a plain parameter again: its current value (or the
    original, with `leave_parametrized=False`, where there is one original).

    Examples:
        >>> layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
        >>> sorted(nn.utils.parametrize.remove_parametrizations(layer, "weight").state_dict())
        ['bias', 'weight']
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations: {type(module).__name__} has no "
                         f"parametrization on {tensor_name!r}")
    chain = module.parametrizations[tensor_name]
    with no_grad():
        if leave_parametrized:
            value = chain()
        elif chain.ntensors == 1:
            value = chain.original
        else:
            raise ValueError("remove_parametrizations: leave_parametrized=False needs a single "
                             "original tensor")
    del module.parametrizations[tensor_name]
    delattr(type(module), tensor_name)
    if not len(module.parametrizations):
        del module.parametrizations
        module.__class__ = module.__dict__.pop("_unparametrized_class")
    module.register_parameter(tensor_name, Parameter(value.detach().array.copy()))
    return module
