"""What the workers of a distributed run train: one object built on the driver, from a job
file or from Python, and sent to every worker through Ray (any model travels: its class
and state, by Ray's own serialisation)."""

from __future__ import annotations

import dataclasses
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.data import DataLoader
from lamina.nn.layer import Layer

if TYPE_CHECKING:
    from lamina.train.jobfile import DistributedConfig, Job


@dataclasses.dataclass
class Task:
    """A distributed run's work, the same for every worker.

    Args:
        model: the replica each worker starts from (any Layer; its parameters are pulled
            from the servers before every step).
        train_data: the training dataset; each worker reads its own shard of every epoch.
        optimizer: the servers' optimizer: a config ({"type": "Adam", "lr": 1e-3}, with
            optional name-pattern `groups`), or a factory `params -> Optimizer`.
        distributed: workers, servers, mode (bsp / ssp / asp), staleness, address,
            checkpoint_every, timeout.
        batch_size, shuffle, drop_last, seed: each worker's loader (the order depends on
            seed and epoch only).
        algorithm: a registered algorithm's name ("bp", "bptt", "cd") and its options.
        loss, metrics: as a Trainer takes them.
        compile: run each worker's steps as execution plans (as `Trainer(compile=...)`).
        clip_grad_norm, clip_grad_value: clip each worker's gradient before its push.
    """

    model: Layer
    train_data: Any
    optimizer: dict[str, Any] | Callable[[Any], Any]
    distributed: DistributedConfig
    batch_size: int = 32
    shuffle: bool = True
    drop_last: bool = False
    seed: int = 0
    algorithm: str = "bp"
    algorithm_args: dict[str, Any] = dataclasses.field(default_factory=dict)
    loss: Any = "cross_entropy"
    metrics: Sequence[str] = ("accuracy",)
    compile: bool | dict[str, Any] = False
    clip_grad_norm: float | None = None
    clip_grad_value: float | None = None

    @classmethod
    def from_job(cls, job: Job, built: Any = None) -> Task:
        """The task a job file describes. `built`, the job's `Run` where the driver has one,
        gives its data and model (as built, before any training); else they are built
        here, as each worker would (a Standardize layer measures the whole training split)."""
        from lamina.train.job import build_data, build_model

        assert job.distributed is not None, "a job with a distributed section"
        data = build_data(job) if built is None else built.data
        model = build_model(job, data) if built is None else built.model
        return cls(model=model, train_data=data.train.dataset,
                   optimizer=job.optimizer.to_dict(), distributed=job.distributed,
                   batch_size=job.data.batch_size, shuffle=job.data.shuffle,
                   drop_last=job.data.drop_last, seed=job.trainer.seed,
                   algorithm=job.algorithm.type, algorithm_args=dict(job.algorithm.args),
                   loss=job.loss.to_dict(), metrics=list(job.trainer.metrics),
                   compile=job.trainer.compile, clip_grad_norm=job.trainer.clip_grad_norm,
                   clip_grad_value=job.trainer.clip_grad_value)

    def loader(self, worker: int, workers: int) -> DataLoader:
        """Worker `worker`'s loader: its shard of each epoch's order."""
        loader = DataLoader(self.train_data, self.batch_size, shuffle=self.shuffle,
                            drop_last=self.drop_last, seed=self.seed)
        loader.shard = (worker, workers)
        return loader

    def build_algorithm(self) -> Any:
        from lamina.train.algorithms import algorithm_class

        algorithm = algorithm_class(self.algorithm)(**self.algorithm_args)
        algorithm.bind(self.loss, list(self.metrics))
        algorithm.use_plan(self.compile)
        return algorithm


def send_user_code_by_value(task: Task) -> None:
    """Have Ray send the code of the user's own modules with the task (the model's layer
    classes, a loss or optimizer factory defined beside them), not a reference to a module
    the workers may not be able to import (a script's folder, a test file)."""
    import ray.cloudpickle as cloudpickle

    objects = [type(layer) for _, layer in task.model.named_modules()]
    objects += [f for f in (task.loss, task.optimizer) if callable(f)]
    for obj in objects:
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        if module is not None and _is_user_code(module):
            cloudpickle.register_pickle_by_value(module)


def _is_user_code(module: Any) -> bool:
    """Neither lamina, nor the standard library or an installed package."""
    name, path = module.__name__, getattr(module, "__file__", None)
    if name == "__main__" or name.split(".")[0] == "lamina" or path is None:
        return False  # (__main__ goes by value anyway)
    installed = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                     "platlib")}
    return not any(Path(path).resolve().is_relative_to(Path(p).resolve()) for p in installed)


def check_travels(model: Layer) -> None:
    """Raise TypeError naming the attribute of `model` that Ray cannot send to a worker
    (an open file, a lock, a lambda closing over one...)."""
    import ray.cloudpickle as cloudpickle

    try:
        cloudpickle.dumps(model)
        return
    except Exception as e:  # noqa: BLE001 - found and named below
        error = e
    for path, layer in model.named_modules():
        for key, value in vars(layer).items():
            if key in ("_params", "_buffers", "_children") or isinstance(value, Layer):
                continue  # a child layer is looked into on its own turn
            try:
                cloudpickle.dumps(value)
            except Exception as e:  # noqa: BLE001 - this is the one
                where = f"{path}.{key}" if path else key
                raise TypeError(f"distributed: the model cannot be sent to the workers: "
                                f"its attribute {where} ({type(value).__name__}) cannot be "
                                f"serialised ({e}); build it in the layer's forward, or keep "
                                "it outside the model") from None
    raise TypeError(f"distributed: the model cannot be sent to the workers: {error}")
