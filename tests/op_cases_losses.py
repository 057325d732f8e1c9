"""The loss functions' op cases (see op_cases.py, which adds them to its table)."""

from __future__ import annotations

import numpy as np
from op_table import Case, inputs, ints, np_sigmoid, np_softmax, randn
from op_table import torch_module as _t

import lamina.functions as F

LOSS_CASES: list[Case] = []


def ce_ref(x, t, reduction="mean", weight=None, smoothing=0.0, ignore_index=-100):
    """-sum_c w_c q_c log p_c per row, q the label's one-hot mixed with the uniform
    distribution; 'mean' divides by the labels' weights summed."""
    shape = t.shape
    if x.ndim > 2:
        x = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
        t = t.reshape(-1)
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight
    keep = t != ignore_index
    q = (1 - smoothing) * np.eye(c)[np.where(keep, t, 0)] + smoothing / c
    losses = -(q * w * np.log(np_softmax(x, -1))).sum(axis=1) * keep
    total = (w[np.where(keep, t, 0)] * keep).sum()
    return {"mean": losses.sum() / total, "sum": losses.sum(),
            "none": losses.reshape(shape)}[reduction]


CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 3.0])


for reduction in ("mean", "sum", "none"):
    LOSS_CASES.append(Case(f"cross_entropy_{reduction}",
                           lambda x, t, r=reduction: F.cross_entropy(x, t, reduction=r),
                           lambda x, t, r=reduction: ce_ref(x, t, r),
                           inputs(randn(5, 4), ints(4, 5)),
                           lambda x, t, r=reduction: _t().nn.functional.cross_entropy(
                               x, t, reduction=r)))
LOSS_CASES += [
    Case("cross_entropy_spatial", lambda x, t: F.cross_entropy(x, t), ce_ref,
         inputs(randn(2, 4, 3), ints(4, 2, 3)),
         lambda x, t: _t().nn.functional.cross_entropy(x, t)),
    Case("cross_entropy_ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=1),
         lambda x, t: np.mean(-np.log(np_softmax(x))[np.arange(6), t][t != 1]),
         inputs(randn(6, 3), lambda rng: np.array([0, 1, 2, 1, 2, 0])),
         lambda x, t: _t().nn.functional.cross_entropy(x, t, ignore_index=1)),
    Case("nll_loss", lambda x, t: F.nll_loss(x, t), lambda x, t: -x[np.arange(5), t].mean(),
         inputs(randn(5, 4), ints(4, 5)), lambda x, t: _t().nn.functional.nll_loss(x, t)),
    Case("mse_loss", F.mse_loss, lambda x, y: ((x - y) ** 2).mean(),
         inputs(randn(4, 3), randn(4, 3)), lambda x, y: _t().nn.functional.mse_loss(x, y)),
    Case("mse_loss_sum", lambda x, y: F.mse_loss(x, y, reduction="sum"), lambda x, y: ((x - y) ** 2).sum(),
         inputs(randn(4, 3), randn(4, 3)),
         lambda x, y: _t().nn.functional.mse_loss(x, y, reduction="sum")),
    Case("bce_with_logits", F.binary_cross_entropy_with_logits,
         lambda x, y: np.mean(-(y * np.log(np_sigmoid(x)) + (1 - y) * np.log(1 - np_sigmoid(x)))),
         inputs(randn(4, 3), lambda rng: rng.uniform(0, 1, (4, 3))),
         lambda x, y: _t().nn.functional.binary_cross_entropy_with_logits(x, y)),
    Case("bce_with_logits_none", lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
         lambda x, y: -(y * np.log(np_sigmoid(x)) + (1 - y) * np.log(1 - np_sigmoid(x))),
         inputs(randn(5), lambda rng: rng.integers(0, 2, 5).astype(float)),
         lambda x, y: _t().nn.functional.binary_cross_entropy_with_logits(x, y,
                                                                          reduction="none")),
]


# Class weights and label smoothing, alone and together, with every reduction, spatial
# scores and an ignored label: PyTorch's arguments, checked against it.
for reduction in ("mean", "sum", "none"):
    for weight, smoothing in ((CLASS_WEIGHT, 0.0), (None, 0.2), (CLASS_WEIGHT, 0.3)):
        kw = {"weight": weight, "label_smoothing": smoothing}
        LOSS_CASES.append(Case(
            f"cross_entropy_{reduction}_weighted{weight is not None}_smoothing{smoothing}",
            lambda x, t, r=reduction, k=kw: F.cross_entropy(x, t, reduction=r, ignore_index=1, **k),
            lambda x, t, r=reduction, k=kw: ce_ref(x, t, r, k["weight"],
                                                   k["label_smoothing"], 1),
            inputs(randn(2, 4, 3), lambda rng: np.array([[0, 1, 2], [3, 3, 1]])),
            lambda x, t, r=reduction, k=kw: _t().nn.functional.cross_entropy(
                x, t, None if k["weight"] is None else _t().tensor(k["weight"], dtype=x.dtype),
                ignore_index=1, reduction=r, label_smoothing=k["label_smoothing"])))
LOSS_CASES.append(Case(
    "nll_loss_weighted", lambda x, t: F.nll_loss(x, t, weight=CLASS_WEIGHT),
    lambda x, t: -(x[np.arange(5), t] * CLASS_WEIGHT[t]).sum() / CLASS_WEIGHT[t].sum(),
    inputs(randn(5, 4), ints(4, 5)),
    lambda x, t: _t().nn.functional.nll_loss(x, t, weight=_t().tensor(CLASS_WEIGHT,
                                                                       dtype=x.dtype))))
