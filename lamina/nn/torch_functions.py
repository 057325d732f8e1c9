"""The names PyTorch gives nn.functional's ops at top level: `torch.conv2d`,
`torch.dropout`, `torch.layer_norm`, `torch.embedding`, ... Most take F's arguments in
F's order and call it. Where ATen's order differs, these take ATen's, as PyTorch does:
`torch.embedding(weight, indices)`, `torch.batch_norm(input, weight, bias, running_mean,
running_var, training, momentum, eps, cudnn_enabled)`, losses whose `reduction` is an int
(0 none, 1 mean, 2 sum; left out, none, as PyTorch's top-level functions have it),
`torch.adaptive_max_pool1d` returning (values, indices).
"""

from __future__ import annotations

from typing import Any

from lamina.nn import functional as F

_REDUCTIONS = ("none", "mean", "sum")

# name -> the example's call (x is a (1, 2, 4) float tensor) and what it shows
_SAME = {
    "conv1d": ("x, lm.ones(3, 2, 2)", "(1, 3, 3)"),
    "conv2d": ("x[None], lm.ones(3, 1, 1, 2)", "(1, 3, 2, 3)"),
    "conv3d": ("x[None, None], lm.ones(3, 1, 1, 1, 2)", "(1, 3, 1, 2, 3)"),
    "conv_transpose1d": ("x, lm.ones(2, 3, 2)", "(1, 3, 5)"),
    "conv_transpose2d": ("x[None], lm.ones(1, 3, 1, 2)", "(1, 3, 2, 5)"),
    "conv_transpose3d": ("x[None, None], lm.ones(1, 2, 1, 1, 1)", "(1, 2, 1, 2, 4)"),
    "dropout": ("x, 0.5, False", "(1, 2, 4)"),
    "alpha_dropout": ("x, 0.5, False", "(1, 2, 4)"),
    "feature_alpha_dropout": ("x, 0.5, False", "(1, 2, 4)"),
    "layer_norm": ("x, (4,)", "(1, 2, 4)"),
    "group_norm": ("x, 2", "(1, 2, 4)"),
    "rms_norm": ("x, (4,)", "(1, 2, 4)"),
    "max_pool1d": ("x, 2", "(1, 2, 2)"),
    "max_pool2d": ("x, 2", "(1, 1, 2)"),
    "max_pool3d": ("x[None], 1", "(1, 1, 2, 4)"),
    "avg_pool1d": ("x, 2", "(1, 2, 2)"),
    "adaptive_avg_pool1d": ("x, 1", "(1, 2, 1)"),
    "pixel_shuffle": ("x.reshape(1, 4, 1, 2), 2", "(1, 1, 2, 4)"),
    "pixel_unshuffle": ("x.reshape(1, 1, 2, 4), 2", "(1, 4, 1, 2)"),
    "selu": ("x", "(1, 2, 4)"),
    "celu": ("x", "(1, 2, 4)"),
    "prelu": ("x, lm.tensor([0.25])", "(1, 2, 4)"),
    "rrelu": ("x", "(1, 2, 4)"),
    "threshold": ("x, 0.5, 0.0", "(1, 2, 4)"),
    "hardshrink": ("x", "(1, 2, 4)"),
    "bilinear": ("x[0], x[0], lm.ones(3, 4, 4)", "(2, 3)"),
    "pairwise_distance": ("x[0], x[0]", "(2,)"),
    "relu_": ("x.clone()", "(1, 2, 4)"),
    "selu_": ("x.clone()", "(1, 2, 4)"),
    "celu_": ("x.clone()", "(1, 2, 4)"),
    "rrelu_": ("x.clone()", "(1, 2, 4)"),
    "threshold_": ("x.clone(), 0.5, 0.0", "(1, 2, 4)"),
}


def _same(name: str) -> Any:
    op = getattr(F, name)

    def function(*args: Any, **kwargs: Any) -> Any:
        return op(*args, **kwargs)
    call, shape = _SAME[name]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`F.{name}`, under PyTorch's top-level name.\n\nExamples:\n"
                        f"    >>> x = lm.arange(8.0).reshape(1, 2, 4)\n"
                        f"    >>> tuple(lm.{name}({call}).shape)\n    {shape}")
    return function


conv1d = _same("conv1d")
conv2d = _same("conv2d")
conv3d = _same("conv3d")
conv_transpose1d = _same("conv_transpose1d")
conv_transpose2d = _same("conv_transpose2d")
conv_transpose3d = _same("conv_transpose3d")
dropout = _same("dropout")
alpha_dropout = _same("alpha_dropout")
feature_alpha_dropout = _same("feature_alpha_dropout")
layer_norm = _same("layer_norm")
group_norm = _same("group_norm")
rms_norm = _same("rms_norm")
max_pool1d = _same("max_pool1d")
max_pool2d = _same("max_pool2d")
max_pool3d = _same("max_pool3d")
avg_pool1d = _same("avg_pool1d")
adaptive_avg_pool1d = _same("adaptive_avg_pool1d")
pixel_shuffle = _same("pixel_shuffle")
pixel_unshuffle = _same("pixel_unshuffle")
selu = _same("selu")
celu = _same("celu")
prelu = _same("prelu")
rrelu = _same("rrelu")
threshold = _same("threshold")
hardshrink = _same("hardshrink")
bilinear = _same("bilinear")
pairwise_distance = _same("pairwise_distance")
relu_ = _same("relu_")
selu_ = _same("selu_")
celu_ = _same("celu_")
rrelu_ = _same("rrelu_")
threshold_ = _same("threshold_")


def _reduction(code: Any) -> str:
    if isinstance(code, str):
        return code
    if code not in (0, 1, 2):
        raise ValueError(f"reduction: expected 0 (none), 1 (mean) or 2 (sum); got {code!r}")
    return _REDUCTIONS[code]


def embedding(weight: Any, indices: Any, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """The rows of `weight` at `indices` (ATen's order: the table first; padding_idx -1
    means none, and its gradient is kept by F.embedding's rule).

    Examples:
        >>> lm.embedding(lm.eye(3), lm.tensor([2, 0]))
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    return F.embedding(indices, weight, padding_idx=None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
               running_var: Any, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Any:
    """F.batch_norm with ATen's argument order (weight and bias before the statistics).

    Examples:
        >>> lm.batch_norm(lm.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1,
        ...               1e-5)
        tensor([[-1.0000],
                [ 1.0000]])
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Any, weight: Any, bias: Any, running_mean: Any,  # noqa: A002
                  running_var: Any, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Any:
    """F.instance_norm with ATen's argument order.

    Examples:
        >>> lm.instance_norm(lm.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1,
        ...                  1e-5)
        tensor([[[-1.0000,  1.0000]]])
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def adaptive_max_pool1d(input: Any, output_size: Any) -> tuple[Any, Any]:  # noqa: A002
    """(values, indices) of F.adaptive_max_pool1d, as PyTorch's top-level function returns.

    Examples:
        >>> lm.adaptive_max_pool1d(lm.tensor([[[1.0, 3.0, 2.0]]]), 1)
        (tensor([[[3.]]]), tensor([[[1]]]))
    """
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def kl_div(input: Any, target: Any, reduction: Any = 0, *,  # noqa: A002
           log_target: bool = False) -> Any:
    """F.kl_div with ATen's int reduction (1, mean, averages over every element; none
    where left out).

    Examples:
        >>> lm.kl_div(lm.tensor([0.0]), lm.tensor([1.0]))
        tensor([0.])
    """
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,  # noqa: A002
                                     pos_weight: Any = None, reduction: Any = 0) -> Any:
    """F.binary_cross_entropy_with_logits with ATen's int reduction (none where left out).

    Examples:
        >>> lm.binary_cross_entropy_with_logits(lm.tensor([0.0]), lm.tensor([1.0]))
        tensor([0.6931])
    """
    return F.binary_cross_entropy_with_logits(input, target, weight=weight,
                                              pos_weight=pos_weight,
                                              reduction=_reduction(reduction))


def poisson_nll_loss(input: Any, target: Any, log_input: bool, full: bool,  # noqa: A002
                     eps: float, reduction: Any) -> Any:
    """F.poisson_nll_loss with every argument given, as ATen's, reduction an int.

    Examples:
        >>> lm.poisson_nll_loss(lm.tensor([0.0]), lm.tensor([1.0]), True, False, 1e-8, 1)
        tensor(1.)
    """
    return F.poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps,
                              reduction=_reduction(reduction))


def _margin(name: str, tensors: tuple[str, ...], options: dict[str, Any], call: str,
            shown: str) -> Any:
    """F.<name> under ATen's signature: the tensors, then `options` in order (defaults as
    given), then the int reduction, all positional or by keyword."""
    op = getattr(F, name)
    params = [*tensors, *options, "reduction"]
    defaults = {**options, "reduction": 0}

    def function(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} arguments "
                            f"({len(args)} given)")
        bound = {**defaults, **dict(zip(params, args)), **kwargs}
        bound["reduction"] = _reduction(bound["reduction"])
        first = [bound.pop(t) for t in tensors]
        return op(*first, **bound)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"F.{name}, under ATen's signature: ({', '.join(params)}), the "
                        f"reduction an int (0 none, 1 mean, 2 sum).\n\nExamples:\n"
                        f"    >>> lm.{name}({call})\n    {shown}")
    return function


cosine_embedding_loss = _margin("cosine_embedding_loss", ("input1", "input2", "target"),
                                {"margin": 0.0},
                                "lm.ones(1, 2), lm.ones(1, 2), lm.tensor([1.0])",
                                "tensor([0.])")
hinge_embedding_loss = _margin("hinge_embedding_loss", ("input", "target"), {"margin": 1.0},
                               "lm.tensor([0.5]), lm.tensor([1.0])", "tensor([0.5000])")
margin_ranking_loss = _margin("margin_ranking_loss", ("input1", "input2", "target"),
                              {"margin": 0.0},
                              "lm.tensor([1.0]), lm.tensor([0.0]), lm.tensor([1.0])",
                              "tensor([0.])")
triplet_margin_loss = _margin("triplet_margin_loss", ("anchor", "positive", "negative"),
                              {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False},
                              "lm.zeros(1, 2), lm.zeros(1, 2), lm.ones(1, 2)",
                              "tensor([0.])")

__all__ = sorted([*_SAME, "embedding", "batch_norm", "instance_norm", "adaptive_max_pool1d",
                  "kl_div", "binary_cross_entropy_with_logits", "poisson_nll_loss",
                  "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
                  "triplet_margin_loss"])
