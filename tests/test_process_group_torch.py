"""A torch.distributed script of one process (world size 1, as torchrun --nproc_per_node=1
runs it) on lamina and on PyTorch: the same group, collectives and training; a larger world
refused with the way lamina distributes."""

from __future__ import annotations

import socket

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _script(lib):
    dist = lib.distributed
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}",
                            world_size=1, rank=0)
    try:
        with pytest.raises(Exception) as twice:
            dist.init_process_group("gloo", world_size=1, rank=0)
        group = (dist.is_initialized(), dist.get_rank(), dist.get_world_size(),
                 dist.get_backend())
        model = lib.nn.Linear(3, 1)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.5, -0.2, 0.1]]))
            model.bias.fill_(0.1)
        ddp = lib.nn.parallel.DistributedDataParallel(model)
        data = lib.utils.data.TensorDataset(lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32)
                                                       .reshape(8, 3)), lib.zeros(8, 1))
        sampler = lib.utils.data.distributed.DistributedSampler(data, shuffle=False)
        opt = lib.optim.SGD(ddp.parameters(), lr=0.1)
        losses = []
        for x, y in lib.utils.data.DataLoader(data, batch_size=4, sampler=sampler):
            opt.zero_grad()
            with ddp.no_sync():
                loss = lib.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        total = lib.tensor([2.0, 3.0])
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        dist.broadcast(total, src=0)
        gathered = [lib.zeros(2)]
        dist.all_gather(gathered, total)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return (type(twice.value), group, losses, total.tolist(), gathered[0].tolist(),
            model.weight.detach().numpy(), dist.is_initialized())


def test_a_one_process_script_runs_as_on_pytorch() -> None:
    ours, theirs = _script(lamina), _script(torch)
    assert ours[0] is theirs[0] is ValueError and ours[1] == theirs[1] == (True, 0, 1, "gloo")
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3] == theirs[3] == [2.0, 3.0] and ours[4] == theirs[4] == [2.0, 3.0]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-6)
    assert ours[6] is theirs[6] is False


@pytest.mark.parametrize("kwargs, env", [({"world_size": 2, "rank": 0}, {}),
                                         ({}, {"WORLD_SIZE": "4", "RANK": "1"}),
                                         ({}, {})])
def test_a_larger_or_unknown_world_is_refused_with_the_way_to_distribute(kwargs, env,
                                                                         monkeypatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(RuntimeError, match=r"process groups of one process only \(world_size="
                       r"1, rank=0\); got .*lamina train JOB\.yaml --workers N"):
        lamina.distributed.init_process_group("gloo", **kwargs)
    assert not lamina.distributed.is_initialized()
