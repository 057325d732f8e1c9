"""Models written as PyTorch users write them: nn.Module subclasses with their own forward,
registered nowhere (recurrent + head, residual blocks, attention with masks, and the
benchmarks' resnet, gpt and lstm2 at small sizes, from the same source as their PyTorch
twins). Plans (tests/plan) and ONNX export (tests/onnx) take each of them.

CASES: name -> (build the model, inputs(rng, batch) -> tuple of tensors).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import lamina as lm
import lamina.functions as F
import lamina.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import models  # noqa: E402  (benchmarks/models.py: one source for lamina and PyTorch)


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


class PaddedAttention(nn.Module):
    """Hand-written attention over a padded batch: the padding mask is a second input."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        self.qkv = nn.Linear(16, 48)
        self.head = nn.Linear(16, 5)

    def forward(self, ids, pad):
        B, T = ids.shape
        q, k, v = self.qkv(self.embed(ids)).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, 2, 8).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / 8 ** 0.5
        scores = scores.masked_fill(pad[:, None, None, :] == 0, -1e9)
        y = scores.softmax(dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, 16)
        keep = pad.unsqueeze(-1).to(y.dtype)
        return self.head((y * keep).sum(dim=1) / keep.sum(dim=1))


def _ids(vocab: int, length: int):
    return lambda rng, n: (lm.tensor(rng.integers(0, vocab, (n, length))),)


def _padded(rng, n):
    lengths = rng.integers(2, 8, n)
    pad = (np.arange(7)[None, :] < lengths[:, None]).astype(np.int64)
    return lm.tensor(rng.integers(0, 20, (n, 7))), lm.tensor(pad)


def _images(shape):
    return lambda rng, n: (lm.tensor(rng.standard_normal((n, *shape)).astype(np.float32)),)


CASES = {
    "recurrent + head": (RecurrentHead, _ids(20, 7)),
    "residual blocks": (TinyResNet, _images((3, 8, 8))),
    "attention with a causal mask": (MaskedAttention, _ids(20, 9)),
    "attention with a padding mask": (PaddedAttention, _padded),
    "resnet workload": (lambda: models.resnet(lm, (4, 8, 8, 16), 1), _images((3, 32, 32))),
    "gpt workload": (lambda: models.gpt(lm, 2, 2, 16, 12, 40), _ids(40, 12)),
    "lstm2 workload": (lambda: models.lstm2(lm, 30, 16), _ids(30, 6)),
}
