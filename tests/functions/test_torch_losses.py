"""Every loss module and function against PyTorch's: same inputs, each reduction, values
and the gradient of the first input (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
# PyTorch's own deprecation notes (KLDiv's 'mean', size_average / reduce): about torch
pytestmark = [pytest.mark.torch,
              pytest.mark.filterwarnings("ignore:.*(batchmean|size_average).*:UserWarning")]

R = np.random.default_rng(5)
X = R.standard_normal((4, 3))
Y = R.standard_normal((4, 3))
P = R.uniform(0.05, 0.95, (4, 3))
SIGN = np.where(R.random(4) < 0.5, 1.0, -1.0)
SIGN43 = np.where(R.random((4, 3)) < 0.5, 1.0, -1.0)
LABELS = np.array([0, 2, 1, 2])
PROBS = np.exp(Y) / np.exp(Y).sum(1, keepdims=True)
W3 = np.array([1.0, 2.0, 0.5])

# name: (module kwargs, inputs after the first: arrays; the first input is X unless given)
CASES = {
    "CrossEntropyLoss": ({}, [LABELS]),
    "CrossEntropyLoss-weighted": ({"weight": W3, "label_smoothing": 0.1,
                                   "ignore_index": 1}, [LABELS]),
    "CrossEntropyLoss-probabilities": ({"weight": W3, "label_smoothing": 0.2}, [PROBS]),
    "NLLLoss": ({"weight": W3}, [LABELS]),
    "MSELoss": ({}, [Y]),
    "L1Loss": ({}, [Y]),
    "SmoothL1Loss": ({"beta": 0.5}, [Y]),
    "HuberLoss": ({"delta": 0.7}, [Y]),
    "BCELoss": ({"weight": W3}, [P], P[::-1].copy()),
    "BCEWithLogitsLoss": ({"weight": W3, "pos_weight": np.array([2.0, 0.5, 1.0])}, [P]),
    "BCEWithLogitsLoss-plain": ({}, [P]),
    "KLDivLoss": ({}, [PROBS], np.log(PROBS[::-1].copy())),
    "KLDivLoss-log_target": ({"log_target": True}, [np.log(PROBS)]),
    "SoftMarginLoss": ({}, [SIGN43]),
    "PoissonNLLLoss": ({}, [np.abs(Y)]),
    "PoissonNLLLoss-full": ({"log_input": False, "full": True}, [np.abs(Y) * 3],
                            np.abs(X) + 0.1),
    "GaussianNLLLoss": ({"full": True}, [Y, np.abs(P)]),
    "CosineEmbeddingLoss": ({"margin": 0.1}, [Y, SIGN]),
    "MarginRankingLoss": ({"margin": 0.2}, [Y, SIGN43]),
    "HingeEmbeddingLoss": ({"margin": 0.5}, [SIGN43]),
    "TripletMarginLoss": ({"margin": 0.5, "p": 1.5, "swap": True}, [Y, P]),
    "MultiLabelSoftMarginLoss": ({"weight": W3}, [(P > 0.5).astype(float)]),
    "MultiMarginLoss": ({}, [LABELS]),
    "MultiMarginLoss-p2": ({"p": 2, "margin": 0.7, "weight": W3}, [LABELS]),
    "MultiLabelMarginLoss": ({}, [np.array([[2, 0, -1], [1, -1, 2], [0, 1, 2], [-1, 0, 1]])]),
    "TripletMarginWithDistanceLoss": ({"margin": 0.5, "swap": True}, [Y, P]),
}


def _run(lib, name, kwargs, rest, first, reduction):
    cls = getattr(lib.nn, name.split("-")[0])
    kw = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    loss = cls(**kw, reduction=reduction)
    x = lib.tensor(first, requires_grad=True)
    args = [lib.tensor(a) for a in rest]
    out = loss(x, *args)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum() \
        .backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CASES))
def test_loss_matches_pytorch(name: str, reduction: str) -> None:
    kwargs, rest, *first = CASES[name]
    first = first[0] if first else X
    ours = _run(lamina, name, kwargs, rest, first, reduction)
    theirs = _run(torch, name, kwargs, rest, first, reduction)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12, err_msg="value")
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12, err_msg="grad")


def test_functional_forms_and_helpers_match() -> None:
    F, tF = lamina.nn.functional, torch.nn.functional
    pairs = [
        ("cosine_similarity", (X, Y), {"dim": 1}),
        ("pairwise_distance", (X, Y), {"p": 3.0}),
        ("normalize", (X,), {"p": 1.0, "dim": 0}),
        ("kl_div", (np.log(PROBS), PROBS), {"reduction": "batchmean"}),
        ("cross_entropy", (X, LABELS), {"reduction": "sum"}),
        ("l1_loss", (X, Y), {"size_average": False}),
    ]
    for name, args, kw in pairs:
        ours = getattr(F, name)(*[lamina.tensor(a) for a in args], **kw)
        theirs = getattr(tF, name)(*[torch.tensor(a) for a in args], **kw)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, err_msg=name)
    np.testing.assert_array_equal(F.one_hot(lamina.tensor(LABELS), 4).numpy(),
                                  tF.one_hot(torch.tensor(LABELS), 4).numpy())


def test_positional_arguments_follow_pytorchs_order() -> None:
    for lib in (lamina, torch):
        ce = lib.nn.CrossEntropyLoss(lib.tensor(W3), None, 1)
        assert ce.ignore_index == 1 and ce.weight.tolist() == W3.tolist()
        assert lib.nn.MSELoss(None, False).reduction == "none"
        assert lib.nn.HuberLoss("sum", 0.3).delta == 0.3
        trip = lib.nn.TripletMarginLoss(0.5, 1.0)
        assert (trip.margin, trip.p) == (0.5, 1.0)


def test_loss_modules_round_trip_through_configs() -> None:
    loss = lamina.nn.CrossEntropyLoss(weight=lamina.tensor(W3), label_smoothing=0.1)
    again = lamina.nn.from_config(loss.to_config())
    x, y = lamina.tensor(X), lamina.tensor(LABELS)
    assert again(x, y).item() == loss(x, y).item()
    with pytest.raises(lamina.nn.ConfigError, match="unknown argument"):
        lamina.nn.from_config({"type": "MSELoss", "delta": 1.0})
