"""Loss modules with PyTorch's constructors (`nn.CrossEntropyLoss(weight=, ignore_index=,
label_smoothing=, reduction=)`, ...): each holds its options and calls the function of
the same name in `lamina.nn.functional`. Class weights are buffers, as in PyTorch, so they
move with `.to(dtype)` and appear in the state dict."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.functions.loss import legacy_reduction
from lamina.nn.distance import PairwiseDistance
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer
from lamina.schema import ConfigError


class _Loss(Layer):
    """A loss module: `reduction` (PyTorch's deprecated size_average / reduce honoured),
    plus the options each subclass names in `_options`."""

    _options: tuple[str, ...] = ()

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)

    def _weights(self, **tensors: Any) -> None:
        for name, value in tensors.items():
            if value is None:
                object.__setattr__(self, name, None)
            else:
                arr = value.array if isinstance(value, Tensor) else np.asarray(value,
                                                                                np.float32)
                self.register_buffer(name, arr.copy())

    def get_config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reduction": self.reduction}
        for name in self._options:
            value = getattr(self, name)
            out[name] = value.tolist() if isinstance(value, Tensor) else value
        return out

    def _kw(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._options}

    def extra_repr(self) -> str:
        return ""  # PyTorch's losses print no arguments: MSELoss(reduction="sum") is MSELoss()


def _loss(name: str, fn: Any, options: dict[str, Any], weights: tuple[str, ...] = (),
          doc: str = "", order: tuple[str, ...] = ("size_average", "reduce", "reduction")
          ) -> type[_Loss]:
    """A loss module class calling `fn(input, target, **options, reduction=...)`, whose
    constructor takes PyTorch's arguments in PyTorch's positional `order`."""
    defaults = {"size_average": None, "reduce": None, "reduction": "mean", **options}
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                 default=defaults[n]) for n in order]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d)
               for n, d in defaults.items() if n not in order]
    signature = inspect.Signature(params)

    def __init__(self: _Loss, *args: Any, **kwargs: Any) -> None:
        try:
            values = signature.bind(self, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}: {e}") from None
        values.apply_defaults()
        given = dict(values.arguments)
        given.pop("self")
        _Loss.__init__(self, given.pop("size_average"), given.pop("reduce"),
                       given.pop("reduction"))
        for option in options:
            if option not in weights:
                object.__setattr__(self, option, given[option])
        self._weights(**{w: given[w] for w in weights})

    __init__.__signature__ = signature  # type: ignore[attr-defined]

    def forward(self: _Loss, *inputs: Any) -> Tensor:
        return fn(*inputs, **self._kw(), reduction=self.reduction)

    forward.__doc__ = f"`F.{fn.__name__}(input, target, ...)` with this module's options."

    cls = type(name, (_Loss,), {"__init__": __init__, "forward": forward,
                                "_options": tuple(options), "__doc__": doc})
    return register_layer(name)(cls)


_EX = ">>> loss = nn.{0}()\n        >>> loss({1}).shape\n        lamina.Size([])"


def _doc(summary: str, name: str, args: str) -> str:
    return f"{summary}\n\n    Example:\n        {_EX.format(name, args)}\n    "


CrossEntropyLoss = _loss(
    "CrossEntropyLoss", F.cross_entropy,
    {"weight": None, "ignore_index": -100, "label_smoothing": 0.0}, ("weight",),
    _doc("Softmax cross-entropy of scores against class indices or probabilities.",
         "CrossEntropyLoss", "lm.zeros(4, 3), lm.tensor([0, 1, 2, 0])"),
    ("weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"))
NLLLoss = _loss("NLLLoss", F.nll_loss, {"weight": None, "ignore_index": -100}, ("weight",),
                _doc("Negative log-likelihood of class indices given log-probabilities.",
                     "NLLLoss", "lm.zeros(2, 3).log_softmax(1), lm.tensor([0, 2])"),
                ("weight", "size_average", "ignore_index", "reduce", "reduction"))


class NLLLoss2d(NLLLoss):  # type: ignore[valid-type,misc]
    """NLLLoss under its deprecated name, with PyTorch's FutureWarning.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     loss = nn.NLLLoss2d()
        >>> seen[0].category.__name__, isinstance(loss, nn.NLLLoss)
        ('FutureWarning', True)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement", FutureWarning, stacklevel=2)
        super().__init__(*args, **kwargs)


MSELoss = _loss("MSELoss", F.mse_loss, {},
                doc=_doc("Mean squared error.", "MSELoss", "lm.zeros(3), lm.ones(3)"))
L1Loss = _loss("L1Loss", F.l1_loss, {},
               doc=_doc("Mean absolute error.", "L1Loss", "lm.zeros(3), lm.ones(3)"))
SmoothL1Loss = _loss("SmoothL1Loss", F.smooth_l1_loss, {"beta": 1.0},
                     doc=_doc("Squared error below beta, absolute above.", "SmoothL1Loss",
                              "lm.zeros(3), lm.ones(3)"),
                     order=("size_average", "reduce", "reduction", "beta"))
HuberLoss = _loss("HuberLoss", F.huber_loss, {"delta": 1.0},
                  doc=_doc("Squared error below delta, delta-scaled absolute above.",
                           "HuberLoss", "lm.zeros(3), lm.ones(3)"),
                  order=("reduction", "delta"))
BCELoss = _loss("BCELoss", F.binary_cross_entropy, {"weight": None}, ("weight",),
                _doc("Binary cross-entropy of probabilities.", "BCELoss",
                     "lm.full((2,), 0.5), lm.ones(2)"),
                ("weight", "size_average", "reduce", "reduction"))
BCEWithLogitsLoss = _loss(
    "BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
    {"weight": None, "pos_weight": None}, ("weight", "pos_weight"),
    _doc("Binary cross-entropy of sigmoid(scores), computed stably.", "BCEWithLogitsLoss",
         "lm.zeros(2), lm.ones(2)"),
    ("weight", "size_average", "reduce", "reduction", "pos_weight"))
KLDivLoss = _loss("KLDivLoss", F.kl_div, {"log_target": False},
                  doc=_doc("KL divergence of the target from exp(input).", "KLDivLoss",
                           "lm.full((2,), 0.5).log(), lm.full((2,), 0.5)"),
                  order=("size_average", "reduce", "reduction", "log_target"))
SoftMarginLoss = _loss("SoftMarginLoss", F.soft_margin_loss, {},
                       doc=_doc("log(1 + exp(-y x)) for labels of +1 and -1.",
                                "SoftMarginLoss", "lm.zeros(2), lm.ones(2)"))
PoissonNLLLoss = _loss("PoissonNLLLoss", F.poisson_nll_loss,
                       {"log_input": True, "full": False, "eps": 1e-8},
                       doc=_doc("Poisson negative log-likelihood.", "PoissonNLLLoss",
                                "lm.zeros(2), lm.ones(2)"),
                       order=("log_input", "full", "size_average", "eps", "reduce",
                              "reduction"))
GaussianNLLLoss = _loss("GaussianNLLLoss", F.gaussian_nll_loss, {"full": False, "eps": 1e-6},
                        doc=_doc("Gaussian negative log-likelihood, given a variance.",
                                 "GaussianNLLLoss", "lm.zeros(2), lm.ones(2), lm.ones(2)"),
                        order=())
CosineEmbeddingLoss = _loss(
    "CosineEmbeddingLoss", F.cosine_embedding_loss, {"margin": 0.0},
    doc=_doc("1 - cosine for similar pairs, a margin hinge for dissimilar ones.",
             "CosineEmbeddingLoss", "lm.ones(2, 3), lm.ones(2, 3), lm.tensor([1, -1])"),
    order=("margin", "size_average", "reduce", "reduction"))
MarginRankingLoss = _loss(
    "MarginRankingLoss", F.margin_ranking_loss, {"margin": 0.0},
    doc=_doc("A hinge on the ordering of two scores.", "MarginRankingLoss",
             "lm.ones(2), lm.zeros(2), lm.ones(2)"),
    order=("margin", "size_average", "reduce", "reduction"))
HingeEmbeddingLoss = _loss(
    "HingeEmbeddingLoss", F.hinge_embedding_loss, {"margin": 1.0},
    doc=_doc("x for similar pairs, a margin hinge for dissimilar ones.",
             "HingeEmbeddingLoss", "lm.ones(2), lm.tensor([1.0, -1.0])"),
    order=("margin", "size_average", "reduce", "reduction"))
TripletMarginLoss = _loss(
    "TripletMarginLoss", F.triplet_margin_loss,
    {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False},
    doc=_doc("A hinge on anchor-positive against anchor-negative distances.",
             "TripletMarginLoss", "lm.zeros(2, 3), lm.zeros(2, 3), lm.ones(2, 3)"),
    order=("margin", "p", "eps", "swap", "size_average", "reduce", "reduction"))
MultiLabelSoftMarginLoss = _loss(
    "MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss, {"weight": None}, ("weight",),
    _doc("Binary cross-entropy per label, averaged over labels.",
         "MultiLabelSoftMarginLoss", "lm.zeros(2, 3), lm.ones(2, 3)"),
    ("weight", "size_average", "reduce", "reduction"))
MultiMarginLoss = _loss(
    "MultiMarginLoss", F.multi_margin_loss, {"p": 1, "margin": 1.0, "weight": None},
    ("weight",),
    _doc("The multi-class hinge of scores against class indices.", "MultiMarginLoss",
         "lm.zeros(2, 3), lm.tensor([0, 2])"),
    ("p", "margin", "weight", "size_average", "reduce", "reduction"))
MultiLabelMarginLoss = _loss(
    "MultiLabelMarginLoss", F.multilabel_margin_loss, {},
    doc=_doc("The multi-label hinge; each target row lists classes up to a -1.",
             "MultiLabelMarginLoss", "lm.zeros(2, 3), lm.tensor([[0, -1, 0], [2, 1, -1]])"))


@register_layer("TripletMarginWithDistanceLoss")
class TripletMarginWithDistanceLoss(_Loss):
    """A hinge on anchor-positive against anchor-negative distances, for a distance of
    your choosing (a `PairwiseDistance()` child when None, as PyTorch's). Its config holds
    no callable: a layer built with a `distance_function` has none.

    Examples:
        >>> loss = nn.TripletMarginWithDistanceLoss(margin=0.5)
        >>> loss(lm.zeros(2, 3), lm.zeros(2, 3), lm.ones(2, 3)).shape
        lamina.Size([])
    """

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self._default_distance = distance_function is None
        self.distance_function = PairwiseDistance() if distance_function is None \
            else distance_function
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)

    def get_config(self) -> dict[str, Any]:
        if not self._default_distance:
            raise ConfigError("TripletMarginWithDistanceLoss: a distance_function is Python "
                              "code, which a config does not hold; build this loss in code")
        return {"margin": self.margin, "swap": self.swap, "reduction": self.reduction}


CTCLoss = _loss(
    "CTCLoss", F.ctc_loss, {"blank": 0, "zero_infinity": False},
    doc="""Connectionist temporal classification: `loss(log_probs, targets, input_lengths,
    target_lengths)`, log_probs (T, N, C) from a log_softmax.

    Examples:
        >>> loss = nn.CTCLoss()
        >>> loss(lm.zeros(5, 2, 3).log_softmax(2), lm.tensor([[1, 2], [1, 1]]), [5, 5],
        ...      [2, 2]).shape
        lamina.Size([])
    """, order=("blank", "reduction", "zero_infinity"))

__all__ = ["BCELoss", "CTCLoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "NLLLoss2d",
           "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss"]
