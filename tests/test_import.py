"""`import lamina` loads the core; files, plans, training and Ray load at first use."""

import subprocess
import sys

import pytest

import lamina

LAZY = ["lamina.data", "lamina.distributed", "lamina.distributions", "lamina.io", "lamina.onnx", "lamina.plan",
        "lamina.train", "asyncio", "multiprocessing", "ssl"]


def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_lamina_loads_none_of_the_subsystems_a_script_may_never_use():
    code = (f"import sys, lamina\nprint([m for m in {LAZY!r} if m in sys.modules])\n"
            "lamina.plan, lamina.save, lamina.utils.data.DataLoader\n"
            "print(sorted(m for m in ('lamina.plan', 'lamina.io', 'lamina.data') "
            "if m in sys.modules))")
    before, after = _python(code).splitlines()
    assert before == "[]"
    assert after == "['lamina.data', 'lamina.io', 'lamina.plan']"


def test_lazy_names_resolve_as_attributes_imports_and_in_dir():
    from lamina import load, save
    from lamina.utils.data import DataLoader

    assert lamina.save is save and lamina.load is load
    assert lamina.utils.data.DataLoader is DataLoader is lamina.data.DataLoader
    assert lamina.plan.compile is __import__("lamina.plan").plan.compile
    assert {"data", "distributed", "distributions", "io", "onnx", "plan", "train", "save", "load"} <= set(
        dir(lamina))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        lamina.nonexistent  # noqa: B018
    with pytest.raises(AttributeError, match="lamina.utils' has no attribute 'nope'"):
        lamina.utils.nope  # noqa: B018
