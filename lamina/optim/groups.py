"""An optimizer's parameter groups as PyTorch takes them: tensors, `(name, tensor)` pairs
from `named_parameters()`, or dicts of a group's parameters and hyper-parameters. Keys
that are no hyper-parameter of the optimizer (a group's name, a scale a training loop
reads, what a schedule adds such as OneCycleLR's `max_lr`) are kept as given, as
PyTorch keeps them; one that looks like a misspelt hyper-parameter is kept with a
warning, since the hyper-parameter it meant keeps its default."""

from __future__ import annotations

import difflib
import inspect
import warnings
from typing import Any

from lamina.autograd.tensor import Tensor

NOT_HYPER = frozenset({"params", "param_names"})


def group_params(params: Any, owner: str) -> tuple[list[Tensor], list[str] | None]:
    """A group's `params` as a list of tensors, and their names where they came as
    (name, tensor) pairs (else None). Raises what PyTorch raises: TypeError for a set (its
    order, and so which state is whose, changes between runs) or a non-tensor, ValueError
    for a non-leaf tensor or for names given to some parameters and not others."""
    if isinstance(params, Tensor):
        return [params], None
    if isinstance(params, (set, frozenset)):
        raise TypeError(f"{owner}: parameters must come in an ordered collection (a list), "
                        f"not a set: a set's order changes from run to run, and with it "
                        f"which saved state belongs to which parameter")
    items = list(params)
    named = [item for item in items if isinstance(item, tuple)]
    if named and len(named) != len(items):
        raise ValueError(f"{owner}: {len(named)} of a group's {len(items)} parameters come "
                         f"with names; give all of them names (named_parameters()) or none")
    tensors = [item[1] for item in items] if named else items
    for p in tensors:
        if not isinstance(p, Tensor):
            raise TypeError(f"{owner}: can only optimise tensors; one of the parameters is "
                            f"a {type(p).__name__}")
        if not (p.is_leaf or p.retains_grad):
            raise ValueError(f"{owner}: can't optimise a non-leaf tensor (one an op made, "
                             f"{type(p.grad_fn).__name__}); pass the leaf it was computed "
                             f"from, or x.detach().requires_grad_()")
    return tensors, [str(item[0]) for item in named] if named else None


def warn_misspelt(group: dict[str, Any], defaults: dict[str, Any], owner: str) -> None:
    """Warn of a key the group gives that is no hyper-parameter of the optimizer but close
    to one: PyTorch keeps it silently, and the hyper-parameter meant stays at its default."""
    for key in group:
        if key in defaults or key in NOT_HYPER or not isinstance(key, str):
            continue
        near = difflib.get_close_matches(key, list(defaults), n=1, cutoff=0.8)
        if near:
            warnings.warn(f"{owner}: the parameter group's key {key!r} is not a "
                          f"hyper-parameter of {owner} (did you mean {near[0]!r}?); it is "
                          f"kept as given, and {near[0]} stays {group[near[0]]!r}",
                          UserWarning, stacklevel=4)


def constructor_hyper_parameters(cls: type) -> frozenset[str]:
    """The hyper-parameters an optimizer class takes: its constructor's named arguments."""
    return frozenset(name for name, arg in inspect.signature(cls.__init__).parameters.items()
                     if arg.kind in (arg.POSITIONAL_OR_KEYWORD, arg.KEYWORD_ONLY)
                     ) - {"self"} - NOT_HYPER


def hyper_parameter_names(base: type) -> frozenset[str]:
    """The hyper-parameters of every optimizer lamina defines (the arguments of their
    constructors): a saved group's key among these that an optimizer lacks was saved by
    another optimizer type; any other key is a user's or a schedule's."""
    names: set[str] = set()
    classes = [base]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if cls.__module__.startswith("lamina.optim.") and "__init__" in vars(cls):
            names |= constructor_hyper_parameters(cls)
    return frozenset(names)
