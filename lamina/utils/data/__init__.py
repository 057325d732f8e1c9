"""`lamina.utils.data` (PyTorch's `torch.utils.data`): the datasets and loaders of
`lamina.data` under PyTorch's module path."""

from lamina.data import *  # noqa: F403
from lamina.data import __all__  # noqa: F401

# PyTorch's submodules, as attributes too (torch.utils.data.distributed.DistributedSampler
# without importing it by name): each only names what lamina.data holds.
from lamina.utils.data import dataloader, dataset, distributed, sampler  # noqa: E402, F401
