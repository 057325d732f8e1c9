"""`lamina.jit`, PyTorch's TorchScript names, so that model code written to be scriptable
runs as it is written: `@jit.ignore`, `jit.is_scripting()`, `jit.annotate`, `jit.Final`,
`jit.script(model)`, `jit.trace(model, example)`.

lamina runs Python, so there is nothing to compile: `script` and `trace` give back what
they are given (as TorchScript's results do in eager use, they compute what the Python
computes), and the decorators mark nothing. What needs TorchScript's own files refuses
with the way to do it here: `jit.save` and `jit.load` (weights go through `lamina.save`
as safetensors, a graph through `lamina.onnx.export`). Like PyTorch's, which deprecates
TorchScript for `torch.compile`, the entry points warn with a DeprecationWarning.

    >>> from lamina import jit
    >>> model = jit.script(nn.Linear(2, 1))
    >>> isinstance(model, nn.Linear), jit.is_scripting()
    (True, False)
"""

from __future__ import annotations

import builtins
import collections
import types
import warnings
from collections.abc import Callable
from typing import Any, Final, Union  # noqa: F401 - Final is PyTorch's jit.Final too

__all__ = ["Attribute", "Future", "annotate", "export", "fork", "freeze", "ignore",
           "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "optimize_for_inference", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused", "wait"]

# In eager code PyTorch's `jit.Attribute(value, type)` is this pair.
Attribute = collections.namedtuple("Attribute", ["value", "type"])
Attribute.__doc__ = """A value with its TorchScript type, as PyTorch's eager `jit.Attribute`.

    Examples:
        >>> jit.Attribute(3, int).value
        3
    """


def _deprecated(name: str) -> None:
    warnings.warn(f"`lamina.jit.{name}` is deprecated, as `torch.jit.{name}` is: lamina "
                  "runs the Python as it is (use lamina.compile for a planned model)",
                  DeprecationWarning, stacklevel=3)


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """`obj` (a module or a function) as it is: it already computes what TorchScript's
    compiled form would.

    Examples:
        >>> @jit.script
        ... def double(x):
        ...     return x * 2
        >>> double(lm.tensor([1.5]))
        tensor([3.])
    """
    _deprecated("script")
    return obj


def _as_args(example: Any) -> tuple:
    return example if builtins.isinstance(example, tuple) else (example,)


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> Any:
    """`func` as it is, after running it once on the example inputs (a tensor or a tuple
    of them), as tracing does: an input it cannot take fails here, and a module in
    training mode updates its batch-norm statistics, as PyTorch's trace does.

    Examples:
        >>> model = jit.trace(nn.Linear(3, 2), lm.ones(1, 3))
        >>> model(lm.ones(4, 3)).shape
        lamina.Size([4, 2])
    """
    _deprecated("trace")
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("jit.trace: give example_inputs (a tensor or a tuple of them) "
                           "or example_kwarg_inputs (a dict)")
    func(*_as_args(example_inputs) if example_inputs is not None else (),
         **(example_kwarg_inputs or {}))
    return func


def trace_module(mod: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """`mod` as it is, after running each named method once on its example inputs.

    Examples:
        >>> layer = jit.trace_module(nn.Linear(2, 2), {"forward": lm.ones(1, 2)})
        >>> isinstance(layer, nn.Linear)
        True
    """
    _deprecated("trace_module")
    for method, example in inputs.items():
        getattr(mod, method)(*_as_args(example))
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Leave a function to Python (all of lamina is): as `@jit.ignore` or
    `@jit.ignore(drop=True)`.

    Examples:
        >>> @jit.ignore
        ... def debug(x):
        ...     return x.shape
        >>> debug(lm.ones(2))
        lamina.Size([2])
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def _unchanged(name: str, marks: str) -> Callable:
    def mark(fn: Any) -> Any:
        return fn

    mark.__name__ = mark.__qualname__ = name
    mark.__doc__ = (f"Mark {marks}: the argument, unchanged.\n\nExamples:\n"
                    f"    >>> jit.{name}(abs)(-2)\n    2\n")
    return mark


unused = _unchanged("unused", "a method TorchScript should skip")
export = _unchanged("export", "a method TorchScript should compile too")
interface = _unchanged("interface", "a class as a TorchScript interface")
script_if_tracing = _unchanged("script_if_tracing", "a function to script when traced")


def is_scripting() -> bool:
    """False: lamina code never runs under TorchScript's compiler.

    Examples:
        >>> jit.is_scripting()
        False
    """
    return False


def is_tracing() -> bool:
    """False: `trace` runs its function as plain Python.

    Examples:
        >>> jit.is_tracing()
        False
    """
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """A type hint for TorchScript: `the_value`.

    Examples:
        >>> jit.annotate(list, [])
        []
    """
    return the_value


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - PyTorch's name
    """Python's isinstance, which also checks a container's items against a subscripted
    type (`List[int]`, `Dict[str, Tensor]`, `Tuple[int, str]`, `Optional[int]`); an empty
    container warns that its items' type cannot be known, as PyTorch's does.

    Examples:
        >>> from typing import Dict, List
        >>> jit.isinstance([1, 2], List[int]), jit.isinstance({"a": 1}, Dict[str, str])
        (True, False)
    """
    origin, args = getattr(target_type, "__origin__", None), getattr(target_type, "__args__", ())
    if origin is None and not builtins.isinstance(target_type, types.UnionType):
        return builtins.isinstance(obj, target_type)
    if origin is Union or builtins.isinstance(target_type, types.UnionType):
        return any(isinstance(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin in (list, dict) and len(obj) == 0:
        warnings.warn("The inner type of a container is lost when calling jit.isinstance "
                      "on an empty one in eager mode", UserWarning, stacklevel=2)
        return True
    if origin is list:
        return all(isinstance(item, args[0]) for item in obj)
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return len(obj) == len(args) and all(map(isinstance, obj, args))
    return True


class Future:
    """What `fork` returns, its value already computed (PyTorch's runs synchronously in
    eager code too); `wait()` and `value()` give it.

    Examples:
        >>> jit.fork(lambda x: x + 1, 1).wait()
        2
    """

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value

    value = wait

    def done(self) -> bool:
        return True


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Run `func(*args, **kwargs)`; `wait` on the result gives its value.

    Examples:
        >>> jit.wait(jit.fork(max, 2, 5))
        5
    """
    _deprecated("fork")
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """The value of a `fork`.

    Examples:
        >>> jit.wait(jit.fork(min, 2, 5))
        2
    """
    _deprecated("wait")
    return future.wait()


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """`mod`, which must be in eval mode, as PyTorch requires.

    Examples:
        >>> layer = jit.freeze(nn.Linear(2, 2).eval())
        >>> layer.training
        False
    """
    _deprecated("freeze")
    if getattr(mod, "training", False):
        raise RuntimeError("jit.freeze: freezing is only implemented for modules in eval "
                           "mode; call .eval() on the module first")
    return mod


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """`mod` in eval mode (PyTorch's freezes it first, which needs eval mode).

    Examples:
        >>> jit.optimize_for_inference(nn.Linear(2, 2)).training
        False
    """
    return mod.eval()


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Refused: a TorchScript archive holds compiled code. The error names lamina's way.

    Examples:
        >>> jit.save(nn.Linear(2, 2), "model.pt")
        Traceback (most recent call last):
        ...
        NotImplementedError: jit.save: ...
    """
    raise NotImplementedError(
        "jit.save: lamina writes no TorchScript archives. Save the weights with "
        "lamina.save(model.state_dict(), path) (safetensors) and rebuild the model in "
        "code, or export the graph with lamina.onnx.export(model, example, path)")


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Refused: a TorchScript archive holds compiled code lamina does not run.

    Examples:
        >>> jit.load("model.pt")
        Traceback (most recent call last):
        ...
        NotImplementedError: jit.load: ...
    """
    raise NotImplementedError(
        "jit.load: lamina does not run TorchScript archives. In PyTorch, save the weights "
        "with torch.save(model.state_dict(), path), then build the model in lamina and "
        "call model.load_state_dict(lamina.load(path)), which reads that file without "
        "unpickling it")

