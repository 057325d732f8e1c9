"""How tensors print, as PyTorch prints them, and `lamina.set_printoptions`, its call.

PyTorch's rules, which a user reading a tutorial's output expects to see again: a float
tensor whose finite nonzero values are all whole prints them as `2.`; otherwise with
`precision` digits after the point (`0.5000`), or in scientific form (`1.0000e-05`) where
the largest is over 1e8 times or over 1000 times the smallest, or the smallest under 1e-4.
Every element takes the width of the widest. Past `threshold` elements a tensor prints
`edgeitems` rows at each end of each dim, with `...` between; lines break at `linewidth`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_DEFAULT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {"default": _DEFAULT, "short": {**_DEFAULT, "precision": 2, "edgeitems": 2},
             "full": {**_DEFAULT, "threshold": math.inf}}
_OPTIONS: dict[str, Any] = {**_DEFAULT, "sci_mode": None}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as PyTorch's: digits after the point, the element count
    past which a tensor prints as a summary, the items shown at each end of a summarised
    dim, the characters per line. `profile` ("default", "short", "full") sets all four
    first. `sci_mode` True or False forces scientific notation on or off; None (what
    every call without it sets, as in PyTorch) lets each tensor choose.

    Examples:
        >>> lm.set_printoptions(precision=2)
        >>> lm.tensor([1.23456])
        tensor([1.23])
        >>> lm.set_printoptions(profile="default")
        >>> lm.tensor([1.23456])
        tensor([1.2346])
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}; "
                             f"got {profile!r}")
        _OPTIONS.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("edgeitems", edgeitems),
                       ("linewidth", linewidth)):
        if value is not None:
            _OPTIONS[key] = int(value)
    if threshold is not None:
        _OPTIONS["threshold"] = threshold
    _OPTIONS["sci_mode"] = sci_mode


class _Format:
    """How every element of one tensor prints: chosen once from all the values shown, so
    that the columns line up."""

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind in "fc"
        self.whole, self.sci, self.width = True, False, 1
        self.digits = _OPTIONS["precision"]
        if not self.floating:
            self.width = max((len(str(v)) for v in shown.reshape(-1).tolist()), default=1)
            return
        values = shown.reshape(-1).astype(np.float64)
        values = values[np.isfinite(values) & (values != 0)]
        if values.size:
            magnitude = np.abs(values)
            low, high = magnitude.min(), magnitude.max()
            self.whole = bool(np.all(values == np.ceil(values)))
            self.sci = bool(high / low > 1000 or high > 1e8
                            or (not self.whole and low < 1e-4))
            if _OPTIONS["sci_mode"] is not None:
                self.sci = _OPTIONS["sci_mode"]
            self.width = max(len(self.text(v)) for v in values.tolist())

    def text(self, value: Any) -> str:
        if not self.floating:
            return str(value)
        if self.sci:
            return f"{value:.{self.digits}e}"
        if self.whole:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{self.digits}f}"

    def __call__(self, value: Any) -> str:
        return self.text(value).rjust(self.width)


class _ComplexFormat:
    """A complex tensor's elements as PyTorch prints them: the real parts formatted as one
    column, the imaginary parts as another, signed and unpadded, with a j."""

    def __init__(self, shown: np.ndarray) -> None:
        self.re, self.im = _Format(shown.real), _Format(shown.imag)
        self.width = self.re.width + self.im.width + 2

    def __call__(self, value: Any) -> str:
        imag = self.im.text(value.imag)
        return self.re(value.real) + ("" if imag[0] == "-" else "+") + imag + "j"


def _edges(n: int) -> list[int] | None:
    """The indices a summarised dim of length n shows, or None where it shows them all."""
    k = _OPTIONS["edgeitems"]
    return [*range(k), *range(n - k, n)] if n > 2 * k else None


def _summarised(a: np.ndarray) -> np.ndarray:
    """The elements a summary shows, which alone decide the format."""
    if a.ndim == 0:
        return a
    shown = _edges(len(a))
    if a.ndim == 1:
        return a if shown is None else a[shown]
    if not _OPTIONS["edgeitems"]:
        return a[:0]
    rows = a if shown is None else a[shown]
    return np.stack([_summarised(r) for r in rows])


def _layout(a: np.ndarray, indent: int, summarise: bool, fmt: _Format) -> str:
    if a.ndim == 0:
        return fmt(a.item())
    shown = _edges(len(a)) if summarise else None
    if a.ndim == 1:
        per_line = max(1, (_OPTIONS["linewidth"] - indent) // (fmt.width + 2))
        if summarise and not _OPTIONS["edgeitems"]:
            items = ["..."]
        elif shown is not None:
            k = _OPTIONS["edgeitems"]
            items = [*map(fmt, a[:k].tolist()), " ...", *map(fmt, a[len(a) - k:].tolist())]
        else:
            items = [fmt(v) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(len(a)) if shown is None else shown
    parts = [_layout(a[i], indent + 1, summarise, fmt) for i in rows]
    if shown is not None:
        parts.insert(_OPTIONS["edgeitems"], "...")
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_repr(a: np.ndarray, suffixes: list[str], prefix: str = "tensor(") -> str:
    """`prefix` + the array as PyTorch prints a tensor + `, suffix` each (on a new line
    where the last line would pass the line width) + `)`."""
    indent = len(prefix)
    if a.size == 0:
        body = "[]"
    else:
        summarise = a.size > _OPTIONS["threshold"]
        shown = _summarised(a) if summarise else a
        fmt = _ComplexFormat(shown) if a.dtype.kind == "c" else _Format(shown)
        body = _layout(a, indent, summarise, fmt)
    text = prefix + body
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > _OPTIONS["linewidth"]:
            text += ",\n" + " " * indent + suffix
            last = indent + len(suffix)
        else:
            text += ", " + suffix
            last += len(suffix) + 2
    return text + ")"


def shows_items() -> bool:
    """Whether a summary shows any items (edgeitems > 0); where not, the repr names the
    size instead."""
    return bool(_OPTIONS["edgeitems"])
