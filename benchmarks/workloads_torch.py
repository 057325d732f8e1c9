"""The standard workloads in PyTorch (benchmarks/workloads.py defines them, and their
weights and data, for both frameworks); PyTorch's processes import this, never lamina."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workloads import BLOCKS, SEQ, VOCAB, WIDTH, batch, weights


# -- PyTorch ------------------------------------------------------------------------------------
def torch_model(name: str) -> Any:
    import torch
    import torch.nn as tnn

    if name == "mlp":
        model = tnn.Sequential(tnn.Linear(784, 1024), tnn.ReLU(), tnn.Linear(1024, 1024),
                               tnn.ReLU(), tnn.Linear(1024, 10))
    elif name == "cnn":
        model = tnn.Sequential(tnn.Conv2d(1, 32, 3), tnn.ReLU(), tnn.MaxPool2d(2),
                               tnn.Conv2d(32, 64, 3), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                               tnn.Linear(1600, 128), tnn.ReLU(), tnn.Linear(128, 10))
    elif name == "transformer":
        model = _torch_transformer(tnn)
    else:
        class LanguageModel(tnn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.embed = tnn.Embedding(VOCAB, 128)
                self.lstm = tnn.LSTM(128, 256, batch_first=True)
                self.out = tnn.Linear(256, VOCAB)

            def forward(self, x: Any) -> Any:
                return self.out(self.lstm(self.embed(x))[0]).reshape(-1, VOCAB)

        model = LanguageModel()
    model.load_state_dict({k: torch.tensor(v) for k, v in weights(name).items()})
    return model


def torch_step(name: str, size: int | None = None, length: int | None = None
               ) -> Callable[[], float]:
    import torch
    import torch.nn.functional as tF

    model = torch_model(name)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = (torch.tensor(a) for a in batch(name, size, length))
    y = y.reshape(-1)

    def step() -> float:
        out = model(x)
        loss = tF.cross_entropy(out.reshape(-1, VOCAB) if name == "transformer" else out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def _torch_transformer(tnn: Any) -> Any:
    """The transformer workload in PyTorch, its modules named as lamina's layers are."""
    import torch

    e = WIDTH
    mask = tnn.Transformer.generate_square_subsequent_mask(SEQ)

    class Positions(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = tnn.Parameter(torch.zeros(SEQ, e))

        def forward(self, x: Any) -> Any:
            return x + self.weight[:x.shape[1]]

    class SelfAttention(tnn.MultiheadAttention):
        def forward(self, x: Any) -> Any:
            return super().forward(x, x, x, need_weights=False, attn_mask=mask,
                                   is_causal=True)[0]

    class Residual(tnn.Sequential):
        def forward(self, x: Any) -> Any:
            return x + super().forward(x)

    blocks = [m for _ in range(BLOCKS) for m in (
        Residual(tnn.LayerNorm(e), SelfAttention(e, 4, batch_first=True)),
        Residual(tnn.LayerNorm(e), tnn.Linear(e, 4 * e), tnn.GELU(), tnn.Linear(4 * e, e)))]
    return tnn.Sequential(tnn.Embedding(VOCAB, e), Positions(), *blocks, tnn.LayerNorm(e),
                          tnn.Linear(e, VOCAB))
