"""Plans of models written as PyTorch users write them: nn.Module subclasses with their own
forward (recurrent + head, residual blocks, attention with a mask), registered nowhere,
compiled by tracing; each planned step equals the eager one."""

from __future__ import annotations

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.plan import compile


class RecurrentHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 5)

    def forward(self, ids):
        out, (h, _) = self.lstm(self.embed(ids))
        return self.head(out[:, -1] + h[0])


class Block(nn.Module):
    def __init__(self, c: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, 2 * c if stride > 1 else c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(self.conv1.out_channels)
        self.conv2 = nn.Conv2d(self.conv1.out_channels, self.conv1.out_channels, 3, 1, 1,
                               bias=False)
        self.bn2 = nn.BatchNorm2d(self.conv1.out_channels)
        self.short = (nn.Sequential(nn.Conv2d(c, 2 * c, 1, stride, bias=False),
                                    nn.BatchNorm2d(2 * c)) if stride > 1 else nn.Identity())

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.short(x))


class TinyResNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.blocks = nn.Sequential(Block(4, 1), Block(4, 2))
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = self.blocks(F.relu(self.stem(x)))
        return self.fc(h.mean(dim=(2, 3)))


class MaskedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 5)

    def forward(self, ids):
        x = self.embed(ids)
        t = ids.shape[1]
        causal = lm.triu(lm.ones(t, t, dtype=lm.bool), diagonal=1)
        y, _ = self.attn(x, x, x, attn_mask=causal, need_weights=False)
        return self.head(self.norm(x + y).mean(dim=1))


CASES = {
    "recurrent + head": (RecurrentHead, lambda rng: lm.tensor(rng.integers(0, 20, (6, 7)))),
    "residual blocks": (TinyResNet,
                        lambda rng: lm.tensor(rng.standard_normal((6, 3, 8, 8)).astype(
                            np.float32))),
    "attention with a mask": (MaskedAttention,
                              lambda rng: lm.tensor(rng.integers(0, 20, (6, 9)))),
}


@pytest.mark.parametrize("name", CASES)
def test_a_custom_module_compiles_to_a_plan_equal_to_eager(name) -> None:
    make, inputs = CASES[name]
    rng = np.random.default_rng(0)
    lm.manual_seed(0)
    model = make()
    x, y = inputs(rng), lm.tensor(rng.integers(0, 5, 6))
    plan = compile(model, F.cross_entropy, (x, y))
    assert_plan_tracks_eager(model, plan, x, y)
    infer = compile(model.eval(), example_batch=(x,))
    np.testing.assert_allclose(infer(x).array, model(x).array, rtol=1e-5, atol=1e-6)
