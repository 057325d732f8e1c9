"""`lamina.nn.modules.batchnorm` (torch.nn.modules.batchnorm): the batch norms, under PyTorch's
module path."""

from lamina.nn import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    SyncBatchNorm,
)
from lamina.nn.normalization import _BatchNorm  # noqa: F401
from lamina.nn.normalization import _BatchNorm as _NormBase  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
