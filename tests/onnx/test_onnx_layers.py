"""ONNX export of every built-in layer type and the example models, through the trace of
their forward, checked by running the file in onnxruntime against lamina's own output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from layer_cases import MODEL_CASES

import lamina as lm
import lamina.nn as nn
from lamina.io import ExportError, export_onnx
from lamina.onnx.registry import MODULE_EXPORTERS
from lamina.plan.trace import flatten

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
yaml = pytest.importorskip("yaml")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _batch(make, n, time_major=False):
    rng = np.random.default_rng(n)
    x = make(rng)
    reps = -(-n // x.shape[1 if time_major else 0])
    x = np.concatenate([make(rng) for _ in range(reps)], axis=1 if time_major else 0)
    return x[:, :n] if time_major else x[:n]


def _check(model, make, tmp_path, time_major=False, tol=1e-5):
    model.eval()
    path = export_onnx(model, _batch(make, 2, time_major), tmp_path / "m.onnx",
                       batch_axis=1 if time_major else 0)
    session = ort.InferenceSession(str(path))
    for n in (3, 8):  # two batch sizes: the batch axis is dynamic
        x = _batch(make, n, time_major)
        got = session.run(None, {"input": x})
        for _, layer in model.named_layers():  # the graph is stateless: compare from zero state
            if hasattr(layer, "reset_state"):
                layer.reset_state()
        want = [t.array for t in flatten(model(lm.tensor(x)))]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# What does not export, and the op its error names: folds, fractional pooling and the
# legacy cross-map normalisation have no ONNX op, and an EmbeddingBag's offsets follow
# the batch in no whole multiple.
NOT_EXPORTED = {"Fold": "the op _Fold", "Unfold": "the op _Unfold",
                "FractionalMaxPool2d": "the op FractionalMaxPool",
                "FractionalMaxPool3d": "the op FractionalMaxPool",
                "CrossMapLRN2d": "the op CrossMapLRN",
                "EmbeddingBag": "neither one value, a progression nor a triangle"}


@pytest.mark.parametrize("name", sorted(MODEL_CASES))
def test_every_layer_type_exports(name, tmp_path) -> None:
    cfg, make = MODEL_CASES[name]
    lm.manual_seed(0)
    model = nn.from_config(cfg)
    model(lm.tensor(make(np.random.default_rng(0))))  # batch-norm statistics off defaults
    if name in NOT_EXPORTED:
        with pytest.raises(ExportError, match=NOT_EXPORTED[name]):
            export_onnx(model.eval(), make(np.random.default_rng(0)), tmp_path / "m.onnx")
        return
    time_major = cfg.get("batch_first") is False
    _check(model, make, tmp_path, time_major)


def test_only_layers_no_op_maps_to_have_layer_exporters() -> None:
    """Every other layer is exported op by op, through the trace of its forward."""
    assert sorted(MODULE_EXPORTERS) == ["GRU", "LSTM", "RNN"]


@pytest.mark.parametrize("layer, shape", [
    (lambda: nn.Upsample(scale_factor=2), (2, 3, 3, 4)),
    (lambda: nn.Upsample(size=(5, 7)), (2, 3, 3, 4)),
    (lambda: nn.Upsample(size=[6, 7], mode="bilinear", align_corners=True), (1, 2, 4, 3)),
    (lambda: nn.Upsample(scale_factor=1.5, mode="bilinear"), (2, 2, 4, 6)),
    (lambda: nn.Upsample(scale_factor=3, mode="linear"), (2, 3, 5)),
    (lambda: nn.Upsample(size=4), (2, 3, 7)),
    (lambda: nn.Upsample(size=(7, 9), mode="bicubic"), (1, 2, 4, 5)),
    (lambda: nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True), (1, 2, 3, 4)),
    (lambda: nn.Upsample(scale_factor=(2, 1.5, 2), mode="trilinear"), (1, 2, 2, 4, 3))])
def test_upsample_exports_each_mode(layer, shape, tmp_path) -> None:
    _check(layer(), lambda rng: rng.standard_normal(shape).astype(np.float32), tmp_path)


def test_a_model_with_every_exportable_layer(tmp_path) -> None:
    lm.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, groups=2), nn.BatchNorm2d(4), nn.LeakyReLU(0.1),
        nn.MaxPool2d(2), nn.Conv2d(4, 4, (3, 2), stride=(1, 2), dilation=(1, 1)), nn.GELU(),
        nn.AvgPool2d(2, padding=1), nn.Flatten(), nn.Linear(16, 12), nn.BatchNorm1d(12),
        nn.Dropout(0.5), nn.Tanh(), nn.Linear(12, 8), nn.Sigmoid(), nn.Softmax())
    make = lambda rng: rng.standard_normal((2, 2, 8, 8)).astype(np.float32)  # noqa: E731
    model(lm.tensor(make(np.random.default_rng(1))))
    _check(model, make, tmp_path)
    seq = nn.Sequential(nn.Conv1d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
                        nn.AvgPool1d(2), nn.Flatten(), nn.Linear(24, 4))
    _check(seq, lambda rng: rng.standard_normal((2, 3, 16)).astype(np.float32), tmp_path)
    lm_model = nn.Sequential(nn.Embedding(20, 6), nn.LSTM(6, 8, output="sequence", batch_first=True),
                             nn.GRU(8, 8, num_layers=2, output="sequence", batch_first=True),
                             nn.RNN(8, 8, output="last", batch_first=True), nn.Linear(8, 20))
    _check(lm_model, lambda rng: rng.integers(0, 20, (2, 7)), tmp_path)


@pytest.mark.parametrize("job", ["mnist1d_mlp", "mnist1d_cnn", "mnist1d_resnet", "mnist1d_gru",
                                 "digits_rbm", "text_lstm", "text_transformer"])
def test_every_example_model_exports(job, tmp_path) -> None:
    cfg = yaml.safe_load((EXAMPLES / f"{job}.yaml").read_text())
    lm.manual_seed(0)
    model = nn.from_config(cfg["model"])
    shape = cfg["data"].get("shape")
    if job.startswith("text_"):
        make = lambda rng: rng.integers(0, 97, (2, 16))  # noqa: E731
    elif job == "digits_rbm":
        make = lambda rng: (rng.random((2, 64)) < 0.5).astype(np.float32)  # noqa: E731
    else:
        make = lambda rng: rng.standard_normal((2, *(shape or [40]))).astype(np.float32)  # noqa: E731
    _check(model, make, tmp_path)


def test_what_cannot_export_is_named(tmp_path) -> None:
    with pytest.raises(ExportError, match=r"^onnx export: AdaptiveAvgPool at .*: output_size "
                       r"\(2, 3\) from input size \(5, 7\): only global pooling"):
        export_onnx(nn.Sequential(nn.AdaptiveAvgPool2d((2, 3))),
                    np.zeros((1, 2, 5, 7), np.float32), tmp_path / "a.onnx")
    assert not (tmp_path / "a.onnx").exists()
    with pytest.raises(ExportError, match=r"opset_version must be 14 to 21; got 13"):
        lm.onnx.export(nn.Linear(2, 2), lm.zeros(1, 2), tmp_path / "b.onnx", opset_version=13)


@pytest.mark.parametrize("op", ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                                "asinh", "atanh", "erf", "reciprocal", "rsqrt"])
def test_unary_ops_export(op, tmp_path) -> None:
    class Unary(nn.Module):
        def forward(self, x):
            # inputs in (0.1, 0.9): inside every op's domain
            return getattr(x.sigmoid() * 0.8 + 0.1, op)()

    _check(Unary(), lambda rng: rng.standard_normal((2, 5)).astype(np.float32), tmp_path)


@pytest.mark.parametrize("op", ["floor", "ceil", "sign", "trunc", "round"])
def test_the_rounding_ops_export(op, tmp_path) -> None:
    class Rounding(nn.Module):
        def forward(self, x):
            return getattr(x * 3.3, op)()

    _check(Rounding(), lambda rng: (rng.standard_normal((4, 5)) * 2).astype(np.float32),
           tmp_path, False)
