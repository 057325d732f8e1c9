"""`lamina.optim.lr_scheduler`, as `torch.optim.lr_scheduler`: learning-rate schedules,
stepped per epoch or per batch by whoever calls `step()`.

Examples:
    >>> opt = optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1)
    >>> sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.05]
"""

from lamina.optim.lr_scheduler.base import LRScheduler, chainable
from lamina.optim.lr_scheduler.closed_form import (
    CosineAnnealingLR,
    ExponentialLR,
    LinearLR,
    LinearWarmup,
    MultiStepLR,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)
from lamina.optim.lr_scheduler.cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from lamina.optim.lr_scheduler.factors import (
    ChainedScheduler,
    ConstantLR,
    LambdaLR,
    MultiplicativeLR,
    PolynomialLR,
)
from lamina.registry import Registry

# Every schedule a job can name (LambdaLR's function it cannot write), and those a job's
# SequentialLR can hold; `SCHEDULES.register()` adds your own.
SCHEDULES = Registry("schedule")
for _cls in (*chainable().values(), SequentialLR, ReduceLROnPlateau):
    SCHEDULES.add(_cls.__name__, _cls)
CHAINABLE = tuple(chainable())

__all__ = [
    "CHAINABLE",
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "LinearWarmup",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SCHEDULES",
    "SequentialLR",
    "StepLR",
]
