"""`lamina.utils.data` (PyTorch's `torch.utils.data`): the datasets and loaders of
`lamina.data` under PyTorch's module path."""

from lamina.data import *  # noqa: F403
from lamina.data import __all__  # noqa: F401
