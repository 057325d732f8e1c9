"""`Layer`: parameters, buffers and child layers registered on assignment, plus state dicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn.backward_hooks import BackwardHookMethods
from lamina.nn.factory import add_factory_kwargs
from lamina.nn.layer_errors import blame, check_dtypes
from lamina.nn.module_tree import TreeMethods
from lamina.nn.state_dict import Buffer, StateDictMethods


class Parameter(Tensor):
    """A tensor that a layer trains: it requires grad and is registered by assignment.

    Examples:
        >>> self.weight = nn.Parameter(np.zeros((10, 784), np.float32))
    """

    __slots__ = ()

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if isinstance(data, Tensor):
            data = data.array
        elif data is None:
            data = np.zeros((0,), np.float32)
        super().__init__(np.asarray(data) if not hasattr(data, "dtype") else data,
                         requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)


_edit_count = 0


def edit_count() -> int:
    """How many times any layer's attributes have been assigned or deleted, modes
    included: a compiled plan re-reads a model's settings only when this moved."""
    return _edit_count


def edited() -> None:
    """Count an edit that bypasses Layer.__setattr__ (object.__setattr__ on a layer)."""
    global _edit_count
    _edit_count += 1


class Layer(TreeMethods, StateDictMethods, BackwardHookMethods):
    """Base class of every layer (`nn.Module` is this class, with PyTorch's methods): a
    forward computation with its parameters and children.

    Assign a `Parameter` or a `Layer` to an attribute and it is registered under that name;
    `register_buffer` adds state that is saved but not trained (batch-norm statistics).
    The dotted names in `named_parameters()` and `state_dict()` follow the tree
    (`encoder.fc1.weight`), exactly as PyTorch names them.

    A subclass defines `__init__` (calling `super().__init__()` first, and taking only
    plain JSON-safe arguments), `forward`, and `get_config()` returning those arguments.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        add_factory_kwargs(cls)  # device= and dtype=, as PyTorch's constructors take

    def __init__(self) -> None:
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_name", None)  # its attribute name in the parent, for errors

    # -- registration ---------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        edited()
        if "_params" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: call super().__init__() before assigning attributes"
            )
        if isinstance(value, Buffer):
            self.register_buffer(name, Tensor(value.array), value.persistent)
            return
        if name in self._buffers and not isinstance(value, Parameter) and (
                value is None or isinstance(value, Tensor)):
            self._buffers[name] = value  # a registered buffer stays one, as in PyTorch
            object.__setattr__(self, name, value)
            return
        # A name that stays in its table keeps its place there (a replaced layer of a
        # Sequential runs where the old one did, as in PyTorch); else it leaves its table.
        target = self._params if isinstance(value, Parameter) else \
            self._children if isinstance(value, Layer) else None
        for table in (self._params, self._buffers, self._children):
            if table is not target:
                table.pop(name, None)
        if isinstance(value, Parameter):
            _check_name(self, name)
            self._params[name] = value
        elif isinstance(value, Layer):
            _check_name(self, name)
            self._children[name] = value
            if value._name is None:
                object.__setattr__(value, "_name", name)
        elif isinstance(value, (list, tuple, dict)):
            _refuse_unregistered(self, name, value)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        edited()
        for table in (self._params, self._buffers, self._children):
            table.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Register state that is not trained (batch-norm statistics): in the state dict
        unless `persistent=False`. None registers the name with no value yet, as PyTorch's
        does; assigning a tensor to it later makes it a buffer."""
        _check_name(self, name)
        if tensor is not None and not isinstance(tensor, Tensor):
            tensor = Tensor(np.asarray(tensor))
        self.__setattr__(name, None)  # whatever the name held before is dropped
        self._buffers[name] = None
        self.__setattr__(name, tensor)
        if persistent:
            self.__dict__.get("_non_persistent", set()).discard(name)
        else:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    # -- modes and gradients --------------------------------------------------------------
    def train(self, mode: bool = True) -> Layer:
        """Switch the tree to training mode (dropout active, batch statistics)."""
        for _, layer in self.named_layers():
            object.__setattr__(layer, "training", bool(mode))
        edited()
        return self

    def eval(self) -> Layer:
        """Switch the tree to evaluation mode (dropout off, running statistics)."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's accumulated gradient (set it to None, or with
        `set_to_none=False` to zeros)."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad.array[...] = 0

    def to(self, *args: Any, **kwargs: Any) -> Layer:
        """Convert every floating parameter and buffer of the tree to a dtype, in place, as
        PyTorch's `module.to(dtype)`, `to(device)`, `to(device, dtype)` and `to(tensor)` do
        (the device is always the CPU here); accumulated gradients are dropped. Returns the
        layer, so `model = nn.Layer.from_config(cfg).to("float64")` reads as one step.

        Examples:
            >>> model = nn.Linear(3, 2).to("float64")  # for lm.gradcheck, or float64 data
            >>> model.weight.dtype
            dtype('float64')
        """
        dtype = _to_dtype(args, kwargs)
        if dtype is None:
            return self
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to: parameters must stay floating point; "
                            f"got dtype {dtype} (labels and ids may be integers, weights not)")
        for t in (*self.parameters(), *self.buffers()):
            if t.array.dtype.kind == "f" and t.array.dtype != dtype:
                t.array, t.grad = t.array.astype(dtype), None
        return self

    # -- forward --------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the layer's output with lamina.functions; called by `layer(x)`."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if self._params:
                check_dtypes(self, args)
            d = self.__dict__
            if ("_forward_hooks" in d or "_forward_pre_hooks" in d or "_backward_hooks" in d
                    or "_backward_pre_hooks" in d):
                return self._call_with_hooks(args, kwargs)
            return self.forward(*args, **kwargs)
        except ShapeError as e:
            blame(e, self, args)
            raise

    def _fits(self, *args: Any) -> str | None:
        """For a ShapeError on these inputs: the constructor argument that would fit them
        ("in_features=6"), or None. Runs only after an error."""
        return None

    # -- config ---------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        """The constructor arguments, JSON-safe; `from_config` rebuilds the layer from them."""
        return {}

    def to_config(self) -> dict[str, Any]:
        """{"type": registered name, **get_config()}: a plain dict to save as YAML or JSON."""
        from lamina.nn.registry import registered_name

        return {"type": registered_name(type(self)), **self.get_config()}

    @classmethod
    def from_config(cls, config: Mapping[str, Any], path: str = "model") -> Layer:
        """Build a layer from a config dict through the registry (any registered type).

        Raises:
            ConfigError: an unknown type, a missing or unknown argument, or a wrong value
                type; the message names the path in the config and the allowed values.
        """
        from lamina.nn.registry import from_config

        return from_config(config, path)

    # -- display --------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The arguments shown in the layer's repr."""
        return ", ".join(f"{k}={v!r}" for k, v in self.get_config().items()
                         if not isinstance(v, (list, dict)))

    def __repr__(self) -> str:
        """PyTorch's format: `Name(extra)`, or one indented line per child."""
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        lines += [f"({name}): " + _indent(repr(child)) for name, child in self._children.items()]
        if not self._children and len(lines) <= 1:
            return f"{type(self).__name__}({''.join(lines)})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


# PyTorch's names for lamina's own: nn.Module is the base class of every layer.
Module = Layer


def _to_dtype(args: tuple[Any, ...], kwargs: dict[str, Any]) -> np.dtype | None:
    """The dtype in Module.to's arguments (a dtype, its name, or a tensor's), None if only a
    device is given; a device other than the CPU is refused."""
    from lamina import dtypes

    dtype = kwargs.pop("dtype", None)
    dtypes.check_device(kwargs.pop("device", None))
    kwargs.pop("non_blocking", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, dtypes.device) or (isinstance(a, str)
                                                and dtypes.resolve_name(a) is None):
            dtypes.check_device(a)
        elif not isinstance(a, bool):
            dtype = a
    return None if dtype is None else dtypes.resolve(dtype)


def _refuse_unregistered(layer: Layer, name: str, value: list | tuple | dict) -> None:
    """Layers or parameters inside a plain list would be invisible to parameters(),
    state_dict() and train(): a model that silently trains only some of its weights."""
    items = list(value.values() if isinstance(value, dict) else value)
    where = f"{type(layer).__name__}.{name}"
    kind = type(value).__name__
    if any(isinstance(v, Layer) for v in items):
        holder = "nn.ModuleDict({...})" if kind == "dict" else "nn.ModuleList([...])"
        raise TypeError(f"{where}: layers in a plain {kind} are not registered, so their "
                        f"parameters would neither train nor be saved; hold them in {holder} "
                        "(or nn.Sequential(...) to apply them in order)")
    if any(isinstance(v, Parameter) for v in items):
        holder = "nn.ParameterDict" if kind == "dict" else "nn.ParameterList"
        raise TypeError(f"{where}: parameters in a plain {kind} are not registered, so they "
                        f"would neither train nor be saved; hold them in {holder}(...), or "
                        f"assign each to its own attribute (setattr(self, f'{name}{{i}}', p))")


def _check_name(layer: Layer, name: str) -> None:
    if "." in name or not name:
        raise ValueError(
            f"{type(layer).__name__}: attribute name {name!r} may not be empty or contain "
            "'.', which separates names in state dicts"
        )
