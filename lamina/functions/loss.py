"""Classification losses over class scores, with PyTorch's semantics (reduction='mean' |
'sum' | 'none'): cross-entropy and NLL, each one op with its own backward; and the
reduction checks every loss module shares. MSE and binary cross-entropy with logits are in
lamina.functions.loss_pointwise."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation_softmax import log_softmax_array

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}; got {reduction!r}")


def _class_rows(op: str, x: Any, labels: Any) -> tuple[Any, Any]:
    """(N, C, d...) scores and (N, d...) labels as (M, C) rows and (M,) labels."""
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{op}: labels must be integers (class indices); got dtype {labels.dtype}")
    if x.ndim < 2 or labels.shape != x.shape[:1] + x.shape[2:]:
        want = x.shape[:1] + x.shape[2:] if x.ndim >= 2 else "(N,) with input (N, C)"
        hint = ("; the classes look to be on the last axis, as a sequence model gives them: "
                "move them to axis 1, or in a job use loss: sequence_cross_entropy"
                if x.ndim >= 3 and labels.shape == x.shape[:-1] else "")
        raise ShapeError(
            f"{op}: labels do not fit the input; expected labels of shape {want} for input "
            f"{tuple(x.shape)}, got {tuple(labels.shape)}{hint}"
        )
    if x.ndim > 2:
        x = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    return x, labels.reshape(-1)


class _Picked(Function):
    """Shared by the losses that pick one score per row: -score[label], averaged or summed."""

    def __init__(self, op: str, reduction: str, ignore_index: int, weight: Any = None) -> None:
        _check_reduction(op, reduction)
        self.op, self.reduction, self.ignore_index = op, reduction, ignore_index
        self.weight = None if weight is None else np.asarray(getattr(weight, "array", weight))

    def rows(self, x: Any, labels: Any) -> Any:
        """Validate labels and return the scores as (M, C) rows; remembers the layout."""
        rows, t = _class_rows(self.op, x, labels)
        c = rows.shape[1]
        self.x_shape, self.labels_shape = x.shape, labels.shape
        lo, hi = (t.min(), t.max()) if t.size else (0, -1)
        if self.weight is None and not lo <= self.ignore_index <= hi and lo >= 0 and hi < c:
            # Every row counts, each with weight 1: the usual case, and five passes over
            # the labels fewer than the general one below.
            self.t, self.valid, self.row_weight = t, None, None
            self.count = (t.size or 1.0) if self.reduction == "mean" else 1
            return rows
        valid = t != self.ignore_index
        t = np.where(valid, t, 0)
        if t.size and (t.min() < 0 or t.max() >= c):
            bad = t[(t < 0) | (t >= c)]
            raise IndexError(f"{self.op}: labels must lie in [0, {c}) (or equal ignore_index "
                             f"{self.ignore_index}); got {np.unique(bad)[:5].tolist()}")
        self.t, self.valid = t, valid
        # Each row's weight: 0 where ignored, else its class's weight (1 without weights).
        self.row_weight = valid.astype(rows.dtype)
        if self.weight is not None:
            if self.weight.shape != (c,):
                raise ShapeError(f"{self.op}: weight must hold one value per class, shape "
                                 f"({c},); got {tuple(self.weight.shape)}")
            self.row_weight *= self.weight.astype(rows.dtype, copy=False)[t]
        # 'mean' divides by the weights summed over the rows, as PyTorch does.
        self.count = (float(self.row_weight.sum()) or 1.0) if self.reduction == "mean" else 1
        return rows

    def weights(self, dtype: Any) -> tuple[Any, Any]:
        """Each row's weight and whether it counts, as arrays (rows() may leave them None:
        every row counts, with weight 1)."""
        if self.row_weight is None:
            return np.ones(self.t.size, dtype), np.ones(self.t.size, bool)
        return self.row_weight, self.valid

    def picked(self, rows: Any) -> Any:
        """-rows[i, label_i] per row, times the row's weight (0 where ignored)."""
        scores = rows[np.arange(self.t.size), self.t]
        return -scores if self.row_weight is None else -scores * self.row_weight

    def reduce(self, losses: Any) -> Any:
        """Per-row losses, reduced."""
        if self.reduction == "none":
            return losses.reshape(self.labels_shape)
        total = losses.sum()
        return np.asarray(total / self.count if self.reduction == "mean" else total,
                          losses.dtype)

    def scatter(self, g_rows: Any, gy: Any) -> Any:
        """Scale row gradients (weighted already) by gy; lay them out like the input."""
        # g_rows is the caller's own fresh array: scaled in place, keeping its dtype.
        g_rows *= gy.reshape(-1, 1) if self.reduction == "none" else gy / self.count
        if len(self.x_shape) > 2:
            n, c = self.x_shape[:2]
            return np.moveaxis(g_rows.reshape(n, *self.x_shape[2:], c), -1, 1)
        return g_rows


class CrossEntropy(_Picked):
    # Fused log-softmax + NLL: the gradient softmax - onehot is exact and never overflows,
    # where log(softmax(x)) as two ops loses precision and can produce log(0).
    def __init__(self, op: str, reduction: str, ignore_index: int, weight: Any = None,
                 label_smoothing: float = 0.0) -> None:
        super().__init__(op, reduction, ignore_index, weight)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"{op}: label_smoothing must lie in [0, 1]; got {label_smoothing}")
        self.smoothing = float(label_smoothing)

    def forward(self, x: Any, labels: Any) -> Any:
        return self.from_rows(self.rows(x, labels), x)

    def from_rows(self, rows: Any, x: Any) -> Any:
        """The loss from the scores as rows; keeps the log-probabilities for backward."""
        # Over the scores' own memory when rows is already a copy: one array fewer.
        own = not np.may_share_memory(rows, x)
        logp = log_softmax_array(rows, -1, out=rows if own else None)
        self.save_for_backward(logp, None, self.t)
        return self.reduce(self._losses(logp))

    def from_kept_scores(self, rows: Any) -> Any:
        """The loss, keeping the scores rather than their log-probabilities: backward
        redoes the log-softmax. For a caller that keeps the scores alive anyway."""
        self.save_for_backward(None, rows, self.t)
        return self.reduce(self._losses(log_softmax_array(rows, -1)))

    def _class_weight(self, dtype: Any) -> Any:
        return None if self.weight is None else self.weight.astype(dtype, copy=False)

    def _losses(self, logp: Any) -> Any:
        """Per row: (1 - e) * the label's loss + e / C * the loss of every class, each
        class weighted, as PyTorch's label_smoothing mixes a uniform target in."""
        losses = self.picked(logp)
        if not self.smoothing:
            return losses
        w = self._class_weight(logp.dtype)
        spread = -(logp.sum(axis=1) if w is None else logp @ w) * self.weights(logp.dtype)[1]
        e = self.smoothing
        return (1 - e) * losses + (e / logp.shape[1]) * spread

    def backward(self, gy: Any) -> tuple[Any, None]:
        logp, scores, _ = self.saved_tensors
        if logp is None:  # recomputed: a fresh array, exponentiated in place
            g = log_softmax_array(scores, -1)
            np.exp(g, out=g)
        else:
            g = np.exp(logp)
        e, c = self.smoothing, g.shape[1]
        rows = np.arange(self.t.size)
        if self.row_weight is None and not e:
            g[rows, self.t] -= 1  # d/dx of -logp[label]: softmax - onehot
            return self.scatter(g, gy), None
        row_weight, valid = self.weights(g.dtype)
        picked = (1 - e) * row_weight
        if not e:
            g *= picked[:, None]
        else:  # d/dx of -sum_c w_c logp[c]: sum(w) softmax - w
            w = self._class_weight(g.dtype)
            total = c if w is None else w.sum()
            g *= (picked + (e / c) * total * valid)[:, None]
            g -= (e / c) * valid[:, None] * (1 if w is None else w)
        g[rows, self.t] -= picked
        return self.scatter(g, gy), None


class NLL(_Picked):
    def forward(self, x: Any, labels: Any) -> Any:
        rows = self.rows(x, labels)
        self.rows_meta = (rows.shape, rows.dtype)
        self.save_for_backward(self.t)
        return self.reduce(self.picked(rows))

    def backward(self, gy: Any) -> tuple[Any, None]:
        g = np.zeros(*self.rows_meta)
        g[np.arange(self.t.size), self.t] = -self.weights(g.dtype)[0]
        return self.scatter(g, gy), None


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's deprecated size_average / reduce, where given, as a reduction name."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is not None and not reduce:
        return "none"
    return "sum" if size_average is not None and not size_average else "mean"


def cross_entropy(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy from unnormalised scores, with PyTorch's arguments and results:
    integer class targets (fused, stable) or class probabilities of the input's shape.

    Args:
        input: scores of shape (N, C) or (N, C, d1, ...).
        target: integer classes (N,) or (N, d1, ...), values in [0, C); or probabilities
            of input's shape.
        weight: optional (C,) weight of each class, for unbalanced classes (a constant:
            it takes no gradient).
        ignore_index: class targets equal to this contribute nothing.
        reduction: 'mean' (over non-ignored targets, weighted by their class's weight),
            'sum' or 'none'.
        label_smoothing: e in [0, 1]: the target is (1 - e) on the label plus e / C on
            every class.

    Returns:
        A scalar tensor, or per-element losses (target's shape without C) for 'none'.

    Raises:
        ShapeError: target's shape does not fit input (both shapes are named).

    Examples:
        >>> scores, y = lm.zeros(4, 10), lm.tensor([1, 2, 3, 4])
        >>> round(F.cross_entropy(scores, y).item(), 4)   # log(10)
        2.3026
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input.ndim == 1:  # one unbatched sample (C,): a batch of one, as PyTorch reads it
        out = cross_entropy(input.unsqueeze(0), _batch_of_one(target), weight,
                            ignore_index=ignore_index, reduction=reduction,
                            label_smoothing=label_smoothing)
        return out.squeeze(0) if reduction == "none" else out
    if isinstance(target, Tensor) and target.array.dtype.kind == "f":
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    return CrossEntropy("cross_entropy", reduction, ignore_index, weight,
                        label_smoothing).apply(input, target)


def _batch_of_one(target: Any) -> Any:
    target = target if isinstance(target, Tensor) else Tensor(np.asarray(target))
    return target.unsqueeze(0)


def _cross_entropy_probabilities(x: Tensor, p: Tensor, weight: Any, reduction: str,
                                 smoothing: float) -> Tensor:
    """-sum_c w_c q_c log softmax(x)_c with q = (1 - e) p + e / C; 'mean' divides by the
    number of rows (times spatial positions), as PyTorch does for probability targets."""
    from lamina.functions.activation_softmax import log_softmax

    _check_reduction("cross_entropy", reduction)
    if tuple(p.shape) != tuple(x.shape):
        raise ShapeError(f"cross_entropy: probability targets must have the input's shape; "
                         f"expected {tuple(x.shape)}, got {tuple(p.shape)}")
    c = x.shape[1]
    q = p * (1 - smoothing) + smoothing / c if smoothing else p
    terms = log_softmax(x, 1) * q
    if weight is not None:
        w = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, x.dtype))
        terms = terms * w.reshape((c,) + (1,) * (x.ndim - 2))
    per = -terms.sum(1)
    if reduction == "none":
        return per
    return per.sum() if reduction == "sum" else per.mean()


def nll_loss(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of integer targets given log-probabilities (N, C) or
    (N, C, ...); `weight` (C,) weighs each class, as in PyTorch.

    Examples:
        >>> F.nll_loss(lm.tensor([[-1.0, -2.0]]), lm.tensor([1])).item()
        2.0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if input.ndim == 1:  # one unbatched sample (C,)
        out = nll_loss(input.unsqueeze(0), _batch_of_one(target), weight,
                       ignore_index=ignore_index, reduction=reduction)
        return out.squeeze(0) if reduction == "none" else out
    return NLL("nll_loss", reduction, ignore_index, weight).apply(input, target)
