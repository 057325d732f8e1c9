"""What `torch.nn.attention` holds for choosing the kernel of scaled_dot_product_attention:
`SDPBackend` and `sdpa_kernel` (re-exported by lamina.nn.attention, their PyTorch path)."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any


class SDPBackend(enum.IntEnum):
    """PyTorch's scaled_dot_product_attention kernels, by its names and numbers.

    Examples:
        >>> from lamina.nn.attention import SDPBackend
        >>> SDPBackend.MATH, int(SDPBackend.FLASH_ATTENTION)
        (<SDPBackend.MATH: 0>, 1)
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[None]:
    """PyTorch's choice of attention kernel for the block. lamina has one kernel on the
    CPU (the math one, softmax fused), which runs whatever is chosen: the values are the
    same up to float rounding.

    Examples:
        >>> from lamina.nn.attention import SDPBackend, sdpa_kernel
        >>> q = lm.randn(1, 2, 4, 8)
        >>> with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ...     F.scaled_dot_product_attention(q, q, q).shape
        lamina.Size([1, 2, 4, 8])
    """
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    if not chosen or not all(isinstance(b, SDPBackend) for b in chosen):
        raise ValueError(f"sdpa_kernel: expected an SDPBackend or a list of them; got "
                         f"{backends!r}")
    yield
