"""Imports run one way: each layer of the package imports only its own layer and those
below it (lamina/__init__.py, the facade, imports everything and nothing imports it).

The layers, lowest first: the core (tensors, autograd, dtypes, random numbers), the ops,
modules and files, optimizers and data, execution plans, training, distribution, running
jobs, and the command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lamina"
RANKS = {
    **dict.fromkeys(["autograd", "dtypes", "config", "random", "errors", "backend",
                     "parallel", "allocator", "runtime", "creation", "return_types",
                     "schema", "version"], 0),
    **dict.fromkeys(["functions", "tensor_functions"], 1),
    **dict.fromkeys(["nn", "io"], 2),
    **dict.fromkeys(["optim", "data", "amp", "cuda", "accelerator", "backends"], 3),
    **dict.fromkeys(["plan", "compiler"], 4),
    **dict.fromkeys(["train", "utils"], 5),
    "distributed": 6,
    "jobs": 7,
    "cli": 8,
}
# Arrows that still run back up, each with the reason it stands; the test fails when one
# goes (remove it here) as when a new one comes.
KNOWN = {
    # Tensor's PyTorch methods (x.sum(), x.view(...)) call the ops, imported at call time.
    ("autograd", "functions"),
}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "lamina" and len(parts) > 1 else None


def _arrows() -> set[tuple[str, str, str]]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if rel.parts == ("lamina", "__init__"):
            continue
        source = rel.parts[1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = ([f"{node.module}.{a.name}" for a in node.names]
                           if node.module == "lamina" else [node.module])
            else:
                continue
            for target in targets:
                if target == "lamina":
                    found.add((source, "lamina (the facade)", str(rel)))
                part = _part(target)
                if part is not None and part != source and RANKS[part] > RANKS[source]:
                    found.add((source, part, str(rel)))
    return found


def test_every_subpackage_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert names == set(RANKS)


def test_imports_run_one_way() -> None:
    arrows = _arrows()
    assert {(a, b) for a, b, _ in arrows} == KNOWN, sorted(arrows)
