"""The benchmarks' realistic models (benchmarks/models.py) are one source for both
frameworks: built with `torch` and with `lamina` from the same lines and the same weights,
they give the same outputs, losses, gradients and first optimizer steps (ResNet with batch
norm and SGD with weight decay, GPT with a tied embedding, causal attention and AdamW's
parameter groups, a 2-layer LSTM)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lamina

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import models  # noqa: E402
import realistic  # noqa: E402

pytestmark = pytest.mark.torch

SMALL = {"resnet": dict(widths=(4, 8, 8, 16), blocks=1),
         "gpt": dict(n_layer=2, n_head=2, n_embd=16, block_size=12, vocab_size=40),
         "lstm2": dict(vocab_size=30, width=16, dropout=0.0)}


def _data(name):
    rng = np.random.default_rng(0)
    if name == "resnet":
        return rng.standard_normal((4, 3, 32, 32)).astype(np.float32), rng.integers(0, 10, 4)
    vocab = SMALL[name]["vocab_size"]
    return rng.integers(0, vocab, (3, 12)), rng.integers(0, vocab, (3, 12))


def _run(t, name):
    model = getattr(models, name)(t, **SMALL[name])
    with t.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(t.tensor(realistic.initial(pname, tuple(p.shape))))
    if name == "gpt":
        opt = model.configure_optimizers(0.1, 1e-2)
    else:
        opt = t.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x, y = (t.tensor(a) for a in _data(name))
    out = model(x)
    loss = t.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    grads = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    opt.step()
    after = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    return out.detach().numpy(), loss.item(), grads, after


@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_same_source_trains_alike_on_lamina_and_pytorch(name) -> None:
    torch = pytest.importorskip("torch")
    got, want = _run(lamina, name), _run(torch, name)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    assert got[1] == pytest.approx(want[1], rel=1e-5)
    assert got[2].keys() == want[2].keys()
    for n in want[2]:
        np.testing.assert_allclose(got[2][n], want[2][n], rtol=1e-3, atol=1e-5, err_msg=n)
        # Adam's first step is lr * g / (|g| + eps): where g is rounding noise (the key
        # bias, which softmax cannot see, has a zero gradient) it is noise too
        settled = np.abs(want[2][n]) > 1e-6
        np.testing.assert_allclose(got[3][n][settled], want[3][n][settled], rtol=1e-4,
                                   atol=1e-5, err_msg=n)
