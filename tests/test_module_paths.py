"""PyTorch's module paths: what a script imports from torch.nn.modules.*, torch.nn.parameter
and torch.utils.data.* it imports from the same path under lamina, and each name there is
PyTorch's too."""

from __future__ import annotations

import importlib

import pytest

torch = pytest.importorskip("torch")

PATHS = ["nn.modules", "nn.modules.module", "nn.modules.loss", "nn.modules.batchnorm",
         "nn.modules.conv", "nn.modules.linear", "nn.modules.activation",
         "nn.modules.container", "nn.modules.dropout", "nn.modules.pooling",
         "nn.modules.normalization", "nn.modules.instancenorm", "nn.modules.rnn",
         "nn.modules.sparse", "nn.modules.transformer", "nn.modules.padding",
         "nn.modules.lazy", "nn.modules.flatten", "nn.modules.pixelshuffle",
         "nn.modules.upsampling", "nn.modules.distance", "nn.modules.fold",
         "nn.modules.channelshuffle", "nn.parameter", "utils.data.distributed",
         "utils.data.sampler", "utils.data.dataset", "utils.data.dataloader",
         "nn.utils.stateless", "nn.utils.prune", "optim.swa_utils", "autograd.functional", "func", "special",
         "linalg", "distributions", "testing", "utils.checkpoint", "jit", "profiler",
         "autograd.profiler", "utils.dlpack"]
# lamina's additions beside PyTorch's names, in the modules above
OWN = {"Buffer"}


@pytest.mark.parametrize("path", PATHS)
def test_the_path_imports_and_holds_pytorchs_names(path):
    ours = importlib.import_module(f"lamina.{path}")
    theirs = importlib.import_module(f"torch.{path}")
    names = getattr(ours, "__all__", [])
    assert names, path
    missing = [n for n in names if not hasattr(theirs, n) and n not in OWN
               and path.startswith(("nn.modules.", "utils.data.", "nn.parameter"))]
    assert not missing, f"{path}: not PyTorch's names: {missing}"


def test_the_private_bases_code_checks_against_are_there():
    import lamina.nn as nn
    from lamina.nn.modules.batchnorm import _BatchNorm, _NormBase
    from lamina.nn.modules.conv import _ConvNd
    from lamina.nn.modules.loss import _Loss, _WeightedLoss

    assert isinstance(nn.BatchNorm2d(2), _BatchNorm) and _NormBase is _BatchNorm
    assert isinstance(nn.Conv2d(1, 1, 1), _ConvNd)
    assert isinstance(nn.MSELoss(), _Loss) and isinstance(nn.NLLLoss(), _WeightedLoss)
