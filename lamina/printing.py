"""`lamina.set_printoptions`, PyTorch's call: how tensors print (precision, how many
elements before a summary, line width). The options are lamina's own, kept here and read
by `Tensor.__repr__`; NumPy's printing is left as it was."""

from __future__ import annotations

import sys
from typing import Any

_OPTIONS: dict[str, Any] = {}  # keyword arguments for np.array2string; empty: NumPy's
# "default" is lamina's own (NumPy's printing, as at import), not PyTorch's 4 digits
_PROFILES = {"default": {}, "short": {"precision": 2, "edgeitems": 2},
             "full": {"threshold": sys.maxsize}}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as PyTorch's: digits after the point, the element count
    past which a tensor prints as a summary, the items shown at each end of a summarised
    dim, the characters per line; `profile` ("default", "short", "full") sets them all
    first ("default" is lamina's printing at import: NumPy's). `sci_mode=False` prints
    small numbers without an exponent.

    Examples:
        >>> lm.set_printoptions(precision=2)
        >>> lm.tensor([1.23456])
        tensor([1.23])
        >>> lm.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}; "
                             f"got {profile!r}")
        _OPTIONS.clear()
        _set(**_PROFILES[profile])
    _set(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    if sci_mode is not None:
        _OPTIONS["suppress_small"] = not sci_mode


def _set(precision: Any = None, threshold: Any = None, edgeitems: Any = None,
         linewidth: Any = None) -> None:
    for key, value in (("precision", precision), ("edgeitems", edgeitems),
                       ("max_line_width", linewidth)):
        if value is not None:
            _OPTIONS[key] = int(value)
    if threshold is not None:
        _OPTIONS["threshold"] = sys.maxsize if threshold == float("inf") else int(threshold)


def array2string_options() -> dict[str, Any]:
    """The options `Tensor.__repr__` passes to np.array2string."""
    return _OPTIONS
