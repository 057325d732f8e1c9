"""What the distributed tests share: a local Ray cluster, started once per test module
that asks for `cluster_env` (and shut down after it)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory):
    ray = pytest.importorskip("ray")
    from lamina.distributed import init

    # A short temp dir: Ray's socket paths must stay under 108 bytes.
    os.environ["RAY_TMPDIR"] = str(tmp_path_factory.mktemp("r", numbered=True))[:40]
    init(num_cpus=2)
    yield
    ray.shutdown()
