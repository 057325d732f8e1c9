"""`lamina.utils`, as `torch.utils`: `lamina.utils.data` is `lamina.data`."""

from lamina.utils import data

__all__ = ["data"]
