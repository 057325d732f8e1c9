"""A training plan frees its large slots after their last read in backward and makes them
again where the next forward first writes them (Program.releases), where malloc keeps
freed memory (lamina.runtime.tune_process): the same numbers bit for bit as with the slots
pooled through the step, the memory really freed (so backward's gradients can take it),
a lower peak, and no page faults for what is made again. Inference plans keep theirs."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from test_allocator import python

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
import lamina.plan.program as program_module
from lamina import allocator

WIDTH, BATCH, LAYERS = 512, 1024, 6  # each activation 2 MiB: past RELEASE_BYTES


@pytest.fixture
def keeping(monkeypatch):
    """The plan as it compiles after tune_process has made malloc keep freed memory: a
    setting that lasts for the process's life, which the subprocess test below makes
    for real."""
    monkeypatch.setattr(allocator, "_keeping", True)


def _mlp():
    lm.manual_seed(0)
    layers = [m for _ in range(LAYERS) for m in (nn.Linear(WIDTH, WIDTH), nn.ReLU())]
    return nn.Sequential(*layers, nn.Linear(WIDTH, 10))


def _resnet_block():
    """A convolution, batch norm, ReLU and a residual sum over 2-MiB maps (batch 32 of
    16 channels, 32x32)."""
    lm.manual_seed(1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, padding=1)
            self.conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.norm = nn.BatchNorm2d(16)
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            h = F.relu(self.stem(x))
            h = F.relu(self.norm(self.conv(h)) + h)
            return self.head(h.mean((2, 3)))

    return Block()


def _batch(kind):
    rng = np.random.default_rng(3)
    shape = (BATCH, WIDTH) if kind == "mlp" else (32, 3, 32, 32)
    x = lm.tensor(rng.standard_normal(shape).astype(np.float32))
    return x, lm.tensor(rng.integers(0, 10, shape[0]))


def _compile(model, x, y, release, threads=1):
    """A training plan compiled as after tune_process (release) or without it."""
    before = allocator._keeping
    allocator._keeping = release
    try:
        return lm.plan.compile(model, F.cross_entropy, (x, y), threads=threads)
    finally:
        allocator._keeping = before


def _train(kind, release, steps=3, threads=1):
    """Losses and final parameters of `steps` planned SGD steps, and the plan."""
    model = _mlp() if kind == "mlp" else _resnet_block()
    x, y = _batch(kind)
    plan = _compile(model, x, y, release, threads=threads)
    opt = lm.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        losses.append(plan(x, y).item())
        opt.step()
        opt.zero_grad()
    return losses, [p.detach().numpy().copy() for p in model.parameters()], plan


@pytest.mark.parametrize("kind,threads", [("mlp", 1), ("mlp", 2), ("resnet", 1)])
def test_released_slots_give_the_pooled_numbers_bit_for_bit(kind, threads):
    pooled_losses, pooled_params, pooled = _train(kind, False, threads=threads)
    losses, params, plan = _train(kind, True, threads=threads)
    assert pooled.memory()["released_buffer_bytes"] == 0
    assert plan.memory()["released_buffer_bytes"] > 0
    assert "releases slot" in plan.describe()
    assert losses == pooled_losses
    for got, want in zip(params, pooled_params):
        np.testing.assert_array_equal(got, want)


def _held_and_peak(release):
    """Bytes a planned MLP step holds after it ends and at its peak, the plan's own
    allocations traced from before its first run."""
    model, (x, y) = _mlp(), _batch("mlp")
    plan = _compile(model, x, y, release)
    plan.last.release_memory()  # the slots are made again, traced, at the next run
    tracemalloc.start()
    try:
        for _ in range(3):
            plan(x, y)
            for p in model.parameters():
                p.grad = None
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        plan(x, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return held, peak, plan.memory()


def test_released_memory_is_freed_and_lowers_the_peak():
    held_pooled, peak_pooled, memory = _held_and_peak(False)
    held, peak, released_memory = _held_and_peak(True)
    slot = BATCH * WIDTH * 4
    released = released_memory["released_buffer_bytes"]
    assert memory["pooled_buffer_bytes"] == released == LAYERS * slot  # each layer's one slot
    # Between steps the released slots are gone: nothing else holds their arrays.
    assert held_pooled - held >= released - slot // 8
    # At backward's peak the first layers' slots are still alive, the last ones' gone:
    # activations' gradients and weight gradients take their place.
    assert peak <= peak_pooled - 2 * slot


def test_inference_plans_and_small_slots_stay_pooled(keeping):
    model, (x, y) = _mlp(), _batch("mlp")
    infer = lm.plan.compile(model.eval(), example_batch=(x,))
    infer(x)
    assert infer.last.releases == {} and infer.memory()["released_buffer_bytes"] == 0
    small = lm.plan.compile(_mlp(), F.cross_entropy, (x[:64], y[:64]))  # 128 KiB slots
    small(x[:64], y[:64])
    assert small.memory()["released_buffer_bytes"] == 0
    assert program_module.RELEASE_BYTES > 64 * WIDTH * 4


# A planned step with 4 MiB activations, in a fresh process: with tune_process its slots
# are released (and malloc keeps their memory), without it they stay pooled. Prints
# whether slots are released and the page faults per step after three warm-up steps.
STEPS = """
import resource, sys
import lamina as lm
if sys.argv[1] == "tune":
    lm.runtime.tune_process()
import lamina.functions as F
import lamina.nn as nn
import numpy as np

lm.manual_seed(0)
model = nn.Sequential(*[m for _ in range(6) for m in (nn.Linear(512, 512), nn.ReLU())],
                      nn.Linear(512, 10))
x = lm.tensor(np.random.default_rng(0).standard_normal((2048, 512)).astype(np.float32))
y = lm.tensor(np.arange(2048) % 10)
plan = lm.plan.compile(model, F.cross_entropy, (x, y))

def step():
    plan(x, y)
    for p in model.parameters():
        p.grad = None

for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5
print(plan.memory()["released_buffer_bytes"] > 0, faults)
"""


@pytest.mark.skipif(not allocator.on_glibc(), reason="glibc's malloc only")
def test_a_tuned_process_releases_slots_without_page_faults():
    def run(mode):
        out = python(STEPS, mode).split()  # no malloc setting from the environment
        return out[0] == "True", float(out[1])

    released, faults = run("tune")
    assert released
    # 24 MiB of slots freed and made again each step: 6,144 pages if they were faulted in.
    assert faults < 500
    assert run("plain")[0] is False
