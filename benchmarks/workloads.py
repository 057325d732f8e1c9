"""The standard workloads, defined once: shapes, hyper-parameters, data and initial weights.

Every framework builds the same model from the same NumPy weights and trains on the same
batch: a step is forward + softmax cross-entropy + backward + SGD (momentum 0.9, lr 0.01).
  mlp:  784-1024-1024-10, ReLU.
  cnn:  1x28x28 -> conv 32 3x3, ReLU, maxpool 2 -> conv 64 3x3, ReLU, maxpool 2
        -> 1600 -> 128, ReLU -> 10.
  lstm: embedding 64 -> 128, one LSTM layer of 256, 50 steps, 64 classes at every step.
  transformer: embedding 64 -> 128 plus learned positions, two pre-norm blocks (causal
        attention with 4 heads; 128-512-128 GELU), layer norm, 64 classes; 50 steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from common import inference, training

DEFAULT_BATCH = {"mlp": 128, "cnn": 64, "lstm": 32, "transformer": 32}
WIDTH, BLOCKS = 128, 2  # the transformer's
SEQ, VOCAB = 50, 64


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    bound = 1 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def weights(name: str) -> dict[str, np.ndarray]:
    """Initial weights by PyTorch state-dict name (lamina uses the same names)."""
    rng = np.random.default_rng(0)
    if name == "mlp":
        return {"0.weight": _uniform(rng, (1024, 784), 784), "0.bias": _uniform(rng, (1024,), 784),
                "2.weight": _uniform(rng, (1024, 1024), 1024),
                "2.bias": _uniform(rng, (1024,), 1024),
                "4.weight": _uniform(rng, (10, 1024), 1024), "4.bias": _uniform(rng, (10,), 1024)}
    if name == "cnn":
        return {"0.weight": _uniform(rng, (32, 1, 3, 3), 9), "0.bias": _uniform(rng, (32,), 9),
                "3.weight": _uniform(rng, (64, 32, 3, 3), 288),
                "3.bias": _uniform(rng, (64,), 288),
                "7.weight": _uniform(rng, (128, 1600), 1600),
                "7.bias": _uniform(rng, (128,), 1600),
                "9.weight": _uniform(rng, (10, 128), 128), "9.bias": _uniform(rng, (10,), 128)}
    if name == "transformer":
        return _transformer_weights(rng)
    h = 256
    return {"embed.weight": rng.standard_normal((VOCAB, 128)).astype(np.float32),
            "lstm.weight_ih_l0": _uniform(rng, (4 * h, 128), h),
            "lstm.weight_hh_l0": _uniform(rng, (4 * h, h), h),
            "lstm.bias_ih_l0": _uniform(rng, (4 * h,), h),
            "lstm.bias_hh_l0": _uniform(rng, (4 * h,), h),
            "out.weight": _uniform(rng, (VOCAB, h), h), "out.bias": _uniform(rng, (VOCAB,), h)}


def _transformer_weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Names as in lamina's Sequential: 0 embedding, 1 positions, then per block an
    attention residual and a feed-forward residual, then the final norm and the head."""
    e = WIDTH
    out = {"0.weight": rng.standard_normal((VOCAB, e)).astype(np.float32),
           "1.weight": (rng.standard_normal((SEQ, e)) * 0.02).astype(np.float32)}
    for b in range(BLOCKS):
        attn, ff = f"{2 + 2 * b}", f"{3 + 2 * b}"
        out.update({f"{attn}.0.weight": np.ones(e, np.float32),
                    f"{attn}.0.bias": np.zeros(e, np.float32),
                    f"{attn}.1.in_proj_weight": _uniform(rng, (3 * e, e), e),
                    f"{attn}.1.in_proj_bias": _uniform(rng, (3 * e,), e),
                    f"{attn}.1.out_proj.weight": _uniform(rng, (e, e), e),
                    f"{attn}.1.out_proj.bias": _uniform(rng, (e,), e),
                    f"{ff}.0.weight": np.ones(e, np.float32),
                    f"{ff}.0.bias": np.zeros(e, np.float32),
                    f"{ff}.1.weight": _uniform(rng, (4 * e, e), e),
                    f"{ff}.1.bias": _uniform(rng, (4 * e,), e),
                    f"{ff}.3.weight": _uniform(rng, (e, 4 * e), 4 * e),
                    f"{ff}.3.bias": _uniform(rng, (e,), 4 * e)})
    head = 2 + 2 * BLOCKS
    out.update({f"{head}.weight": np.ones(e, np.float32), f"{head}.bias": np.zeros(e, np.float32),
                f"{head + 1}.weight": _uniform(rng, (VOCAB, e), e),
                f"{head + 1}.bias": _uniform(rng, (VOCAB,), e)})
    return out


def batch(name: str, size: int | None = None, length: int | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """The batch of `size` (the default's) samples; `length` steps for the lstm."""
    size = size or DEFAULT_BATCH[name]
    rng = np.random.default_rng(1)
    if name == "mlp":
        return rng.standard_normal((size, 784)).astype(np.float32), rng.integers(0, 10, size)
    if name == "cnn":
        return (rng.standard_normal((size, 1, 28, 28)).astype(np.float32),
                rng.integers(0, 10, size))
    shape = (size, length or SEQ)
    return rng.integers(0, VOCAB, shape), rng.integers(0, VOCAB, shape)


# -- lamina -------------------------------------------------------------------------------------
def lamina_model(name: str) -> Any:
    import lamina.functions as F
    import lamina.nn as nn

    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                              nn.Linear(1024, 10))
    elif name == "cnn":
        model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                              nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128),
                              nn.ReLU(), nn.Linear(128, 10))
    elif name == "transformer":
        e = WIDTH
        blocks = [layer for _ in range(BLOCKS) for layer in (
            nn.Residual(nn.LayerNorm(e), nn.SelfAttention(e, 4, causal=True,
                                                               batch_first=True)),
            nn.Residual(nn.LayerNorm(e), nn.Linear(e, 4 * e), nn.GELU(), nn.Linear(4 * e, e)))]
        model = nn.Sequential(nn.Embedding(VOCAB, e),
                              nn.PositionalEncoding(e, SEQ, learned=True, batch_first=True),
                              *blocks, nn.LayerNorm(e), nn.Linear(e, VOCAB))
    else:
        class LanguageModel(nn.Layer):
            def __init__(self) -> None:
                super().__init__()
                self.embed = nn.Embedding(VOCAB, 128)
                self.lstm = nn.LSTM(128, 256, output="sequence", batch_first=True)
                self.out = nn.Linear(256, VOCAB)

            def forward(self, x: Any) -> Any:
                return self.out(self.lstm(self.embed(x))).reshape(-1, VOCAB)

        model = LanguageModel()
        del F
    model.load_state_dict(weights(name))
    return model


def lamina_loss(name: str) -> Callable[..., Any]:
    import lamina.functions as F

    if name == "lstm":
        return lambda out, y: F.cross_entropy(out, y.reshape(-1))
    if name == "transformer":
        return lambda out, y: F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))
    return F.cross_entropy


def infer_step(t: Any, name: str, plan: Callable[..., Any] | None = None
               ) -> tuple[Callable[[], Any], float]:
    """Batch-1 inference in framework `t` (eval mode, no gradients) and its output's sum
    of squares."""
    if t.__name__ == "torch":
        from workloads_torch import torch_model

        model = torch_model(name)
    else:
        model = lamina_model(name)
    return inference(t, model, t.tensor(batch(name, 1)[0]), plan)


def lamina_step(name: str, size: int | None = None, planned: bool = False, threads: int = 1,
                length: int | None = None) -> Callable[[], float]:
    """An eager step, or a tuned plan's, which may split the batch over `threads` (the
    tuner keeps the split or the whole step, whichever is faster)."""
    import lamina as lm
    import lamina.optim as optim

    lm.runtime.tune_process()  # as the Trainer and `lamina train` do
    model, loss_fn = lamina_model(name), lamina_loss(name)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = (lm.tensor(a) for a in batch(name, size, length))
    plan = (lm.plan.compile(model, loss_fn, (x, y), tune=True, threads=threads) if planned
            else None)
    return training(model, opt, loss_fn, x, y, plan)


def lamina_forward_backward(name: str, size: int | None = None, planned: bool = False,
                            probe: Callable[[], None] | None = None
                            ) -> tuple[Callable[[], None], int, Any]:
    """Forward + loss + backward alone (what a plan compiles); `probe` runs between forward
    and backward. Returns the step, the bytes the plan keeps preallocated (0 for eager),
    and the model."""
    import lamina as lm

    lm.runtime.tune_process()  # as the Trainer and `lamina train` do
    model, loss_fn = lamina_model(name), lamina_loss(name)
    x, y = (lm.tensor(a) for a in batch(name, size))
    plan = lm.plan.compile(model, loss_fn, (x, y)) if planned else None
    if plan is not None:
        plan.last.after_forward = probe

    def run() -> None:
        if plan is not None:
            plan(x, y)
            return
        loss = loss_fn(model(x), y)
        if probe is not None:
            probe()
        loss.backward()

    return run, plan.memory()["pooled_buffer_bytes"] if plan else 0, model


# -- hand-written NumPy -------------------------------------------------------------------------
def numpy_mlp_step(size: int | None = None) -> Callable[[], float]:
    """The MLP's forward, loss and backward as the fewest NumPy calls, written by hand into
    preallocated arrays, then lamina's SGD: a floor for what any NumPy framework's step can
    cost, since a plan or eager mode make the same GEMMs plus bookkeeping."""
    import lamina.optim as optim

    model = lamina_model("mlp")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    params = list(model.parameters())
    weights_, biases = [p.array for p in params[::2]], [p.array for p in params[1::2]]
    x, y = batch("mlp", size)
    n, rows = len(y), np.arange(len(y))
    hidden = [np.empty((n, w.shape[0]), np.float32) for w in weights_]

    def step() -> float:
        h = x
        for w, b, out in zip(weights_, biases, hidden):
            np.matmul(h, w.T, out=out)
            out += b
            if out is not hidden[-1]:
                np.maximum(out, 0, out=out)
            h = out
        logits = hidden[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = float(np.log(total[:, 0]).mean() - shifted[rows, y].mean())
        g = e / total
        g[rows, y] -= 1
        g /= n
        for i in range(len(weights_) - 1, -1, -1):
            below = x if i == 0 else hidden[i - 1]
            params[2 * i].grad = g.T @ below
            params[2 * i + 1].grad = g.sum(axis=0)
            if i:
                g = g @ weights_[i]
                g *= below > 0
        opt.step()
        opt.zero_grad()
        return loss

    return step
