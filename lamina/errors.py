"""Exception types that name what went wrong in user terms."""

from __future__ import annotations


class ShapeError(ValueError, RuntimeError):
    """A tensor's shape does not fit an op or a layer.

    Messages read `"<op or layer path>: <what is wrong>; expected <x>, got <y>"`. It is a
    RuntimeError too, the kind PyTorch raises for shapes, so a PyTorch script's `except
    RuntimeError` catches it; and a ValueError, as lamina's code has caught it.

    Examples:
        >>> lm.ones(2, 3) @ lm.ones(2, 3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        lamina.errors.ShapeError: matmul: inner dimensions differ; ...
    """


class DTypeError(ShapeError):
    """A tensor's dtype does not fit a layer's parameters (float64 data into a float32 layer).

    A kind of ShapeError: both say an input does not fit, and both are located and reported
    the same way (the layer's path in the model; the job's config path in the CLI).

    Examples:
        >>> issubclass(lm.DTypeError, lm.ShapeError)
        True
    """


class DataError(ValueError):
    """A dataset's files or arrays cannot be used as asked (unparsable, labels that are not
    class indices, train and test samples of different shapes). Messages name the dataset
    and the file.

    Examples:
        >>> issubclass(lm.DataError, ValueError)
        True
    """


class Terminated(KeyboardInterrupt):
    """The process was asked to stop (SIGTERM, as a scheduler, systemd or Kubernetes sends
    first): training stopped after the current batch, as for Ctrl-C, and saved its place."""


class OutOfMemoryError(RuntimeError):
    """PyTorch's `torch.OutOfMemoryError` (also `torch.cuda.OutOfMemoryError`), so that a
    script's `except torch.cuda.OutOfMemoryError:` finds the name. lamina raises NumPy's
    MemoryError when the CPU runs out.

    Examples:
        >>> issubclass(lm.cuda.OutOfMemoryError, RuntimeError)
        True
    """
