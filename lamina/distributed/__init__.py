"""Distributed training on Ray: parameter servers (bsp / ssp / asp), workers, partitions.

    >>> import lamina.distributed as dist
    >>> dist.init()                      # a local Ray cluster; dist.init(address=...) joins one
    >>> model, history = dist.fit(MyNet(), {"type": "SGD", "lr": 0.1}, train_set, workers=2)
"""

from lamina.distributed.cluster import Cluster, init, shard_names
from lamina.distributed.fit import fit
from lamina.distributed.partition import Pipeline, Stage
from lamina.distributed.process_group import (
    ReduceOp,
    all_gather,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    reduce,
)
from lamina.distributed.server import ParameterServer
from lamina.distributed.task import Task
from lamina.distributed.trainer import DistributedTrainer
from lamina.distributed.worker import PSClient, Worker

__all__ = [
    "Cluster",
    "DistributedTrainer",
    "PSClient",
    "ParameterServer",
    "Pipeline",
    "Stage",
    "Task",
    "ReduceOp",
    "Worker",
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "fit",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "init",
    "reduce",
    "shard_names",
]
