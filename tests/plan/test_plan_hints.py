"""A program probes its forward once for the liveness that gives its kernels their hints,
and again only where some kernel reads a hint that changes what it keeps: every kernel
that reads one says so, and a program probed once has the liveness, slots and results of
one probed twice."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
import lamina.plan.program as program_module
from lamina.plan import compile
from lamina.plan.kernels import KERNELS, Kernel
from lamina.plan.program import Program

HINTS = ("dead_inputs", "outputs_kept", "inputs_kept")


def _kernel_classes() -> list[type]:
    """Every Kernel subclass lamina defines: those registered for ops and those the
    rewrites make (a fused bias and GELU, ...)."""
    found, todo = set(), [Kernel]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    assert set(KERNELS.values()) <= found
    return sorted((k for k in found if k.__module__.startswith("lamina.")),
                  key=lambda k: (k.__module__, k.__qualname__))


@pytest.mark.parametrize("kernel", _kernel_classes(), ids=lambda k: k.__qualname__)
def test_every_kernel_that_reads_a_hint_declares_it(kernel) -> None:
    read = set()
    for cls in kernel.__mro__:  # its methods: some kernels are made by a factory
        if cls is Kernel or not cls.__module__.startswith("lamina."):
            continue
        for f in vars(cls).values():
            f = getattr(f, "fget", f)
            if inspect.isfunction(f):
                read |= {h for h in HINTS if f".{h}" in inspect.getsource(f)}
    assert read <= kernel.reads_hints, f"{kernel.__qualname__} reads {sorted(read)}"


def _gelu_mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 5))


def _relu_mlp():
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))


def _tagger():
    class Tagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(12, 8, batch_first=True)
            self.out = nn.Linear(8, 5)

        def forward(self, x):
            return self.out(self.lstm(x)[0][:, -1])

    return Tagger()


def _batch(name):
    rng = np.random.default_rng(0)
    shape = (6, 4, 12) if name == "lstm" else (6, 12)
    return lm.tensor(rng.standard_normal(shape).astype(np.float32)), lm.tensor(
        rng.integers(0, 5, 6))


def _compiled(monkeypatch, make, name, always: bool):
    probes = []
    inner_probe, inner_hints = Program._liveness, program_module.give_hints
    monkeypatch.setattr(Program, "_liveness", lambda self: probes.append(1) or inner_probe(self))
    if always:  # as before: probe again whatever the kernels read
        monkeypatch.setattr(program_module, "give_hints",
                            lambda *a: inner_hints(*a) or True)
    lm.manual_seed(0)
    model = make()
    x, y = _batch(name)
    # The scores reach the loss through a view (a reshape, as a language model's do)
    plan = compile(model, lambda out, y: F.cross_entropy(out.reshape(-1, 5), y), (x, y))
    monkeypatch.undo()
    loss = plan(x, y).item()
    return plan.last, len(probes), loss, [p.grad.copy() for p in model.parameters()]


@pytest.mark.parametrize(("name", "make", "probes"), [
    ("gelu", _gelu_mlp, 1),  # cross-entropy keeps its scores, alive anyway: one probe
    ("relu", _relu_mlp, 2),  # ReLU keeps its output, which the next linear keeps anyway
    ("lstm", _tagger, 2),  # the LSTM's gates overwrite their dead input
])
def test_one_probe_where_no_hint_is_read_gives_the_two_probes_analysis(
        monkeypatch, name, make, probes) -> None:
    once, n, loss, grads = _compiled(monkeypatch, make, name, always=False)
    twice, m, want_loss, want_grads = _compiled(monkeypatch, make, name, always=True)
    assert (n, m) == (probes, 2)
    assert once.slots == twice.slots
    # Kept by cross-entropy (hinted) or not, the scores' view lives as the scores do: to
    # the end of the step. Only that view's own last use reads differently.
    live = once.live
    differ = {v for v in {*live.last_use, *twice.live.last_use}
              if live.last_use.get(v) != twice.live.last_use.get(v)}
    assert all(live.alive_throughout(v) for v in differ)
    assert bool(differ) == (name == "gelu")
    assert loss == want_loss
    for g, want in zip(grads, want_grads):
        np.testing.assert_array_equal(g, want)


class _Cube(lm.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, gy):
        (x,) = self.saved_tensors
        return 3 * x * x * gy


class _CubeLayer(nn.Module):
    def forward(self, x):
        return _Cube().apply(x)


@pytest.mark.parametrize(("declared", "probes"), [(None, 2), (frozenset(), 1)])
def test_a_kernel_from_outside_lamina_that_does_not_say_is_probed_again(
        monkeypatch, declared, probes) -> None:
    """Its inputs die at it (it may overwrite them): unless it says it reads no hint, the
    plan probes again for what it then keeps."""
    from lamina.plan.kernels import kernel_for

    class CubeKernel(Kernel, _Cube):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x * x

    if declared is not None:
        CubeKernel.reads_hints = declared
    monkeypatch.setitem(KERNELS, _Cube, None)  # removed again after the compile
    kernel_for(_Cube)(CubeKernel)
    assert KERNELS.get(_Cube) is CubeKernel
    assert CubeKernel.reads_hints == declared
    make = lambda: nn.Sequential(nn.Linear(12, 16), _CubeLayer(), nn.Linear(16, 5))  # noqa: E731
    _, n, loss, _ = _compiled(monkeypatch, make, "cube", always=False)
    assert n == probes and np.isfinite(loss)
