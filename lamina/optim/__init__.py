"""Optimizers, gradient clipping and learning-rate schedules. Import as `lamina.optim`."""

from lamina.optim import lr_scheduler, swa_utils
from lamina.optim.adadelta import Adadelta, Adamax
from lamina.optim.adagrad import Adagrad
from lamina.optim.adam import Adam, AdamW
from lamina.optim.adam_variants import NAdam, RAdam
from lamina.optim.asgd import ASGD
from lamina.optim.clip import clip_grad_norm_, clip_grad_value_
from lamina.optim.config import OPTIMIZERS, from_config
from lamina.optim.lbfgs import LBFGS
from lamina.optim.optimizer import Optimizer
from lamina.optim.rmsprop import RMSprop
from lamina.optim.rprop import Rprop
from lamina.optim.sgd import SGD
from lamina.optim.sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "Rprop",
    "SparseAdam",
    "OPTIMIZERS",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "clip_grad_norm_",
    "clip_grad_value_",
    "from_config",
    "lr_scheduler",
    "swa_utils",
]
