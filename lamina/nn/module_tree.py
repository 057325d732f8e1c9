"""PyTorch's `nn.Module` methods for walking and editing the tree of a model: children,
parameters, buffers, modules, apply, get_submodule, register_parameter, add_module,
requires_grad_, the dtype and device moves, and forward hooks. `Layer` (alias `Module`)
inherits them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from lamina.nn.forward_hooks import ForwardHookMethods

if TYPE_CHECKING:
    from lamina.autograd.tensor import Tensor
    from lamina.nn.layer import Layer, Parameter


class TreeMethods(ForwardHookMethods):
    """children, parameters, buffers, modules, apply, get_submodule, hooks, ..."""

    def children(self) -> Iterator[Layer]:
        """The direct child layers, in registration order, each once (a layer registered
        under two names is listed under the first, as in PyTorch)."""
        return (child for _, child in self.named_children())

    def named_children(self) -> Iterator[tuple[str, Layer]]:
        """The direct child layers with their attribute names, each once."""
        seen: set[int] = set()
        for name, child in self._children.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def named_layers(self, prefix: str = "") -> Iterator[tuple[str, Layer]]:
        """This layer and every descendant, with dotted paths ('' for this one)."""
        yield prefix, self
        for name, child in self._children.items():
            yield from child.named_layers(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter of the tree (of this module alone without `recurse`) with its
        dotted name; a shared (tied) one once, unless `remove_duplicate=False`."""
        seen: set[int] = set()
        layers = self.named_layers(prefix) if recurse else [(prefix, self)]
        for path, layer in layers:
            for name, p in layer._params.items():
                if p is None:
                    continue
                if not remove_duplicate or id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{path}.{name}" if path else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of the tree (of this module alone without `recurse`), each once."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Every buffer of the tree (batch-norm statistics) with its dotted name; one
        shared by two layers once, unless `remove_duplicate=False`."""
        seen: set[int] = set()
        layers = self.named_layers(prefix) if recurse else [(prefix, self)]
        for path, layer in layers:
            for name, b in layer._buffers.items():
                if b is not None and (not remove_duplicate or id(b) not in seen):
                    seen.add(id(b))
                    yield (f"{path}.{name}" if path else name), b

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of the tree (of this module alone without `recurse`)."""
        return (b for _, b in self.named_buffers(recurse=recurse))

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Layer]]:
        """This module and every descendant with its dotted name ('' for this one); a
        module reached twice is given once unless `remove_duplicate=False`.

        Examples:
            >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
            >>> [name for name, _ in model.named_modules()]
            ['', '0', '1']
        """
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._children.items():
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Layer]:
        """This module and every descendant, each once.

        Examples:
            >>> len(list(nn.Sequential(nn.Linear(2, 3), nn.ReLU()).modules()))
            3
        """
        return (m for _, m in self.named_modules())

    def apply(self, fn: Callable[[Layer], Any]) -> Layer:
        """Call `fn` on every descendant and then on this module (children first, as
        PyTorch does); returns self. The usual use is initialisation.

        Examples:
            >>> def init(m):
            ...     if isinstance(m, nn.Linear):
            ...         nn.init.zeros_(m.bias)
            >>> model = nn.Sequential(nn.Linear(2, 3)).apply(init)
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def get_submodule(self, target: str) -> Layer:
        """The descendant at dotted path `target` ('' is this module).

        Raises:
            AttributeError: no module at that path; the message names the missing part.

        Examples:
            >>> nn.Sequential(nn.Linear(2, 3)).get_submodule("0")
            Linear(in_features=2, out_features=3, bias=True)
        """
        module = self
        for part in target.split(".") if target else ():
            if part not in module._children:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}` "
                                     f"(in get_submodule({target!r}))")
            module = module._children[part]
        return module

    def set_submodule(self, target: str, module: Layer, strict: bool = False) -> None:
        """Put `module` at dotted path `target` (its parent must exist; with `strict`, so
        must a module at the path).

        Examples:
            >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
            >>> net.set_submodule("1", nn.Tanh()); net[1]
            Tanh()
        """
        if not target:
            raise ValueError("set_submodule: the target cannot be empty")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and name not in parent._children:
            raise AttributeError(f"{type(parent).__name__} has no submodule `{name}` (in "
                                 f"set_submodule({target!r}, strict=True))")
        setattr(parent, name, module)

    def cuda(self, device: Any = None) -> Layer:
        """PyTorch's move to a GPU: raises, naming the CPU lamina computes on.

        Examples:
            >>> nn.Linear(2, 2).cuda()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            RuntimeError: device 'cuda': ...
        """
        return self.to("cuda")

    def to_empty(self, *, device: Any = None, recurse: bool = True) -> Layer:
        """PyTorch's move without copying values (after building on the meta device): on
        the CPU, this module as it is.

        Examples:
            >>> layer = nn.Linear(2, 2); layer.to_empty(device="cpu") is layer
            True
        """
        if device is not None:
            self.to(device)
        return self

    def get_parameter(self, target: str) -> Tensor:
        """The parameter at dotted path `target` ("0.weight").

        Examples:
            >>> nn.Sequential(nn.Linear(2, 3)).get_parameter("0.bias").shape
            lamina.Size([3])
        """
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._params:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._params[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` ("0.running_mean")."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._buffers:
            raise AttributeError(f"{type(module).__name__} has no buffer `{name}`")
        return module._buffers[name]

    def register_parameter(self, name: str, param: Any) -> None:
        """Register `param` (a Parameter, or None to declare the slot) under `name`.

        Examples:
            >>> layer = nn.Linear(2, 2)
            >>> layer.register_parameter("scale", nn.Parameter(lm.ones(2)))
            >>> sorted(dict(layer.named_parameters()))
            ['bias', 'scale', 'weight']
        """
        from lamina.nn.layer import Parameter

        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (nn.Parameter or None required)")
        setattr(self, name, param)

    def add_module(self, name: str, module: Layer | None) -> None:
        """Register `module` as a child under `name` (also `register_module`).

        Examples:
            >>> model = nn.Sequential()
            >>> model.add_module("fc", nn.Linear(2, 2))
            >>> [n for n, _ in model.named_children()]
            ['fc']
        """
        setattr(self, name, module)

    register_module = add_module

    def requires_grad_(self, requires_grad: bool = True) -> Layer:
        """Switch gradients of every parameter on or off (freezing a part of a model).

        Examples:
            >>> layer = nn.Linear(2, 2).requires_grad_(False)
            >>> layer.weight.requires_grad
            False
        """
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def cpu(self) -> Layer:
        """This module (lamina computes on the CPU)."""
        return self

    def share_memory(self) -> Layer:
        """Parameters, their gradients where they have one, and buffers moved to shared
        memory (Tensor.share_memory_), so that processes started after this train the same
        weights (Hogwild, with lamina.multiprocessing); returns this module.

        Examples:
            >>> nn.Linear(2, 2).share_memory().weight.is_shared()
            True
        """
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()
            if t.grad is not None:
                t.grad.share_memory_()
        return self

    def float(self) -> Layer:
        """Floating parameters and buffers as float32, in place.

        Examples:
            >>> nn.Linear(2, 2).double().float().weight.dtype
            dtype('float32')
        """
        return self.to("float32")

    def double(self) -> Layer:
        """Floating parameters and buffers as float64, in place."""
        return self.to("float64")

    def half(self) -> Layer:
        """Floating parameters and buffers as float16, in place."""
        return self.to("float16")

    def type(self, dst_type: Any) -> Layer:
        """Parameters and buffers cast to `dst_type`."""
        return self.to(dst_type)
