"""Random generators: `lamina.Generator`, `manual_seed` and the generator state.

Every random draw in lamina (creation functions, dropout, initialisers, shuffling) comes
from the default generator, or from a `Generator` passed as `generator=`, so one
`lamina.manual_seed(s)` repeats a whole run. The bits are NumPy's PCG64, not PyTorch's
Mersenne Twister: the same seed gives the same numbers in lamina, not the same as torch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina import state as process


class Generator:
    """A seedable source of random numbers (torch.Generator).

    Examples:
        >>> g = lm.Generator().manual_seed(0)
        >>> a = lm.rand(3, generator=g)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self._seed = 67280421310721
        self.numpy = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns self."""
        seed = int(seed)
        if seed < 0:
            seed += 2**64  # PyTorch accepts negative seeds as their 64-bit pattern
        if not 0 <= seed < 2**64:
            raise RuntimeError(f"manual_seed: seed must be within [-2**63, 2**64); got {seed}")
        self._seed = seed
        self.numpy = np.random.default_rng(seed)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed.

        Examples:
            >>> isinstance(lm.seed(), int)
            True
        """
        seed = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with.

        Examples:
            >>> lm.manual_seed(7); lm.initial_seed()
            <lamina.random.Generator object at 0x7fefd42d0690>
            7
        """
        return self._seed

    def get_state(self) -> dict[str, Any]:
        """A JSON-safe snapshot of the generator, for checkpoints."""
        return self.numpy.bit_generator.state

    def set_state(self, state: dict[str, Any]) -> Generator:
        """Restore a snapshot taken by `get_state`."""
        self.numpy.bit_generator.state = state
        return self


process.default_generator = default_generator = Generator().manual_seed(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (dropout, initialisers, shuffling, `lamina.rand`...) so a
    run repeats; returns it.

    Examples:
        >>> _ = lm.manual_seed(0); a = lm.randn(2)
        >>> _ = lm.manual_seed(0); bool((lm.randn(2) == a).all())
        True
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"manual_seed: seed must be an int; got {seed!r}")
    return process.default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system; returns the seed.

    Examples:
        >>> isinstance(lm.seed(), int)
        True
    """
    return process.default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    Examples:
        >>> _ = lm.manual_seed(7); lm.initial_seed()
        7
    """
    return process.default_generator.initial_seed()


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, **kwargs: Any) -> Iterator[None]:
    """A block whose draws leave the default generator's state as it was before it.

    Examples:
        >>> with lm.random.fork_rng():
        ...     _ = lm.rand(3)
    """
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


def get_rng_state() -> dict[str, Any]:
    """A JSON-safe snapshot of the default generator, for checkpoints.

    Examples:
        >>> state = lm.get_rng_state(); a = lm.rand(2)
        >>> lm.set_rng_state(state); bool((lm.rand(2) == a).all())
        True
    """
    return process.default_generator.get_state()


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore a snapshot taken by `get_rng_state`.

    Examples:
        >>> state = lm.get_rng_state(); a = lm.rand(2)
        >>> lm.set_rng_state(state); bool((lm.rand(2) == a).all())
        True
    """
    process.default_generator.set_state(state)


def numpy_rng(generator: Generator | None = None) -> np.random.Generator:
    """The NumPy generator to draw from: `generator`'s, else the default one's."""
    return (generator or process.default_generator).numpy
