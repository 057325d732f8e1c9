"""The realistic workloads, defined once for both frameworks (benchmarks/models.py):
their sizes, data, initial weights, optimizers and steps.

  resnet: ResNet-18 on 32x32x3 images, batch 32, SGD (momentum 0.9, weight decay 5e-4).
  gpt:    nanoGPT's small stack, context 128, batch 8, AdamW with two parameter groups.
  lstm2:  2-layer LSTM language model, width 512, sequence 64, batch 32, dropout 0.2, SGD.

Initial weights come from NumPy, by parameter name, so that each framework's process
builds the same model without importing the other. The first loss is taken in eval mode
(dropout off, batch norm on its running statistics), where both frameworks must agree.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import models
import numpy as np
from common import inference, training

BATCH = {"resnet": 32, "gpt": 8, "lstm2": 32}
LENGTH = {"gpt": 128, "lstm2": 64}
VOCAB = 512


def data(name: str, size: int | None = None, length: int | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    size = size or BATCH[name]
    rng = np.random.default_rng(1)
    if name == "resnet":
        return (rng.standard_normal((size, 3, 32, 32)).astype(np.float32),
                rng.integers(0, 10, size))
    shape = (size, length or LENGTH[name])
    return rng.integers(0, VOCAB, shape), rng.integers(0, VOCAB, shape)


def initial(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A parameter's initial value from its name: uniform in +-1/sqrt(fan in) for
    matrices and kernels, ones for a norm's weight, zeros for biases."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if len(shape) >= 2:
        bound = 1 / np.sqrt(int(np.prod(shape[1:])))
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    return (np.ones if name.endswith("weight") else np.zeros)(shape, np.float32)


def build(t: Any, name: str, length: int | None = None) -> tuple[Any, Any, Callable[..., Any]]:
    """(model, optimizer, loss_fn) in framework `t` (torch or lamina), same weights; a
    gpt's context grows to `length` where that is longer."""
    if name == "gpt" and length and length > LENGTH["gpt"]:
        model = models.gpt(t, block_size=length)
    else:
        model = getattr(models, name)(t)
    with t.no_grad():
        for pname, p in model.named_parameters():  # a tied weight once, under its first name
            p.copy_(t.tensor(initial(pname, tuple(p.shape))))
    if name == "gpt":
        opt = model.configure_optimizers(0.1, 6e-4)
    elif name == "resnet":
        opt = t.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    else:
        opt = t.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

    def loss_fn(out: Any, y: Any) -> Any:
        if out.dim() == 3:
            out, y = out.reshape(-1, out.shape[-1]), y.reshape(-1)
        return t.nn.functional.cross_entropy(out, y)

    return model, opt, loss_fn


def train_step(t: Any, name: str, size: int | None = None, plan: Callable[..., Any] | None
               = None, length: int | None = None) -> tuple[Callable[[], float], float]:
    """A training step (forward, loss, backward, update) and the first loss in eval mode.
    `plan(model, loss_fn, x, y)` compiles the step (lamina only); `length`: the sequence
    length of gpt and lstm2."""
    model, opt, loss_fn = build(t, name, length)
    x, y = (t.tensor(a) for a in data(name, size, length))
    model.eval()
    with t.no_grad():
        first = float(loss_fn(model(x), y).item())
    model.train()
    compiled = plan(model, loss_fn, x, y) if plan is not None else None
    return training(model, opt, loss_fn, x, y, compiled), first


def infer_step(t: Any, name: str, plan: Callable[..., Any] | None = None
               ) -> tuple[Callable[[], Any], float]:
    """Batch-1 inference (eval mode, no gradients) and its output's sum of squares."""
    model, _, _ = build(t, name)
    return inference(t, model, t.tensor(data(name, 1)[0]), plan)
