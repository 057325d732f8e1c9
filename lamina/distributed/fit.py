"""`fit`: train any model on the parameter server from Python, as a job file would.

The job file's path and this one share one implementation: both describe the work as a
`Task` and run it on a `Cluster` driven by a `DistributedTrainer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina.data import DataLoader
from lamina.nn.layer import Layer


def fit(model: Layer, optimizer: dict[str, Any] | Callable[[Any], Any], train_data: Any,
        loss: Any = "cross_entropy", val_data: Any = None, epochs: int = 1,
        batch_size: int = 32, workers: int = 2, servers: int = 1, mode: str = "bsp",
        staleness: int = 2, address: str | None = None, checkpoint_every: int = 50,
        checkpoint_dir: str | None = None, timeout: float = 120.0, algorithm: str = "bp",
        algorithm_args: dict[str, Any] | None = None, metrics: Sequence[str] = ("accuracy",),
        seed: int = 0, shuffle: bool = True, drop_last: bool = False,
        callbacks: Sequence[Any] = ()) -> tuple[Layer, list[dict[str, float]]]:
    """Train `model` (any Layer, your own `forward` included) with `workers` workers and
    `servers` parameter-server shards; the options are the job file's `distributed`
    section's.

    Args:
        model: trained in place; the workers get copies (its class and state, sent by
            Ray), and the driver's copy takes the servers' parameters and the workers'
            averaged batch-norm statistics after every epoch.
        optimizer: the servers' optimizer, as a config ({"type": "Adam", "lr": 1e-3})
            or a factory `params -> Optimizer` (`lambda ps: lm.optim.Adam(ps, lr=1e-3)`).
        train_data, val_data: datasets; each worker reads its shard of every epoch, and
            the driver evaluates val_data after it.
        loss, metrics, algorithm (and its options), callbacks: as a Trainer takes them.
        mode, staleness, address, checkpoint_every, checkpoint_dir, timeout: as in a
            job's `distributed` section (address=None starts a local Ray cluster).

    Returns:
        The model and the history: one dict of metrics per epoch (val_* from val_data).

    Raises:
        TypeError: an attribute of the model cannot be sent to the workers (named).

    Examples:
        >>> model, history = lamina.distributed.fit(
        ...     MyNet(), {"type": "SGD", "lr": 0.1}, train_set, epochs=3, workers=2)
    """
    from lamina.distributed.cluster import Cluster, init
    from lamina.distributed.task import Task
    from lamina.distributed.trainer import DistributedTrainer
    from lamina.schema import check_args
    from lamina.train.jobfile import DistributedConfig

    settings = dict(workers=workers, servers=servers, mode=mode, staleness=staleness,
                    address=address, checkpoint_every=checkpoint_every, timeout=timeout)
    check_args(DistributedConfig, settings, "distributed")
    task = Task(model=model, train_data=train_data, optimizer=optimizer,
                distributed=DistributedConfig(**settings), batch_size=batch_size,
                shuffle=shuffle, drop_last=drop_last, seed=seed, algorithm=algorithm,
                algorithm_args=dict(algorithm_args or {}), loss=loss, metrics=list(metrics))
    init(address=address)
    cluster = Cluster(task, model, checkpoint_dir)
    try:
        trainer = DistributedTrainer(cluster, model, loss, task.build_algorithm(),
                                     list(metrics), list(callbacks))
        val = None if val_data is None else DataLoader(val_data, max(batch_size, 256))
        history = trainer.fit(task.loader(0, 1), epochs, val)
    finally:
        cluster.shutdown()
    return model, history
