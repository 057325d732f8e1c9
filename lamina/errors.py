"""Exception types that name what went wrong in user terms."""

from __future__ import annotations


class ShapeError(ValueError):
    """A tensor's shape does not fit an op or a layer.

    Messages read `"<op or layer path>: <what is wrong>; expected <x>, got <y>"`.
    """
