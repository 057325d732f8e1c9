"""Conversion and dtype questions at the top level: asarray, result_type and can_cast;
and the switches PyTorch scripts set (determinism, warnings, denormals)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, promotion
from lamina.autograd.tensor import Tensor


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """The dtype an arithmetic op on the two gives (PyTorch's promotion: a number does not
    widen a tensor of its kind).

    Examples:
        >>> lm.result_type(lm.tensor([1]), 1.0)
        dtype('float32')
    """
    return promotion.result_type(tensor1, tensor2)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow from_ to to (no float to integer, no
    integer to bool).

    Examples:
        >>> lm.can_cast(lm.float64, lm.float32), lm.can_cast(lm.float32, lm.int64)
        (True, False)
    """
    return bool(np.can_cast(dtypes.resolve(from_), dtypes.resolve(to), "same_kind"))


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """obj as a tensor, sharing its memory where it can (a tensor or array of the asked
    dtype) unless `copy=True`; `copy=False` refuses to copy. A tensor keeps its
    requires_grad unless `requires_grad` says otherwise, as PyTorch's now does.

    Examples:
        >>> a = np.zeros(2); t = lm.asarray(a); t[0] = 1.0; a
        array([1., 0.])
    """
    from lamina.creation import as_tensor

    out = as_tensor(obj, dtype, device)
    shared = isinstance(obj, (Tensor, np.ndarray)) and np.shares_memory(
        out.array, obj.array if isinstance(obj, Tensor) else obj)
    if copy is False and not shared:
        raise ValueError("asarray: copy=False, but the data needs a copy (another dtype, or "
                         "not an array)")
    if copy:
        out = out.detach().clone() if shared else out
    if requires_grad is False and out.requires_grad:
        out = out.detach()
    elif requires_grad and not out.requires_grad:
        out = (out.detach() if out is obj else out).requires_grad_(True)
    return out


_DETERMINISTIC = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted, as PyTorch's: lamina's CPU ops give the same results run to run already
    (threaded kernels split work by a fixed rule, not by timing).

    Examples:
        >>> lm.use_deterministic_algorithms(True); lm.are_deterministic_algorithms_enabled()
        True
        >>> lm.use_deterministic_algorithms(False)
    """
    _DETERMINISTIC.update(mode=bool(mode), warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    """What `use_deterministic_algorithms` was last given (False at first).

    Examples:
        >>> lm.are_deterministic_algorithms_enabled()
        False
    """
    return _DETERMINISTIC["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether `use_deterministic_algorithms` was last given warn_only=True.

    Examples:
        >>> lm.is_deterministic_algorithms_warn_only_enabled()
        False
    """
    return _DETERMINISTIC["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """PyTorch's other switch for use_deterministic_algorithms: "default" (0) off, "warn"
    (1) on with warn_only, "error" (2) on.

    Examples:
        >>> lm.set_deterministic_debug_mode("warn"); lm.get_deterministic_debug_mode()
        1
        >>> lm.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2, as set_deterministic_debug_mode takes them.

    Examples:
        >>> lm.get_deterministic_debug_mode()
        0
    """
    if not _DETERMINISTIC["mode"]:
        return 0
    return 1 if _DETERMINISTIC["warn_only"] else 2


_WARN_ALWAYS = {"on": False}


def set_warn_always(b: bool) -> None:
    """Accepted, as PyTorch's switch for its C++ warnings shown once; lamina's warnings
    are Python's, which the `warnings` filters govern.

    Examples:
        >>> lm.set_warn_always(True); lm.is_warn_always_enabled()
        True
        >>> lm.set_warn_always(False)
    """
    _WARN_ALWAYS["on"] = bool(b)


def is_warn_always_enabled() -> bool:
    """What set_warn_always was last given (False at first).

    Examples:
        >>> lm.is_warn_always_enabled()
        False
    """
    return _WARN_ALWAYS["on"]


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy cannot be told to flush denormal floats to zero, so nothing changes
    (PyTorch answers False likewise where the CPU cannot).

    Examples:
        >>> lm.set_flush_denormal(True)
        False
    """
    return False
