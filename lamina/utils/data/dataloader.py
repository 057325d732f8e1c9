"""`lamina.utils.data.dataloader` (torch.utils.data.dataloader): the loader and its collate
functions under PyTorch's module path."""

from lamina.data import DataLoader, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
