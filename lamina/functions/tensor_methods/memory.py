"""Tensor methods about memory and kind (strides, pointers, sizes in bytes) and the random
draws that take the tensor as their probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np


class MemoryMethods:
    __slots__ = ()

    def stride(self, dim: int | None = None) -> Any:
        """The step in elements between neighbours along each dim (or along `dim`), of the
        memory the tensor reads: lamina keeps some results in another order than
        PyTorch's (see the PyTorch guide), and their strides say so.

        Examples:
            >>> lm.zeros(2, 3).stride()
            (3, 1)
        """
        steps = tuple(s // self.array.itemsize for s in self.array.strides)
        return steps if dim is None else steps[dim]

    def storage_offset(self) -> int:
        """Where this view starts in the memory it shares, in elements.

        Examples:
            >>> lm.arange(4)[1:].storage_offset()
            1
        """
        base = self.array
        while isinstance(base.base, np.ndarray):
            base = base.base
        start = self.array.__array_interface__["data"][0]
        return (start - base.__array_interface__["data"][0]) // self.array.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (equal for tensors that share it).

        Examples:
            >>> x = lm.zeros(3); x.data_ptr() == x.view(3).data_ptr()
            True
        """
        return int(self.array.__array_interface__["data"][0])

    @property
    def itemsize(self) -> int:
        """Bytes per element.

        Examples:
            >>> lm.zeros(2).itemsize
            4
        """
        return int(self.array.itemsize)

    @property
    def nbytes(self) -> int:
        """Bytes of all the elements.

        Examples:
            >>> lm.zeros(2, 3).nbytes
            24
        """
        return int(self.array.nbytes)

    @property
    def is_cpu(self) -> bool:
        """True: lamina's tensors live in the CPU's memory.

        Examples:
            >>> lm.zeros(1).is_cpu
            True
        """
        return True

    def is_signed(self) -> bool:
        """Whether the dtype holds negative numbers (not bool or uint8).

        Examples:
            >>> lm.zeros(1).is_signed(), lm.zeros(1, dtype=lm.uint8).is_signed()
            (True, False)
        """
        return self.dtype.kind in "if"

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Any:
        """1 with each element's probability (or `p`), else 0, in this tensor's shape.

        Examples:
            >>> lm.tensor([0.0, 1.0]).bernoulli()
            tensor([0., 1.])
        """
        from lamina.creation import full_like
        from lamina.creation_random import bernoulli

        probs = self if p is None else full_like(self, p)
        return bernoulli(probs.detach(), generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *,
                    generator: Any = None) -> Any:
        """lamina.multinomial(self, ...): category indices drawn by each row's weights.

        Examples:
            >>> lm.tensor([0.0, 1.0]).multinomial(2, replacement=True)
            tensor([1, 1])
        """
        from lamina.creation_random import multinomial

        return multinomial(self, num_samples, replacement, generator=generator)
