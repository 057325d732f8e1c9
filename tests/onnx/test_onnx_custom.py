"""`lamina.onnx.export` of models written as PyTorch users write them (tests/custom_models.py),
with PyTorch's call shape, checked in onnxruntime against lamina's own outputs at batch
sizes other than the example's."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest
from custom_models import CASES

import lamina as lm
import lamina.nn as nn
from lamina.onnx import ExportError

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import models  # noqa: E402


def _session(model, xs, tmp_path, dynamic):
    names = [f"in{i}" for i in range(len(xs))]
    path = lm.onnx.export(model, xs, tmp_path / "m.onnx", input_names=names,
                          output_names=["out"], dynamic_axes={n: dynamic for n in names})
    assert path == tmp_path / "m.onnx"
    return ort.InferenceSession(str(path)), names


def _agrees(model, session, names, xs, tol=1e-4):
    got = session.run(None, {n: x.numpy() for n, x in zip(names, xs)})
    with lm.no_grad():
        want = model(*xs)
    np.testing.assert_allclose(got[0], want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", CASES)
def test_a_custom_module_exports_with_a_dynamic_batch(name, tmp_path) -> None:
    make, inputs = CASES[name]
    rng = np.random.default_rng(0)
    lm.manual_seed(0)
    model = make()
    model(*inputs(rng, 4))  # batch-norm statistics off their defaults
    model.eval()
    session, names = _session(model, inputs(rng, 2), tmp_path, {0: "batch"})
    for n in (3, 8):
        _agrees(model, session, names, inputs(rng, n))
    assert session.get_inputs()[0].shape[0] == "batch"
    assert session.get_outputs()[0].shape[0] == "batch"
    assert model.training is False


def test_a_gpt_exports_with_a_dynamic_sequence_length_too(tmp_path) -> None:
    """Positions (arange of the length) and the causal mask follow the length at run time."""
    model = models.gpt(lm, 2, 2, 16, 12, 40).eval()
    x = lm.tensor(np.random.default_rng(0).integers(0, 40, (2, 5)))
    session, names = _session(model, (x,), tmp_path, {0: "batch", 1: "length"})
    for n, t in ((1, 3), (3, 12), (4, 7)):
        _agrees(model, session, names, (lm.tensor(np.random.default_rng(n).integers(0, 40, (n, t))),))
    assert session.get_outputs()[0].shape[:2] == ["batch", "length"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet", "gpt", "lstm2"])
def test_the_full_size_workloads_export(name, tmp_path) -> None:
    lm.manual_seed(0)
    model = getattr(models, name)(lm).eval()
    rng = np.random.default_rng(0)
    if name == "resnet":
        make = lambda n: lm.tensor(rng.standard_normal((n, 3, 32, 32)).astype(np.float32))  # noqa: E731
    else:
        make = lambda n: lm.tensor(rng.integers(0, 512, (n, 64)))  # noqa: E731
    session, names = _session(model, (make(1),), tmp_path, {0: "batch"})
    _agrees(model, session, names, (make(2),))


def test_export_writes_to_a_file_object_and_takes_keyword_inputs(tmp_path) -> None:
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x, scale=1.0):
            return self.fc(x) * scale

    model, x = Scaled(), lm.randn(2, 3)
    buffer = io.BytesIO()
    assert lm.onnx.export(model, (x,), buffer, kwargs={"scale": 3.0}) is None
    session = ort.InferenceSession(buffer.getvalue())
    assert [i.name for i in session.get_inputs()] == ["x"]  # forward's own parameter name
    got = session.run(None, {"x": x.numpy()})[0]
    np.testing.assert_allclose(got, model(x, scale=3.0).detach().numpy(), rtol=1e-6)


class Cube(lm.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        return g


class UsesCube(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        return Cube.apply(h)  # the line the error names


class Branches(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow
            return x
        return -x


def test_an_op_without_an_exporter_is_named_with_the_line_of_forward(tmp_path) -> None:
    with pytest.raises(ExportError, match=r"^onnx export: .*Cube.* at .*test_onnx_custom\.py:"
                       r"\d+ \(return Cube\.apply\(h\)  # the line the error names\): no ONNX "
                       r"exporter for the op"):
        lm.onnx.export(UsesCube(), lm.randn(2, 3), tmp_path / "c.onnx")
    assert not (tmp_path / "c.onnx").exists()


def test_a_custom_op_exports_once_it_has_an_exporter(tmp_path) -> None:
    from lamina.onnx import register_op_exporter
    from lamina.onnx.capture import trace_model

    trace, _ = trace_model(UsesCube(), [lm.randn(2, 3)], {}, lambda layer: False)
    op = type(trace.nodes[-1].fn).__name__
    register_op_exporter(op)(lambda ctx, call: ctx.node(
        "Pow", [call.inputs[0], ctx.constant("three", np.array(3, np.float32))], call.hint))
    try:
        model, x = UsesCube(), lm.randn(4, 3)
        session, names = _session(model, (x,), tmp_path, {0: "batch"})
        _agrees(model, session, names, (lm.randn(5, 3),), 1e-5)
    finally:
        from lamina.onnx.registry import OP_EXPORTERS
        del OP_EXPORTERS[op]


def test_python_control_flow_on_values_is_refused(tmp_path) -> None:
    with pytest.raises(ExportError, match=r"bool\(\).* at .*test_onnx_custom\.py:\d+ \(if x\.sum"
                       r"\(\) > 0:.*would keep whichever branch the example took"):
        lm.onnx.export(Branches(), lm.randn(2, 3), tmp_path / "b.onnx")


def test_a_model_that_runs_other_ops_at_another_batch_size_is_refused(tmp_path) -> None:
    class PerRow(nn.Module):
        def forward(self, x):
            return lm.stack([row * 2 for row in x])  # one op per row: the batch unrolled

    with pytest.raises(ExportError, match="runs 4 ops at the example's size and 5 when "
                                          "'batch' grows"):
        lm.onnx.export(PerRow(), lm.randn(2, 3), tmp_path / "r.onnx",
                       dynamic_axes={"x": {0: "batch"}})
    lm.onnx.export(PerRow(), lm.randn(2, 3), tmp_path / "r.onnx")  # fixed sizes: fine
