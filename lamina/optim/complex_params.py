"""Complex parameters, as PyTorch's optimizers treat them: each complex number a pair of
real ones (torch.view_as_real), so an adaptive rule (Adam's second moment, RMSprop's
average) scales the real and imaginary parts each by its own history. The update rules
run on real views of the parameter, its gradient and its complex state, in place."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.complex import real_pairs


def _complex(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.dtype.kind == "c"


def as_pairs(param: Any, grad: Any, state: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """(param, grad, state) as the update rule takes them: complex arrays as real pairs."""
    views = {k: real_pairs(v) if _complex(v) else v for k, v in state.items()}
    return real_pairs(param), real_pairs(np.ascontiguousarray(grad)), views


def write_back(state: dict[str, Any], views: dict[str, Any]) -> None:
    """After the step: what the rule set anew (the step count, new keys) into the state;
    the complex arrays were updated through their views."""
    for k, v in views.items():
        if not _complex(state.get(k)):
            state[k] = v
