"""`lamina.utils.dlpack`, as `torch.utils.dlpack`: `to_dlpack` and `from_dlpack`.

    >>> from lamina.utils import dlpack
    >>> dlpack.from_dlpack(dlpack.to_dlpack(lm.ones(2)))
    tensor([1., 1.])
"""

from lamina.interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
