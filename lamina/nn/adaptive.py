"""`nn.AdaptiveLogSoftmaxWithLoss`, Grave et al.'s adaptive softmax as PyTorch's: the
`cutoffs[0]` most frequent classes and one entry per cluster in a head, each cluster's
classes in a tail projected down by `div_value` per cluster, so that a large vocabulary
costs a small head plus the tails of the targets' clusters."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.creation import zeros
from lamina.functions.shape import cat
from lamina.nn.container import ModuleList, Sequential
from lamina.nn.layer import Layer
from lamina.nn.linear import Linear
from lamina.nn.registry import register_layer

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


@register_layer("AdaptiveLogSoftmaxWithLoss")
class AdaptiveLogSoftmaxWithLoss(Layer):
    """`forward(input, target)` gives each target's log-probability (`output`) and their
    mean negative (`loss`); `log_prob(input)` every class's, `predict(input)` the likeliest.

    Examples:
        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs=[4, 10])
        >>> out = asm(lm.randn(3, 8), lm.tensor([0, 7, 19]))
        >>> out.output.shape, out.loss.shape, asm.log_prob(lm.randn(3, 8)).shape
        (lamina.Size([3]), lamina.Size([]), lamina.Size([3, 20]))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Any, div_value: float = 4.0,
                 head_bias: bool = False) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of "
                             "unique, positive integers sorted in an increasing order, where "
                             f"each value is between 1 and n_classes-1; got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias)
        self.tail = ModuleList([
            Sequential(Linear(in_features, int(in_features // div_value ** (i + 1)), bias=False),
                       Linear(int(in_features // div_value ** (i + 1)),
                              self.cutoffs[i + 1] - self.cutoffs[i], bias=False))
            for i in range(self.n_clusters)])

    def forward(self, input: Tensor, target: Tensor) -> Any:  # noqa: A002
        target = target if isinstance(target, Tensor) else Tensor(np.asarray(target))
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: input and target should have "
                                   "the same size in the batch dimension")
            if input.ndim != 2:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                   f"input tensors, but found inputs with size {input.shape}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                   f"input tensors, but found inputs with size {input.shape}")
        else:
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, "
                               "multi-target not supported")
        batched = target.ndim == 1
        x = input if batched else input.unsqueeze(0)
        t = (target if batched else target.unsqueeze(0)).numpy().astype(np.int64)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: target values should be in "
                               f"[0, {self.n_classes - 1}], but values in range "
                               f"[{t.min()}, {t.max()}] were found")
        # where each target sits in the head: itself, or its cluster's entry
        cluster = np.searchsorted(self.cutoffs, t, side="right")  # 0: the shortlist
        head_index = np.where(cluster == 0, t, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = head_logprob.gather(1, Tensor(head_index).unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if rows.size == 0:
                continue
            local = F.log_softmax(self.tail[i - 1](x[Tensor(rows)]), dim=1)
            picked = local.gather(1, Tensor(t[rows] - self.cutoffs[i - 1]).unsqueeze(1))
            output = output + zeros(len(t), dtype=picked.dtype).index_add(
                0, Tensor(rows), picked.squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Every class's log-probability, (N, n_classes)."""
        head_logprob = F.log_softmax(self.head(input), dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, tail in enumerate(self.tail):
            cluster = F.log_softmax(tail(input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i:
                                                self.shortlist_size + i + 1])
        return cat(parts, dim=1)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The likeliest class of each row."""
        return self.log_prob(input).argmax(dim=1)

    def extra_repr(self) -> str:
        return ""

    def get_config(self) -> dict[str, Any]:
        return {"in_features": self.in_features, "n_classes": self.n_classes,
                "cutoffs": self.cutoffs[:-1], "div_value": self.div_value,
                "head_bias": self.head_bias}
