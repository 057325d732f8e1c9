"""`Optimizer`: parameter groups, lazily created per-parameter state, and state dicts.

A subclass writes its update rule on plain arrays, in two methods:
`init_state(param, group)` makes one parameter's state, and
`update_param(param, grad, state, group)` updates the array in place. Neither touches
layers or tensors, so a parameter server applies the same class to its shard of arrays.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina import parallel
from lamina.autograd.tensor import Tensor
from lamina.optim import complex_params, pieces, tensor_state
from lamina.optim.groups import group_params, hyper_parameter_names, warn_misspelt
from lamina.optim.state_io import StateDictMethods
from lamina.optim.step_hooks import StepHookMethods, with_step_hooks


class Optimizer(StepHookMethods, StateDictMethods):
    """Base class: holds `param_groups` (lists of tensors with their hyper-parameters).

    A subclass whose rule treats each element on its own, and updates its state arrays in
    place, sets `elementwise = True`: its step then runs in pieces over threads.

    Args:
        params: tensors, or dicts {"params": [...], **hyper-parameters for that group}.
        defaults: each hyper-parameter's value where a group does not set it.
    """

    elementwise = False
    # Every state array has its parameter's shape (moments, accumulators): load_state_dict
    # checks it. False for a rule whose state is of all parameters at once (L-BFGS).
    state_like_params = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = vars(cls).get("step")
        if step is not None and not getattr(step, "with_hooks", False):
            cls.step = with_step_hooks(step)  # type: ignore[method-assign]

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.check_hyper(self.defaults)
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params should be an iterable of tensors "
                            f"or dicts, got a Tensor: pass [tensor], or model.parameters()")
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups: list[dict[str, Any]] = []
        # PyTorch's type: self.state[p] is {} for a parameter not stepped yet
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self._scratch: dict[tuple[Any, ...], Any] = {}
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters (tensors, or named_parameters()' pairs, whose names
        the group keeps as `param_names`) with its own hyper-parameters; any other key is
        kept as given (see lamina/optim/groups.py)."""
        owner = type(self).__name__
        group = dict(group)
        group["params"], names = group_params(group["params"], owner)
        if names is not None:
            group["param_names"] = names
        if self.param_groups and ("param_names" in group) != (
                "param_names" in self.param_groups[0]):
            raise ValueError(f"{owner}: give every parameter group named parameters, or "
                             f"none (named_parameters() in some, parameters() in others)")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        warn_misspelt(group, self.defaults, owner)
        self.check_hyper(group)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        mine: set[int] = set()
        for p in group["params"]:
            if id(p) in seen:
                raise ValueError(f"{owner}: a parameter appears in two groups")
            if id(p) in mine:
                raise ValueError(f"{owner}: a parameter appears twice in one group")
            mine.add(id(p))
        self.param_groups.append(group)

    def _foreign_keys(self, group: dict[str, Any]) -> list[str]:
        """A saved group's keys that are hyper-parameters of another of lamina's optimizers
        and not of this one, sorted: what a state dict of another type holds."""
        return sorted((set(group) & hyper_parameter_names(Optimizer)) - set(self.defaults))

    # -- the rule (subclasses) --------------------------------------------------------------
    def check_hyper(self, group: dict[str, Any]) -> None:
        """Raise ValueError for a hyper-parameter outside its range."""
        require(group, "lr", group.get("lr", 0) >= 0, "must be >= 0")
        if "weight_decay" in group:
            require(group, "weight_decay", group["weight_decay"] >= 0, "must be >= 0")
        if "eps" in group:
            require(group, "eps", group["eps"] >= 0, "must be >= 0")
        if "betas" in group:  # Adam's family
            b1, b2 = group["betas"]
            require(group, "betas", 0 <= b1 < 1 and 0 <= b2 < 1, "each beta must be in [0, 1)")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        """A new parameter's state (arrays shaped like `param`, counters)."""
        return {}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        """Update `param` in place from its gradient, state and group hyper-parameters."""
        raise NotImplementedError

    def state_complete(self, state: dict[str, Any], group: dict[str, Any]) -> bool:
        """Whether the next update only changes this state in place, adding no key (an
        `elementwise` rule runs in pieces only then)."""
        return True

    def scratch(self, like: Any) -> Any:
        """A reusable array shaped like `like` for an update's temporaries (not state: it
        is overwritten by every parameter of that shape). Saves a fresh multi-MB allocation
        per parameter per step. One per thread, since pieces of a step run at once."""
        key = (like.shape, like.dtype.str, threading.get_ident())
        buf = self._scratch.get(key)
        if buf is None:
            buf = self._scratch[key] = np.empty_like(like)
        return buf

    # -- the loop -------------------------------------------------------------------------
    @with_step_hooks
    def step(self, closure: Any = None) -> Any:
        """Update every parameter that has a gradient. An `elementwise` rule runs in pieces,
        at once on `lamina.get_num_threads()` threads (see lamina/optim/pieces.py).

        Args:
            closure: PyTorch's optional callable that recomputes the loss (zeroing and
                filling the gradients); called first, with grad mode on.

        Returns:
            The closure's loss, or None.
        """
        loss = None
        if closure is not None:
            from lamina.autograd.grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        updates, tensors = [], []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state.update(self.init_state(p.array, group))
                arrays = tensor_state.as_arrays(state, p.array)
                if arrays is not None:  # state the user's code wrote as tensors
                    tensors.append((tensor_state.write_back, state, arrays))
                    state = arrays
                grad = -p.grad.array if group.get("maximize") else p.grad.array
                param = p.array
                if param.dtype.kind == "c":  # PyTorch's rule: (real, imag) pairs
                    param, grad, views = complex_params.as_pairs(param, grad, state)
                    tensors.append((complex_params.write_back, state, views))
                    state = views
                updates.append((param, grad, state, group))
        self._update(updates)
        # Last in, first out: a complex parameter's pairs go back into the arrays of state
        # its user wrote as tensors before those go back into the tensors.
        for write_back, state, arrays in reversed(tensors):
            write_back(state, arrays)
        return loss

    def _update(self, updates: list[tuple[Any, ...]]) -> None:
        # Too few elements for two pieces (a small model): no thread would pay its start.
        if not self.elementwise or sum(u[0].size for u in updates) < 2 * pieces.MIN_PIECE:
            for update in updates:
                self.update_param(*update)
            return
        split = []
        for update in updates:
            if self.state_complete(update[2], update[3]) and pieces.splittable(update):
                split.append(update)
            else:
                self.update_param(*update)
        pieces.run(self.update_param, split, parallel.get_num_threads())

    def update(self) -> None:
        """Chainer's name for `step`."""
        self.step()

    def __repr__(self) -> str:
        """PyTorch's: the class, then each group's hyper-parameters in name order."""
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
        return text + ")"

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient: set it to None (PyTorch's default), or with
        `set_to_none=False` fill it with zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.array[...] = 0

    def _rules_on_arrays(self) -> bool:
        """Whether steps run lamina's update rule on arrays (update_param), rather than a
        PyTorch-style subclass's own `step` on tensors."""
        return type(self).update_param is not Optimizer.update_param


def torch_flags(maximize: bool = False, foreach: bool | None = None,
                differentiable: bool = False, **kernels: Any) -> dict[str, Any]:
    """PyTorch's per-group flags, kept in the groups so state dicts match PyTorch's.
    `maximize` ascends the objective. `foreach`, `fused` and `capturable` only choose
    among PyTorch's kernels (lists at once, one fused kernel, CUDA-graph capture), so
    here they change nothing. `differentiable` (autograd through the step) is refused."""
    if differentiable:
        raise NotImplementedError("differentiable=True: lamina's optimizers update arrays "
                                  "in place, outside the graph; there is no gradient "
                                  "through a step")
    return {"maximize": maximize, "foreach": foreach, "differentiable": differentiable,
            **kernels}


def require(group: dict[str, Any], name: str, ok: bool, rule: str) -> None:
    """Raise a ValueError naming the hyper-parameter, its value and its valid range."""
    if not ok:
        raise ValueError(f"invalid {name}: {rule}; got {group[name]!r}")
