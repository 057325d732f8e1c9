"""`lamina.utils.data.distributed` (torch.utils.data.distributed): DistributedSampler under
PyTorch's module path."""

from lamina.data.sampler import DistributedSampler

__all__ = ["DistributedSampler"]
