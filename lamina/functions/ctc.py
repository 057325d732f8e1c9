"""Connectionist temporal classification loss (Graves et al., 2006), PyTorch's ctc_loss:
the negative log-likelihood of a label sequence summed over every alignment of it to the
input steps, by the forward-backward recursion in log space, over the whole batch at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError

NEG = -np.inf


class CTC(Function):
    """log_probs (T, N, C) -> per-sample negative log-likelihoods (N,)."""

    def __init__(self, targets: np.ndarray, input_lengths: np.ndarray,
                 target_lengths: np.ndarray, blank: int, zero_infinity: bool) -> None:
        self.targets, self.blank, self.zero_infinity = targets, blank, zero_infinity
        self.input_lengths, self.target_lengths = input_lengths, target_lengths

    def forward(self, log_probs: Any) -> Any:
        lp = log_probs.astype(np.float64)
        steps, n = lp.shape[:2]
        ext, allow = _extended(self.targets, self.target_lengths, self.blank)
        lp_ext = np.take_along_axis(lp, np.broadcast_to(ext[None], (steps, *ext.shape)), 2)
        alpha = _forward(lp_ext, allow, self.target_lengths)
        last = self.input_lengths - 1
        rows = np.arange(n)
        ends = 2 * self.target_lengths
        final = alpha[last, rows]
        nll = -np.logaddexp(final[rows, ends],
                            np.where(ends > 0, final[rows, np.maximum(ends - 1, 0)], NEG))
        self.saved = (lp, ext, allow, lp_ext, alpha, nll)
        out = np.where(self.zero_infinity & np.isinf(nll), 0.0, nll)
        return out.astype(log_probs.dtype)

    def backward(self, gy: Any) -> Any:
        lp, ext, allow, lp_ext, alpha, nll = self.saved
        beta = _backward(lp_ext, allow, self.input_lengths, self.target_lengths)
        steps, n, c = lp.shape
        # log of the summed alpha * beta of the positions that emit each class
        emit = np.full((steps, n, c), NEG)
        t, b, s = np.meshgrid(np.arange(steps), np.arange(n), np.arange(ext.shape[1]),
                              indexing="ij")
        np.logaddexp.at(emit, (t, b, ext[b, s]), alpha + beta)
        # PyTorch's gradient, which assumes log_probs come from a log_softmax (through
        # which it equals the exact one): exp(lp) - exp(emit + nll - lp)
        with np.errstate(invalid="ignore", over="ignore"):
            grad = np.exp(lp) - np.exp(emit + nll[None, :, None] - lp)
        grad[np.arange(steps)[:, None] >= self.input_lengths[None, :]] = 0
        if self.zero_infinity:
            grad[:, np.isinf(nll)] = 0
        return (grad * np.asarray(gy, np.float64)[None, :, None]).astype(gy.dtype)


def _extended(targets: np.ndarray, lengths: np.ndarray, blank: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """The labels with blanks around and between them (N, 2 S + 1), and where a path may
    skip a blank (to a label that differs from the one two back)."""
    n, longest = len(lengths), int(lengths.max(initial=0))
    ext = np.full((n, 2 * longest + 1), blank, np.int64)
    ext[:, 1::2] = targets[:, :longest]
    allow = np.zeros(ext.shape, bool)
    allow[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, allow


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    out = np.full_like(a, NEG)
    out[..., k:] = a[..., :-k]
    return out


def _forward(lp_ext: np.ndarray, allow: np.ndarray, target_lengths: np.ndarray) -> np.ndarray:
    steps, _, width = lp_ext.shape
    valid = np.arange(width)[None, :] < 2 * target_lengths[:, None] + 1
    alpha = np.full(lp_ext.shape, NEG)
    alpha[0, :, :2] = lp_ext[0, :, :2]
    alpha[0][~valid] = NEG
    for t in range(1, steps):
        prev = alpha[t - 1]
        total = np.logaddexp(prev, _shift(prev, 1))
        total = np.logaddexp(total, np.where(allow, _shift(prev, 2), NEG))
        alpha[t] = np.where(valid, total + lp_ext[t], NEG)
    return alpha


def _backward(lp_ext: np.ndarray, allow: np.ndarray, input_lengths: np.ndarray,
              target_lengths: np.ndarray) -> np.ndarray:
    steps, n, width = lp_ext.shape
    rows, ends = np.arange(n), 2 * target_lengths
    valid = np.arange(width)[None, :] < ends[:, None] + 1
    allow_next = np.zeros_like(allow)
    allow_next[:, :-2] = allow[:, 2:]  # may a path step from s to s + 2
    beta = np.full(lp_ext.shape, NEG)
    for t in range(steps - 1, -1, -1):
        start = np.full((n, width), NEG)
        start[rows, ends] = 0.0
        start[rows, np.maximum(ends - 1, 0)] = np.where(ends > 0, 0.0, start[rows, 0])
        if t < steps - 1:
            nxt = beta[t + 1]
            total = np.logaddexp(nxt, np.roll(np.where(valid, nxt, NEG), -1, axis=1))
            total[:, -1] = nxt[:, -1]
            skip = np.full_like(nxt, NEG)
            skip[:, :-2] = nxt[:, 2:]
            total = np.logaddexp(total, np.where(allow_next, skip, NEG))
        else:
            total = np.full((n, width), NEG)
        last = (t == input_lengths - 1)[:, None]
        live = (t < input_lengths - 1)[:, None]
        beta[t] = np.where(valid & last, start + lp_ext[t],
                           np.where(valid & live, total + lp_ext[t], NEG))
    return beta


def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of log_probs (T, N, C) (log-softmax outputs; (T, C) unbatched) against
    targets (N, S) padded, or all targets concatenated (sum of target_lengths,).

    Args:
        input_lengths, target_lengths: (N,) each sample's steps and labels.
        blank: the blank class.
        reduction: "mean" (each loss divided by its target length, then the batch mean),
            "sum" or "none".
        zero_infinity: impossible alignments (infinite losses) give 0 and no gradient.

    Examples:
        >>> lp = lm.randn(6, 2, 4).log_softmax(2)
        >>> F.ctc_loss(lp, lm.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).shape
        lamina.Size([])
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"ctc_loss: reduction must be 'mean', 'sum' or 'none'; got "
                         f"{reduction!r}")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise ShapeError(f"ctc_loss: expected log_probs (T, N, C) or (T, C); got {tuple(lp.shape)}")
    steps, n, _ = lp.shape
    ins = np.asarray(getattr(input_lengths, "array", input_lengths), np.int64).reshape(-1)
    outs = np.asarray(getattr(target_lengths, "array", target_lengths), np.int64).reshape(-1)
    tgt = np.asarray(getattr(targets, "array", targets), np.int64)
    if unbatched or tgt.ndim == 1:
        cut = np.cumsum(outs)[:-1] if not unbatched else []
        parts = np.split(tgt.reshape(-1), cut)
        tgt = np.zeros((n, int(outs.max(initial=0))), np.int64)
        for row, part in zip(tgt, parts):
            row[:len(part)] = part
    if len(ins) != n or len(outs) != n or ins.max(initial=0) > steps or ins.min(initial=1) < 1:
        raise ShapeError(f"ctc_loss: expected {n} input lengths in [1, {steps}] and {n} target "
                         f"lengths; got {ins.tolist()} and {outs.tolist()}")
    losses = CTC(tgt, ins, outs, blank, zero_infinity).apply(lp)
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return (losses / np.maximum(outs, 1).astype(losses.dtype)).mean()
    return losses.squeeze(0) if unbatched else losses
