"""An optimizer's state dict: `state_dict` and `load_state_dict`, PyTorch's format (state
by parameter index, groups with their hyper-parameters), checked on loading so that
another optimizer's or another model's state is refused by name, not half-loaded."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor


class StateDictMethods:
    """Optimizer's state-dict methods (it sets param_groups, state, defaults,
    state_like_params, _foreign_keys and _rules_on_arrays)."""

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{hyper..., "params": [index, ...]}]}.

        Parameters are numbered in group order, as in PyTorch. Arrays are copies.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: {k: v.copy() if isinstance(v, np.ndarray) else v
                                for k, v in s.items()} for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and per-parameter state saved by `state_dict`.

        Raises:
            TypeError: not a state dict (a mapping with "state" and "param_groups").
            ValueError: the saved groups do not match this optimizer's groups in size, hold
                a hyper-parameter of another of lamina's optimizers that this one does not
                have (saved by another optimizer type), or state for a parameter it does
                not have or of another shape (named). Other keys (a group's name, what a
                schedule added) are restored as saved, as PyTorch restores them.
        """
        name = type(self).__name__
        if not (isinstance(state_dict, Mapping) and isinstance(state_dict.get("state"), Mapping)
                and isinstance(state_dict.get("param_groups"), list)):
            raise TypeError(f"{name}.load_state_dict: expected what Optimizer.state_dict() "
                            f"returns, a mapping with 'state' and 'param_groups'; got "
                            f"{type(state_dict).__name__}")
        saved = state_dict["param_groups"]
        ours = [len(g["params"]) for g in self.param_groups]
        theirs = [len(g["params"]) for g in saved]
        if ours != theirs:
            raise ValueError(f"{name}.load_state_dict: saved parameter groups "
                             f"have sizes {theirs}; this optimizer's have {ours}")
        for group in saved:  # another optimizer's state would half-load and run silently
            foreign = self._foreign_keys(group)
            if foreign:  # (a key it lacks is one added since it was saved: the default stays)
                raise ValueError(f"{name}.load_state_dict: the saved state has hyper-parameters "
                                 f"that {name} does not have, {foreign}; was it saved by "
                                 f"another optimizer type? {name} has {sorted(self.defaults)}")
        params = [p for g in self.param_groups for p in g["params"]]
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for key, values in state_dict["state"].items():
            i = int(key)
            if not 0 <= i < len(params):
                raise ValueError(f"{name}.load_state_dict: state for parameter {i}; this "
                                 f"optimizer has {len(params)} parameters")
            p = params[i]
            for k, v in values.items():
                # Moments hold one number per weight: another shape is another parameter's
                # state (saved in another order), which would broadcast or fail at a step.
                if (self.state_like_params and k != "step" and _is_array(v)
                        and np.shape(v) != p.shape):
                    raise ValueError(f"{name}.load_state_dict: state {k!r} of parameter {i} "
                                     f"has shape {tuple(np.shape(v))}; the parameter has "
                                     f"shape {tuple(p.shape)} (saved for parameters in "
                                     "another order, or another model?)")
            state[p] = {k: self._loaded(k, v, p) for k, v in values.items()}
        for group, saved_group in zip(self.param_groups, saved):
            group.update({k: list(v) if k == "param_names" else _plain(v)
                          for k, v in saved_group.items() if k != "params"})
        self.state = state


    def _loaded(self, key: str, v: Any, param: Tensor) -> Any:
        """A saved state value as this optimizer keeps it: arrays and a number of steps for
        lamina's rules; a PyTorch-style subclass whose own `step` works on tensors gets
        tensors back where it saved them."""
        if isinstance(v, Tensor) and not self._rules_on_arrays():
            return Tensor(np.array(v.array, dtype=param.dtype if v.ndim else None))
        if key == "step":
            return _count(v)
        return np.array(v, dtype=param.dtype) if _is_array(v) else _plain(v)


def _is_array(v: Any) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype") and np.ndim(v) > 0


def _count(v: Any) -> Any:
    """A step count as a number, however it was kept (PyTorch's 0-d tensor, A3C's
    SharedAdam's one-element one, an int)."""
    v = getattr(v, "array", v)
    return np.asarray(v).item() if np.size(v) == 1 else _plain(v)


def _plain(v: Any) -> Any:
    """JSON round trips give lists for tuples (betas); NumPy scalars become Python numbers."""
    if isinstance(v, list):
        return tuple(v)
    if isinstance(v, np.generic) or (hasattr(v, "shape") and np.ndim(v) == 0):
        return np.asarray(v).item()
    return v
