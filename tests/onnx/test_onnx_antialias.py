"""Antialiased interpolation exported to ONNX (Resize's antialias, opset 18), checked in
onnxruntime against lamina's own outputs; what ONNX cannot express is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn.functional as F
from lamina.onnx import ExportError

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


class Resize(lm.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x):
        return F.interpolate(x, **self.kw)


@pytest.mark.parametrize("kw", [{"size": (5, 4), "mode": "bilinear"},
                                {"size": (5, 4), "mode": "bicubic"},
                                {"size": (20, 17), "mode": "bicubic"},
                                {"scale_factor": 0.37, "mode": "bicubic"}], ids=str)
def test_antialiased_resize_runs_the_same_in_onnxruntime(kw, tmp_path) -> None:
    model = Resize(antialias=True, **kw)
    x = lm.tensor(np.random.default_rng(0).standard_normal((1, 2, 13, 11)).astype(np.float32))
    path = lm.onnx.export(model, (x,), tmp_path / "m.onnx", opset_version=18)
    session = ort.InferenceSession(str(path))
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    np.testing.assert_allclose(got, model(x).numpy(), atol=1e-5)


@pytest.mark.parametrize("kw, opset, words", [
    ({"mode": "bilinear"}, 17, "needs ONNX Resize's antialias, from opset 18"),
    ({"mode": "bilinear", "align_corners": True}, 18, "with align_corners=True has no ONNX"),
])
def test_what_onnx_cannot_express_is_refused(kw, opset, words, tmp_path) -> None:
    with pytest.raises(ExportError, match=words):
        lm.onnx.export(Resize(size=(5, 4), antialias=True, **kw), (lm.ones(1, 1, 13, 11),),
                       tmp_path / "m.onnx", opset_version=opset)
