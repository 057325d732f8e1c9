"""Training algorithms: one `train_one_batch` each, picked by name in the job config.

The registry with the built-in algorithms in it: back-propagation (`bp`), truncated
back-propagation through time (`bptt`) and contrastive divergence (`cd`). Import
algorithm_class and algorithm_names from here, so that the built-ins are registered.
"""

from lamina.train.algorithm import (
    Algorithm,
    algorithm_class,
    algorithm_from_config,
    algorithm_names,
    register_algorithm,
)
from lamina.train.backprop import BP
from lamina.train.bptt import BPTT
from lamina.train.contrastive import CD

__all__ = ["BP", "BPTT", "CD", "Algorithm", "algorithm_class", "algorithm_from_config",
           "algorithm_names", "register_algorithm"]
