"""The PyTorch-style programs of examples/pytorch_style run on lamina as written, and on
PyTorch with only their import lines changed; from the same initial weights (lamina's
models load PyTorch's state dicts) and the same data, the losses agree."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent.parent / "examples" / "pytorch_style"
PROGRAMS = sorted(p.stem for p in HERE.glob("*.py"))
STEPS = {"lstmcell_lbfgs": 3, "save_resume": 6, "hogwild": 3}  # hogwild: processes
IMPORT = re.compile(r"^(import|from) lamina\b")


def _torch_source(source: str) -> str:
    """The program with `torch` for `lamina` in its import lines, and nowhere else."""
    lines = source.splitlines()
    changed = [line.replace("lamina", "torch") if IMPORT.match(line) else line
               for line in lines]
    assert sum(a != b for a, b in zip(lines, changed)) >= 2  # a real port: several imports
    return "\n".join(changed) + "\n"


def _load(name: str, source: str, tag: str, tmp_path: Path):
    module_name = f"pytorch_style_{name}_{tag}"
    path = tmp_path / f"{module_name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def importable(tmp_path):
    """tmp_path on sys.path while the test runs: a spawned worker imports the program's
    module by name, as a script's spawned workers import the script."""
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))


def test_every_program_is_listed_in_the_readme() -> None:
    readme = (HERE / "README.md").read_text()
    assert PROGRAMS and all(f"`{name}.py`" in readme for name in PROGRAMS)
    assert len(PROGRAMS) >= 8


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_trains_the_same_on_lamina_and_pytorch(name, importable) -> None:
    tmp_path = importable
    source = (HERE / f"{name}.py").read_text()
    ours = _load(name, source, "lamina", tmp_path)
    theirs = _load(name, _torch_source(source), "torch", tmp_path)
    data = ours.make_data()
    torch.manual_seed(0)
    their_models = theirs.build()
    our_models = ours.build()
    for key, model in their_models.items():
        state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        result = our_models[key].load_state_dict(state)
        assert result.missing_keys == [] and result.unexpected_keys == []
    steps = STEPS.get(name, 8)
    our_losses = ours.train(our_models, data, steps)
    their_losses = theirs.train(their_models, data, steps)
    assert len(our_losses) == len(their_losses) >= steps
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-4, atol=1e-4)
