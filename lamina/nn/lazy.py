"""Lazy modules (PyTorch's LazyLinear, LazyConv2d, LazyBatchNorm1d, ...): built without
the input's size, which the first forward pass (or a loaded state dict) supplies.

Until then their parameters are `UninitializedParameter`s. At the first call the module
becomes the plain layer it stands for (LazyLinear a Linear, with PyTorch's
initialisation) and its parameter objects take their values and shapes in place, so an
optimizer made before the dry run updates them, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from lamina.nn.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from lamina.nn.layer import Layer, Parameter
from lamina.nn.linear import Linear
from lamina.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from lamina.nn.registry import config_value, register_layer


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet; `materialize` gives it one.

    Examples:
        >>> nn.LazyLinear(3).weight
        <UninitializedParameter>
    """

    __slots__ = ()

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.zeros((0,), dtypes.resolve(dtype) or np.float32), requires_grad)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a Parameter of `shape` (its values unset: the module initialises them)."""
        self.array = np.empty(tuple(shape), dtypes.resolve(dtype) or self.array.dtype)
        self.__class__ = Parameter

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy batch norm's running statistics)."""

    __slots__ = ()

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.zeros((0,), dtypes.resolve(dtype) or np.float32))

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a Tensor of `shape`."""
        self.array = np.empty(tuple(shape), dtypes.resolve(dtype) or self.array.dtype)
        self.__class__ = Tensor

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


class LazyModuleMixin:
    """What every lazy module shares: the first call (or load_state_dict) sizes it and
    turns it into `cls_to_become`. A subclass gives `_size(x)`, the size its input
    implies, and `_size_from_state(state)`, the one a state dict's shapes imply."""

    cls_to_become: type[Layer]
    _args: dict[str, Any]

    def has_uninitialized_params(self) -> bool:
        """Whether the module still waits for its input's size.

        Examples:
            >>> nn.LazyLinear(3).has_uninitialized_params()
            True
        """
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer))
                   for t in [*self._params.values(), *self._buffers.values()])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(*args)  # the first call: after it, the class is another
        return Layer.__call__(self, *args, **kwargs)

    def initialize_parameters(self, input: Any, *rest: Any) -> None:  # noqa: A002
        """Size the module from its first input."""
        self._become(self._size(input))

    def materialize_from_state(self, state: dict[str, Any]) -> None:
        """Size the module from the shapes of a state dict's entries (its own names)."""
        # an uninitialized entry is empty, (0,): another lazy module's, not run yet
        known = {k: np.shape(v) for k, v in state.items() if np.shape(v) != (0,)}
        size = self._size_from_state(known)
        if size:  # a state dict of another lazy module that has not run leaves this one so
            self._become(size)

    def _become(self, size: int) -> None:
        """Turn into cls_to_become of that size; the parameter and buffer objects stay."""
        old = {**self._params, **self._buffers}
        dtype = next((t.array.dtype for t in old.values() if t is not None), np.float32)
        training, hooks = self.training, {k: v for k, v in self.__dict__.items()
                                          if k.startswith(("_forward", "_backward"))}
        target, args = self.cls_to_become, self.__dict__.pop("_args")
        object.__setattr__(self, "__class__", target)
        target.__init__(self, size, **args)  # type: ignore[misc]
        self.__dict__.update(hooks)
        for name, new in [*self._params.items(), *self._buffers.items()]:
            kept = old.get(name)
            if kept is None or new is None:
                continue
            kept.array = new.array.astype(dtype if new.array.dtype.kind == "f" else
                                          new.array.dtype)
            kept.__class__ = Parameter if isinstance(kept, Parameter) else Tensor
            if name in self._params:
                setattr(self, name, kept)
            else:
                self._buffers[name] = kept
                object.__setattr__(self, name, kept)
        self.train(training)


def _lazy(name: str, target: type[Layer], params: list[str], buffers: list[str],
          size: Any, size_from_state: Any, doc: str,
          defaults: dict[str, Any] | None = None) -> type[Layer]:
    """A lazy class for `target`, whose first constructor argument (the input's size) the
    input supplies; the rest keep target's names and defaults, but for `defaults`."""
    import inspect

    signature = inspect.signature(target.__init__)
    rest = [p.replace(default=(defaults or {}).get(p.name, p.default))
            for p in list(signature.parameters.values())[2:]]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY),
                                   *rest]).bind(self, *args, **kwargs)
        bound.apply_defaults()
        Layer.__init__(self)
        self._args = {k: v for k, v in bound.arguments.items() if k != "self"}
        for arg in ("device", "dtype"):
            self._args.pop(arg, None)
        wanted = {p for p in params if _has(self._args, p)}
        for p in params:
            setattr(self, p, UninitializedParameter() if p in wanted else None)
        for b in buffers:
            if self._args.get("track_running_stats", True):
                self.register_buffer(b, UninitializedBuffer())
            else:
                object.__setattr__(self, b, None)
        if buffers and self._args.get("track_running_stats", True):
            self.register_buffer("num_batches_tracked", np.zeros((), np.int64))

    def get_config(self: Any) -> dict[str, Any]:
        return {k: config_value(v) for k, v in self._args.items()}

    def extra_repr(self: Any) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._args.items())

    cls = type(name, (LazyModuleMixin, Layer), {
        "__init__": __init__, "get_config": get_config, "extra_repr": extra_repr,
        "cls_to_become": target, "_size": staticmethod(size),
        "_size_from_state": staticmethod(size_from_state), "__doc__": doc})
    cls.__init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *rest])
    return register_layer(name)(cls)


def _has(args: dict[str, Any], param: str) -> bool:
    """Whether the layer will have this parameter: bias unless bias=False, an affine
    norm's weight and bias."""
    if "affine" in args:
        return bool(args["affine"])
    return param != "bias" or bool(args.get("bias", True))


def _channels(nd: int) -> Any:
    return lambda x: x.shape[1] if x.ndim == nd + 2 else x.shape[0]


def _state_dim(key: str, axis: int) -> Any:
    return lambda shapes: shapes[key][axis] if key in shapes else None


def _doc(name: str, target: str, example: str, shape: str) -> str:
    return (f"{target} whose input size comes from the first input.\n\n    Examples:\n"
            f"        >>> m = nn.{name}\n        >>> m({example}).shape, type(m).__name__\n"
            f"        (lamina.Size([{shape}]), '{target}')\n    ")


LazyLinear = _lazy("LazyLinear", Linear, ["weight", "bias"], [], lambda x: x.shape[-1],
                   _state_dim("weight", 1), _doc("LazyLinear(3)", "Linear", "lm.ones(2, 5)",
                                                 "2, 3"))
LazyConv1d = _lazy("LazyConv1d", Conv1d, ["weight", "bias"], [], _channels(1),
                   _state_dim("weight", 1), _doc("LazyConv1d(4, 3)", "Conv1d",
                                                 "lm.ones(2, 3, 8)", "2, 4, 6"))
LazyConv2d = _lazy("LazyConv2d", Conv2d, ["weight", "bias"], [], _channels(2),
                   _state_dim("weight", 1), _doc("LazyConv2d(4, 3)", "Conv2d",
                                                 "lm.ones(2, 3, 8, 8)", "2, 4, 6, 6"))
LazyConv3d = _lazy("LazyConv3d", Conv3d, ["weight", "bias"], [], _channels(3),
                   _state_dim("weight", 1), _doc("LazyConv3d(4, 1)", "Conv3d",
                                                 "lm.ones(1, 3, 2, 2, 2)", "1, 4, 2, 2, 2"))
LazyConvTranspose1d = _lazy("LazyConvTranspose1d", ConvTranspose1d, ["weight", "bias"], [],
                            _channels(1), _state_dim("weight", 0),
                            _doc("LazyConvTranspose1d(4, 3)", "ConvTranspose1d",
                                 "lm.ones(2, 3, 8)", "2, 4, 10"))
LazyConvTranspose2d = _lazy("LazyConvTranspose2d", ConvTranspose2d, ["weight", "bias"], [],
                            _channels(2), _state_dim("weight", 0),
                            _doc("LazyConvTranspose2d(4, 3)", "ConvTranspose2d",
                                 "lm.ones(2, 3, 5, 5)", "2, 4, 7, 7"))
LazyConvTranspose3d = _lazy("LazyConvTranspose3d", ConvTranspose3d, ["weight", "bias"], [],
                            _channels(3), _state_dim("weight", 0),
                            _doc("LazyConvTranspose3d(4, 2)", "ConvTranspose3d",
                                 "lm.ones(1, 3, 2, 2, 2)", "1, 4, 3, 3, 3"))
def _NORM_STATE(shapes: dict[str, Any]) -> Any:  # noqa: N802 - a constant of the table
    return next((s[0] for k, s in shapes.items() if k in ("weight", "running_mean")), None)
LazyBatchNorm1d = _lazy("LazyBatchNorm1d", BatchNorm1d, ["weight", "bias"],
                        ["running_mean", "running_var"], lambda x: x.shape[1], _NORM_STATE,
                        _doc("LazyBatchNorm1d()", "BatchNorm1d", "lm.ones(4, 3)", "4, 3"))
LazyBatchNorm2d = _lazy("LazyBatchNorm2d", BatchNorm2d, ["weight", "bias"],
                        ["running_mean", "running_var"], lambda x: x.shape[1], _NORM_STATE,
                        _doc("LazyBatchNorm2d()", "BatchNorm2d", "lm.ones(4, 3, 2, 2)",
                             "4, 3, 2, 2"))
LazyBatchNorm3d = _lazy("LazyBatchNorm3d", BatchNorm3d, ["weight", "bias"],
                        ["running_mean", "running_var"], lambda x: x.shape[1], _NORM_STATE,
                        _doc("LazyBatchNorm3d()", "BatchNorm3d", "lm.ones(4, 3, 2, 2, 2)",
                             "4, 3, 2, 2, 2"))
# PyTorch's lazy instance norms learn an affine map and track statistics by default,
# unlike InstanceNorm1d/2d/3d
_LAZY_INSTANCE_NORM = {"affine": True, "track_running_stats": True}
LazyInstanceNorm1d = _lazy("LazyInstanceNorm1d", InstanceNorm1d, ["weight", "bias"],
                           ["running_mean", "running_var"], _channels(1), _NORM_STATE,
                           _doc("LazyInstanceNorm1d()", "InstanceNorm1d", "lm.ones(2, 3, 5)",
                                "2, 3, 5"),
                           defaults=_LAZY_INSTANCE_NORM)
LazyInstanceNorm2d = _lazy("LazyInstanceNorm2d", InstanceNorm2d, ["weight", "bias"],
                           ["running_mean", "running_var"], _channels(2), _NORM_STATE,
                           _doc("LazyInstanceNorm2d()", "InstanceNorm2d",
                                "lm.ones(2, 3, 4, 4)", "2, 3, 4, 4"),
                           defaults=_LAZY_INSTANCE_NORM)
LazyInstanceNorm3d = _lazy("LazyInstanceNorm3d", InstanceNorm3d, ["weight", "bias"],
                           ["running_mean", "running_var"], _channels(3), _NORM_STATE,
                           _doc("LazyInstanceNorm3d()", "InstanceNorm3d",
                                "lm.ones(2, 3, 2, 2, 2)", "2, 3, 2, 2, 2"),
                           defaults=_LAZY_INSTANCE_NORM)

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear", "LazyModuleMixin",
           "UninitializedBuffer", "UninitializedParameter"]
