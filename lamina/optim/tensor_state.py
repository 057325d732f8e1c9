"""Per-parameter state that a user's code wrote as tensors, as PyTorch's optimizers keep it:
A3C's SharedAdam fills `optimizer.state[p]` with moments it moved to shared memory before
the first step. lamina's update rules work on arrays (a parameter server runs them on its
shard), so a step hands them the tensors' own arrays, updated in place, and writes the
numbers back into the tensors that hold them (the step count)."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor


def as_arrays(state: dict[str, Any], param: Any) -> dict[str, Any] | None:
    """The state with each tensor as its array (a count as its number); None where it
    holds no tensor, so the step uses the state itself."""
    if not any(isinstance(v, Tensor) for v in state.values()):
        return None
    return {k: (_number(v) if k == "step" or v.shape != param.shape else v.array)
            if isinstance(v, Tensor) else v for k, v in state.items()}


def _number(t: Tensor) -> Any:
    return t.array.item() if t.array.size == 1 else t.array


def write_back(state: dict[str, Any], arrays: dict[str, Any]) -> None:
    """After the step: numbers into the tensors they came from, new keys into the state."""
    for k, v in arrays.items():
        held = state.get(k)
        if not isinstance(held, Tensor):
            state[k] = v
        elif v is not held.array:
            held.array[...] = v
