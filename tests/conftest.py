from __future__ import annotations

import numpy as np
import pytest

import lamina as lm


@pytest.fixture(autouse=True)
def _seed() -> None:
    """Every test starts from the same generator state, so results repeat."""
    lm.manual_seed(0)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
