"""SyncBatchNorm: PyTorch's batch norm whose statistics span every process of a group.

lamina trains data-parallel on Ray parameter servers, which synchronise batch-norm
statistics themselves (lamina.distributed); a SyncBatchNorm here is the batch norm of one
process, over inputs of any rank, so that a model converted for DistributedDataParallel
runs and trains as it would on one GPU.
"""

from __future__ import annotations

from typing import Any

from lamina.nn.layer import Layer
from lamina.nn.normalization import _BatchNorm
from lamina.nn.registry import register_layer


@register_layer("SyncBatchNorm")
class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) input, per channel C; `process_group` is accepted and, in
    one process, has nothing to synchronise.

    Examples:
        >>> nn.SyncBatchNorm(3)(lm.randn(4, 3, 2, 2)).shape
        lamina.Size([4, 3, 2, 2])
    """

    dims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.process_group = process_group
        if dtype is not None:
            self.to(dtype)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.pop("bias")
        return config

    @classmethod
    def convert_sync_batchnorm(cls, module: Layer, process_group: Any = None) -> Layer:
        """The module with every BatchNorm1d/2d/3d in it replaced by a SyncBatchNorm that
        holds the same parameters and running statistics (the module itself where it is
        one), as PyTorch's.

        Examples:
            >>> net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
            >>> type(nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]).__name__
            'SyncBatchNorm'
        """
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            sync = cls(module.num_features, module.eps, module.momentum, module.affine,
                       module.track_running_stats, process_group)
            for name in ("weight", "bias"):
                object.__setattr__(sync, name, None)
                if getattr(module, name) is not None:
                    setattr(sync, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                if getattr(module, name) is not None:
                    sync.register_buffer(name, getattr(module, name))
            sync.train(module.training)
            return sync
        for name, child in list(module.named_children()):
            converted = cls.convert_sync_batchnorm(child, process_group)
            if converted is not child:
                setattr(module, name, converted)
        return module


__all__ = ["SyncBatchNorm"]
