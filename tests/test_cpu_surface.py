"""What PyTorch scripts touch on a machine with no GPU: lamina answers as PyTorch does on
the CPU (cuda and mps absent, flags accepted, autocast passing through, GradScaler
disabled where asked: tests/test_grad_scaler_torch.py has it enabled,
one process of one), and lamina.compile runs a model through a plan."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina
import lamina.nn as nn


def test_gpu_queries_answer_as_pytorch_on_a_cpu_machine() -> None:
    torch = pytest.importorskip("torch")
    for lib in (torch, lamina):
        assert lib.cuda.is_available() is False and lib.cuda.device_count() == 0
        assert lib.backends.mps.is_available() is False
        lib.backends.cudnn.benchmark = True
        lib.backends.cuda.matmul.allow_tf32 = True
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
        x = lib.ones(2)
        assert x.is_pinned() is False
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            x.pin_memory()
        assert lib.distributed.is_available() and not lib.distributed.is_initialized()


def test_autocast_and_grad_scaler_pass_through() -> None:
    w = lamina.ones(2, requires_grad=True)
    opt = lamina.optim.SGD([w], lr=0.5)
    scaler = lamina.amp.GradScaler(enabled=False)
    with lamina.amp.autocast("cpu", dtype=lamina.float16):
        loss = (w * 3).sum()
    assert loss.dtype == lamina.float32
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [-0.5, -0.5]
    # CUDA asked for on a machine without it: PyTorch's warning, and the block runs as is
    torch = pytest.importorskip("torch")
    for lib in (lamina, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"), lib.autocast("cuda"):
            pass
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not "
                          "available"):
            assert not lib.amp.GradScaler("cuda").is_enabled()
        with pytest.warns(UserWarning, match="Disabling"), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's: the spelling is old
            assert not lib.cuda.amp.GradScaler().is_enabled()


def test_bfloat16_is_a_name_a_script_can_use_and_a_dtype_it_cannot() -> None:
    """nanoGPT's train.py builds {"float32": torch.float32, "bfloat16": torch.bfloat16,
    ...} and autocasts with it: both run. A tensor of it cannot be made (NumPy has no
    bfloat16), and the error says so and what to use."""
    dtypes = {"float32": lamina.float32, "bfloat16": lamina.bfloat16}
    with lamina.autocast(device_type="cpu", dtype=dtypes["bfloat16"]):
        y = lamina.ones(2) * 2
    assert y.dtype == lamina.float32 and repr(lamina.bfloat16) == "lamina.bfloat16"
    assert lamina.ones(2).dtype != lamina.bfloat16
    for make in (lambda: lamina.zeros(2, dtype=lamina.bfloat16),
                 lambda: lamina.ones(2).to(lamina.bfloat16),
                 lambda: lamina.tensor([1.0], dtype="torch.bfloat16")):
        with pytest.raises(TypeError, match="no bfloat16; use lamina.float32"):
            make()


def test_one_process_of_one_and_the_way_to_distribute() -> None:
    dist = lamina.distributed
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    with pytest.raises(RuntimeError, match="lamina train JOB.yaml --workers N"):
        dist.init_process_group("gloo")
    model = nn.parallel.DistributedDataParallel(nn.Linear(3, 2))
    assert model(lamina.ones(4, 3)).shape == (4, 2)
    assert [n for n, _ in model.named_parameters()] == ["module.weight", "module.bias"]


def test_compile_plans_inference_and_keeps_training_eager() -> None:
    lamina.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    fast = lamina.compile(model)
    x = lamina.tensor(np.random.default_rng(0).standard_normal((5, 4)), dtype=lamina.float32)
    with lamina.no_grad():
        planned = fast(x)
        eager = model(x)
    assert fast._plan is not None
    np.testing.assert_allclose(planned.numpy(), eager.numpy(), rtol=1e-6)
    fast(x).sum().backward()  # in grad mode: the eager graph, gradients as usual
    assert model[0].weight.grad is not None
    assert lamina.compile(print) is print
    assert lamina.compile(disable=True)(model) is model


def test_compile_falls_back_to_eager_with_a_note_where_a_plan_cannot_follow() -> None:
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x) if x.sum().item() > 0 else -self.fc(x)

    fast = lamina.compile(Branchy())
    with lamina.no_grad(), pytest.warns(UserWarning, match="Branchy runs eagerly"):
        out = fast(lamina.ones(3, 2))
    assert out.shape == (3, 2)
