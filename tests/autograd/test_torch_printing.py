"""Tensors print as PyTorch's do: the same text for the same values, dtype and options."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
NAN, INF = float("nan"), float("inf")

ARRAYS = {
    "fixed": np.array([[1.0, 2.5, 3.14159265], [0.25, 10.0, -2.0]], np.float32),
    "sci by ratio": np.array([[1.0, 2.5, 3.14159265], [1e-5, 100.0, -2.0]], np.float32),
    "sci by size": np.array([1.5e9, 2.0], np.float32),
    "sci by smallness": np.array([5e-5, 2e-4], np.float32),
    "whole": np.array([1.0, -2.0, 300.0], np.float32),
    "whole, sci": np.array([1.0, 20000.0], np.float32),
    "zeros": np.zeros(3, np.float32),
    "nan and inf": np.array([1.5, NAN, -INF, 0.0], np.float32),
    "only nonfinite": np.array([NAN, INF], np.float32),
    "negative zero": np.array([-0.0, 1.0], np.float32),
    "scalar": np.array(3.5, np.float32),
    "whole scalar": np.array(2.0, np.float32),
    "float64": np.array([0.1, 0.2], np.float64),
    "float16": np.array([0.1, 1000.0], np.float16),
    "int64": np.array([[1, -20], [300, 4]], np.int64),
    "int32": np.array([7, 8], np.int32),
    "uint8": np.array([0, 255], np.uint8),
    "bool": np.array([True, False]),
    "long row": rng.standard_normal(30).astype(np.float32),
    "summarised": np.arange(2000, dtype=np.float32) / 7,
    "summarised 3-D": rng.standard_normal((12, 10, 11)).astype(np.float32),
    "summarised ints": np.arange(5000, dtype=np.int64).reshape(50, 100),
    "empty": np.zeros(0, np.float32),
    "empty 2-D": np.zeros((2, 0), np.float32),
    "empty int": np.zeros(0, np.int64),
    "empty bool": np.zeros((0, 3), bool),
    "4-D": rng.standard_normal((2, 1, 2, 3)).astype(np.float32),
}

OPTIONS = {
    "default": {},
    "precision 2": {"precision": 2},
    "short": {"profile": "short"},
    "full": {"profile": "full"},
    "no sci": {"sci_mode": False},
    "sci": {"sci_mode": True},
    "narrow": {"linewidth": 40},
    "threshold 10, edge 1": {"threshold": 10, "edgeitems": 1},
    "edge 0": {"threshold": 10, "edgeitems": 0},
}


@pytest.fixture
def printoptions():
    """Each test's options in both frameworks, reset after it."""
    def use(**options):
        lm.set_printoptions(**options)
        torch.set_printoptions(**options)

    yield use
    lm.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def ours_and_theirs(a, **kw):
    ours = repr(lm.tensor(a, **kw))
    theirs = repr(torch.tensor(a, **kw)).replace("torch.", "lamina.")
    return ours, theirs


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
@pytest.mark.parametrize("name", ARRAYS)
def test_a_tensor_prints_as_pytorchs(name, options, printoptions):
    if name == "float16" and options.get("sci_mode") is not None:
        pytest.skip("one case of float16 is enough")
    printoptions(**options)
    ours, theirs = ours_and_theirs(ARRAYS[name])
    assert ours == theirs


def test_the_suffixes_wrap_as_pytorchs(printoptions):
    a = np.full((2, 17), 1.5, np.float64)  # lines that leave no room for the suffixes
    assert ours_and_theirs(a, requires_grad=True)[0] == ours_and_theirs(a, requires_grad=True)[1]
    printoptions(linewidth=30)
    ours, theirs = ours_and_theirs(np.array([1.25, 2.0], np.float64), requires_grad=True)
    assert ours == theirs and "\n" in ours


def test_a_parameter_and_a_computed_tensor_print_their_autograd_state():
    w = lm.nn.Parameter(lm.tensor([0.5, 1.0]))
    assert repr(w) == "Parameter containing:\ntensor([0.5000, 1.0000], requires_grad=True)"
    assert repr(w * 2) == "tensor([1., 2.], grad_fn=<MulBackward0>)"


def test_set_printoptions_without_sci_mode_resets_it_as_pytorchs(printoptions):
    printoptions(sci_mode=True)
    printoptions(precision=3)  # sci_mode not given: back to each tensor's own choice
    ours, theirs = ours_and_theirs(np.array([0.5, 1.0], np.float32))
    assert ours == theirs == "tensor([0.500, 1.000])"


def test_an_unknown_profile_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="default"):
        lm.set_printoptions(profile="long")


# ops whose graph node lamina names as PyTorch does (others, such as mean, which lamina
# computes as a scaled sum, name lamina's own op)
NODES = ["x * 2", "x + 1", "x - 1", "x / 2", "x ** 2", "-x", "x.sum()", "x.relu()",
         "x.view(6)", "x @ x.t()", "F.linear(x, x, x[:, 0])", "x.exp()", "x.tanh()", "x.sigmoid()",
         "F.cross_entropy(x, lib.tensor([0, 1]))", "x.softmax(-1)", "x.log_softmax(-1)",
         "lib.cat([x, x])", "x.abs()", "F.gelu(x)", "x.expand(2, 2, 3)", "x.to(lib.float64)",
         "x.transpose(0, 1)", "x.reshape(3, 2)", "F.embedding(lib.tensor([0]), x)"]


@pytest.mark.parametrize("expr", NODES)
def test_grad_fn_prints_and_names_pytorchs_node(expr):
    import torch

    names, reprs = [], []
    for lib in (torch, lm):
        x = lib.tensor([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]], requires_grad=True)
        y = eval(expr, {"x": x, "lib": lib, "F": lib.nn.functional})  # noqa: S307
        names.append(y.grad_fn.name())
        reprs.append(repr(y.grad_fn).split(" object at ")[0])
    assert names[0] == names[1] and reprs[0] == reprs[1] == f"<{names[0]}"


RESULTS = ["x.max(0)", "x.min(dim=1, keepdim=True)", "x.sort(descending=True)", "x.topk(2)",
           "x.cummax(0)", "x.kthvalue(2, 1)", "x.median(0)", "x.mode(1)", "x.aminmax()",
           "lib.linalg.slogdet(x[:, :2] + 3)", "lib.histogram(x, bins=2)",
           "lib.frexp(x)", "lib.linalg.eigh(x[:, :2].T @ x[:, :2])"]


@pytest.mark.parametrize("expr", RESULTS)
def test_multiple_results_print_as_pytorchs_named_tuples(expr):
    import torch

    printed = []
    for lib in (torch, lm):
        x = lib.tensor([[0.5, 3.0, 2.0], [1.5, 0.25, 2.0]])
        result = eval(expr, {"x": x, "lib": lib})  # noqa: S307
        printed.append(repr(result).replace("torch.", "lamina.").replace("-0.", " 0."))
        assert type(result).__module__ == f"{lib.__name__}.return_types"
    assert printed[0] == printed[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", None])
def test_finfo_answers_pytorchs_numbers(dtype):
    import torch

    ours, theirs = (lm.finfo(getattr(lm, dtype)) if dtype else lm.finfo(),
                    torch.finfo(getattr(torch, dtype)) if dtype else torch.finfo())
    assert repr(ours) == repr(theirs)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field)
        assert type(getattr(ours, field)) is type(getattr(theirs, field))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_answers_pytorchs_numbers(dtype):
    import torch

    ours, theirs = lm.iinfo(getattr(lm, dtype)), torch.iinfo(getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (theirs.bits, theirs.max, theirs.min,
                                                           theirs.dtype)


def test_finfo_and_iinfo_refuse_the_other_kind_as_pytorchs():
    import torch

    for lib in (torch, lm):
        with pytest.raises(TypeError):
            lib.finfo(lib.int64)
        with pytest.raises(TypeError):
            lib.iinfo(lib.float32)
