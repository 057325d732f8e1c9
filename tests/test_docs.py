"""Every public name has a docstring: the API page (make docs) is built from them."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = ["lamina", "lamina.functions", "lamina.nn", "lamina.nn.init", "lamina.optim",
           "lamina.optim.lr_scheduler", "lamina.io", "lamina.data", "lamina.train",
           "lamina.plan", "lamina.parallel", "lamina.distributed"]


def _public(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [
        n for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", "") == module_name]
    for name in names:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            continue
        yield f"{module_name}.{name}", obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member):
                    continue
                yield f"{module_name}.{name}.{attr}", member


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_has_a_docstring(module_name) -> None:
    if module_name == "lamina.distributed":
        pytest.importorskip("ray")
    assert (importlib.import_module(module_name).__doc__ or "").strip(), module_name
    missing = [name for name, obj in _public(module_name) if not (inspect.getdoc(obj) or "").strip()]
    assert not missing, f"no docstring: {missing}"
