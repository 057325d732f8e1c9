"""`lamina.nn.functional` (PyTorch's `torch.nn.functional`): the ops of `lamina.functions`
under PyTorch's module path. Import as `import lamina.nn.functional as F`."""

from lamina.functions import *  # noqa: F403
from lamina.functions import __all__  # noqa: F401
