"""The torch.* names of nn.functional's ops: every one PyTorch has is there, and ATen's
int reductions are checked (their values are compared with PyTorch's in
tests/torch_lines.py)."""

from __future__ import annotations

import pytest

import lamina as lm
from lamina.nn import torch_functions


def test_each_name_is_pytorchs_and_lamina_exports_it():
    torch = pytest.importorskip("torch")
    for name in torch_functions.__all__:
        assert callable(getattr(torch, name)), name
        assert getattr(lm, name) is getattr(torch_functions, name)
        assert name in lm.__all__


def test_an_unknown_reduction_code_is_refused_naming_the_codes():
    x = lm.zeros(2)
    with pytest.raises(ValueError, match=r"0 \(none\), 1 \(mean\) or 2 \(sum\); got 3"):
        lm.hinge_embedding_loss(x, lm.ones(2), 1.0, 3)


def test_too_many_arguments_are_refused_as_python_would():
    x = lm.zeros(1, 2)
    with pytest.raises(TypeError, match="at most 5 arguments"):
        lm.cosine_embedding_loss(x, x, lm.ones(1), 0.0, 0, "extra")
