"""Every public name of lamina's PyTorch surface (the `lamina` namespace, Tensor's methods,
`lamina.autograd`, `lamina.nn.utils`, `lamina.linalg`, `lamina.distributions`,
`lamina.special`, `lamina.optim.swa_utils`, `lamina.func`, `lamina.autograd.functional`,
`nn.utils.stateless`, `lamina.testing`, `lamina.utils.checkpoint`, `lamina.fft`, `lamina.hub`) has a docstring with an example, and the example
runs: each `>>>` line is executed and any output it shows is compared."""

from __future__ import annotations

import doctest
import inspect
import io
import warnings

import numpy as np
import pytest

import lamina
import lamina.utils.checkpoint  # noqa: E402, F401 - a submodule the examples cover
from lamina.autograd.tensor import Tensor

GLOBS = {"lm": lamina, "lamina": lamina, "np": np, "nn": lamina.nn,
         "F": lamina.nn.functional, "io": io, "special": lamina.special,
         "prune": lamina.nn.utils.prune, "jit": lamina.jit}


def _public() -> list[tuple[str, object]]:
    out = []
    for name in lamina.__all__:
        obj = getattr(lamina, name)
        if callable(obj) and not inspect.ismodule(obj) and not isinstance(obj, np.dtype):
            out.append((f"lamina.{name}", obj))
    for name in dir(Tensor):
        if not name.startswith("_"):
            member = inspect.getattr_static(Tensor, name)
            if inspect.ismemberdescriptor(member):
                continue  # __slots__ fields: documented in the class docstring
            out.append((f"Tensor.{name}", member.fget if isinstance(member, property)
                        else getattr(Tensor, name)))
    for module in (lamina.autograd, lamina.nn.utils, lamina.linalg, lamina.distributions,
                   lamina.special, lamina.optim.swa_utils, lamina.func,
                   lamina.autograd.functional, lamina.nn.utils.stateless, lamina.testing,
                   lamina.utils.checkpoint, lamina.nn.utils.prune, lamina.jit,
                   lamina.profiler, lamina.autograd.profiler, lamina.fft, lamina.hub):
        for name in module.__all__:
            out.append((f"{module.__name__}.{name}", getattr(module, name)))
    seen, unique = set(), []
    for name, obj in out:
        if id(obj) not in seen:
            seen.add(id(obj))
            unique.append((name, obj))
    return unique


PUBLIC = _public()


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_every_public_name_has_a_runnable_example(name: str, obj: object) -> None:
    doc = inspect.getdoc(obj) or ""
    assert ">>>" in doc, f"{name}: no example in its docstring"
    test = doctest.DocTestParser().get_doctest(doc, dict(GLOBS), name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    state = lamina.get_rng_state()
    try:
        with warnings.catch_warnings():
            # the deprecated names' examples show their use; their warnings are tested apart
            warnings.filterwarnings("ignore", r"(`lamina\.jit\.|set_default_tensor_type)")
            lamina.manual_seed(0)
            runner.run(test, out=lambda s: pytest.fail(s, pytrace=False))
    finally:
        lamina.set_rng_state(state)
        lamina.set_default_dtype(lamina.float32)
        lamina.set_grad_enabled(True)
    assert runner.failures == 0
