"""What the op case tables share: the Case record, input makers and NumPy references
used by more than one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]  # lamina, on Tensors (integer inputs come as Tensors too)
    ref: Callable[..., Any]  # NumPy, on arrays, written independently of lamina
    make: Callable[[np.random.Generator], list[np.ndarray]]  # float64 / int inputs
    torch: Callable[..., Any] | None = None  # torch, on torch tensors
    atol: float = 1e-6
    rtol: float = 1e-5
    grad_atol: float = 1e-5
    tags: set[str] = field(default_factory=set)


def randn(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.standard_normal(shape)


def positive(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def away_from_zero(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Normal values kept >= 0.1 from 0, where a kink would spoil central differences."""
    def make(rng: np.random.Generator) -> np.ndarray:
        x = rng.standard_normal(shape)
        return np.where(np.abs(x) < 0.1, np.sign(x + 1e-12) * 0.1 + x, x)
    return make


def ints(high: int, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.integers(0, high, shape)


def inputs(*makers: Callable[[np.random.Generator], np.ndarray]):
    return lambda rng: [m(rng) for m in makers]


def torch_module():
    import torch

    return torch


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
