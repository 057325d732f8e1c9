"""Training: the Trainer, algorithms (bp, bptt, cd), callbacks and job configs."""

from lamina.train.algorithms import (
    BP,
    BPTT,
    CD,
    Algorithm,
    algorithm_class,
    algorithm_from_config,
    algorithm_names,
    register_algorithm,
)
from lamina.train.callbacks import (
    Callback,
    Checkpoint,
    EarlyStopping,
    GradientClipping,
    LRSchedule,
    NaNGuard,
    NonFiniteError,
    Trigger,
)
from lamina.train.logging_callbacks import CSVLogger, PlotCurves, ProgressBar
from lamina.train.losses import register_metric
from lamina.train.tensorboard import TensorBoardLogger
from lamina.train.trainer import Trainer
from lamina.train.updater import LocalUpdater, push_gradients

__all__ = [
    "BP",
    "BPTT",
    "CD",
    "Algorithm",
    "CSVLogger",
    "Callback",
    "Checkpoint",
    "EarlyStopping",
    "GradientClipping",
    "LRSchedule",
    "LocalUpdater",
    "NaNGuard",
    "NonFiniteError",
    "PlotCurves",
    "ProgressBar",
    "TensorBoardLogger",
    "Trainer",
    "Trigger",
    "algorithm_class",
    "algorithm_from_config",
    "algorithm_names",
    "push_gradients",
    "register_algorithm",
    "register_metric",
]
