"""`lamina.nn.modules.distance` (torch.nn.modules.distance): the distances, under PyTorch's
module path."""

from lamina.nn import (
    CosineSimilarity,
    PairwiseDistance,
)

__all__ = ["CosineSimilarity", "PairwiseDistance"]
