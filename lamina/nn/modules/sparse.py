"""`lamina.nn.modules.sparse` (torch.nn.modules.sparse): the embeddings, under PyTorch's module
path."""

from lamina.nn import (
    Embedding,
    EmbeddingBag,
)

__all__ = ["Embedding", "EmbeddingBag"]
