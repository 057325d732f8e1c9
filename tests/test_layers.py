"""Imports run one way: each layer of the package imports only its own layer and those
below it (lamina/__init__.py, the facade, imports everything and nothing imports it).

The layers, lowest first: the core (tensors, autograd, dtypes, random numbers), the ops
(with linalg), modules and distributions, optimizers and data, execution plans and files (checkpoints, and ONNX export, which
traces as a plan does), training, distribution, running jobs, and the command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lamina"
RANKS = {
    **dict.fromkeys(["autograd", "dtypes", "state", "random", "errors", "backend",
                     "parallel", "thread_pools", "fused", "allocator", "runtime", "creation",
                     "return_types", "schema", "version", "registry", "printing", "type_info",
                     "profiler", "interop", "shared_memory", "memory_formats",
                     "creation_random", "promotion"], 0),
    **dict.fromkeys(["functions", "tensor_functions", "tensor_functions_extra", "linalg",
                     "legacy_tensors", "special", "tensor_functions_misc", "testing",
                     "tensor_functions_stats", "tensor_functions_dtypes",
                     "finite_differences", "window_functions", "fft"], 1),
    **dict.fromkeys(["nn", "distributions", "func", "jit"], 2),
    **dict.fromkeys(["optim", "data", "amp", "grad_scaler", "cuda", "accelerator", "backends",
                     "multiprocessing"], 3),
    **dict.fromkeys(["plan", "compiler", "onnx", "io", "hub"], 4),
    **dict.fromkeys(["train", "utils"], 5),
    "distributed": 6,
    "jobs": 7,
    "cli": 8,
    "cli_commands": 8,
}
# Arrows that still run back up, each with the reason it stands (none now); the test fails
# when one goes (remove it here) as when a new one comes.
KNOWN: set[tuple[str, str]] = set()


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


def test_every_kind_of_named_thing_lives_in_one_kind_of_registry() -> None:
    """Layers, optimizers, schedules, losses, metrics, algorithms, datasets and exporters:
    each a lamina.registry.Registry, so each refuses a taken name and suggests the closest
    one the same way."""
    import pytest

    from lamina.data.builtin import _LOADERS
    from lamina.nn.registry import _REGISTRY
    from lamina.onnx.registry import MODULE_EXPORTERS, OP_EXPORTERS
    from lamina.optim import OPTIMIZERS, lr_scheduler
    from lamina.registry import Registry
    from lamina.schema import ConfigError
    from lamina.train.algorithm import _ALGORITHMS
    from lamina.train.losses import LOSSES, METRICS

    registries = [_REGISTRY, OPTIMIZERS, lr_scheduler.SCHEDULES, LOSSES, METRICS, _ALGORITHMS,
                  _LOADERS, MODULE_EXPORTERS, OP_EXPORTERS]
    assert all(isinstance(r, Registry) and len(r) for r in registries)
    for registry in registries:
        first = registry.names()[0]
        with pytest.raises(ConfigError, match=rf"unknown {registry.kind} '{first}x' \(did you "
                           rf"mean '{first}'\?\)"):
            registry.lookup(first + "x")
        with pytest.raises(ValueError, match="is already registered"):
            registry.add(first, object())


def test_the_distributed_trainer_extends_the_trainer_through_public_methods() -> None:
    """It overrides what Trainer offers for it (train_epoch, state_dict), never a private
    step of Trainer's loop, and calls none: a change inside the loop cannot break it."""
    import ast
    import inspect

    from lamina.distributed.trainer import DistributedTrainer
    from lamina.train.trainer import Trainer

    overridden = [n for n in vars(DistributedTrainer)
                  if n in vars(Trainer) and callable(vars(Trainer)[n]) and n != "__init__"]
    assert overridden and all(not n.startswith("_") for n in overridden)
    private = {n for n in vars(Trainer) if n.startswith("_") and not n.startswith("__")}
    tree = ast.parse(inspect.getsource(DistributedTrainer))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert used & private == set()
