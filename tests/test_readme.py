"""The README's first example is a PyTorch script: it runs as written on lamina, and on
PyTorch with only its import lines changed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _first_python_block() -> str:
    return re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)


def _run(source: str, tmp_path: Path) -> str:
    script = tmp_path / "example.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _accuracy(out: str) -> float:
    return float(re.search(r"accuracy ([\d.]+)%", out).group(1))


def test_the_first_example_is_pytorch_style_and_trains(tmp_path) -> None:
    source = _first_python_block()
    assert "import lamina as torch" in source
    assert _accuracy(_run(source, tmp_path)) > 95


@pytest.mark.torch
def test_the_same_source_runs_on_pytorch(tmp_path) -> None:
    pytest.importorskip("torch")
    source = (_first_python_block().replace("import lamina as torch", "import torch")
              .replace("lamina.nn.functional", "torch.nn.functional")
              .replace("from lamina import", "from torch import"))
    assert "lamina" not in source
    assert _accuracy(_run(source, tmp_path)) > 95
